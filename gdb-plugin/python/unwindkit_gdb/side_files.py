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
this plugin build: a later session attaches it without reading the module. So is the answer
that a file needs none (a small `.gdb.none` file holding why): a session whose files are all
known loads no extension (`_unwindkit`) for them, nor does `bt` to learn whether they have
`.trace` (kept there too). The cache folder is bounded (_CACHE_BYTES, least recently used
files go first: the server's policy, folder_budget.h). No module costly to import (tempfile,
hashlib: milliseconds in every GDB session) is imported, but tempfile where there is no home
folder.

A module whose `.sframe` is larger than `wait_limit` bytes (a browser-sized library: seconds to
synthesize) is not waited for: it gets a side file holding the entry point's rule alone (GDB
still ends the stack at `_start` itself), the Python unwinder does its frames in this session,
and the whole side file is made for the sessions after it by a process of its own, detached
from GDB (_make_detached).
"""

import os
import time
import zlib
from importlib.machinery import PathFinder

import gdb


def _cache_dir():
    explicit = os.environ.get("UNWINDKIT_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if base.startswith("~"):  # no home folder
        import tempfile
        return os.path.join(tempfile.gettempdir(), f"unwindkit-gdb-{os.getuid()}")
    return os.path.join(base, "unwindkit", "gdb")


_SUFFIX = ".gdb.debug"
_ENTRY_SUFFIX = ".entry" + _SUFFIX  # the entry point's rule alone, while the whole file is made
_NONE_SUFFIX = ".gdb.none"  # the file needs no side file; holds why
_TRACE_SUFFIX = ".gdb.trace"  # "1" or "0": whether the file has `.trace` (trace_frames.py)
_WAIT_LIMIT = 4 << 20  # bytes of .sframe: about 160,000 functions, 0.5 s of synthesis
_CACHE_BYTES = 1 << 30  # side files kept, all modules together; a 1 M-function module's is 46 MB
# The detached process starts once GDB is idle: CPU used over one poll interval below
# _IDLE_SHARE of it (GDB's own threads count: the strict checks of the same file), or GDB gone.
_IDLE_POLL_SECONDS = 0.1
_IDLE_SHARE = 0.2
_IDLE_WAIT_LIMIT_SECONDS = 10  # then it starts anyway, at idle priority
_MAKING_LOCK = ".making.lock"  # one byte locked per side file being made (_make_once)


def _folder():
    folder = _cache_dir()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    if os.stat(folder).st_uid != os.getuid():  # GDB would load whatever its owner put there
        raise PermissionError(f"{folder} belongs to another user")
    return folder


def _plugin_key():
    """This build of the extension, which makes the side files: a rebuilt or newer unwindkit
    never meets a file an older one made. Found as `import _unwindkit` would find it, without
    loading it."""
    st = os.stat(PathFinder.find_spec("_unwindkit").origin)
    return f"{st.st_size:x}-{st.st_mtime_ns:x}"


def _cache_stem(folder, build_id_hex, debug_files):
    """Where the side file of a module goes, less its suffix: named by its build-id (a rebuilt
    module has another), this plugin build, and the debug files GDB had for it (their CFI
    decides which functions the side file describes). A CRC tells apart the few sets of debug
    files one module meets; the folder is the user's own (_folder), so a collision is no
    attack, and hashlib would cost every session its import."""
    debug_key = zlib.crc32("\0".join(sorted(debug_files)).encode())
    return os.path.join(folder, f"{build_id_hex}-{_plugin_key()}-{debug_key:08x}")


def _cpu_seconds(pid):
    """CPU time process `pid` has used, all its threads (/proc/PID/stat utime + stime); None
    once it has ended."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()  # after the command name, which may hold spaces
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _wait_until_idle(pid):
    """Returns once GDB (`pid`) is idle or gone, or after _IDLE_WAIT_LIMIT_SECONDS. Started at
    once, even at idle priority, the work slowed GDB's loading and its checks of the module on a
    two-core machine: a 1 M-function module's first `bt` ended 0.37-0.41 s into the session,
    against 0.25-0.26 s when the work waits."""
    deadline = time.monotonic() + _IDLE_WAIT_LIMIT_SECONDS
    used = _cpu_seconds(pid)
    while used is not None and time.monotonic() < deadline:
        time.sleep(_IDLE_POLL_SECONDS)
        now = _cpu_seconds(pid)
        if now is None or now - used < _IDLE_SHARE * _IDLE_POLL_SECONDS:
            return
        used = now


def _make_detached(path, debug_files, dest):
    """Makes the whole side file of `path` at `dest` in a process of its own, at the lowest
    priority (SCHED_IDLE), detached from GDB: it outlives a batch session, which ends long before a
    browser-sized module's file is made, and shares nothing with GDB after the fork (no GDB
    code runs in it; it ends with os._exit whatever happens). It starts its work once GDB is
    idle (at its prompt, or gone): the session that started it comes first."""
    gdb_pid = os.getpid()
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
        # Only CPU time no one else wants: the GDB session that started it (and its
        # checks of the same file, on a thread of their own) come first.
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        except (AttributeError, OSError):
            os.nice(10)
        _wait_until_idle(gdb_pid)

        def make():
            import _unwindkit
            return _unwindkit.side_file(path, debug_files)[0]
        _make_once(dest, make)
    finally:
        os._exit(0)


