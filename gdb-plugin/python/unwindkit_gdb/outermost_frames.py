"""`bt` ends where the stack ends when the Python unwinder does the last frames.

The core's step says where a stack ends (a rule whose return address is undefined: the
program's entry point, SFrame v3's outermost marker). GDB 13's Python unwinder API cannot say
so: an unwinder that declines a frame hands it to GDB's heuristics, which then guess callers
past `_start`. With side files (side_files.py) GDB's own DWARF unwinder reads the same rule and
stops by itself; without them (`unwindkit set side-files off`, or a file that could not get
one) this frame filter ends the backtrace at the frame where the engine's step ended it.
"""

import gdb
from gdb.FrameDecorator import FrameDecorator

from .trace_frames import GdbNameDecorator


class OutermostFrameFilter:
    """Passes frames through up to and including the one our step ended the stack at.

    Enabled only while the Python unwinder may be doing a program's last frames: a frame
    filter, even one that changes nothing, makes GDB print some frames differently, so with
    every side file in place GDB prints frames itself."""

    def __init__(self, state, unwinder):
        self.name = "unwindkit-outermost"
        self.priority = 0  # after the other filters: it sees their decorators
        self._user_enabled = True
        self._state = state
        self._unwinder = unwinder  # `disable unwinder unwindkit`: GDB alone, this filter too
        gdb.frame_filters[self.name] = self

    @property
    def enabled(self):
        if not self._user_enabled or not self._unwinder.enabled:
            return False
        return bool(self._state.side_files.fallback) or self._state.ended_any()

    @enabled.setter
    def enabled(self, value):  # `enable/disable frame-filter global unwindkit-outermost`
        self._user_enabled = value

    def filter(self, frame_iter):
        for decorator in frame_iter:
            frame = decorator.inferior_frame()
            yield self._as_gdb_prints(decorator, frame)
            try:
                if self._state.engine.ended_at(frame.pc()):
                    return
            except Exception:  # noqa: BLE001 - never raise into GDB's backtrace
                pass

    @staticmethod
    def _as_gdb_prints(decorator, frame):
        # A plain decorator gives GDB a bare pc for a frame without a symbol; GDB alone
        # prints `??` there.
        if type(decorator) is FrameDecorator:
            try:
                sal = frame.find_sal()
                if sal is None or sal.symtab is None or not sal.line:
                    return GdbNameDecorator(decorator)
            except Exception:  # noqa: BLE001
                pass
        return decorator


def register(state, unwinder):
    OutermostFrameFilter(state, unwinder)
