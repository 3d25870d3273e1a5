#!/usr/bin/env python3
"""The Debian package (issue P): scripts/package packages this build (UNWINDKIT_BUILD_DIR),
lintian finds no error, and `dpkg -x` unpacks it into a throwaway root. Then, from that root:
- the package holds the CLI, both plugins, the gdbinit.d file, the man page and the docs, and
  declares the libraries the binaries link (dpkg-shlibdeps) and the debuggers' Python;
- `unwindkit --version` prints the version CMakeLists.txt's project() states;
- `unwindkit debuginfod` loads its server library from the package (the CLI itself links no
  HTTP library) and answers a request;
- GDB started with the root's gdbinit.d file (its /usr rewritten to the root, as a chroot
  would see it) unwinds the stripped twin's core with the plugin: `info unwinder` lists
  unwindkit, every thread's frames start with those GDB alone finds on the intact twin's
  core (the truth), and they are more than GDB alone finds on the stripped core;
- the package's postinst, run on that root, byte-compiles the GDB plugin's Python with
  Debian's py3compile (GDB writes no bytecode; lintian refuses a shipped __pycache__), and its
  prerm removes every file postinst made;
- `unwindkit setup lldb` / `setup gdb` run twice leave one line in ~/.lldbinit / ~/.gdbinit
  (a temporary HOME), the debugger then loads the plugin from it (`unwindkit status` prints
  the same version), and `--remove` gives back the file byte for byte — with and without a
  final newline, and for a file that did not exist.
With UNWINDKIT_INSTALL_PACKAGE=1 (the other releases' roots, which are ours to change:
scripts/test --smoke there), the package is then installed with apt as a user would, and used:
GDB loads the plugin from /etc/gdb/gdbinit.d by itself and unwinds the same core, and
`unwindkit setup lldb` makes every LLDB of the release load it; then it is removed again.
Prints the frame counts per thread: truth, GDB alone, GDB with the package."""
import os
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from truth.debuggers import HERE as TRUTH_DIR  # noqa: E402
from test_gdb_cores import frame_differences  # noqa: E402

SOURCE = os.environ["UNWINDKIT_SOURCE_DIR"]
GDBINIT_D = "etc/gdb/gdbinit.d/unwindkit.gdb"
GDB_PLUGIN = "usr/share/unwindkit/gdb/unwindkit-gdb.py"
LLDB_PLUGIN = "usr/lib/unwindkit/libunwindkit-lldb.so"
SERVER_LIBRARY = "usr/lib/unwindkit/libunwindkit-debuginfod.so"
# The plugin proper the loader opens in the release's first LLDB (lldb-plugin/CMakeLists.txt).
LLDB_PLUGIN_PROPER = ("usr/lib/unwindkit/libunwindkit-lldb-sb-"
                      f"{os.environ.get('UNWINDKIT_LLDB_VERSION', '22')}.so")
PACKAGED = ("usr/bin/unwindkit", GDB_PLUGIN, "usr/share/unwindkit/gdb/unwindkit_gdb/__init__.py",
            LLDB_PLUGIN, LLDB_PLUGIN_PROPER, SERVER_LIBRARY, GDBINIT_D,
            "usr/share/man/man1/unwindkit.1.gz", "usr/share/doc/unwindkit/README.md",
            "usr/share/doc/unwindkit/ARCHITECTURE.md")
CASE = "omit_fp"  # -fomit-frame-pointer: GDB alone cannot walk it without .eh_frame


def project_version():
    with open(os.path.join(SOURCE, "CMakeLists.txt")) as f:
        return re.search(r"project\(unwindkit VERSION ([0-9.]+)", f.read()).group(1)