def _make_once(dest, make):
    """Stores what `make` gives (the bytes of the side file at `dest`, or None) unless another
    process has made `dest` by then. GDB sessions started together on one large module (a
    triage script's, one per core) each start a maker; each would spend seconds and hundreds
    of MB on the same file. The makers of one file take turns on one byte of the folder's lock
    file (at the CRC of the path: two files sharing a byte only wait for each other); the lock
    goes with the process, however it ends."""
    import fcntl
    lock = os.open(os.path.join(os.path.dirname(dest), _MAKING_LOCK),
                   os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.lockf(lock, fcntl.LOCK_EX, 1, zlib.crc32(dest.encode()))
        if os.path.exists(dest):
            return
        data = make()
        if data is not None:
            _store(data, dest)
    finally:
        os.close(lock)  # and with it the lock


def _store(data, path):
    """Writes `data` at `path`, under a private name then renamed: a concurrent GDB never
    reads half a file. Then bounds the folder. The private name is made as mkstemp makes it
    (random, O_EXCL, mode 0600) without importing tempfile, milliseconds a session."""
    folder = os.path.dirname(path)
    tmp = os.path.join(folder, f".tmp-{os.urandom(8).hex()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    # Least recently used files out, the one just written kept, temporaries of a GDB that died
    # writing them out: the server's policy (folder_budget.h). Only files that were made
    # come here, so the extension is loaded already.
    import _unwindkit
    _unwindkit.trim_folder(folder, _CACHE_BYTES, [_SUFFIX, _NONE_SUFFIX, _TRACE_SUFFIX], path)


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
        self.traces = {}  # objfile path -> whether it has `.trace`, where the cache says
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
        stem = None
        if objfile.build_id:
            stem = _cache_stem(_folder(), objfile.build_id, debug_files)
            if self._known(objfile, stem):
                return
        import _unwindkit
        data, build_id, note, fallback, settled, later = _unwindkit.side_file(
            path, debug_files, self.wait_limit)
        if later:
            self._later(objfile, data, build_id, stem, debug_files)
            return
        if data is None:
            if fallback:
                self.fallback.add(path)
            elif settled and stem is not None:
                self._store_trace(_unwindkit.load_trace(path).has_trace, path, stem)
                _store(note.encode(), stem + _NONE_SUFFIX)
            self.notes[path] = f"no side file: {note}"
            return
        if stem is None:  # GDB read no build-id where the core found one
            stem = _cache_stem(_folder(), build_id.hex(), debug_files)
        side = stem + _SUFFIX
        self._store_trace(_unwindkit.load_trace(path).has_trace, path, stem)
        _store(data, side)
        objfile.add_separate_debug_file(side)
        self.notes[path] = f"side file {side}" + (f" ({note})" if note else "")

    def _later(self, objfile, data, build_id, stem, debug_files):
        """A file too large to wait for: the entry point's rule now (`data`, None where the
        file's own CFI has it), the Python unwinder for its frames, the whole side file made
        in the background."""
        import _unwindkit
        path = objfile.filename
        if stem is None:
            stem = _cache_stem(_folder(), build_id.hex(), debug_files)
        side = stem + _SUFFIX
        self._store_trace(_unwindkit.load_trace(path).has_trace, path, stem)
        now = "no side file yet"
        if data is not None:
            now = f"side file {stem + _ENTRY_SUFFIX} (the entry point's rule)"
            _store(data, stem + _ENTRY_SUFFIX)
            objfile.add_separate_debug_file(stem + _ENTRY_SUFFIX)
        self.background.add(path)
        _make_detached(path, debug_files, side)
        # After the fork (whose child must not inherit a thread at work): the strict checks
        # of the file, for its first frame, while GDB goes on loading.
        _unwindkit.prepare_module(path)
        self.notes[path] = (f"{now}; the whole side file, {side}, is being made for later "
                            "sessions, and the Python unwinder does this file's frames meanwhile")

    def _store_trace(self, has_trace, path, stem):
        """Kept before the side file or note, so that a file the cache knows has it (unless
        pruned: then `bt` asks the extension)."""
        _store(b"1" if has_trace else b"0", stem + _TRACE_SUFFIX)
        self.traces[path] = has_trace

    def _known(self, objfile, stem):
        """Whether an earlier session settled this file: its side file attached, or the note
        saying it needs none; and whether it has `.trace`, where kept."""
        try:
            with open(stem + _TRACE_SUFFIX, "rb") as f:
                self.traces[objfile.filename] = f.read() == b"1"
        except FileNotFoundError:
            pass
        side = stem + _SUFFIX
        try:
            os.utime(side)  # recently used: the last to be pruned
        except FileNotFoundError:
            pass
        else:
            objfile.add_separate_debug_file(side)
            self.notes[objfile.filename] = f"side file {side}"
            return True
        try:
            with open(stem + _NONE_SUFFIX, encoding="utf-8") as f:
                note = f.read()
            os.utime(stem + _NONE_SUFFIX)
        except FileNotFoundError:
            return False
        self.notes[objfile.filename] = f"no side file: {note}"
        return True

    def forget(self):
        """GDB dropped its objfiles (a new program): their files may come back."""
        self.notes = {}
        self.fallback = set()
        self.background = set()
        self.traces = {}
