#!/usr/bin/env python3
"""`unwindkit debuginfod` with the real clients and no plugin loaded.

For every truth program (tests/programs, built intact and stripped of symbols and .eh_frame
with .sframe kept, and crashed to cores; see truth/) and the shared fixtures, a server runs on
a free port over the stripped build's folder and its core. Then:
- elfutils' `debuginfod-find debuginfo ID` fetches a file that readelf reads, that has
  `.debug_frame` and the program's build-id, and no `___lldb_unnamed_symbol_` names (GDB's
  convention, told by libdebuginfod's User-Agent); a request without one (as LLDB 22 sends)
  gets the CFI as `.eh_frame` (the stripped copy has none of its own) and no such names either,
  since LLDB names a function it finds only in `.eh_frame` that way itself (test_lldb_same_bt
  holds LLDB's names to LLDB's own on the `.eh_frame` twin); `executable` gives the indexed
  file byte for byte;
  unknown build-ids get 404; malformed ids and traversal attempts get 400/404;
- GDB (gdb, or gdb-multiarch for AArch64) with `set debuginfod enabled on` and
  DEBUGINFOD_URLS on the stripped core gives every frame's PC of GDB on the intact copy's core
  (the truth: the intact copy ran separately at the same addresses), no frame more or less,
  and no frame named LLDB's way;
  so does each x86_64 program's SFrame v2 and v3 twin (`unwindkit sframe convert`), served
  alone, on the same core;
- lldb-dap-22 with the server URL in `initCommands` gives, for every thread, the stackTrace
  lldb-dap gives on the intact copy's core (x86_64: LLDB reads qemu's AArch64 cores poorly).
- Federation (issue D3): for each x86_64 program, GDB and lldb-dap pointed only at a server
  that indexed nothing (an empty folder), whose upstream holds the executables, get the same
  truth: once with that upstream another `unwindkit debuginfod` (the one above), once elfutils'
  own `debuginfod -F` over the stripped build's folder.
Each client gets its own empty cache folder, so nothing is shared between runs.
And the server itself: given only a core, it serves the files the core mapped (NT_FILE);
concurrent requests for one file make it once; a restart over the same
cache folder makes nothing again; a module whose .sframe is corrupt gets 404 and a log line
naming the section, and the server goes on serving."""
import http.client
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from dap_client import core_stacks  # noqa: E402
from test_gdb_cores import frame_differences  # noqa: E402
from truth.debuggers import HERE as TRUTH_DIR  # noqa: E402
from truth.twins import make_twins  # noqa: E402


