"""Frame names, files and lines from `.trace` (Intel traceback) for frames GDB has no debug
information for.

A frame filter wraps each such frame in a decorator whose function/filename/line come from
the `.trace` section of the file holding the frame's PC. The section is read from the file on
disk (`unwindkit trace build` puts it outside every PT_LOAD, so neither process memory nor a
core has it), keyed by file; the PC is turned into a link-time address by the module's load
bias (tables.TableState works that out for every objfile). Anything that goes wrong leaves
GDB's own values in place: the filter never raises into GDB.
"""

import os
import re

import gdb
from gdb.FrameDecorator import FrameDecorator


_FORTRAN_SUFFIXES = (".f", ".for", ".ftn", ".f77", ".f90", ".f95", ".f03", ".f08")
_MODULE_PROCEDURE = r"^__(\w+)_MOD_(\w+)$"  # compiled on first use (re's cache)
_EXTERNAL_PROCEDURE = r"^([a-z]\w*?)_$"


def source_name(routine, filename):
    """The name GDB gives a routine in a source file: gfortran's symbol names are linkage
    names (`__mod_MOD_sub`, `sub_`), which GDB shows as the source spells them (`mod::sub`,
    `sub`). The main program's `MAIN__` keeps that name: .trace does not carry the name of
    the PROGRAM statement."""
    if not filename.lower().endswith(_FORTRAN_SUFFIXES):
        return routine
    m = re.match(_MODULE_PROCEDURE, routine)
    if m:
        return f"{m.group(1)}::{m.group(2)}"
    m = re.match(_EXTERNAL_PROCEDURE, routine)
    return m.group(1) if m else routine


class TraceState:
    """Each file's `.trace`, loaded on first use and dropped when GDB's objfiles change."""

    def __init__(self, tables):
        self.tables = tables  # tables.TableState: which file holds a pc, and its load bias
        self._by_path = {}
        self._any = None

    def invalidate(self):
        self._by_path = {}
        self._any = None

    def any_trace(self):
        """True when a file GDB has loaded has a `.trace` section. The side-file cache knows
        for most files (side_files.py): only the others are read, by the extension."""
        if self._any is None:
            self._any = False
            known = self.tables.side_files.traces
            try:
                for objfile in gdb.current_progspace().objfiles():
                    path = objfile.filename
                    if objfile.owner is not None or not path or not os.path.isfile(path):
                        continue
                    has_trace = known.get(path)
                    if has_trace is None:
                        has_trace = self.table(path).has_trace
                    if has_trace:
                        self._any = True
                        break
            except Exception:  # noqa: BLE001 - never raise into GDB
                pass
        return self._any

    def table(self, path):
        table = self._by_path.get(path)
        if table is None:
            import _unwindkit
            table = _unwindkit.load_trace(path)
            self._by_path[path] = table
        return table

    def locate(self, pc):
        """(module, link-time pc, lookup result or None) for a run-time pc; module is None
        when no loaded file holds the pc."""
        self.tables.ensure_loaded()
        module = self.tables.engine.module_for(pc)
        if module is None:
            return None, pc, None
        link_pc = pc - module.bias
        return module, link_pc, self.table(module.path).lookup(link_pc)


def _lookup_pc(frame):
    """The address whose line a frame shows, as the core's CodeAddress says: a caller's pc is
    a return address (a normal frame with a newer frame that is not a signal trampoline)."""
    import _unwindkit
    newer = frame.newer()
    return_address = (frame.type() == gdb.NORMAL_FRAME and newer is not None
                      and newer.type() != gdb.SIGTRAMP_FRAME)
    return _unwindkit.lookup_address(frame.pc(), return_address)


class TraceDecorator(FrameDecorator):
    def __init__(self, base, routine, filename, line):
        super().__init__(base)
        self._routine = routine
        self._filename = filename
        self._line = line

    def function(self):
        if self._routine:
            return source_name(self._routine, self._filename)
        return super().function()

    def filename(self):
        return self._filename

    def line(self):
        return self._line


class GdbNameDecorator(FrameDecorator):
    """A frame .trace does not cover, named as GDB names it without frame filters: its
    symbol's name (FrameDecorator would hand GDB a bare pc, which GDB then prints as an empty
    name for a frame in a stripped library), else `??`."""

    def function(self):
        frame = self.inferior_frame()
        if frame.type() in (gdb.SIGTRAMP_FRAME, gdb.DUMMY_FRAME):
            return super().function()  # `<signal handler called>`, as GDB prints it
        name = frame.name()
        return name if name is not None else "??"


class TraceFrameFilter:
    """Decorates frames without debug information whose pc a `.trace` section covers.

    It counts as enabled only while some loaded file has `.trace`: with no enabled frame
    filter GDB prints frames itself, so programs without `.trace` look exactly as without
    the plugin (a filter, even one that changes nothing, prints some frames differently)."""

    def __init__(self, state):
        self.name = "unwindkit-trace"
        self.priority = 100
        self._user_enabled = True
        self._state = state
        gdb.frame_filters[self.name] = self

    @property
    def enabled(self):
        return self._user_enabled and self._state.any_trace()

    @enabled.setter
    def enabled(self, value):  # `enable/disable frame-filter global unwindkit-trace`
        self._user_enabled = value

    def filter(self, frame_iter):
        return (self._decorate(d) for d in frame_iter)

    def _decorate(self, decorator):
        try:
            frame = decorator.inferior_frame()
            sal = frame.find_sal()
            if sal is not None and sal.symtab is not None and sal.line:
                return decorator  # GDB has debug information here: its own values win
            _, _, found = self._state.locate(_lookup_pc(frame))
            if found is None:
                return GdbNameDecorator(decorator)
            routine, filename, line = found[0], found[1], found[2]
            return TraceDecorator(decorator, routine, filename, line)
        except Exception:  # noqa: BLE001 - never raise into GDB's backtrace
            return decorator


def register(tables):
    state = TraceState(tables)
    gdb.events.new_objfile.connect(lambda _event: state.invalidate())
    gdb.events.clear_objfiles.connect(lambda _event: state.invalidate())
    TraceFrameFilter(state)
    return state