def build_package(work):
    out = os.path.join(work, "package")
    env = dict(os.environ, UNWINDKIT_PACKAGE_BUILD=os.environ["UNWINDKIT_BUILD_DIR"],
               UNWINDKIT_PACKAGE_DIR=out)
    p = truth.run([os.path.join(SOURCE, "scripts", "package")], env=env, timeout=900,
                  check=False)
    if p.returncode != 0:
        raise RuntimeError(f"scripts/package failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    print(p.stdout.strip())
    debs = [f for f in os.listdir(out) if f.endswith(".deb")]
    if len(debs) != 1:
        raise RuntimeError(f"scripts/package made {debs}, not one .deb")
    return os.path.join(out, debs[0])


def owner(library):
    """The Debian package holding the installed shared library named `library` (a soname or
    a path), as dpkg says."""
    if "/" not in library:
        found = re.search(rf"^\s*{re.escape(library)} \(libc6,x86-64\) => (\S+)$",
                          truth.run(["ldconfig", "-p"]).stdout, re.MULTILINE)
        if not found:
            raise RuntimeError(f"ldconfig knows no {library}")
        library = found.group(1)
    for path in (library, os.path.realpath(library)):
        p = truth.run(["dpkg-query", "-S", path], check=False)
        if p.returncode == 0:
            return p.stdout.split(":")[0]
    raise RuntimeError(f"no package holds {library}")


def needed_packages(root):
    """What the package must depend on, found on this system, not written down: the packages
    holding every library its ELF files link (readelf -d NEEDED), Capstone (loaded on first
    use) and the Python the release's GDB embeds (the GDB extension links none)."""
    sonames = set()
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                if f.read(4) != b"\x7fELF":
                    continue
            dynamic = truth.run(["readelf", "-d", path]).stdout
            sonames.update(re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]", dynamic))
    sonames -= {"libc.so.6", "libm.so.6", "libgcc_s.so.1", "libstdc++.so.6",
                "ld-linux-x86-64.so.2"}  # libc6 and the compiler's runtime: always there
    packages = {owner(soname) for soname in sonames}
    gdb = truth.tools.need("gdb")
    python = re.search(r"libpython[0-9.]+\.so[^ ]*", truth.run(["ldd", gdb]).stdout)
    capstone = re.search(r"\S*libcapstone\.so\.[0-9]+", truth.run(["ldconfig", "-p"]).stdout)
    for library in (python, capstone):
        if library:
            packages.add(owner(library.group(0)))
    return packages


def check_contents(deb, root):
    problems = [f"the package has no /{path}" for path in PACKAGED
                if not os.path.isfile(os.path.join(root, path))]
    depends = truth.run(["dpkg-deb", "-f", deb, "Depends"]).stdout
    names = {re.split(r"[ (]", d.strip())[0] for d in depends.replace("|", ",").split(",")}
    wanted = needed_packages(root)
    print(f"Depends: {depends.strip()}")
    problems += [f"Depends lacks {d}: {depends.strip()}" for d in sorted(wanted - names)]
    if any(name.startswith("liblldb") for name in names):
        problems.append(f"Depends names a liblldb, so one LLDB would drag in another: {depends}")
    conffiles = truth.run(["dpkg-deb", "-I", deb, "conffiles"], check=False).stdout
    if f"/{GDBINIT_D}" not in conffiles.split():
        problems.append(f"/{GDBINIT_D} is not a conffile")
    return problems


def gdb_frames(gdb, exe, core, init=None):
    """[[pc, ...] per thread] through GDB's frame API (truth/gdb_frames.py), and the output;
    with `init` (the package's gdbinit.d file, or "system": GDB's own start-up files, where
    the installed package put it), `info unwinder` and `unwindkit status` too."""
    files = {None: ["-nx"], "system": []}.get(init, ["-nx", "-ix", init])
    extra = ["-ex", "info unwinder", "-ex", "unwindkit status"] if init else []
    p = truth.run([gdb, "-batch", *files, "-iex", "set pagination off", *extra,
                   "-x", os.path.join(TRUTH_DIR, "gdb_frames.py"), exe, core], check=False)
    threads = {}
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0] == "FRAME":
            threads.setdefault(int(parts[1]), []).append(int(parts[3], 16))
    return [threads[t] for t in sorted(threads)], p.stdout + p.stderr


def check_gdb(root, work, version):
    """GDB with the package's gdbinit.d file, from the unpacked `root`, or installed (root
    "/": GDB reads the file itself)."""
    problems = []
    with open(os.path.join(root, GDBINIT_D)) as f:
        installed = f.read()
    if f"source /{GDB_PLUGIN}\n" not in installed:
        return [f"/{GDBINIT_D} does not source /{GDB_PLUGIN}:\n{installed}"]
    init = "system"
    if root != "/":  # the file as a chroot at `root` would read it
        init = os.path.join(work, "unwindkit.gdb")
        with open(init, "w") as f:
            f.write(installed.replace("/usr/", f"{root}/usr/"))

    case = next(c for c in truth.cases_for("x86_64") if c.name == CASE)
    pair = truth.build_pair(case, truth.X86_64, work, os.path.join(SOURCE, "tests", "programs"))
    intact_core = truth.make_core(pair.intact, pair.arch)
    stripped_core = truth.make_core(pair.stripped, pair.arch)
    gdb = truth.tools.need("gdb")
    want, _ = gdb_frames(gdb, pair.intact.exe, intact_core)
    alone, _ = gdb_frames(gdb, pair.stripped.exe, stripped_core)
    got, out = gdb_frames(gdb, pair.stripped.exe, stripped_core, init)
    for rank, w in enumerate(want):
        a = len(alone[rank]) if rank < len(alone) else 0
        g = len(got[rank]) if rank < len(got) else 0
        print(f"{CASE} thread {rank}: truth {len(w)} frames; GDB alone {a}; "
              f"GDB with the package {g}")
    if not re.search(r"^\s+unwindkit\s*$", out, re.MULTILINE):
        problems.append(f"info unwinder does not list unwindkit:\n{out}")
    if f"unwindkit {version}\n" not in out:
        problems.append(f"GDB's unwindkit status does not print `unwindkit {version}`:\n{out}")
    # Every truth frame, in order, and none past the truth's outermost (`_start`).
    problems += [f"GDB with the package: {d}" for d in frame_differences(want, got)]
    for rank, w in enumerate(want):
        extra = len(got[rank]) - len(w) if rank < len(got) else 0
        if extra > 0:
            problems.append(f"GDB with the package: thread {rank} has {extra} frames past the end")
    # The case proves the package only where GDB alone misses the truth (it may also walk
    # past it into garbage, where libc's debug info lets its heuristics go on).
    if not frame_differences(want, alone):
        problems.append("GDB alone already gives the truth's frames: the case proves nothing")
    return problems


