"""`unwindkit cbf decode|encode`: Swift Compact Backtrace Format inside GDB.

decode reads CBF bytes from process or core memory and symbolizes each frame with GDB;
encode turns GDB's backtrace of a thread into CBF. The bytes go through the core's decoder
and encoder (`_unwindkit.cbf_*`); problems print as GDB errors, never as tracebacks.
"""

import os

import gdb


# Bytes read when no LEN is given: the record ends at its end/trunc instruction, well before
# this for any real backtrace (a million-frame `rep` is 8 bytes).
_DEFAULT_WINDOW = 64 * 1024
_MAX_ENCODE_FRAMES = 100000


def _address_arg(text):
    """An expression's address: arrays (a global `unsigned char blob[]`) decay to their start."""
    value = gdb.parse_and_eval(text)
    if value.type.strip_typedefs().code == gdb.TYPE_CODE_ARRAY:
        value = value.address
    return int(value) & 0xFFFFFFFFFFFFFFFF


def _read(addr, length):
    return bytes(gdb.selected_inferior().read_memory(addr, length))


def _read_window(addr, window):
    """The longest readable prefix of [addr, addr + window): near the end of a mapping the
    full window fails, so search for the last readable byte count."""
    try:
        return _read(addr, window)
    except gdb.MemoryError:
        pass
    good, bad = b"", window  # bad: a length known to fail
    while bad - len(good) > 1:
        mid = (len(good) + bad) // 2
        try:
            good = _read(addr, mid)
        except gdb.MemoryError:
            bad = mid
    if not good:
        raise gdb.GdbError(f"unwindkit: cannot read memory at {addr:#x}")
    return good


def _symbol(addr):
    """(name, start) of the symbol GDB knows at addr (minimal symbols too), or None."""
    try:
        text = gdb.execute(f"info symbol {addr:#x}", to_string=True).strip()
    except gdb.error:
        return None
    if " in section " not in text:
        return None
    where = text.split(" in section ", 1)[0]
    name, _, offset = where.partition(" + ")
    return name, addr - (int(offset) if offset else 0)


def _module_name(addr):
    solib = gdb.current_progspace().solib_name(addr)
    path = solib or gdb.current_progspace().filename or "?"
    return os.path.basename(path)


def _place(addr):
    """What GDB knows of addr for the core's report: (symbol or None, its start, module,
    file or None, line)."""
    sym = _symbol(addr)
    sal = gdb.find_pc_line(addr)
    has_line = sal.symtab is not None and sal.line
    return (sym[0] if sym else None, sym[1] if sym else 0, _module_name(addr),
            os.path.basename(sal.symtab.filename) if has_line else None,
            sal.line if has_line else 0)


class _CbfDecodeCommand(gdb.Command):
    """Decode a Swift Compact Backtrace Format record in memory, symbolized with GDB.

Usage: unwindkit cbf decode ADDR [LEN]
ADDR is any expression (an array such as a global `blob` means its address). Without LEN,
reads up to 64 KiB (less at the end of a mapping) and decodes one record, which ends at its
end or trunc instruction. With LEN, decodes every record in the LEN bytes (ring buffers
concatenate them). Each line is one frame, or a run of equal frames (`#2-#9 ... (x8)`):
kind (pc, ra, async, omit, truncated), address, symbol+offset (module) and file:line."""

    def __init__(self):
        super().__init__("unwindkit cbf decode", gdb.COMMAND_DATA, gdb.COMPLETE_EXPRESSION)

    def invoke(self, arg, from_tty):
        import _unwindkit
        argv = gdb.string_to_argv(arg)
        if len(argv) not in (1, 2):
            raise gdb.GdbError("Usage: unwindkit cbf decode ADDR [LEN]")
        addr = _address_arg(argv[0])
        if len(argv) == 2:
            length = int(gdb.parse_and_eval(argv[1]))
            if length <= 0:
                raise gdb.GdbError("unwindkit: LEN must be positive")
            try:
                data = _read(addr, length)
            except gdb.MemoryError as e:
                raise gdb.GdbError(f"unwindkit: cannot read {length} bytes at {addr:#x}: {e}")
        else:
            data = _read_window(addr, _DEFAULT_WINDOW)
        text, error = _unwindkit.cbf_decode_text(data, len(argv) == 2, addr, _place)
        gdb.write(text)
        if error is not None:
            raise gdb.GdbError(error)


