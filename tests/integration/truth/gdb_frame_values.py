# Runs inside GDB (`gdb -batch -x gdb_frame_values.py -ex 'uk-frame-values REG...' PROG CORE`):
# defines the command `uk-frame-values`, which prints, for every thread and every activation
# record (frames as gdb_frames.py counts them: inline and tail-call frames are not records),
#   @@FRAME <lwp> <record> <inline depth> <pc> real|inline
#   @@REGS   then GDB's own `info registers REG...` text (real frames only)
#   @@ARGS   then GDB's own `info args` text (frames with debug info only)
# and `@@END <lwp> <records>`. The text is what a user sees, `<not saved>` included; the test
# parses it. Registers and arguments are printed for a deep stack's first 64 and last 8
# records only (a 10,000-frame recursion repeats one frame shape); every record's PC is printed.
import gdb

HEAD, TAIL = 64, 8


def chosen(records):
    if records <= HEAD + TAIL:
        return set(range(records))
    return set(range(HEAD)) | set(range(records - TAIL, records))


def _text(command):
    try:
        return gdb.execute(command, to_string=True)
    except gdb.error as e:
        return f"@@ERROR {e}\n"


class FrameValues(gdb.Command):
    """uk-frame-values REG...: every thread's frames with `info registers REG...` and `info args`."""

    def __init__(self):
        super().__init__("uk-frame-values", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        gdb.execute("set backtrace past-main on")
        gdb.execute("set backtrace limit unlimited")
        for thread in sorted(gdb.selected_inferior().threads(), key=lambda t: t.num):
            thread.switch()
            lwp = thread.ptid[1] or thread.ptid[0]
            frames, record, depth = [], 0, 0
            frame = gdb.newest_frame()
            while frame is not None:
                kind = frame.type()
                if kind == gdb.INLINE_FRAME:
                    frames.append((frame, record, depth, "inline"))
                    depth += 1
                elif kind != gdb.TAILCALL_FRAME:  # rebuilt from DWARF call sites: no record
                    frames.append((frame, record, depth, "real"))
                    record, depth = record + 1, 0
                try:
                    frame = frame.older()
                except gdb.error:
                    break
            show = chosen(record)
            for frame, rec, dep, kind in frames:
                print(f"@@FRAME {lwp} {rec} {dep} {frame.pc():#x} {kind}")
                if rec not in show:
                    continue
                frame.select()
                if kind == "real":
                    print("@@REGS")
                    print(_text(f"info registers {arg}"), end="")
                if frame.function() is not None and frame.find_sal().symtab is not None:
                    print("@@ARGS")
                    print(_text("info args"), end="")
            print(f"@@END {lwp} {record}")


FrameValues()
