# Runs inside GDB (`gdb -batch -x gdb_frames.py PROG CORE`): prints every frame's PC for every
# thread through GDB's own unwinders, one line each:  FRAME <lwp> <level> <pc> <name>
# Frames GDB makes up from debug info (libc has it here) are left out: functions inlined into
# a caller (INLINE_FRAME, the same PC as the real frame) and callers of a tail call rebuilt from
# DW_TAG_call_site (TAILCALL_FRAME, no activation record on the stack). What remains is one
# frame per activation record, which is what an unwinder reading the stack can report.
# then `END <lwp> <reason>` with why GDB stopped, and first `SP <lwp> <sp>` of frame #0. Frame #0 and signal frames print no address
# in `bt`; the Python API gives each frame's PC directly.
import gdb

gdb.execute("set backtrace past-main on")
gdb.execute("set backtrace limit unlimited")
for thread in sorted(gdb.selected_inferior().threads(), key=lambda t: t.num):
    thread.switch()
    lwp = thread.ptid[1] or thread.ptid[0]
    frame = gdb.newest_frame()
    print(f"SP {lwp} {int(frame.read_register('sp')):#x}")
    reason = "end"
    while frame is not None:
        if frame.type() not in (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME):
            print(f"FRAME {lwp} {frame.level()} {frame.pc():#x} {frame.name() or '??'}")
        try:
            older = frame.older()
        except gdb.error as e:
            reason = f"error: {e}"
            break
        if older is None:
            reason = gdb.frame_stop_reason_string(frame.unwind_stop_reason())
        frame = older
    print(f"END {lwp} {reason}")
