"""One hostile run in `unwindkit debuginfod`: the mutated program indexed alone, then its
`debuginfo` and `executable` fetched by build-id. Each answer must be 200 with an ELF file (the
executable: the indexed file itself) or 404; a 5xx, a reset connection, a server that dies or
never says where it listens is a crash; a request or a shutdown past the time limit is a hang.
"""
import http.client
import os
import re
import subprocess
import threading
import time

from hostile.debuggers import Outcome
from truth.tools import run as run_tool

_LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)")


def _build_id(exe):
    m = re.search(r"Build ID: ([0-9a-f]+)", run_tool(["readelf", "-n", exe], check=False).stdout)
    return m.group(1) if m else None


def _get(port, path, timeout):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def run(unwindkit, exe, timeout, work):
    start = time.monotonic()
    build_id = _build_id(exe)
    proc = subprocess.Popen([unwindkit, "debuginfod", "--port", "0", "--cache",
                             os.path.join(work, "server-cache"), exe],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            errors="replace", start_new_session=True)
    log = []  # the server's log lines (stderr), drained as they come
    threading.Thread(target=lambda: log.extend(proc.stderr), daemon=True).start()
    first = []
    reader = threading.Thread(target=lambda: first.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    o = Outcome()
    try:
        m = _LISTENING.match(first[0].strip()) if first else None
        if not first:
            o.hung = True
        elif not m:
            o.crashed = f"no listening line: {first[0].strip()!r}"
        elif build_id is None:
            o.crashed = "the program has no build-id to ask for"
        else:
            for what in ("debuginfo", "executable"):
                status, body = _get(int(m.group(1)), f"/buildid/{build_id}/{what}", timeout)
                if status == 200 and not body.startswith(b"\x7fELF"):
                    o.crashed = f"{what}: 200 without an ELF file"
                elif status == 200 and what == "executable" and body != open(exe, "rb").read():
                    o.crashed = "executable: not the indexed file"
                elif status not in (200, 404):
                    o.crashed = f"{what}: HTTP {status}"
                if o.crashed:
                    break
            if not o.crashed and proc.poll() is not None:
                o.crashed = f"the server exited ({proc.returncode})"
    except TimeoutError:
        o.hung = True
    except (ConnectionError, http.client.HTTPException) as e:
        o.crashed = f"{type(e).__name__}: {e}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            o.hung = True
        o.output = "".join(first) + (proc.stdout.read() or "") + "".join(log)
    o.seconds = time.monotonic() - start
    return o
