# Loaded into LLDB (`command script import lldb_frame_values.py`): defines the command
# `uk-frame-values REG...`, LLDB's twin of gdb_frame_values.py, with the same markers:
#   @@FRAME <tid> <record> <inline depth> <pc> real|inline
#   @@REGS   then LLDB's own `register read -f x REG...` text (real frames only)
#   @@ARGS   then LLDB's own `frame variable --no-locals` text (frames with debug info only)
# and `@@END <tid> <records>`. Inlined frames and artificial ones (tail calls rebuilt from
# DWARF call sites) are not activation records. The text is what a user sees (an unavailable
# register reads `rbx = error: unavailable`); the test parses it.
import lldb

HEAD, TAIL = 64, 8


def chosen(records):
    if records <= HEAD + TAIL:
        return set(range(records))
    return set(range(HEAD)) | set(range(records - TAIL, records))


def _text(interpreter, frame, command):
    # In the frame's own context: inside a command, LLDB runs nested commands in the context
    # the outer command started with, whatever frame is selected since.
    ret = lldb.SBCommandReturnObject()
    interpreter.HandleCommand(command, lldb.SBExecutionContext(frame), ret)
    return (ret.GetOutput() or "") + (ret.GetError() or "")


def frame_values(debugger, command, exe_ctx, result, internal_dict):
    interpreter = debugger.GetCommandInterpreter()
    process = debugger.GetSelectedTarget().GetProcess()
    lines = []
    for thread in sorted(process, key=lambda t: t.GetThreadID()):
        tid = thread.GetThreadID()
        frames, record, depth = [], 0, 0
        for index in range(thread.GetNumFrames()):
            frame = thread.GetFrameAtIndex(index)
            if frame.IsInlined():
                frames.append((index, frame, record, depth, "inline"))
                depth += 1
            elif not frame.IsArtificial():
                frames.append((index, frame, record, depth, "real"))
                record, depth = record + 1, 0
        show = chosen(record)
        for index, frame, rec, dep, kind in frames:
            lines.append(f"@@FRAME {tid} {rec} {dep} {frame.GetPC():#x} {kind}")
            if rec not in show:
                continue
            if kind == "real":
                lines.append("@@REGS")
                lines.append(_text(interpreter, frame, f"register read -f x {command}"))
            if frame.GetFunction().IsValid():
                lines.append("@@ARGS")
                lines.append(_text(interpreter, frame, "frame variable --no-locals"))
        lines.append(f"@@END {tid} {record}")
    print("\n".join(lines))


def __lldb_init_module(debugger, internal_dict):
    debugger.HandleCommand(
        f"command script add -o -f {__name__}.frame_values uk-frame-values")
