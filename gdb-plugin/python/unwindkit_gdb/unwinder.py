"""The frame unwinder GDB calls ("unwindkit" in `info unwinder`).

It claims a frame only when our tables cover its PC and GDB has no DWARF CFI there (unless
`unwindkit set prefer sframe`), then hands GDB the caller's registers computed by the core's
stepper. While every file with SFrame beyond its CFI has a side file (side_files.py), GDB's
own DWARF unwinder has all those frames: the unwinder then declines at once, reading no
register and loading no table (GDB calls it for every frame; reading a register there made
GDB unwind the frames below again, a quadratic `bt`). Anything unexpected declines the frame
(GDB's own unwinders go on) and is recorded for `unwindkit status`: nothing raises into GDB.
"""

import gdb
import gdb.unwinder

_FrameId = getattr(gdb.unwinder, "FrameId", None)


class _Gdb13FrameId:
    """GDB 13 reads a frame id's `sp` and `pc` attributes and wants gdb.Value there."""

    def __init__(self, sp, pc):
        self.sp = gdb.Value(sp)
        self.pc = gdb.Value(pc)


def _frame_id(cfa, func_start):
    # GDB's own convention for a frame: the CFA and the start of its function.
    if _FrameId is not None:
        return _FrameId(cfa, func_start)
    return _Gdb13FrameId(cfa, func_start)


class UnwindkitUnwinder(gdb.unwinder.Unwinder):
    def __init__(self, state):
        super().__init__("unwindkit")
        self._state = state
        self._busy = False

    def __call__(self, pending_frame):
        if self._busy:  # something we called asked GDB for a frame: not ours to answer
            return None
        self._busy = True
        try:
            state = self._state
            if not state.wanted():
                return None
            state.ensure_loaded()
            # Registers in, the core's lookup and step, UnwindInfo out: one C++ call.
            return state.engine.unwind_pending_frame(pending_frame, state.memory, _frame_id)
        except BaseException as error:  # noqa: B036 - nothing may escape into GDB
            self._state.engine.record_error(f"unwinder: {type(error).__name__}: {error}")
            return None
        finally:
            self._busy = False
