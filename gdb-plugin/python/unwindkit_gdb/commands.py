"""The `unwindkit` command tree: status, sframe dump/lookup/check, bt, set/show.

Each command prints what the core says; a problem prints a message (gdb.GdbError), never a
Python traceback.
"""

import os
import re

import gdb


_DEFAULT_BT_LIMIT = 10000
# `info symbol` output: "leaf + 13 in section .text" or "main in section .text of /x/prog".
_INFO_SYMBOL = r"^(\S+)(?: \+ (\d+))? in section "  # compiled on first use (re's cache)


def _unwinder_enabled():
    for unwinder in gdb.frame_unwinders:
        if unwinder.name == "unwindkit":
            return unwinder.enabled
    return False


def _hex(value):
    return f"{value:#x}"


def _describe_module(module, side_note):
    if module.error is not None:
        table = f"ERROR {module.error}"
    elif module.has_sframe:
        table = (f"{module.sframe_name} at {_hex(module.sframe_address)}, "
                 f"{module.fde_count} functions")
    else:
        table = "no .sframe"
    cfi = "has DWARF CFI" if module.has_cfi else "no DWARF CFI"
    side = f"\n    {side_note}" if side_note else ""
    return f"{module.path}\n    bias {_hex(module.bias)}; {table}; {cfi}{side}"


def _name_of(address):
    """GDB's (function name, offset) for a code address, or None: the symbol `info symbol`
    gives, which covers stripped files' .dynsym too."""
    try:
        text = gdb.execute(f"info symbol {address:#x}", to_string=True)
    except gdb.error:
        return None
    found = re.match(_INFO_SYMBOL, text)
    if not found:
        return None
    return found.group(1), int(found.group(2) or 0)


def _complete_objfile(state, text):
    names = set()
    for objfile in gdb.current_progspace().objfiles():
        names.add(objfile.filename)
        names.add(os.path.basename(objfile.filename))
    matches = sorted(n for n in names if n.startswith(text))
    return matches if matches else gdb.COMPLETE_FILENAME


class _Prefix(gdb.Command):
    def __init__(self, name, doc):
        self.__doc__ = doc
        super().__init__(name, gdb.COMMAND_STACK, gdb.COMPLETE_NONE, True)


class _StatusCommand(gdb.Command):
    """Show unwindkit's modules, their tables, frames claimed and recent errors.

Usage: unwindkit status"""

    def __init__(self, state):
        super().__init__("unwindkit status", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)
        self._state = state

    def invoke(self, arg, from_tty):
        import _unwindkit
        state = self._state
        state.ensure_loaded()
        engine = state.engine
        enabled = "enabled" if _unwinder_enabled() else "disabled"
        prefer = "sframe" if engine.prefer_sframe else "cfi"
        sides = state.side_files
        lines = [f"unwindkit {_unwindkit.__version__}",
                 f"unwinder unwindkit: {enabled}; prefer {prefer}; "
                 f"side files {'on' if sides.enabled else 'off'}"]
        lines.append(f"modules: {len(engine.modules)}")
        lines.extend("  " + _describe_module(m, sides.notes.get(m.path)) for m in engine.modules)
        for path, reason in state.skipped:
            lines.append(f"  skipped {path}: {reason}")
        lines.append(f"frames claimed: {engine.claimed}; failed: {engine.failed}")
        errors = engine.recent_errors
        if errors:
            lines.append("recent errors:")
            lines.extend("  " + e for e in errors)
        gdb.write("\n".join(lines) + "\n")


class _ObjfileCommand(gdb.Command):
    """Base of the commands taking an optional OBJFILE (default: the program)."""

    def __init__(self, name, state):
        super().__init__(name, gdb.COMMAND_STACK)
        self._state = state

    def complete(self, text, word):
        return _complete_objfile(self._state, text)

    def _module(self, arg):
        import _unwindkit
        name = arg.strip() or gdb.current_progspace().filename
        if not name:
            raise gdb.GdbError("No program loaded; give an OBJFILE.")
        module = self._state.find_module(name)
        if module is None and os.path.isfile(name):
            # A file GDB has not loaded: read it at its link-time addresses.
            module = _unwindkit.load_module(name, 0)
        if module is None:
            raise gdb.GdbError(f"No objfile or file named {name}.")
        return module


