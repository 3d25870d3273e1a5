"""Side files: GDB's own DWARF unwinder reads the SFrame of files that lack CFI.

When GDB loads an objfile whose file has SFrame that its CFI does not cover, the core
synthesizes a debug file for it (`.debug_frame` from SFrame plus the entry point's outermost
rule, the file's build-id, names only from `.dynsym`/`.trace`), written once under a private
cache folder and attached with `Objfile.add_separate_debug_file`. GDB then unwinds those
frames itself, ends the stack at `_start` as with `.eh_frame`, and the Python unwinder leaves
them alone (the file's debug objfile counts as its CFI, see tables.py). Where no side file can
be attached, the Python unwinder remains the path. Nothing raises into GDB.
"""

import hashlib
import os
import tempfile

import gdb

import _unwindkit


def _cache_dir():
    explicit = os.environ.get("UNWINDKIT_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if base.startswith("~"):  # no home folder
        return os.path.join(tempfile.gettempdir(), f"unwindkit-gdb-{os.getuid()}")
    return os.path.join(base, "unwindkit", "gdb")


def _store(data, build_id):
    """The cache path of `data`, written unless already there. Named by build-id and content:
    a rebuilt module, or a newer unwindkit making a different file, never meets a stale one."""
    folder = _cache_dir()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    if os.stat(folder).st_uid != os.getuid():  # GDB would load whatever its owner put there
        raise PermissionError(f"{folder} belongs to another user")
    digest = hashlib.sha256(data).hexdigest()[:32]
    path = os.path.join(folder, f"{build_id.hex() or 'no-build-id'}-{digest}.gdb.debug")
    if not os.path.isfile(path):
        # Written under a private name and renamed: a concurrent GDB never reads half a file.
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    return path


class SideFiles:
    """Attaches side files as objfiles appear; remembers per file what happened, for
    `unwindkit status`."""

    def __init__(self, on_error):
        self.enabled = True
        self.failed = False  # some file that should have had a side file has none
        self.notes = {}
        self.failed = False  # objfile path -> "side file PATH" or why there is none
        self._on_error = on_error

    def attach_all(self):
        """Objfiles GDB loaded before the plugin (`source` after `file` / `core-file`)."""
        for objfile in gdb.current_progspace().objfiles():
            self.attach(objfile)

    def attach(self, objfile):
        try:
            self._attach(objfile)
        except BaseException as error:  # noqa: B036 - nothing may escape into GDB
            self.notes[objfile.filename] = f"no side file: {type(error).__name__}: {error}"
            self.failed = True
            self._on_error(f"side file for {objfile.filename}: {type(error).__name__}: {error}")

    def _attach(self, objfile):
        if not self.enabled or not objfile.is_valid() or objfile.owner is not None:
            return
        path = objfile.filename
        if not os.path.isfile(path):
            return
        debug_files = [o.filename for o in objfile.progspace.objfiles() if o.owner == objfile]
        data, build_id, note = _unwindkit.side_file(path, debug_files)
        if data is None:
            self.notes[path] = f"no side file: {note}"
            return
        side = _store(data, build_id)
        objfile.add_separate_debug_file(side)
        self.notes[path] = f"side file {side}" + (f" ({note})" if note else "")

    def forget(self):
        """GDB dropped its objfiles (a new program): their files may come back."""
        self.notes = {}
