"""Prints every frame of a core's threads using only LLDB's SB API, as a crash-triage script
would: SBDebugger.CreateTarget, SBTarget.LoadCore, SBThread.GetFrameAtIndex. Run by
the release's Python (UNWINDKIT_PYTHON) with LLDB's module on sys.path (`lldb-N -P`).

    sb_frames.py EXE CORE [--plugin PATH --when before|after] [--object-map FROM TO]

One line per thread (`THREAD tid`) and per frame (`FRAME pc module`symbol + offset`), then one
per progress report the debugger broadcast from its creation on (`PROGRESS title: details`,
as its start was reported). With --plugin, `plugin load` runs before the target is created or
after the core is loaded, and no other command ever runs."""
import argparse

import lldb


def describe(frame):
    module = frame.GetModule().GetFileSpec().GetFilename() or "?"
    symbol = frame.GetSymbol()
    if not symbol.IsValid():
        return f"{module}`?"
    pc = frame.GetPCAddress().GetFileAddress()
    offset = pc - symbol.GetStartAddress().GetFileAddress()
    return f"{module}`{symbol.GetName()} + {offset}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("exe")
    parser.add_argument("core")
    parser.add_argument("--plugin")
    parser.add_argument("--when", choices=("before", "after"), default="before")
    parser.add_argument("--object-map", nargs=2)
    args = parser.parse_args()
    lldb.SBDebugger.Initialize()
    debugger = lldb.SBDebugger.Create(False)
    debugger.SetAsync(False)
    progress = lldb.SBListener("sb_frames.progress")
    # LLDB 19 has no external-progress bit (it came with SBProgress, LLDB 20).
    progress.StartListeningForEvents(
        debugger.GetBroadcaster(), lldb.SBDebugger.eBroadcastBitProgress |
        getattr(lldb.SBDebugger, "eBroadcastBitExternalProgress", 0))

    def load_plugin():
        result = lldb.SBCommandReturnObject()
        debugger.GetCommandInterpreter().HandleCommand(f"plugin load {args.plugin}", result)
        if not result.Succeeded():
            raise SystemExit(f"plugin load failed: {result.GetError()}")

    if args.object_map:
        result = lldb.SBCommandReturnObject()
        debugger.GetCommandInterpreter().HandleCommand(
            "settings set target.object-map " + " ".join(args.object_map), result)
    if args.plugin and args.when == "before":
        load_plugin()
    target = debugger.CreateTarget(args.exe)
    process = target.LoadCore(args.core)
    if not process.IsValid():
        raise SystemExit(f"cannot load {args.core}")
    if args.plugin and args.when == "after":
        load_plugin()
    for thread in process:
        print(f"THREAD {thread.GetThreadID()}")
        for i in range(thread.GetNumFrames()):
            frame = thread.GetFrameAtIndex(i)
            print(f"FRAME {frame.GetPC():#x} {describe(frame)}")
    event = lldb.SBEvent()
    while progress.GetNextEvent(event):
        data = lldb.SBDebugger.GetProgressDataFromEvent(event)
        if data.GetValueForKey("completed").GetIntegerValue() == 0:
            title = data.GetValueForKey("title").GetStringValue(1024)
            details = data.GetValueForKey("details").GetStringValue(1024)
            print(f"PROGRESS {title}: {details}")
    lldb.SBDebugger.Destroy(debugger)


if __name__ == "__main__":
    main()
