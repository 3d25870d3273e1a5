"""Building a program's intact and stripped twins.

x86_64: one link with `-Wa,--gsframe`, then the stripped copy is
`strip --strip-all -R .eh_frame -R .eh_frame_hdr` of it (.sframe kept).
AArch64: static links (qemu's cores carry no NT_FILE); the stripped twin is linked from the
program's own objects with .eh_frame removed (`objcopy -R .eh_frame`), so libc keeps its CFI,
then `strip --strip-all`.
Both twins live in sibling folders with names of the same length ("intact", "stripd") and
run as `./prog`, so their stacks and mappings are laid out identically.
A third copy, "ehfram", is the intact link stripped of symbols only (`strip --strip-all`,
.eh_frame kept; on AArch64 that is the link of the objects that kept .eh_frame): the oracle
for a debugger that must print the same text with the stripped copy as with CFI and no
symbols. Like every copy it is stripped before it runs.
"""
import dataclasses
import os
import shutil

from .tools import Skip, need, run


@dataclasses.dataclass(frozen=True)
class Arch:
    name: str
    cc: str
    cxx: str
    gdb: str
    static: bool
    runner: tuple  # command prefix that runs a program of this architecture


X86_64 = Arch("x86_64", "gcc", "g++", "gdb", False, ())
AARCH64 = Arch("aarch64", "aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++", "gdb-multiarch",
               True, ("qemu-aarch64",))
# Static for qemu too (test_truth_s390x.py, binutils 2.46 or later for SFrame on s390x).
S390X = Arch("s390x", "s390x-linux-gnu-gcc", "s390x-linux-gnu-g++", "gdb-multiarch", True,
             ("qemu-s390x",))


@dataclasses.dataclass
class Build:
    dir: str
    exe: str  # absolute path of the program
    libs: list  # absolute paths of our shared libraries next to it
    search_dirs: list = dataclasses.field(default_factory=list)  # where to find named files


@dataclasses.dataclass
class Pair:
    name: str
    arch: Arch
    intact: Build
    stripped: Build
    eh_frame: Build = None  # symbols stripped, .eh_frame kept (None for the shared fixture)


def _compile_objects(arch, case, src_dir, out_dir, gsframe=True):
    objs = []
    for src in case.sources:
        compiler = arch.cxx if src.endswith(".cpp") else arch.cc
        obj = os.path.join(out_dir, os.path.splitext(src)[0] + ".o")
        run([need(compiler), "-c", *case.cflags, *(["-Wa,--gsframe"] if gsframe else []),
             os.path.join(src_dir, src), "-o", obj])
        objs.append(obj)
    return objs


def _link(arch, case, objs, out_dir, lib_objs):
    linker = arch.cxx if any(s.endswith(".cpp") for s in case.sources) else arch.cc
    libs = []
    extra = []
    if lib_objs:
        lib = os.path.join(out_dir, "libcrashlib.so")
        run([need(arch.cc), "-shared", *lib_objs, "-o", lib])
        libs.append(lib)
        extra = ["-L", out_dir, "-lcrashlib", "-Wl,-rpath,$ORIGIN"]
    exe = os.path.join(out_dir, "prog")
    static = ["-static"] if arch.static else []
    run([need(linker), *static, *objs, *extra, "-pthread", "-o", exe])
    return Build(out_dir, exe, libs)


def build_program(case, arch, out_dir, src_dir, gsframe):
    """`case` compiled with or without `-Wa,--gsframe` and linked as out_dir/prog (symbols and
    .eh_frame kept); returns the Build and its object files. No shared library: a case with
    one raises Skip."""
    if case.lib_sources:
        raise Skip("a case with a shared library is not built this way")
    os.makedirs(out_dir, exist_ok=True)
    objs = _compile_objects(arch, case, src_dir, out_dir, gsframe)
    return _link(arch, case, objs, out_dir, []), objs


def build_pair(case, arch, workdir, src_dir):
    """Builds `case` for `arch` under workdir/<case>/{intact,stripd,ehfram}; returns the Pair."""
    if case.lib_sources and arch.static:
        raise Skip("a shared library needs a dynamic link; AArch64 cases are static for qemu")
    base = os.path.join(workdir, arch.name, case.name)
    shutil.rmtree(base, ignore_errors=True)
    intact_dir, stripped_dir = os.path.join(base, "intact"), os.path.join(base, "stripd")
    eh_frame_dir = os.path.join(base, "ehfram")
    for d in (intact_dir, stripped_dir, eh_frame_dir):
        os.makedirs(d)

    def lib_objects(out_dir):
        objs = []
        for src in case.lib_sources:
            obj = os.path.join(out_dir, os.path.splitext(src)[0] + ".o")
            run([need(arch.cc), "-c", "-fPIC", *case.lib_cflags, "-Wa,--gsframe",
                 os.path.join(src_dir, src), "-o", obj])
            objs.append(obj)
        return objs

    objs = _compile_objects(arch, case, src_dir, intact_dir)
    intact = _link(arch, case, objs, intact_dir, lib_objects(intact_dir))
    prefix = arch.cc[: -len("gcc")]
    eh_frame = Build(eh_frame_dir, os.path.join(eh_frame_dir, "prog"),
                     [os.path.join(eh_frame_dir, os.path.basename(l)) for l in intact.libs])
    for src, dst in [(intact.exe, eh_frame.exe), *zip(intact.libs, eh_frame.libs)]:
        run([need(prefix + "strip"), "--strip-all", src, "-o", dst])
    if arch.static:
        bare = []
        for o in objs:
            out = os.path.join(stripped_dir, os.path.basename(o))
            drop = [] if case.keep_eh_frame else ["-R", ".eh_frame"]
            run([need(prefix + "objcopy"), *drop, o, out])
            bare.append(out)
        stripped = _link(arch, case, bare, stripped_dir, [])
        run([need(prefix + "strip"), "--strip-all", stripped.exe])
    else:
        stripped = Build(stripped_dir, os.path.join(stripped_dir, "prog"),
                         [os.path.join(stripped_dir, os.path.basename(l)) for l in intact.libs])
        drop = [] if case.keep_eh_frame else ["-R", ".eh_frame", "-R", ".eh_frame_hdr"]
        for src, dst in [(intact.exe, stripped.exe), *zip(intact.libs, stripped.libs)]:
            run([need("strip"), "--strip-all", *drop, src, "-o", dst])
    return Pair(case.name, arch, intact, stripped, eh_frame)


def fixture_pair(shared_dir, arch):
    """The shared fixture sframe-v2-<arch> as a Pair (its cores are given, not made). Its cores
    name its libraries under the folder it was made in, so every tool is pointed at the
    fixture's folders by file name (Build.search_dirs)."""
    base = os.path.join(shared_dir, "fixtures", f"sframe-v2-{arch.name}")

    def side(sub):
        d = os.path.join(base, sub)
        libs = [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".so")]
        return Build(d, os.path.join(d, "prog"), libs, [d])

    return Pair(f"fixture sframe-v2-{arch.name}", arch, side("intact"), side("stripped"))