def _thread(number):
    for thread in gdb.selected_inferior().threads():
        if thread.num == number:
            return thread
    raise gdb.GdbError(f"unwindkit: no thread {number}")


def _frames_of_selected_thread():
    """[(kind, pc)] of GDB's machine frames, newest first: the newest is a pc, the others
    return addresses, except the frame a signal interrupted (its pc is exact). Inline frames
    (the pc of their machine frame) and tail-call frames (rebuilt from debug info, no
    activation record) are left out. A stack GDB could not finish ends with
    a truncated frame."""
    frames, kind = [], "pc"
    frame = gdb.newest_frame()
    while frame is not None and len(frames) < _MAX_ENCODE_FRAMES:
        if frame.type() not in (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME):
            frames.append((kind, frame.pc()))
            kind = "pc" if frame.type() == gdb.SIGTRAMP_FRAME else "ra"
        try:
            older = frame.older()
        except gdb.error:
            older = None
        if older is None and frame.unwind_stop_reason() not in (
                gdb.FRAME_UNWIND_NO_REASON, gdb.FRAME_UNWIND_OUTERMOST):
            frames.append(("truncated", 0))
        frame = older
    if frame is not None:
        frames.append(("truncated", 0))
    return frames


class _CbfEncodeCommand(gdb.Command):
    """Encode GDB's backtrace of a thread as Swift Compact Backtrace Format.

Usage: unwindkit cbf encode [-t THREAD] [-o FILE] [--base64]
THREAD is GDB's thread number (default: the selected thread). Prints the bytes as hex (as
base64, the form a Swift Backtrace's JSON holds, with --base64), or writes them to FILE (raw
bytes, or base64 text with --base64), then the size next to the plain size (one machine word
per frame)."""

    def __init__(self):
        super().__init__("unwindkit cbf encode", gdb.COMMAND_STACK, gdb.COMPLETE_FILENAME)

    def invoke(self, arg, from_tty):
        import _unwindkit
        argv = gdb.string_to_argv(arg)
        thread_number, path, as_base64 = None, None, False
        usage = "Usage: unwindkit cbf encode [-t THREAD] [-o FILE] [--base64]"
        while argv:
            opt = argv.pop(0)
            if opt == "--base64":
                as_base64 = True
            elif opt in ("-t", "-o") and argv:
                value = argv.pop(0)
                if opt == "-o":
                    path = value
                elif value.isdigit():
                    thread_number = int(value)
                else:
                    raise gdb.GdbError(usage)
            else:
                raise gdb.GdbError(usage)
        if not gdb.selected_inferior().pid and not gdb.selected_inferior().threads():
            raise gdb.GdbError("unwindkit: no process or core")
        previous = gdb.selected_thread()
        thread = _thread(thread_number) if thread_number is not None else previous
        if thread is None:
            raise gdb.GdbError("unwindkit: no thread selected")
        previous_frame = gdb.selected_frame()
        try:
            thread.switch()
            frames = _frames_of_selected_thread()
            word_bytes = gdb.lookup_type("void").pointer().sizeof
        finally:
            previous.switch()
            previous_frame.select()
        encoded = _unwindkit.cbf_encode(word_bytes * 8, frames, thread.num, as_base64, path or "")
        if isinstance(encoded, str):
            raise gdb.GdbError(f"unwindkit: {encoded}")
        text, data = encoded
        if path is not None:
            try:
                with open(path, "w" if as_base64 else "wb") as f:
                    f.write(_unwindkit.cbf_to_base64(data) + "\n" if as_base64 else data)
            except OSError as e:
                raise gdb.GdbError(f"unwindkit: cannot write {path}: {e.strerror}")
        gdb.write(text)


class _CbfPrefix(gdb.Command):
    """Swift Compact Backtrace Format: decode from memory, encode a thread's backtrace."""

    def __init__(self):
        super().__init__("unwindkit cbf", gdb.COMMAND_DATA, gdb.COMPLETE_NONE, True)


def register():
    """Adds the commands; the `unwindkit` prefix must exist already."""
    _CbfPrefix()
    _CbfDecodeCommand()
    _CbfEncodeCommand()
