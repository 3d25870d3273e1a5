"""`unwindkit compact-unwind dump|lookup`: Apple compact unwind (`__unwind_info`,
`__compact_unwind`) of a Mach-O objfile GDB loaded, or of any Mach-O file on disk.

The text is the core's, so it is exactly what the CLI's `unwindkit compact-unwind dump|lookup`
prints. GDB builds without Mach-O support (Debian's) load no Mach-O objfile, so naming the file
is the usual form there.
"""

import os
import re

import gdb

from .commands import _Prefix

# `info files` rows: "\t0x... - 0x... is SECTION" (the program) or "... is SECTION in PATH".
_INFO_FILES_ROW = r"\s*0x([0-9a-f]+) - 0x([0-9a-f]+) is (\S+)(?: in (.+))?$"


def _macho_objfiles():
    import _unwindkit
    return [o for o in gdb.objfiles() if o.filename and _unwindkit.is_macho(o.filename)]


def _parse(arg, usage):
    """(options, positional) from `[--json] [--decoded] [--arch ARCH] ...`."""
    argv = gdb.string_to_argv(arg)
    opts = {"json": False, "decoded": False, "arch": ""}
    positional = []
    while argv:
        a = argv.pop(0)
        if a in ("--json", "--decoded"):
            opts[a[2:]] = True
        elif a == "--arch" and argv:
            opts["arch"] = argv.pop(0)
        elif a.startswith("--"):
            raise gdb.GdbError(usage)
        else:
            positional.append(a)
    return opts, positional


def _resolve(name):
    """The path of a loaded Mach-O objfile whose path or file name is `name`, else `name` as a
    file on disk."""
    for o in _macho_objfiles():
        if name in (o.filename, os.path.basename(o.filename)):
            return o.filename
    if os.path.isfile(name):
        return name
    raise gdb.GdbError(f"unwindkit: no Mach-O objfile or file named {name}")


def _slid_sections(objfile, arch):
    """(slide, [(segment, section, address, size)]) of a loaded Mach-O objfile: the slide
    (run-time minus link-time address) is where `info files` says its __text is, 0 when GDB
    does not say."""
    import _unwindkit
    sections = _unwindkit.macho_sections(objfile.filename, arch)
    if isinstance(sections, str):
        raise gdb.GdbError(f"unwindkit: {objfile.filename}: {sections}")
    text = [addr for seg, sect, addr, _ in sections if seg == "__TEXT" and sect == "__text"]
    for line in gdb.execute("info files", to_string=True).splitlines():
        row = re.match(_INFO_FILES_ROW, line)
        if row and text and row.group(3).endswith("__text") and \
                (row.group(4) is None or row.group(4).strip() == objfile.filename):
            return int(row.group(1), 16) - text[0], sections
    return 0, sections


def _loaded_module_at(addr, arch):
    """(path, slide) of the loaded Mach-O objfile one of whose sections holds run-time `addr`."""
    for objfile in _macho_objfiles():
        slide, sections = _slid_sections(objfile, arch)
        if any(a + slide <= addr < a + slide + size for _, _, a, size in sections):
            return objfile.filename, slide
    raise gdb.GdbError(f"unwindkit: {addr:#x} is in no loaded Mach-O objfile; give a FILE")


class _DumpCommand(gdb.Command):
    """Print a Mach-O file's compact unwind tables exactly as `unwindkit compact-unwind dump`
(and llvm-objdump --macho --unwind-info) does.

Usage: unwindkit compact-unwind dump [--json] [--decoded] [--arch ARCH] [MODULE|FILE]
MODULE is a loaded Mach-O objfile (path or file name), FILE any Mach-O file; without either,
every loaded Mach-O objfile. ARCH picks a slice of a universal file."""

    _USAGE = "Usage: unwindkit compact-unwind dump [--json] [--decoded] [--arch ARCH] [MODULE|FILE]"

    def __init__(self):
        super().__init__("unwindkit compact-unwind dump", gdb.COMMAND_STACK, gdb.COMPLETE_FILENAME)

    def invoke(self, arg, from_tty):
        import _unwindkit
        opts, positional = _parse(arg, self._USAGE)
        if len(positional) > 1:
            raise gdb.GdbError(self._USAGE)
        if positional:
            paths = [_resolve(positional[0])]
        else:
            paths = [o.filename for o in _macho_objfiles()]
            if not paths:
                raise gdb.GdbError("unwindkit: no Mach-O objfile loaded; give a FILE")
        problems = []
        for path in paths:
            text, found = _unwindkit.compact_unwind_dump(path, opts["arch"], opts["json"],
                                                         opts["decoded"])
            gdb.write(text)
            problems.extend(found)
        if problems:
            raise gdb.GdbError("\n".join(f"unwindkit: {p}" for p in problems))


class _LookupCommand(gdb.Command):
    """Show the compact unwind entry covering an address and the rule it gives, as
`unwindkit compact-unwind lookup` does (DWARF-mode entries: the rule of __eh_frame's FDE).

Usage: unwindkit compact-unwind lookup [--json] [--arch ARCH] ADDR [MODULE|FILE]
ADDR is any expression. With MODULE or FILE it is an address of that file (no slide);
without, a run-time address in a loaded Mach-O objfile, whose slide is taken off first."""

    _USAGE = "Usage: unwindkit compact-unwind lookup [--json] [--arch ARCH] ADDR [MODULE|FILE]"

    def __init__(self):
        super().__init__("unwindkit compact-unwind lookup", gdb.COMMAND_STACK,
                         gdb.COMPLETE_EXPRESSION)

    def invoke(self, arg, from_tty):
        import _unwindkit
        opts, positional = _parse(arg, self._USAGE)
        if len(positional) not in (1, 2) or opts["decoded"]:
            raise gdb.GdbError(self._USAGE)
        addr = int(gdb.parse_and_eval(positional[0])) & 0xFFFFFFFFFFFFFFFF
        if len(positional) == 2:
            path, slide = _resolve(positional[1]), None
        else:
            path, slide = _loaded_module_at(addr, opts["arch"])
        text, error = _unwindkit.compact_unwind_lookup(path, opts["arch"], addr - (slide or 0),
                                                       opts["json"])
        if text is not None:
            if slide is not None and not opts["json"]:
                gdb.write(f"{path}: load address {addr:#x} = file address {addr - slide:#x} "
                          f"(slide {slide:#x})\n")
            gdb.write(text)
        if error is not None:
            raise gdb.GdbError(f"unwindkit: {error}")


def register():
    """Adds the commands; the `unwindkit` prefix must exist already."""
    _Prefix("unwindkit compact-unwind",
            "Apple compact unwind of Mach-O objfiles or files: dump, lookup.")
    _DumpCommand()
    _LookupCommand()
