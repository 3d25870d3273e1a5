"""unwindkit's GDB adapter: GDB state in, the core's tables and stepper, GDB state out.

install() registers the frame unwinder, the `.trace` frame filter, the frame filter that ends
`bt` where our step ended the stack (outermost_frames.py), the `unwindkit` commands,
the objfile events that drop cached tables, and the side files (side_files.py) for objfiles
loaded before and after it. Installing again (sourcing the file twice) replaces nothing twice.
"""

import gdb

from . import (cbf_commands, commands, compact_unwind_commands, outermost_frames, tables,
               trace_commands, trace_frames, unwinder)

_installed = False


def install():
    global _installed
    if _installed:
        return
    state = tables.TableState()
    sides = state.side_files

    def on_new_objfile(event):
        sides.attach(event.new_objfile)
        state.invalidate()

    def on_clear_objfiles(_event):
        sides.forget()
        state.invalidate()

    gdb.events.new_objfile.connect(on_new_objfile)
    gdb.events.clear_objfiles.connect(on_clear_objfiles)
    sides.attach_all()
    gdb.invalidate_cached_frames()  # frames GDB made before the side files existed
    # Cached stack memory is good until the process runs or anything writes to it; each
    # prompt also starts afresh (a switch of inferior is a command).
    for event in (gdb.events.stop, gdb.events.cont, gdb.events.exited,
                  gdb.events.memory_changed, gdb.events.register_changed,
                  gdb.events.inferior_call, gdb.events.before_prompt):
        event.connect(lambda *_args: state.flush_memory())
    python_unwinder = unwinder.UnwindkitUnwinder(state)
    gdb.unwinder.register_unwinder(None, python_unwinder, replace=True)
    commands.register(state)
    trace_commands.register(trace_frames.register(state))
    outermost_frames.register(state, python_unwinder)
    cbf_commands.register()
    compact_unwind_commands.register()
    _installed = True