def check_bytecode(deb, root, work):
    """postinst/prerm as dpkg would run them, on the unpacked root (paths rewritten to it)."""
    control = os.path.join(work, "control")
    truth.run(["dpkg-deb", "-e", deb, control])
    plugin_dir = os.path.join(root, os.path.dirname(GDB_PLUGIN))
    sources = [os.path.join(d, f) for d, _, files in os.walk(plugin_dir) for f in files
               if f.endswith(".py")]
    scripts = {}
    for name in ("postinst", "prerm"):
        path = os.path.join(control, name)
        if not os.access(path, os.X_OK):
            return [f"the package has no executable {name}"]
        with open(path) as f:
            scripts[name] = f.read().replace("/usr/", f"{root}/usr/")
    truth.run(["sh", "-c", scripts["postinst"], "postinst", "configure"])
    tag = sys.implementation.cache_tag  # cpython-311: GDB's Python, as CTest runs this file
    missing = []
    for source in sources:
        folder, name = os.path.split(source)
        compiled = os.path.join(folder, "__pycache__", f"{name[:-3]}.{tag}.pyc")
        if not os.path.isfile(compiled):
            missing.append(compiled)
    problems = [f"postinst made no {path}" for path in missing]
    truth.run(["sh", "-c", scripts["prerm"], "prerm", "remove"])
    left = [os.path.join(d, f) for d, dirs, files in os.walk(plugin_dir)
            for f in files + [x for x in dirs if x == "__pycache__"]
            if not f.endswith(".py") and not f.startswith("_unwindkit")]
    problems += [f"prerm left {path}" for path in left]
    print(f"postinst compiled {len(sources) - len(missing)} of {len(sources)} Python files; "
          f"prerm left {len(left)} other files")
    return problems