class _DumpCommand(_ObjfileCommand):
    """Print an objfile's .sframe section as `readelf --sframe` does.

Usage: unwindkit sframe dump [OBJFILE]
OBJFILE is a loaded objfile (path or file name) or any ELF file; default: the program."""

    def __init__(self, state):
        super().__init__("unwindkit sframe dump", state)

    def invoke(self, arg, from_tty):
        self._module(arg).dump(gdb.write)


class _CheckCommand(_ObjfileCommand):
    """Check an objfile's .sframe section and list every problem with its byte offset.

Usage: unwindkit sframe check [OBJFILE]"""

    def __init__(self, state):
        super().__init__("unwindkit sframe check", state)

    def invoke(self, arg, from_tty):
        text, _ = self._module(arg).check()
        gdb.write(text)


class _LookupCommand(gdb.Command):
    """Show the SFrame rule that covers an address.

Usage: unwindkit sframe lookup ADDR
ADDR is any expression, e.g. $pc or *0x401136 or a function name."""

    def __init__(self, state):
        super().__init__("unwindkit sframe lookup", gdb.COMMAND_STACK, gdb.COMPLETE_EXPRESSION)
        self._state = state

    def invoke(self, arg, from_tty):
        import _unwindkit
        if not arg.strip():
            raise gdb.GdbError("Usage: unwindkit sframe lookup ADDR")
        addr = int(gdb.parse_and_eval(arg))
        self._state.ensure_loaded()
        module = self._state.engine.module_for(addr)
        if module is None:
            gdb.write(_unwindkit.no_module_text(addr))
            return
        text, _ = module.lookup_text(addr)
        gdb.write(text)


class _BacktraceCommand(gdb.Command):
    """Walk the selected thread's stack with unwindkit's own walker, not GDB's frames.

Usage: unwindkit bt [LIMIT]
Starts from the thread's registers and tries DWARF CFI, then SFrame, then the frame-pointer
chain for each frame, in the files GDB has loaded. Prints each frame's pc, CFA and the
source that unwound it; ends with why the walk stopped."""

    def __init__(self, state):
        super().__init__("unwindkit bt", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)
        self._state = state

    def invoke(self, arg, from_tty):
        import _unwindkit
        limit = int(gdb.parse_and_eval(arg)) if arg.strip() else _DEFAULT_BT_LIMIT
        frame = gdb.newest_frame()
        arch = _unwindkit.arch_from_gdb_name(frame.architecture().name())
        if arch is None:
            raise gdb.GdbError(f"unwindkit: unsupported architecture {frame.architecture().name()}")
        pc_name, inputs, _ = _unwindkit.frame_registers(arch)
        values = [int(frame.read_register(pc_name))]
        values.extend(int(frame.read_register(name)) for name in inputs)
        self._state.ensure_loaded()
        gdb.write(self._state.engine.walk(arch, values, self._state.memory, limit, _name_of))


class _SetPreferCommand(gdb.Command):
    """Choose which table wins where a frame has both SFrame and DWARF CFI.

Usage: unwindkit set prefer cfi|sframe
cfi (default): unwindkit claims only frames GDB has no CFI for.
sframe: unwindkit claims every frame its SFrame tables cover."""

    def __init__(self, state):
        super().__init__("unwindkit set prefer", gdb.COMMAND_STACK)
        self._state = state

    def complete(self, text, word):
        return [c for c in ("cfi", "sframe") if c.startswith(text)]

    def invoke(self, arg, from_tty):
        choice = arg.strip()
        if choice not in ("cfi", "sframe"):
            raise gdb.GdbError("Usage: unwindkit set prefer cfi|sframe")
        self._state.engine.prefer_sframe = choice == "sframe"
        gdb.invalidate_cached_frames()