class Server:
    """`unwindkit debuginfod --port 0` over `paths`; its log lines are kept in `log`."""

    def __init__(self, paths, cache_dir, extra=(), port=0, env=None):
        # DEBUGINFOD_URLS is the server's upstream when --upstream is not given: only what a
        # test passes in `env` is.
        if env is None:
            env = {k: v for k, v in os.environ.items() if k != "DEBUGINFOD_URLS"}
        self.proc = subprocess.Popen(
            [os.environ["UNWINDKIT"], "debuginfod", "--port", str(port), "--cache", cache_dir,
             *extra, *paths],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace", env=env)
        first = self.proc.stdout.readline().strip()
        m = re.fullmatch(r"listening on http://127\.0\.0\.1:(\d+)", first)
        if not m:
            self.stop()
            raise RuntimeError(f"unexpected first line {first!r}: {self.proc.stderr.read()}")
        self.port = int(m.group(1))
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = []
        self._reader = threading.Thread(target=self._read_log, daemon=True)
        self._reader.start()

    def _read_log(self):
        for line in self.proc.stderr:
            self.log.append(line.rstrip("\n"))

    def get(self, raw_path, user_agent=None, headers=()):
        """(status, body) for a GET of `raw_path` exactly as given (no client normalising)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        conn.putrequest("GET", raw_path, skip_accept_encoding=True)
        if user_agent:
            conn.putheader("User-Agent", user_agent)
        for name, value in headers:
            conn.putheader(name, value)
        conn.endheaders()
        r = conn.getresponse()
        body = r.read()
        conn.close()
        return r.status, body

    def wait_log(self, count, timeout=10):
        """The log once it has `count` request lines (the server logs after answering)."""
        deadline = time.monotonic() + timeout
        while sum(" GET " in line for line in self.log) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return list(self.log)

    def served(self, build_id):
        return any(f"/buildid/{build_id}/debuginfo 200 " in line for line in self.log)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def free_port():
    """A port free on loopback now (for a server that cannot be told to take any)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ElfutilsServer:
    """elfutils' own `debuginfod -F FOLDER` (the server fleets run), once it serves every
    build-id of `wanted` (its first scan is done). It listens on every address of the machine
    (0.188 has no option to bind one), on a port free when it starts."""

    def __init__(self, folder, work, wanted, timeout=120):
        binary = shutil.which("debuginfod")
        if binary is None:
            raise FileNotFoundError("debuginfod (elfutils' server) is not installed")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGINFOD_")}
        self.log_path = os.path.join(work, "elfutils-debuginfod.log")
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(
                [binary, "-F", "-p", str(self.port), "-d", os.path.join(work, "elfutils.sqlite"),
                 "-g", "0", folder], stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + timeout
        waiting = list(wanted)
        while waiting and time.monotonic() < deadline and self.proc.poll() is None:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                conn.request("GET", f"/buildid/{waiting[0]}/executable")  # it answers no HEAD
                r = conn.getresponse()
                r.read()
                conn.close()
                if r.status == 200:
                    waiting.pop(0)
                    continue
            except OSError:
                pass
            time.sleep(0.5)
        if waiting:
            self.stop()
            with open(self.log_path) as f:
                raise RuntimeError(f"elfutils' debuginfod does not serve {waiting[0]} after "
                                   f"{timeout} s: {f.read()[-500:]}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def build_id(path):
    out = truth.run(["readelf", "-n", path]).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else None


def check_protocol(server, exe, work):
    """debuginfod-find and raw requests against the server; returns problems."""
    problems = []
    bid = build_id(exe)
    env = dict(os.environ, DEBUGINFOD_URLS=server.url,
               DEBUGINFOD_CACHE_PATH=os.path.join(work, "find-cache"))
    find = truth.tools.need("debuginfod-find")
    p = truth.run([find, "debuginfo", bid], env=env, check=False)
    path = p.stdout.strip()
    if p.returncode != 0 or not os.path.isfile(path):
        return [f"debuginfod-find debuginfo {bid}: exit {p.returncode} {p.stderr.strip()}"]
    sections = truth.run(["readelf", "-SW", path]).stdout
    if not re.search(r"\] \.debug_frame\s+PROGBITS", sections):
        problems.append(f"the fetched file has no .debug_frame:\n{sections}")
    if build_id(path) != bid:
        problems.append(f"the fetched file's build-id is {build_id(path)}, not {bid}")
    frames = truth.run(["readelf", "--debug-dump=frames", path]).stdout
    if frames.count(" FDE ") < 3:
        problems.append(f"the fetched .debug_frame has {frames.count(' FDE ')} FDEs")
    # Names as each client's debugger gives them: libdebuginfod (GDB's, `User-Agent:
    # elfutils/...`) gets none for functions known only from SFrame (GDB prints `?? ()`); a
    # request without a User-Agent, as LLDB 22 sends it, gets the CFI as `.eh_frame`, from
    # which LLDB makes `___lldb_unnamed_symbol_ADDR` itself.
    if lldb_names(path):
        problems.append(f"libdebuginfod's request got LLDB's names: {lldb_names(path)[:3]}")
    status, body = server.get(f"/buildid/{bid}/debuginfo")
    as_lldb = os.path.join(work, "as-lldb.debug")
    with open(as_lldb, "wb") as f:
        f.write(body)
    lldb_frames = truth.run(["readelf", "--debug-dump=frames", as_lldb]).stdout
    if status != 200 or "Contents of the .eh_frame section" not in lldb_frames \
            or lldb_frames.count(" FDE ") < 3:
        problems.append(f"a request without User-Agent (LLDB's) got {status} and "
                        f"{lldb_frames.count(' FDE ')} .eh_frame FDEs")
    if lldb_names(as_lldb):
        problems.append(f"LLDB's file names what LLDB names itself: {lldb_names(as_lldb)[:3]}")
    p = truth.run([find, "executable", bid], env=env, check=False)
    with open(exe, "rb") as a, open(p.stdout.strip() or os.devnull, "rb") as b:
        if p.returncode != 0 or a.read() != b.read():
            problems.append(f"debuginfod-find executable {bid} is not the indexed file")
    unknown = "00" * 20
    p = truth.run([find, "debuginfo", unknown], env=env, check=False)
    if p.returncode == 0:
        problems.append(f"debuginfod-find found the unknown build-id {unknown}")
    if server.get(f"/buildid/{unknown}/debuginfo")[0] != 404:
        problems.append("an unknown build-id did not get 404")
    for raw in ("/buildid/../../../../etc/passwd", "/buildid/..%2f..%2f..%2fetc%2fpasswd/debuginfo",
                f"/buildid/{bid}/../../../../etc/passwd", f"/buildid/{bid}/source/../../etc/passwd",
                f"/buildid/{bid}/source/%2fetc%2fpasswd", "/buildid/zz/debuginfo",
                f"/buildid/{bid}x/debuginfo", "/../../etc/passwd", "/buildid//debuginfo"):
        status, body = server.get(raw)
        if status not in (400, 404) or b"root:" in body:
            problems.append(f"GET {raw} gave {status}")
    if not any(" 404 " in line and "unknown build-id" in line for line in server.wait_log(1)):
        problems.append(f"no log line for the 404s: {server.log[-5:]}")
    return problems


def lldb_names(path):
    """The `___lldb_unnamed_symbol_ADDR` symbols of a debug file (readelf -s)."""
    return [line.split()[-1] for line in truth.run(["readelf", "-sW", path]).stdout.splitlines()
            if "___lldb_unnamed_symbol_" in line]


def sframe_offset(path):
    """File offset of the .sframe section (readelf -S)."""
    for line in truth.run(["readelf", "-SW", path]).stdout.splitlines():
        m = re.search(r"\] \.sframe\s+\S+\s+[0-9a-f]+ ([0-9a-f]+) ", line)
        if m:
            return int(m.group(1), 16)
    raise RuntimeError(f"{path} has no .sframe")


def check_server(exe, work):
    """Single synthesis under concurrency, the disk cache across a restart, a corrupt
    section; returns problems."""
    problems = []
    bid = build_id(exe)
    cache = os.path.join(work, "restart-cache")
    server = Server([exe], cache)
    try:
        results = []
        threads = [threading.Thread(target=lambda: results.append(
            server.get(f"/buildid/{bid}/debuginfo"))) for _ in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if [s for s, _ in results] != [200] * 32 or len({b for _, b in results}) != 1:
            problems.append(f"32 concurrent requests: {sorted(s for s, _ in results)}")
        made = [line for line in server.wait_log(32) if line.endswith(" made")]
        if len(made) != 1:
            problems.append(f"32 concurrent requests made the file {len(made)} times")
        first_body = results[0][1] if results else b""
    finally:
        server.stop()
    server = Server([exe], cache)
    try:
        status, body = server.get(f"/buildid/{bid}/debuginfo")
        if status != 200 or body != first_body:
            problems.append(f"after a restart: status {status}, same file: {body == first_body}")
        if not any(line.endswith(" disk") for line in server.wait_log(1)):
            problems.append(f"after a restart the file did not come from the disk cache: "
                            f"{server.log[-1:]}")
    finally:
        server.stop()

    # Bounds (docs/debuginfod.md): with no memory for files, a second request is answered
    # from the folder; with no room in the folder, the file made last is the one it keeps.
    # The two namings (libdebuginfod's User-Agent gets GDB's) are two files of one module.
    bounded = os.path.join(work, "bounded-cache")
    server = Server([exe], bounded, ["--memory-mib", "0", "--cache-max-mib", "0"])
    try:
        answers = [server.get(f"/buildid/{bid}/debuginfo")[0] for _ in range(2)]
        answers.append(server.get(f"/buildid/{bid}/debuginfo", "elfutils/0.188")[0])
        sources = [line.rsplit(" ", 1)[-1] for line in server.wait_log(3) if " GET " in line]
        kept = sorted(n for n in os.listdir(bounded) if n.endswith(".debug"))
        # (A line is logged after its answer: the order of lines may differ.)
        if answers != [200] * 3 or sorted(sources) != ["disk", "made", "made"]:
            problems.append(f"--memory-mib 0: answers {answers}, from {sources} (want made "
                            "twice and disk once)")
        if len(kept) != 1 or ".plain." not in kept[0]:
            problems.append(f"--cache-max-mib 0: the folder keeps {kept}, not the one file "
                            "made last (GDB's naming)")
    finally:
        server.stop()

    corrupt_dir = os.path.join(work, "corrupt")
    os.makedirs(corrupt_dir, exist_ok=True)
    corrupt = os.path.join(corrupt_dir, "prog")
    with open(exe, "rb") as f:
        data = bytearray(f.read())
    data[sframe_offset(exe) + 2] = 0x7f  # sfp_version: no such SFrame version
    with open(corrupt, "wb") as f:
        f.write(data)
    server = Server([corrupt], os.path.join(work, "corrupt-cache"))
    try:
        status, _ = server.get(f"/buildid/{bid}/debuginfo")
        again, body = server.get(f"/buildid/{bid}/executable")
        if status != 404:
            problems.append(f"a corrupt .sframe gave {status}, not 404")
        if again != 200 or bytes(body) != bytes(data):
            problems.append(f"after the corrupt section the server answered {again}")
        if not any(" 404 " in line and ".sframe" in line for line in server.wait_log(2)):
            problems.append(f"no log line names the corrupt .sframe: {server.log}")
    finally:
        server.stop()
    if server.proc.returncode not in (0, -15):
        problems.append(f"the server ended with {server.proc.returncode}")
    return problems


def gdb_frames(gdb, exe, core, before, env=None, early=()):
    """{thread rank: [(pc, name)]} through GDB's frame API (truth/gdb_frames.py)."""
    cmd = [gdb, "-nx", "-batch"]
    for c in early:
        cmd += ["-iex", c]
    cmd += ["-ex", "set pagination off"]
    for c in before:
        cmd += ["-ex", c]
    cmd += [exe, core, "-x", os.path.join(TRUTH_DIR, "gdb_frames.py")]
    out = truth.run(cmd, env=env, timeout=600, check=False).stdout
    threads = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0] == "FRAME":
            threads.setdefault(int(parts[1]), []).append((int(parts[3], 16), parts[4]))
    # Twins are separate processes: thread ids differ, their order does not.
    return [threads[tid] for tid in sorted(threads)]


def compare_stacks(want, got, what):
    """Problems where `got` is not `want`, including frames past the end. The twins are
    separate processes whose threads a debugger may list in another order: stacks are paired
    in sorted order."""
    want, got = sorted(want), sorted(got)
    problems = [f"{what} {p}" for p in frame_differences(want, got)]
    for rank, (w, g) in enumerate(zip(want, got)):
        if len(g) > len(w):
            problems.append(f"{what} thread {rank}: {len(g) - len(w)} frames past the end "
                            f"(#{len(w)} at {g[len(w)]:#x})")
    return problems


class Result:
    gdb_alone_right = False  # GDB without the server already gives the truth on this pair


def check_core_index(exe, core, work):
    """A server given only the core indexes the files it mapped (NT_FILE)."""
    server = Server([core], os.path.join(work, "core-only-cache"))
    try:
        bid = build_id(exe)
        status, body = server.get(f"/buildid/{bid}/executable")
        with open(exe, "rb") as f:
            if status != 200 or body != f.read():
                return [f"a server given only the core does not serve its program: {status}"]
        if server.get(f"/buildid/{bid}/debuginfo")[0] != 200:
            return ["a server given only the core does not synthesize its program's file"]
    finally:
        server.stop()
    return []


def check_twins(gdb, stripped, stripped_core, want_pcs, work):
    """The stripped copy's SFrame v2 and v3 twins (`unwindkit sframe convert`: the same loaded
    segments and build-id, so the stripped core is theirs too), each served alone: GDB must
    get every frame of the intact copy through debuginfod."""
    problems = []
    for twin in make_twins(stripped):
        if twin.label not in ("v2", "v3"):
            continue
        server = Server([twin.build.dir], os.path.join(work, f"cache-{twin.label}"))
        try:
            env = dict(os.environ, DEBUGINFOD_URLS=server.url,
                       DEBUGINFOD_CACHE_PATH=os.path.join(work, f"gdb-cache-{twin.label}"))
            got = gdb_frames(gdb, twin.build.exe, stripped_core, [], env,
                             early=["set debuginfod enabled on"])
            problems += compare_stacks(want_pcs, [[pc for pc, _ in t] for t in got],
                                       f"gdb, {twin.label} twin")
            if not server.served(build_id(twin.build.exe)):
                problems.append(f"GDB never fetched the {twin.label} twin's debuginfo")
        finally:
            server.stop()
    return problems


def gdb_through(gdb, pair, stripped_core, url, cache):
    """GDB's stacks of the stripped core with `url` its only debuginfod server."""
    env = dict(os.environ, DEBUGINFOD_URLS=url, DEBUGINFOD_CACHE_PATH=cache)
    return gdb_frames(gdb, pair.stripped.exe, stripped_core,
                      [f"set solib-search-path {pair.stripped.dir}"], env,
                      early=["set debuginfod enabled on"])


def dap_search(build):
    return [f"settings append target.exec-search-paths {d}" for d in [build.dir, *build.search_dirs]]


def dap_through(dap, pair, stripped_core, url, cache):
    """lldb-dap's stacks of the stripped core with `url` its only debuginfod server."""
    return core_stacks(dap, pair.stripped.exe, stripped_core, [
        f"settings set plugin.symbol-locator.debuginfod.server-urls {url}",
        f"settings set plugin.symbol-locator.debuginfod.cache-path {cache}",
        *dap_search(pair.stripped)])


def check_upstreams(pair, stripped_core, upstream, want_pcs, lldb_want, work):
    """GDB and lldb-dap pointed only at a server that indexed nothing, in front of `upstream`
    (this suite's server over the stripped build and its core) and of elfutils' debuginfod over
    the stripped build's folder: the same stacks as the truth. Returns (problems, what ran)."""
    problems, ran = [], []
    empty = os.path.join(work, "indexed-nothing")
    os.makedirs(empty, exist_ok=True)
    bid = build_id(pair.stripped.exe)
    upstreams = [("unwindkit", lambda: upstream)]
    if shutil.which("debuginfod"):
        upstreams.append(("elfutils", lambda: ElfutilsServer(
            pair.stripped.dir, work, [build_id(f) for f in [pair.stripped.exe, *pair.stripped.libs]])))
    else:
        problems.append("elfutils' debuginfod (package debuginfod) is not installed")
    gdb = truth.tools.need(pair.arch.gdb)
    dap = truth.tools.lldb("lldb-dap")
    for kind, start in upstreams:
        up = start()
        try:
            front = Server([empty], os.path.join(work, f"front-{kind}-cache"),
                           extra=("--upstream", up.url))
            try:
                got = gdb_through(gdb, pair, stripped_core, front.url,
                                  os.path.join(work, f"gdb-front-{kind}"))
                problems += compare_stacks(want_pcs, [[pc for pc, _ in t] for t in got],
                                           f"gdb through a {kind} upstream")
                lldb_got = dap_through(dap, pair, stripped_core, front.url,
                                       os.path.join(work, f"lldb-front-{kind}"))
                problems += compare_stacks(lldb_want, lldb_got, f"lldb-dap through a {kind} upstream")
                if not front.served(bid):
                    problems.append(f"the front of the {kind} upstream never served the program's "
                                    "debuginfo")
                ran.append(f"{kind} upstream: gdb {sum(len(t) for t in got)}, lldb-dap "
                           f"{sum(len(t) for t in lldb_got)} frames")
            finally:
                front.stop()
        finally:
            if up is not upstream:
                up.stop()
    return problems, ran


def check_pair(pair, intact_core, stripped_core, work, protocol, result):
    problems = []
    os.makedirs(work, exist_ok=True)
    # The shared fixtures' cores name a folder that no longer exists; qemu's have no NT_FILE.
    if pair.arch is truth.X86_64 and not pair.name.startswith("fixture"):
        problems += check_core_index(pair.stripped.exe, stripped_core, work)
    server = Server([pair.stripped.dir, stripped_core], os.path.join(work, "server-cache"))
    try:
        if protocol:
            problems += check_protocol(server, pair.stripped.exe, work)
            problems += check_server(pair.stripped.exe, work)
        gdb = truth.tools.need(pair.arch.gdb)
        want = gdb_frames(gdb, pair.intact.exe, intact_core,
                          [f"set solib-search-path {pair.intact.dir}"])
        if not want or not want[0] or want[0][-1][1] != "_start":
            raise truth.Skip(f"GDB on the intact core does not end at _start: {want[:1]}")
        got = gdb_through(gdb, pair, stripped_core, server.url, os.path.join(work, "gdb-cache"))
        want_pcs = [[pc for pc, _ in t] for t in want]
        problems += compare_stacks(want_pcs, [[pc for pc, _ in t] for t in got], "gdb")
        lldb_named = sorted({name for t in got for _, name in t if "___lldb_unnamed" in name})
        if lldb_named:
            problems.append(f"GDB shows LLDB's names, not its `?? ()`: {lldb_named[:3]}")
        alone = gdb_frames(gdb, pair.stripped.exe, stripped_core,
                           [f"set solib-search-path {pair.stripped.dir}"],
                           dict(os.environ, DEBUGINFOD_URLS=""))
        result.gdb_alone_right = not compare_stacks(want_pcs, [[pc for pc, _ in t] for t in alone],
                                                    "gdb alone")
        line = f"     {pair.name}: gdb {sum(len(t) for t in got)} frames"
        if result.gdb_alone_right:
            line += " (GDB alone gets them too)"
        if not server.served(build_id(pair.stripped.exe)):
            problems.append("GDB never fetched the program's debuginfo")

        if pair.arch is truth.X86_64 and not pair.stripped.libs:
            problems += check_twins(gdb, pair.stripped, stripped_core, want_pcs, work)
            line += ", v2 and v3 twins"
        if pair.arch is truth.X86_64:
            dap = truth.tools.lldb("lldb-dap")
            lldb_want = core_stacks(dap, pair.intact.exe, intact_core, dap_search(pair.intact))
            lldb_got = dap_through(dap, pair, stripped_core, server.url,
                                   os.path.join(work, "lldb-cache"))
            problems += compare_stacks(lldb_want, lldb_got, "lldb-dap")
            line += f", lldb-dap {sum(len(t) for t in lldb_got)} frames"
            found, ran = check_upstreams(pair, stripped_core, server, want_pcs, lldb_want, work)
            problems += found
            line += "".join(f"; {r}" for r in ran)
        print(line)
    finally:
        server.stop()
    return problems


def main():
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "programs")
    only = sys.argv[1:]
    failed, ran, alone_right = [], 0, 0
    with tempfile.TemporaryDirectory(prefix="uk-debuginfod-") as work:
        jobs = []
        if not only:
            shared = os.environ["UNWINDKIT_SHARED_DIR"]
            jobs.append((truth.X86_64, None, truth.fixture_pair(shared, truth.X86_64)))
            jobs.append((truth.AARCH64, None, truth.fixture_pair(shared, truth.AARCH64)))
        for arch in (truth.X86_64, truth.AARCH64):
            for case in truth.cases_for(arch.name):
                reason = dict(case.no_truth).get(arch.name)
                if reason:
                    print(f"SKIP {arch.name} {case.name}: {reason}")
                elif case.keep_eh_frame:
                    print(f"SKIP {arch.name} {case.name}: the stripped copy keeps .eh_frame")
                elif not only or case.name in only:
                    jobs.append((arch, case, None))
        for index, (arch, case, pair) in enumerate(jobs):
            name = f"{arch.name} {case.name}" if case else pair.name
            try:
                if pair is None:
                    pair = truth.build_pair(case, arch, work, src)
                    intact_core = truth.make_core(pair.intact, pair.arch)
                    stripped_core = truth.make_core(pair.stripped, pair.arch)
                else:
                    intact_core = os.path.join(pair.intact.dir, "core.prog")
                    stripped_core = os.path.join(pair.stripped.dir, "core.prog")
                result = Result()
                problems = check_pair(pair, intact_core, stripped_core,
                                      os.path.join(work, f"run{index}"), index == 0, result)
            except truth.Skip as skip:
                print(f"SKIP {name}: {skip}")
                continue
            ran += 1
            alone_right += result.gdb_alone_right
            if problems:
                failed.append(name)
                print(f"FAIL {name}:\n  " + "\n  ".join(problems))
            else:
                print(f"ok   {name}")
    print(f"{ran - len(failed)}/{ran} programs: every frame as on the intact copy, through "
          f"debuginfod alone")
    print(f"GDB alone, without the server, gets {alone_right}/{ran} of them right")
    if alone_right == ran:
        print("FAIL: GDB alone is right everywhere: these programs do not exercise the server")
    return 1 if failed or ran == 0 or alone_right == ran else 0


if __name__ == "__main__":
    sys.exit(main())
