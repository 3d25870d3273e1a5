"""Side files: GDB's own DWARF unwinder reads the SFrame of files that lack CFI.

When GDB loads an objfile whose file has SFrame that its CFI does not cover, the core
synthesizes a debug file for it (`.debug_frame` from SFrame plus the entry point's outermost
rule, the file's build-id, names only from `.dynsym`/`.trace`), written once under a private
cache folder and attached with `Objfile.add_separate_debug_file`. GDB then unwinds those
frames itself and ends the stack at `_start` as with `.eh_frame`. Where no side file can be
attached (`fallback`), the Python unwinder remains the path; while there is no such file it
answers no frame at all (unwinder.py). Nothing raises into GDB.

Cost: a file without `.sframe` (libc and most libraries) costs the reading of its section
headers. A side file is found again by the module's build-id, which GDB has already read, and
this plugin build: a later session attaches it without reading the module. The cache folder
is bounded (_CACHE_BYTES, least recently used files go first).

A module whose `.sframe` is larger than `wait_limit` bytes (a browser-sized library: seconds to
synthesize) is not waited for: it gets a side file holding the entry point's rule alone (GDB
still ends the stack at `_start` itself), the Python unwinder does its frames in this session,
and the whole side file is made for the sessions after it by a process of its own, detached
from GDB (_make_detached).
"""

import hashlib
import os
import tempfile
import time

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


_SUFFIX = ".gdb.debug"
_ENTRY_SUFFIX = ".entry" + _SUFFIX  # the entry point's rule alone, while the whole file is made
_WAIT_LIMIT = 4 << 20  # bytes of .sframe: about 160,000 functions, 0.5 s of synthesis
_CACHE_BYTES = 1 << 30  # side files kept, all modules together; a 1 M-function module's is 46 MB
_STALE_TMP_SECONDS = 3600  # a private file this old was left by a GDB that died writing it


def _folder():
    folder = _cache_dir()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    if os.stat(folder).st_uid != os.getuid():  # GDB would load whatever its owner put there
        raise PermissionError(f"{folder} belongs to another user")
    return folder


def _plugin_key():
    """This build of the extension, which makes the side files: a rebuilt or newer unwindkit
    never meets a file an older one made."""
    st = os.stat(_unwindkit.__file__)
    return f"{st.st_size}:{st.st_mtime_ns}"


def _cache_path(folder, build_id_hex, debug_files):
    """Where the side file of a module goes: named by its build-id (a rebuilt module has
    another), this plugin build, and the debug files GDB had for it (their CFI decides which
    functions the side file describes)."""
    key = hashlib.sha256("\0".join([_plugin_key(), *sorted(debug_files)]).encode())
    return os.path.join(folder, f"{build_id_hex}-{key.hexdigest()[:24]}{_SUFFIX}")


def _prune(folder, keep):
    """Least recently used side files out until the folder holds at most _CACHE_BYTES; `keep`
    (the one just written) stays."""
    files = []
    for entry in os.scandir(folder):
        try:
            st = entry.stat()
        except OSError:
            continue  # another GDB pruned it
        if entry.name.startswith(".tmp-"):
            if time.time() - st.st_mtime > _STALE_TMP_SECONDS:
                _remove(entry.path)
        elif entry.name.endswith(_SUFFIX) and entry.path != keep:
            files.append((st.st_mtime, st.st_size, entry.path))
    total = sum(size for _, size, _ in files) + os.path.getsize(keep)
    for _, size, path in sorted(files):
        if total <= _CACHE_BYTES:
            break
        _remove(path)
        total -= size


def _remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _make_detached(path, debug_files, dest):
    """Makes the whole side file of `path` at `dest` in a process of its own, at a low
    priority, detached from GDB: it outlives a batch session, which ends long before a
    browser-sized module's file is made, and shares nothing with GDB after the fork (no GDB
    code runs in it; it ends with os._exit whatever happens)."""
    pid = os.fork()
    if pid:
        try:
            os.waitpid(pid, 0)  # the middle process ends at once
        except ChildProcessError:  # GDB reaped it (it ignores a child it does not know)
            pass
        return
    try:
        if os.fork():
            os._exit(0)  # the grandchild is init's: no zombie under GDB
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # nobody waits for GDB's pipes to close on this process's account
            os.dup2(null, fd)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        os.nice(10)
        data = _unwindkit.side_file(path, debug_files)[0]
        if data is not None:
            _store(data, dest)
    finally:
        os._exit(0)


def _store(data, path):
    """Writes `data` at `path`, under a private name then renamed: a concurrent GDB never
    reads half a file. Then bounds the folder."""
    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    _prune(folder, path)


class SideFiles:
    """Attaches side files as objfiles appear; remembers per file what happened, for
    `unwindkit status`."""

    def __init__(self, on_error):
        self.enabled = True
        self.wait_limit = _WAIT_LIMIT  # None: wait for every side file
        self.notes = {}  # objfile path -> "side file PATH" or why there is none
        # Objfiles with SFrame beyond their CFI that got no side file: the Python unwinder's.
        self.fallback = set()
        # Objfiles whose whole side file is being made in the background: the Python
        # unwinder's too, but their entry-point side file ends the stack (no frame filter).
        self.background = set()
        self._on_error = on_error

    def attach_all(self):
        """Objfiles GDB loaded before the plugin (`source` after `file` / `core-file`)."""
        for objfile in gdb.current_progspace().objfiles():
            self.attach(objfile)

    def attach(self, objfile):
        try:
            self._attach(objfile)
        except BaseException as error:  # noqa: B036 - nothing may escape into GDB
            self.fallback.add(objfile.filename)
            self.notes[objfile.filename] = f"no side file: {type(error).__name__}: {error}"
            self._on_error(f"side file for {objfile.filename}: {type(error).__name__}: {error}")

    def _attach(self, objfile):
        if not objfile.is_valid() or objfile.owner is not None:
            return
        path = objfile.filename
        if not os.path.isfile(path):
            return
        if not self.enabled:
            self.fallback.add(path)
            return
        debug_files = [o.filename for o in objfile.progspace.objfiles() if o.owner == objfile]
        side = None
        if objfile.build_id:
            side = _cache_path(_folder(), objfile.build_id, debug_files)
            if os.path.isfile(side):
                os.utime(side)  # recently used: the last to be pruned
                objfile.add_separate_debug_file(side)
                self.notes[path] = f"side file {side}"
                return
        data, build_id, note, fallback, later = _unwindkit.side_file(path, debug_files,
                                                                      self.wait_limit)
        if data is None:
            if fallback:
                self.fallback.add(path)
            self.notes[path] = f"no side file: {note}"
            return
        if side is None:  # GDB read no build-id where the core found one
            side = _cache_path(_folder(), build_id.hex(), debug_files)
        if later:
            entry = side[:-len(_SUFFIX)] + _ENTRY_SUFFIX
            _store(data, entry)
            objfile.add_separate_debug_file(entry)
            self.background.add(path)
            _make_detached(path, debug_files, side)
            self.notes[path] = (f"side file {entry} (the entry point's rule; the whole file, "
                                f"{side}, is being made for later sessions, the Python "
                                "unwinder does this file's frames meanwhile)")
            return
        _store(data, side)
        objfile.add_separate_debug_file(side)
        self.notes[path] = f"side file {side}" + (f" ({note})" if note else "")

    def forget(self):
        """GDB dropped its objfiles (a new program): their files may come back."""
        self.notes = {}
        self.fallback = set()
        self.background = set()