class _ShowPreferCommand(gdb.Command):
    """Show which table wins where a frame has both SFrame and DWARF CFI.

Usage: unwindkit show prefer"""

    def __init__(self, state):
        super().__init__("unwindkit show prefer", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)
        self._state = state

    def invoke(self, arg, from_tty):
        choice = "sframe" if self._state.engine.prefer_sframe else "cfi"
        gdb.write(f"unwindkit prefers {choice} where a frame has both.\n")


class _SetSideFilesCommand(gdb.Command):
    """Choose whether objfiles loaded from now on get a side file for GDB's own unwinder.

Usage: unwindkit set side-files on|off
on (default): a file with SFrame its CFI does not cover gets a synthesized debug file
(.debug_frame from SFrame, the entry point's outermost rule), so GDB unwinds those frames
itself and ends the stack where it does with .eh_frame.
off: those frames go to unwindkit's Python unwinder. Files already loaded keep theirs
(reload them with `file` / `core-file`)."""

    def __init__(self, state):
        super().__init__("unwindkit set side-files", gdb.COMMAND_STACK)
        self._state = state

    def complete(self, text, word):
        return [c for c in ("on", "off") if c.startswith(text)]

    def invoke(self, arg, from_tty):
        choice = arg.strip()
        if choice not in ("on", "off"):
            raise gdb.GdbError("Usage: unwindkit set side-files on|off")
        self._state.side_files.enabled = choice == "on"


class _ShowSideFilesCommand(gdb.Command):
    """Show whether objfiles loaded from now on get a side file.

Usage: unwindkit show side-files"""

    def __init__(self, state):
        super().__init__("unwindkit show side-files", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)
        self._state = state

    def invoke(self, arg, from_tty):
        choice = "on" if self._state.side_files.enabled else "off"
        gdb.write(f"unwindkit side files are {choice}.\n")


class _SetSideFileWaitLimitCommand(gdb.Command):
    """Choose how large a file's SFrame may be for GDB to wait for its side file.

Usage: unwindkit set side-file-wait-limit BYTES|unlimited
A file loaded from now on whose .sframe is larger (default 4194304 bytes, about 160,000
functions) gets a side file holding only its entry point's rule at once; the whole side file
is made in the background for the sessions after this one, and unwindkit's Python unwinder
does the file's frames meanwhile. 0: never wait; unlimited: always wait."""

    def __init__(self, state):
        super().__init__("unwindkit set side-file-wait-limit", gdb.COMMAND_STACK,
                         gdb.COMPLETE_NONE)
        self._state = state

    def invoke(self, arg, from_tty):
        choice = arg.strip()
        if choice == "unlimited":
            self._state.side_files.wait_limit = None
        elif choice.isdigit():
            self._state.side_files.wait_limit = int(choice)
        else:
            raise gdb.GdbError("Usage: unwindkit set side-file-wait-limit BYTES|unlimited")


class _ShowSideFileWaitLimitCommand(gdb.Command):
    """Show how large a file's SFrame may be for GDB to wait for its side file.

Usage: unwindkit show side-file-wait-limit"""

    def __init__(self, state):
        super().__init__("unwindkit show side-file-wait-limit", gdb.COMMAND_STACK,
                         gdb.COMPLETE_NONE)
        self._state = state

    def invoke(self, arg, from_tty):
        limit = self._state.side_files.wait_limit
        shown = "unlimited" if limit is None else f"{limit} bytes of .sframe"
        gdb.write(f"unwindkit waits for side files up to {shown}.\n")


def register(state):
    _Prefix("unwindkit", "unwindkit: unwind frames from SFrame tables where GDB has no CFI.")
    _Prefix("unwindkit sframe", "Inspect SFrame tables: dump, lookup, check.")
    _Prefix("unwindkit set", "Change unwindkit settings.")
    _Prefix("unwindkit show", "Show unwindkit settings.")
    _StatusCommand(state)
    _DumpCommand(state)
    _CheckCommand(state)
    _LookupCommand(state)
    _BacktraceCommand(state)
    _SetPreferCommand(state)
    _ShowPreferCommand(state)
    _SetSideFilesCommand(state)
    _ShowSideFilesCommand(state)
    _SetSideFileWaitLimitCommand(state)
    _ShowSideFileWaitLimitCommand(state)
