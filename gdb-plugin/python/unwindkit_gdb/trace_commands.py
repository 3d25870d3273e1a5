"""`unwindkit trace dump [OBJFILE]` and `unwindkit trace lookup ADDR`: a file's `.trace`
section (Intel traceback), read from the file on disk."""

import os

import gdb

from .commands import _Prefix, _complete_objfile


class _TraceDumpCommand(gdb.Command):
    """Print an objfile's .trace section record by record, as `unwindkit trace dump` does.

Usage: unwindkit trace dump [OBJFILE]
OBJFILE is a loaded objfile (path or file name) or any ELF file; default: the program."""

    def __init__(self, state):
        super().__init__("unwindkit trace dump", gdb.COMMAND_STACK)
        self._state = state

    def complete(self, text, word):
        return _complete_objfile(self._state, text)

    def invoke(self, arg, from_tty):
        name = arg.strip() or gdb.current_progspace().filename
        if not name:
            raise gdb.GdbError("No program loaded; give an OBJFILE.")
        module = self._state.tables.find_module(name)
        path = module.path if module is not None else name
        if not os.path.isfile(path):
            raise gdb.GdbError(f"No objfile or file named {name}.")
        gdb.write(self._state.table(path).dump())


class _TraceLookupCommand(gdb.Command):
    """Show the routine, file and line that .trace gives an address.

Usage: unwindkit trace lookup ADDR
ADDR is any expression, e.g. $pc or *0x401136. The address is a run-time one: the load bias
of the objfile holding it is subtracted before the lookup."""

    def __init__(self, state):
        super().__init__("unwindkit trace lookup", gdb.COMMAND_STACK, gdb.COMPLETE_EXPRESSION)
        self._state = state

    def invoke(self, arg, from_tty):
        import _unwindkit
        if not arg.strip():
            raise gdb.GdbError("Usage: unwindkit trace lookup ADDR")
        addr = int(gdb.parse_and_eval(arg))
        self._state.tables.ensure_loaded()
        module = self._state.tables.engine.module_for(addr)
        if module is None:
            gdb.write(_unwindkit.no_module_text(addr))
            return
        text, _ = self._state.table(module.path).lookup_text(addr, module.bias)
        gdb.write(text)


def register(state):
    _Prefix("unwindkit trace", "Inspect .trace (Intel traceback) sections: dump, lookup.")
    _TraceDumpCommand(state)
    _TraceLookupCommand(state)
