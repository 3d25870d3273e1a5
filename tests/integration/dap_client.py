"""A minimal Debug Adapter Protocol client for lldb-dap over stdio (Content-Length framing,
then JSON), enough to open a core and read every thread's stack."""
import json
import subprocess
import time


class DapError(RuntimeError):
    pass


class Dap:
    def __init__(self, adapter, env=None, timeout=300):
        self.proc = subprocess.Popen([adapter], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
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
            raise DapError("lldb-dap took too long")
        length = None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise DapError("lldb-dap closed its output")
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


def core_stacks(adapter, program, core, init_commands=(), env=None, timeout=300, page=1000):
    """[[pc, ...] per thread, in thread order] as lldb-dap shows a core."""
    dap = Dap(adapter, env, timeout)
    try:
        dap.request("initialize", {"clientID": "unwindkit-test", "adapterID": "lldb-dap",
                                   "linesStartAt1": True, "columnsStartAt1": True,
                                   "pathFormat": "path"})
        seq = dap.send("attach", {"program": program, "coreFile": core,
                                  "initCommands": list(init_commands)})
        dap.wait_event("initialized")
        dap.request("configurationDone")
        dap.wait_response(seq)
        stacks = []
        for thread in dap.request("threads").get("threads", []):
            pcs = []
            while True:
                body = dap.request("stackTrace", {"threadId": thread["id"],
                                                  "startFrame": len(pcs), "levels": page})
                frames = body.get("stackFrames", [])
                pcs += [int(f["instructionPointerReference"], 16) for f in frames
                        if "instructionPointerReference" in f]
                if len(frames) < page:
                    break
            stacks.append(pcs)
        return stacks
    finally:
        dap.close()