def check_debuginfod(root, unwindkit):
    """The packaged CLI links no HTTP library, and its `debuginfod` command loads the server
    from the package's folder: it listens and answers 404 for a build-id it did not index."""
    needed = truth.run(["readelf", "-d", unwindkit]).stdout
    problems = [f"the CLI links {lib}" for lib in
                ("libmicrohttpd", "libcpp-httplib", "libssl", "libcrypto") if lib in needed]
    # DEBUGINFOD_URLS would be its upstream, asked about the build-id it must refuse.
    env = {k: v for k, v in os.environ.items() if k != "DEBUGINFOD_URLS"}
    server = subprocess.Popen([unwindkit, "debuginfod", "--port", "0",
                               os.path.join(root, SERVER_LIBRARY)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = server.stdout.readline()
        match = re.match(r"listening on (http://\S+)", line)
        if not match:
            server.kill()
            return problems + [f"`unwindkit debuginfod` did not listen: {line!r} "
                               f"{server.communicate(timeout=30)[1]!r}"]
        try:
            no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            no_proxy.open(f"{match.group(1)}/buildid/{'ab' * 20}/debuginfo", timeout=30)
            problems.append("`unwindkit debuginfod` served a build-id it did not index")
        except urllib.error.HTTPError as error:
            if error.code != 404:
                problems.append(f"`unwindkit debuginfod` answered {error.code}, not 404")
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"packaged unwindkit debuginfod: {line.strip()}")
    return problems


def check_setup(unwindkit, debugger, plugin, version, work, lldb=None):
    """`setup` twice, the debugger (`lldb`: that LLDB) loading the plugin from the init file,
    `--remove`."""
    problems = []
    home = os.path.join(work, f"home-{debugger}-{os.path.basename(lldb or '')}")
    os.makedirs(home)
    init = os.path.join(home, {"gdb": ".gdbinit", "lldb": ".lldbinit"}[debugger])
    line = {"gdb": "source ", "lldb": "plugin load "}[debugger] + os.path.realpath(plugin)
    env = dict(os.environ, HOME=home)
    for original in (None, b"settings set show-progress false\n", b"# no final newline"):
        if original is None and os.path.exists(init):
            os.remove(init)
        elif original is not None:
            with open(init, "wb") as f:
                f.write(original)
        for _ in range(2):
            p = truth.run([unwindkit, "setup", debugger], env=env)
            if init not in p.stdout:
                problems.append(f"setup {debugger} does not say what it changed: {p.stdout}")
        with open(init) as f:
            lines = f.read().splitlines()
        if lines.count(line) != 1:
            problems.append(f"after setup {debugger} twice, {init} has {lines.count(line)} "
                            f"lines `{line}`:\n{lines}")
        if original is None:
            if debugger == "lldb":
                cmd = [lldb or truth.tools.lldb(), "-b", "-o", "unwindkit status"]
            else:
                cmd = [truth.tools.need("gdb"), "-batch", "-ex", "unwindkit status"]
            out = truth.run(cmd, env=env, check=False).stdout
            if f"unwindkit {version}\n" not in out:
                problems.append(f"{debugger} with {init}: `unwindkit status` does not print "
                                f"`unwindkit {version}`:\n{out}")
        truth.run([unwindkit, "setup", debugger, "--remove"], env=env)
        with open(init, "rb") as f:
            after = f.read()
        if after != (original or b""):
            problems.append(f"setup {debugger} --remove: {init} is {after!r}, was {original!r}")
    return problems


def check_installed(deb, work, version):
    """apt installs the package (its dependencies from the release's archive), GDB and every
    LLDB of the release use it, and apt removes it again."""
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    p = truth.run(["apt-get", "install", "-y", "-qq", deb], env=env, timeout=900, check=False)
    if p.returncode != 0:
        return [f"apt-get install {deb} failed:\n{p.stdout}\n{p.stderr}"]
    try:
        status = truth.run(["dpkg-query", "-W", "-f", "${Status}", "unwindkit"]).stdout
        problems = [] if status == "install ok installed" else [f"after apt: {status}"]
        print(f"installed with apt: {os.path.basename(deb)}")
        os.makedirs(os.path.join(work, "installed"))
        problems += [f"installed: {p}" for p in check_gdb("/", os.path.join(work, "installed"),
                                                           version)]
        for v in os.environ.get("UNWINDKIT_LLDB_VERSIONS", "").split():
            lldb = truth.tools.need(f"lldb-{v}")
            problems += [f"installed, lldb-{v}: {p}" for p in check_setup(
                "/usr/bin/unwindkit", "lldb", "/" + LLDB_PLUGIN, version, work, lldb)]
            print(f"installed: lldb-{v} loads /{LLDB_PLUGIN} through `unwindkit setup lldb`")
        return problems
    finally:
        truth.run(["apt-get", "remove", "-y", "-qq", "unwindkit"], env=env, check=False)


def main():
    for tool in ("cpack", "dpkg-deb", "help2man"):
        truth.tools.need(tool)
    version = project_version()
    problems = []
    with tempfile.TemporaryDirectory(prefix="uk-package-") as work:
        deb = build_package(work)
        root = os.path.join(work, "root")
        truth.run(["dpkg", "-x", deb, root])
        problems += check_contents(deb, root)
        problems += check_bytecode(deb, root, work)
        unwindkit = os.path.join(root, "usr", "bin", "unwindkit")
        got = truth.run([unwindkit, "--version"]).stdout.strip()
        print(f"packaged unwindkit --version: {got}")
        if got != f"unwindkit {version}":
            problems.append(f"--version prints {got!r}, CMakeLists.txt says {version}")
        problems += check_debuginfod(root, unwindkit)
        try:
            problems += check_gdb(root, work, version)
        except truth.Skip as skip:
            print(f"SKIP GDB on a core: {skip}")
        problems += check_setup(unwindkit, "lldb", os.path.join(root, LLDB_PLUGIN), version,
                                work)
        problems += check_setup(unwindkit, "gdb", os.path.join(root, GDB_PLUGIN), version, work)
        # The build tree's binary finds the build tree's plugin.
        build = os.environ["UNWINDKIT_BUILD_DIR"]
        problems += check_setup(os.environ["UNWINDKIT"], "lldb",
                                os.path.join(build, "lldb-plugin", "libunwindkit-lldb.so"),
                                version, os.path.join(work, "build-tree"))
        if os.environ.get("UNWINDKIT_INSTALL_PACKAGE") == "1":
            problems += check_installed(deb, work, version)
    for p in problems:
        print(f"FAIL {p}")
    print(f"package: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
