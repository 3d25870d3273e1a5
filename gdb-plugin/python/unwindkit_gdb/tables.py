"""Which files GDB has loaded, where, and their unwind tables (loaded by the core).

Tables are found for every objfile of the current program space (the program and each
shared library, live or on a core), loaded on first use, and dropped whenever GDB's objfile
list changes (new_objfile / clear_objfiles events call invalidate()).

The extension (`_unwindkit`, the core and its libraries) is loaded on first use too: a
session whose files all have their side files, or need none, never loads it.
"""

import os
import re

import gdb

from .side_files import SideFiles

# `info sharedlibrary` rows: From, To, Syms Read ("Yes", "Yes (*)", "No"), path. Patterns are
# compiled on first use (re's cache), not in every session that loads the plugin.
_SOLIB_ROW = r"^(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(?:Yes \(\*\)|Yes|No)\s+(.+)$"
_AT_ENTRY = r"\bAT_ENTRY\b.*\s(0x[0-9a-f]+)\s*$"
SOLIB_WHOLE_RANGE_SINCE = 17  # GDB's NEWS: "info sharedlibrary" shows the full mapped range


def _run(command):
    """A GDB command's output, or "" when it fails (no process, no auxv)."""
    try:
        return gdb.execute(command, to_string=True)
    except gdb.error:
        return ""


def _solib_text_starts():
    """Run-time start of each shared library's .text, by path."""
    starts = {}
    for line in _run("info sharedlibrary").splitlines():
        row = re.match(_SOLIB_ROW, line.strip())
        if row:
            starts[row.group(3).strip()] = int(row.group(1), 16)
    return starts


def _solib_whole_range():
    """Whether `info sharedlibrary` shows a library's whole mapped range (GDB 17 and later)
    rather than its .text."""
    return int(gdb.VERSION.split(".")[0]) >= SOLIB_WHOLE_RANGE_SINCE


def _runtime_entry():
    found = re.search(_AT_ENTRY, _run("info auxv"), re.MULTILINE)
    return int(found.group(1), 16) if found else None


def _same_file(a, b):
    return a == b or os.path.realpath(a) == os.path.realpath(b)


def _read_memory(addr, size):
    return gdb.selected_inferior().read_memory(addr, size)


class TableState:
    """The engine (modules + counters), its settings, the process memory cache, why any
    objfile was skipped, and the side files attached to objfiles."""

    def __init__(self):
        self._engine = None
        self._memory = None
        self.side_files = SideFiles(lambda text: self.engine.record_error(text))
        self.skipped = []  # (objfile name, reason)
        self._loaded = False

    @property
    def engine(self):
        if self._engine is None:
            import _unwindkit
            self._engine = _unwindkit.Engine()
        return self._engine

    @property
    def memory(self):
        if self._memory is None:
            import _unwindkit
            self._memory = _unwindkit.Memory(_read_memory)
        return self._memory

    def flush_memory(self):
        if self._memory is not None:
            self._memory.flush()

    def invalidate(self):
        if self._engine is not None:
            self._engine.clear()
        self.flush_memory()
        self.skipped = []
        self._loaded = False

    def wanted(self):
        """Whether the Python unwinder has frames to answer: files that got no side file or
        whose side file is being made, or `prefer sframe` (frames GDB's CFI covers too).
        Loads nothing."""
        sides = self.side_files
        if sides.fallback or sides.background:
            return True
        return self._engine is not None and self._engine.prefer_sframe

    def ended_any(self):
        """Whether a step of the engine ended a stack (outermost_frames.py). Loads nothing."""
        return self._engine is not None and self._engine.ended_any

    def ensure_loaded(self):
        if self._loaded:
            return
        # Marked first: a failure below must not be retried on every frame.
        self._loaded = True
        self._load()

    def _load(self):
        progspace = gdb.current_progspace()
        objfiles = progspace.objfiles()
        debug_files = {}
        for objfile in objfiles:
            if objfile.owner is not None:
                debug_files.setdefault(objfile.owner.filename, []).append(objfile.filename)
        import _unwindkit
        solib_starts = None
        runtime_entry = None
        for objfile in objfiles:
            if objfile.owner is not None:
                continue
            path = objfile.filename
            if not os.path.isfile(path):
                self.skipped.append((path, "not a file on disk (vDSO or in-memory image)"))
                continue
            link = _unwindkit.link_addresses(path)
            if not link:
                self.skipped.append((path, "not a readable ELF file"))
                continue
            # Load bias = run-time address - link-time address, from two things GDB reports
            # the same way for live processes and cores:
            # - a shared library's "From" in `info sharedlibrary` is the relocated start of
            #   its .text section (GDB takes a solib's low address from .text), so
            #   bias = From - .text's link address; GDB 17 and later show the whole range
            #   the library is mapped at instead (their NEWS), so bias = From - the link
            #   address of its first mapped page;
            # - the program's AT_ENTRY in the auxiliary vector (live, or the core's NT_AUXV)
            #   is its relocated e_entry, so bias = AT_ENTRY - e_entry (0 unless PIE).
            # Symbols would not do: the files we exist for are stripped.
            bias = None
            if progspace.filename and _same_file(path, progspace.filename):
                if runtime_entry is None:
                    runtime_entry = _runtime_entry()
                bias = runtime_entry - link["entry"] if runtime_entry is not None else 0
            else:
                if solib_starts is None:
                    solib_starts = _solib_text_starts()
                start = next((s for p, s in solib_starts.items() if _same_file(p, path)), None)
                base = link.get("first_load" if _solib_whole_range() else ".text")
                if start is not None and base is not None:
                    bias = start - base
            if bias is None:
                self.skipped.append((path, "load address unknown (not in info sharedlibrary)"))
                continue
            self.engine.add(_unwindkit.load_module(path, bias, debug_files.get(path, [])))

    def find_module(self, name):
        """The loaded module whose path is or ends with `name`."""
        self.ensure_loaded()
        for module in self.engine.modules:
            if module.path == name or os.path.basename(module.path) == name:
                return module
        return None
