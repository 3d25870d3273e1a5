"""A minimal Debug Adapter Protocol client for lldb-dap and GDB's DAP server over stdio
(Content-Length framing, then JSON), enough to open a core and read every thread's stack."""
import json
import subprocess
import time


class DapError(RuntimeError):
    pass


class Dap:
    def __init__(self, adapter, env=None, timeout=300):
        """`adapter`: the adapter's path (lldb-dap), or its whole command (`gdb -i=dap ...`)."""
        command = [adapter] if isinstance(adapter, str) else list(adapter)
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.seq = 0
        self.deadline = time.monotonic() + timeout
        self.kept = []  # messages read while waiting for another

    def close(self):
        try:
            self.request("disconnect", {"terminateDebuggee": True})
        except (DapError, OSError):
            pass
        self.proc.kill()
        self.proc.wait()

    def _read(self):
        if time.monotonic() > self.deadline:
            raise DapError("the adapter took too long")
        length = None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise DapError("the adapter closed its output")
            line = line.strip()
            if not line:
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        if length is None:
            raise DapError("a message without Content-Length")
        return json.loads(self.proc.stdout.read(length))

    def send(self, command, arguments=None):
        self.seq += 1
        body = json.dumps({"seq": self.seq, "type": "request", "command": command,
                           "arguments": arguments or {}}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return self.seq

    def _wait(self, match):
        """The first message (kept or new) that `match` accepts; others are kept."""
        for i, msg in enumerate(self.kept):
            if match(msg):
                return self.kept.pop(i)
        while True:
            msg = self._read()
            if match(msg):
                return msg
            self.kept.append(msg)

    def wait_response(self, seq):
        msg = self._wait(lambda m: m.get("type") == "response" and m.get("request_seq") == seq)
        if not msg.get("success"):
            raise DapError(f"{msg.get('command')} failed: {msg.get('message')} {msg.get('body')}")
        return msg.get("body") or {}

    def wait_event(self, name):
        return self._wait(lambda m: m.get("type") == "event" and m.get("event") == name)

    def request(self, command, arguments=None):
        return self.wait_response(self.send(command, arguments))


def open_core(dap, program, core, init_commands=(), post_run_commands=()):
    """Opens a core in `dap` as an editor's launch configuration does: initialize, attach with
    `coreFile` (`initCommands` before the target exists, `postRunCommands` after the core is
    loaded), configurationDone."""
    dap.request("initialize", {"clientID": "unwindkit-test", "adapterID": "lldb-dap",
                               "linesStartAt1": True, "columnsStartAt1": True,
                               "pathFormat": "path", "supportsProgressReporting": True})
    seq = dap.send("attach", {"program": program, "coreFile": core,
                              "initCommands": list(init_commands),
                              "postRunCommands": list(post_run_commands)})
    dap.wait_event("initialized")
    dap.request("configurationDone")
    dap.wait_response(seq)


def stack(dap, thread_id, page=1000):
    """Every frame of a thread (DAP StackFrame objects), asked for `page` at a time."""
    frames = []
    while True:
        body = dap.request("stackTrace", {"threadId": thread_id, "startFrame": len(frames),
                                          "levels": page})
        got = body.get("stackFrames", [])
        frames += got
        if len(got) < page:
            return frames


def core_session(adapter, program, core, init_commands=(), post_run_commands=(), env=None,
                 timeout=300, page=1000, variables_of=None):
    """What lldb-dap shows of a core: {"stacks": [[frame, ...] per thread, in thread order]
    (DAP StackFrame objects), "variables": {scope name: [variable, ...]} of the first frame
    `variables_of(frame)` accepts (scopes, then variables of each scope), "progress": the
    titles of the progress the adapter reported (progressStart events)}."""
    dap = Dap(adapter, env, timeout)
    try:
        open_core(dap, program, core, init_commands, post_run_commands)
        stacks = [stack(dap, thread["id"], page)
                  for thread in dap.request("threads").get("threads", [])]
        variables = {}
        chosen = next((f for frames in stacks for f in frames
                       if variables_of and variables_of(f)), None)
        if chosen is not None:
            for scope in dap.request("scopes", {"frameId": chosen["id"]}).get("scopes", []):
                body = dap.request("variables",
                                   {"variablesReference": scope["variablesReference"]})
                variables[scope["name"]] = body.get("variables", [])
        progress = [m.get("body", {}).get("title") for m in dap.kept
                    if m.get("type") == "event" and m.get("event") == "progressStart"]
        return {"stacks": stacks, "variables": variables, "progress": progress}
    finally:
        dap.close()


def core_registers(adapter, program, core, shown, init_commands=(), env=None, timeout=600):
    """The registers an editor's Registers view shows in each frame of a core: {thread id:
    [(pc, {register: value text} or None when `shown(frame index, frame count)` is false)
    per frame]}. Every register set is read (LLDB's general-purpose and floating-point sets
    hold the callee-saved registers); an unavailable register's text is LLDB's `<error: ...>`."""
    dap = Dap(adapter, env, timeout)
    try:
        open_core(dap, program, core, init_commands)
        out = {}
        for thread in dap.request("threads").get("threads", []):
            frames = stack(dap, thread["id"])
            rows = out.setdefault(thread["id"], [])
            for index, frame in enumerate(frames):
                pc = int(frame["instructionPointerReference"], 16)
                if not shown(index, len(frames)):
                    rows.append((pc, None))
                    continue
                values = {}
                for scope in dap.request("scopes", {"frameId": frame["id"]}).get("scopes", []):
                    if scope.get("name") != "Registers":
                        continue
                    for group in dap.request("variables", {
                            "variablesReference": scope["variablesReference"]})["variables"]:
                        for reg in dap.request("variables", {
                                "variablesReference": group["variablesReference"]})["variables"]:
                            values[reg["name"]] = reg.get("value", "")
                rows.append((pc, values))
        return out
    finally:
        dap.close()


def core_stacks(adapter, program, core, init_commands=(), env=None, timeout=300, page=1000):
    """[[pc, ...] per thread, in thread order] as lldb-dap shows a core."""
    session = core_session(adapter, program, core, init_commands, env=env, timeout=timeout,
                           page=page)
    return [[int(f["instructionPointerReference"], 16) for f in frames
             if "instructionPointerReference" in f] for frames in session["stacks"]]
