"""SFrame v2 and v3 twins of a stripped build, made with `unwindkit sframe convert`.

`convert` appends the re-encoded .sframe past the loaded image and leaves the program headers
alone, so the loaded segments are byte for byte those of the stripped copy: the stripped copy's
core is the core of every twin too. Ours reads .sframe through the section headers, so on a
twin it unwinds with the converted section (function starts recomputed for its new address).

The executable is passed to `unwindkit bt` explicitly. Our shared libraries are found by the
path the core's NT_FILE records, before any --solib-search-path, so a twin's libraries go
into a sysroot under that same path; the sysroot links /usr, /lib and /lib64 back to the
system's so that libc and the dynamic linker are still found there.
"""
import dataclasses
import os

from .build import Build
from .ours import unwindkit
from .tools import run

# (label, convert arguments)
VARIANTS = (("v2", ("--to-version", "2")),
            ("v2-pcrel", ("--to-version", "2", "--pcrel")),
            ("v3", ("--to-version", "3")))


@dataclasses.dataclass
class Twin:
    label: str
    build: Build
    bt_args: tuple  # extra `unwindkit bt` arguments


def _convert(src, dst, args):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    run([unwindkit(), "sframe", "convert", src, *args, "-o", dst])


def make_twins(stripped):
    """One Twin per VARIANTS entry, next to the stripped build's folder."""
    twins = []
    for label, args in VARIANTS:
        base = os.path.join(os.path.dirname(stripped.dir), f"twin-{label}")
        exe = os.path.join(base, os.path.basename(stripped.exe))
        _convert(stripped.exe, exe, args)
        bt_args = ()
        if stripped.libs:
            sysroot = os.path.join(base, "sysroot")
            for lib in stripped.libs:
                _convert(lib, sysroot + os.path.abspath(lib), args)
            for top in ("usr", "lib", "lib64"):
                if os.path.exists("/" + top):
                    os.symlink("/" + top, os.path.join(sysroot, top))
            bt_args = ("--sysroot", sysroot)
        twins.append(Twin(label, Build(base, exe, [], list(stripped.search_dirs)), bt_args))
    return twins
