#!/usr/bin/env python3
"""Hostile clients and a hostile cache folder against `unwindkit debuginfod` (issue D2's
probes), on loopback only (127.0.0.1 and ::1), each bounded in time.

Usage: server_probes.py UNWINDKIT WORKDIR [--only NAME,...] [--upstream slow|liar]

--upstream runs every probe with the server's --upstream set to a hostile fake on loopback
(issue D3): `slow` accepts and never answers, `liar` answers every build-id with the same other
ELF file. The slow_upstream probe runs in every mode: a slow upstream holding its bound of
fetches does not stall the requests for indexed files.

Each probe prints one line, `ok`/`FAIL`/`skip`, what it saw and what it expected, then a
summary with the acceptance figures (a normal client's p50/p99 while 200 slowloris
connections and 16 non-reading 100 MB downloads are held; the server's peak RSS against
--memory-mib plus the per-connection bound). Exits 1 if any probe failed.
"""
import hashlib
import http.client
import os
import re
import select
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time

LOOPBACK = "127.0.0.1"  # the only addresses any probe connects to or binds
LOOPBACK6 = "::1"
PROBE_SECONDS = 90      # one probe's bound; the whole run is bounded by their sum
MEMORY_MIB = 64         # --memory-mib of the servers under load
# server/include/unwindkit/server/connection_model.h, read from there (not restated here).
HEADER = os.path.join(os.path.dirname(__file__), "..", "..", "server", "include", "unwindkit",
                      "server", "connection_model.h")


def model_constant(name):
    text = open(HEADER).read()
    m = re.search(rf"{name} = (?:size_t\{{(\d+)\}} << (\d+)|(\d+))", text)
    return int(m.group(1)) << int(m.group(2)) if m.group(1) else int(m.group(3))


REQUEST_DEADLINE = model_constant("kRequestDeadlineSeconds")
# server/include/unwindkit/server/upstream.h: how long a fetch may make no progress.
UPSTREAM_STALL_SECONDS = int(re.search(r"kUpstreamStallSeconds = (\d+)", open(os.path.join(
    os.path.dirname(HEADER), "upstream.h")).read()).group(1))
CONNECTION_MEMORY = model_constant("kConnectionMemory")
MAX_BODY = model_constant("kMaxRequestBody")


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else None


class Server:
    def __init__(self, unwindkit, paths, *extra, bind=LOOPBACK, port=0, expect_listen=True):
        # DEBUGINFOD_URLS would be the server's upstream (off loopback): only --upstream is.
        env = {k: v for k, v in os.environ.items() if k != "DEBUGINFOD_URLS"}
        self.proc = subprocess.Popen(
            [unwindkit, "debuginfod", "--bind", bind, "--port", str(port), *extra, *paths],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
            start_new_session=True, env=env)
        self.log = []
        self.reader = threading.Thread(target=lambda: self.log.extend(self.proc.stderr), daemon=True)
        self.reader.start()
        self.url, self.port = None, None
        if expect_listen:
            line = self.proc.stdout.readline().strip()
            m = re.match(r"listening on (http://(.*):(\d+))$", line)
            if not m:
                self.stop()
                raise RuntimeError(f"no listening line: {line!r} {''.join(self.log)}")
            self.url, self.port = m.group(1), int(m.group(3))

    def peak_rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(timeout=5)
        return "".join(self.log)


def get(port, path, host=LOOPBACK, method="GET", headers=None, body=None, timeout=30):
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.read(), dict(r.getheaders())
    finally:
        conn.close()


def timed_gets(port, path, count, spacing=0.0):
    """Latencies (s) of `count` fresh-connection GETs of `path` that answer 200."""
    out, errors = [], []
    for _ in range(count):
        t = time.monotonic()
        try:
            status, body, _ = get(port, path, timeout=10)
            if status == 200 and body[:4] == b"\x7fELF":
                out.append(time.monotonic() - t)
            else:
                errors.append(f"status {status}")
        except OSError as e:
            errors.append(str(e))
        time.sleep(spacing)
    return out, errors


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(p * len(s)))] if s else float("nan")


class Slowloris:
    """Connections that send a request's bytes one a second and never finish it."""

    def __init__(self, port, count):
        self.socks, self.closed_at = [], {}
        for _ in range(count):
            s = socket.create_connection((LOOPBACK, port), timeout=5)
            s.setblocking(False)
            self.socks.append(s)
        self.started = time.monotonic()
        self.stop_flag = False
        self.thread = threading.Thread(target=self._drip, daemon=True)
        self.thread.start()

    def _drip(self):
        text = b"GET /buildid/" + b"a" * 4000
        i = 0
        while not self.stop_flag and len(self.closed_at) < len(self.socks):
            for s in self.socks:
                if s in self.closed_at:
                    continue
                try:
                    s.send(text[i % len(text):i % len(text) + 1])
                    r, _, _ = select.select([s], [], [], 0)
                    if r and s.recv(1) == b"":
                        self.closed_at[s] = time.monotonic() - self.started
                except OSError:
                    self.closed_at[s] = time.monotonic() - self.started
            i += 1
            time.sleep(1)

    def close(self):
        self.stop_flag = True
        self.thread.join(timeout=5)
        for s in self.socks:
            s.close()


def idle_downloads(port, path, count):
    """Connections that ask for `path` and read nothing of the answer."""
    socks = []
    for _ in range(count):
        s = socket.create_connection((LOOPBACK, port), timeout=5)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        socks.append(s)
    return socks


def read_answers(sock, count, timeout=10):
    """The status lines of `count` answers read from one connection."""
    sock.settimeout(timeout)
    data, statuses = b"", []
    while len(statuses) < count:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return statuses
            data += chunk
        head, data = data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        statuses.append(int(lines[0].split()[1]))
        length = next((int(l.split(":", 1)[1]) for l in lines if l.lower().startswith("content-length:")), 0)
        while len(data) < length:
            chunk = sock.recv(65536)
            if not chunk:
                return statuses
            data += chunk
        data = data[length:]
    return statuses


class FakeUpstream:
    """A hostile upstream on loopback: `slow` reads a request and never answers (until closed),
    `liar` answers every request with the bytes of `liar_file`."""

    def __init__(self, mode, liar_file="/bin/true"):
        stop = threading.Event()
        body = open(liar_file, "rb").read()

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                self.request.settimeout(PROBE_SECONDS)
                try:
                    self.request.recv(65536)
                    if mode == "liar":
                        self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                    else:
                        stop.wait(PROBE_SECONDS)
                except OSError:
                    pass

        socketserver.ThreadingTCPServer.daemon_threads = True
        self.stop_event = stop
        self.server = socketserver.ThreadingTCPServer((LOOPBACK, 0), Handler)
        self.url = f"http://{LOOPBACK}:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.stop_event.set()
        self.server.shutdown()
        self.server.server_close()


def metric(port, name, **labels):
    """One sample of the server's /metrics (0 if absent)."""
    _, text, _ = get(port, "/metrics")
    want = name + ("{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}" if labels else "")
    for line in text.decode().splitlines():
        if line.startswith(want + " "):
            return float(line.split()[-1])
    return 0


class Probes:
    def __init__(self, unwindkit, work, upstream=None):
        self.unwindkit, self.work = unwindkit, work
        self.upstream = FakeUpstream(upstream) if upstream else None
        self.upstream_mode = upstream
        self.results, self.figures = [], []
        os.makedirs(work, exist_ok=True)
        self.lib = self._module()
        self.lib_id = build_id(self.lib)
        self.big = self._big_module()
        self.big_id = build_id(self.big)

    def _module(self):
        """A small stripped SFrame library: a file to synthesize."""
        lib = os.path.join(self.work, "libprobe.so")
        src = os.path.join(self.work, "probe.c")
        with open(src, "w") as f:
            for j in range(50):
                f.write(f"int probe_f{j}(int x) {{ volatile int a[{j + 2}]; a[0] = x; return a[0] + {j}; }}\n")
        subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-Wa,--gsframe", src, "-o", lib + ".full"], check=True)
        subprocess.run(["strip", "--strip-all", "-R", ".eh_frame", "-R", ".eh_frame_hdr", lib + ".full",
                        "-o", lib], check=True)
        return lib

    def _big_module(self):
        """A 100 MB ELF executable (a large zero-filled section): what a big /executable is."""
        exe = os.path.join(self.work, "big")
        if os.path.exists(exe):
            return exe
        src = os.path.join(self.work, "big.c")
        with open(src, "w") as f:
            f.write("int main(void) { return 0; }\n")
        blob = os.path.join(self.work, "blob.bin")
        with open(blob, "wb") as f:
            f.write(os.urandom(1 << 20) * 100)
        subprocess.run(["gcc", src, "-o", exe + ".small"], check=True)
        subprocess.run(["objcopy", "--add-section", f".blob={blob}", "--set-section-flags", ".blob=readonly",
                        exe + ".small", exe], check=True)
        os.remove(blob)
        return exe

    def record(self, name, ok, saw, expected):
        verdict = "ok" if ok is True else ("skip" if ok is None else "FAIL")
        self.results.append((name, verdict))
        print(f"{verdict:4}  {name}: {saw} (expected: {expected})", flush=True)

    def server(self, *extra, paths=None, **kw):
        if self.upstream:
            extra = ("--upstream", self.upstream.url, *extra)
        return Server(self.unwindkit, paths or [self.lib, self.big], *extra, **kw)

    def slow_upstream(self):
        """An upstream that never answers, and 24 requests for build-ids not indexed at once:
        half the workers (8 of 16) wait on it, for one stall bound, the others are answered 503
        at once, and a normal client's requests for an indexed file meanwhile are as fast as
        ever."""
        slow = FakeUpstream("slow")
        s = Server(self.unwindkit, [self.lib], "--upstream", slow.url, "--threads", "16")
        path = f"/buildid/{self.lib_id}/debuginfo"
        answers, started = [], time.monotonic()
        try:
            timed_gets(s.port, path, 1)
            base, _ = timed_gets(s.port, path, 100)

            def unknown(i):
                try:
                    status, _, _ = get(s.port, f"/buildid/{i:040x}/debuginfo", timeout=PROBE_SECONDS)
                except OSError as e:
                    status = type(e).__name__
                answers.append((status, time.monotonic() - started))
            waiting = [threading.Thread(target=unknown, args=(i + 1,)) for i in range(24)]
            for t in waiting:
                t.start()
            time.sleep(1)
            under, errors = timed_gets(s.port, path, 200, spacing=0.01)
            held = metric(s.port, "unwindkit_debuginfod_upstream_fetches_total", result="busy")
            for t in waiting:
                t.join(PROBE_SECONDS)
            error = metric(s.port, "unwindkit_debuginfod_upstream_fetches_total", result="error")
        finally:
            s.stop()
            slow.close()
        p99, base99 = pct(under, 0.99) * 1000, pct(base, 0.99) * 1000
        statuses = sorted(str(a) for a, _ in answers)
        last = max((t for _, t in answers), default=float("nan"))
        self.figures.append(f"slow upstream, 8 fetches held + 16 refused: normal client p50 "
                            f"{pct(under, .5) * 1000:6.2f} ms  p99 {p99:6.2f} ms (idle p99 {base99:.2f} ms); "
                            f"the held requests answered within {last:.1f} s")
        self.record("slow upstream: normal client p99", not errors and p99 < 100,
                    f"p99 {p99:.1f} ms over {len(under)} requests, {len(errors)} errors", "< 100 ms, 0 errors")
        self.record("slow upstream: fetches bounded", statuses == ["404"] * 8 + ["503"] * 16
                    and held == 16 and error == 8 and last < UPSTREAM_STALL_SECONDS + 5,
                    f"answers {dict((x, statuses.count(x)) for x in set(statuses))}, busy {held:.0f}, "
                    f"error {error:.0f}, last after {last:.1f} s",
                    f"8 x 404 after the {UPSTREAM_STALL_SECONDS} s stall bound (one try), 16 x 503 at once")

    # -- the probes, one per row of issue 55's table --

    def load(self):
        """200 slowloris connections and 16 non-reading 100 MB downloads held; a normal client
        fetches debuginfo meanwhile. Also: the slow connections are cut at the deadline."""
        cache = os.path.join(self.work, "cache-load")
        s = self.server("--cache", cache, "--memory-mib", str(MEMORY_MIB))
        path = f"/buildid/{self.lib_id}/debuginfo"
        try:
            timed_gets(s.port, path, 1)  # made once, before the clock
            base, _ = timed_gets(s.port, path, 100)
            slow = Slowloris(s.port, 200)
            idle = idle_downloads(s.port, f"/buildid/{self.big_id}/executable", 16)
            time.sleep(2)
            under, errors = timed_gets(s.port, path, 300, spacing=0.01)
            held_for = time.monotonic() - slow.started
            deadline_wait = REQUEST_DEADLINE + 3 - held_for
            if deadline_wait > 0:
                time.sleep(deadline_wait)
            cut = len(slow.closed_at)
            rss = s.rss_kib()
            peak = s.peak_rss_kib()
            slow.close()
            for c in idle:
                c.close()
        finally:
            s.stop()
        bound_kib = MEMORY_MIB * 1024 + 217 * CONNECTION_MEMORY // 1024
        p50, p99 = pct(under, 0.5) * 1000, pct(under, 0.99) * 1000
        self.figures.append(f"normal client, idle server:      p50 {pct(base, .5) * 1000:6.2f} ms  p99 {pct(base, .99) * 1000:6.2f} ms")
        self.figures.append(f"normal client, 200 slowloris + 16 non-reading downloads: p50 {p50:6.2f} ms  p99 {p99:6.2f} ms "
                            f"(x{p99 / max(pct(base, .99) * 1000, 1e-6):.1f} of idle p99)")
        self.figures.append(f"server RSS under that load {rss / 1024:.1f} MiB, peak {peak / 1024:.1f} MiB; bound "
                            f"--memory-mib {MEMORY_MIB} + 217 x {CONNECTION_MEMORY >> 10} KiB = {bound_kib / 1024:.1f} MiB")
        self.record("slowloris+non-reading: normal client p99", not errors and p99 < 100,
                    f"p99 {p99:.1f} ms over {len(under)} requests, {len(errors)} errors", "< 100 ms, 0 errors")
        self.record("slowloris: cut at the whole-request deadline", cut == 200,
                    f"{cut}/200 closed by the server {REQUEST_DEADLINE + 3} s after they started", "200")
        self.record("non-reading downloads: peak RSS", peak < bound_kib,
                    f"{peak / 1024:.1f} MiB", f"< {bound_kib / 1024:.1f} MiB")

    def executable_streamed(self):
        """8 parallel 100 MB /executable downloads: memory does not grow with them."""
        s = self.server("--memory-mib", str(MEMORY_MIB))
        want = hashlib.sha256(open(self.big, "rb").read()).hexdigest()
        got = []
        try:
            def fetch():
                status, body, _ = get(s.port, f"/buildid/{self.big_id}/executable", timeout=60)
                got.append(status == 200 and hashlib.sha256(body).hexdigest() == want)
            threads = [threading.Thread(target=fetch) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(PROBE_SECONDS)
            peak = s.peak_rss_kib()
        finally:
            s.stop()
        bound_kib = MEMORY_MIB * 1024 + 8 * CONNECTION_MEMORY // 1024
        self.record("/executable streamed (8 x 100 MB)", got.count(True) == 8 and peak < bound_kib,
                    f"{got.count(True)}/8 whole and identical, peak RSS {peak / 1024:.1f} MiB",
                    f"8/8, < {bound_kib / 1024:.1f} MiB")

    def many_headers(self):
        """10^6 request headers: refused once they pass the connection's memory bound."""
        s = self.server()
        try:
            c = socket.create_connection((LOOPBACK, s.port), timeout=10)
            c.sendall(f"GET /buildid/{self.lib_id}/debuginfo HTTP/1.1\r\nHost: x\r\n".encode())
            sent, status = 0, None
            try:
                for i in range(10 ** 6):
                    c.sendall(f"X-H{i}: v\r\n".encode())
                    sent = i + 1
                c.sendall(b"\r\n")
            except OSError:
                pass
            try:
                reply = c.recv(200).decode("latin-1")
                m = re.match(r"HTTP/1\.\d (\d+)", reply)
                status = int(m.group(1)) if m else None
            except OSError:
                pass
            c.close()
            peak = s.peak_rss_kib()
        finally:
            s.stop()
        self.record("10^6 headers", status in (413, 431) or (status is None and sent < 10 ** 6),
                    f"answer {status} after {sent} headers sent, peak RSS {peak / 1024:.1f} MiB",
                    "413/431 or closed, well before 10^6")

    def body(self):
        """A GET with a 1 MB body: refused from its Content-Length, before the body is read
        (the send may fail once the server has answered and closed)."""
        s = self.server()
        status = None
        try:
            c = socket.create_connection((LOOPBACK, s.port), timeout=10)
            c.sendall(f"GET /buildid/{self.lib_id}/debuginfo HTTP/1.1\r\nHost: x\r\n"
                      f"Content-Length: {1 << 20}\r\n\r\n".encode())
            try:
                c.sendall(b"x" * (1 << 20))
            except OSError:
                pass
            try:
                m = re.match(r"HTTP/1\.\d (\d+)", c.recv(200).decode("latin-1"))
                status = int(m.group(1)) if m else None
            except OSError as e:
                status = type(e).__name__
            c.close()
        finally:
            s.stop()
        self.record("GET with a 1 MB body", status == 413, f"{status}", f"413 (bodies over {MAX_BODY} bytes)")

    def cache_links(self):
        """A symlink and a truncated file in --cache; a link at the next temporary name."""
        cache = os.path.join(self.work, "cache-links")
        shutil.rmtree(cache, ignore_errors=True)
        secret = os.path.join(self.work, "secret")
        secret_bytes = b"\x7fELF-not-really: root:$6$secret-hash:19000:0:99999:7:::\n"
        with open(secret, "wb") as f:
            f.write(secret_bytes)
        path = f"/buildid/{self.lib_id}/debuginfo"
        s = self.server("--cache", cache)
        _, made, _ = get(s.port, path)
        s.stop()
        names = [n for n in os.listdir(cache) if n.endswith(".debug")]
        for n in names:
            os.remove(os.path.join(cache, n))
            os.symlink(secret, os.path.join(cache, n))
        s = self.server("--cache", cache)
        status, body, _ = get(s.port, path)
        s.stop()
        self.record("symlink in --cache to a secret", status == 200 and body == made and bool(names),
                    f"{status}, {'the synthesized file' if body == made else 'OTHER BYTES'} ({len(names)} planted)",
                    "200 with the synthesized file")
        for n in names:
            full = os.path.join(cache, n)
            os.truncate(full, os.path.getsize(full) - 100)
        s = self.server("--cache", cache)
        status, body, _ = get(s.port, path)
        s.stop()
        self.record("truncated file in --cache", status == 200 and body == made,
                    f"{status}, {len(body)} bytes", f"200 with {len(made)} bytes")
        for n in names:
            os.remove(os.path.join(cache, n))
        s = self.server("--cache", cache)
        try:
            for n in names:
                for i in range(64):
                    os.symlink(secret, os.path.join(cache, f"{n}.tmp{s.proc.pid}.{i}"))
            status, body, _ = get(s.port, path)
        finally:
            s.stop()
        intact = open(secret, "rb").read() == secret_bytes
        self.record("symlink at the next temp-file name", intact and status == 200,
                    f"target {'untouched' if intact else 'OVERWRITTEN'}, answer {status}", "untouched, 200")

    def second_server(self):
        s = self.server()
        try:
            second = self.server(port=s.port, expect_listen=False)
            try:
                second.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            log = second.stop()
            code = second.proc.returncode
        finally:
            s.stop()
        ok = code not in (0, None) and str(s.port) in log and "in use" in log
        self.record("a second server on the same port", ok, f"exit {code}: {log.strip()[-120:]!r}",
                    "exits non-zero naming the port and 'Address already in use'")

    def keep_alive(self):
        """One connection, many requests; and three requests sent in one write (pipelined)."""
        s = self.server()
        path = f"/buildid/{self.lib_id}/debuginfo"
        try:
            get(s.port, path)
            fresh, _ = timed_gets(s.port, path, 300)
            conn = http.client.HTTPConnection(LOOPBACK, s.port, timeout=10)
            kept = []
            t0 = time.monotonic()
            for _ in range(300):
                t = time.monotonic()
                conn.request("GET", path)
                r = conn.getresponse()
                r.read()
                kept.append(time.monotonic() - t)
            kept_total = time.monotonic() - t0
            conn.close()
            c = socket.create_connection((LOOPBACK, s.port), timeout=10)
            req = f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
            c.sendall(req * 3)
            statuses = read_answers(c, 3)
            c.close()
        finally:
            s.stop()
        self.figures.append(f"keep-alive: {len(kept) / kept_total:.0f} requests/s on one connection, p50 "
                            f"{pct(kept, .5) * 1000:.2f} ms p99 {pct(kept, .99) * 1000:.2f} ms; a connection per "
                            f"request: p50 {pct(fresh, .5) * 1000:.2f} ms p99 {pct(fresh, .99) * 1000:.2f} ms "
                            f"(keep-alive p50 x{pct(kept, .5) / pct(fresh, .5):.2f} of a new connection's)")
        self.record("keep-alive: no 40 ms stall", pct(kept, 0.99) < 0.02,
                    f"p99 {pct(kept, .99) * 1000:.2f} ms per request after the first", "well under 40 ms")
        self.record("pipelining", statuses == [200, 200, 200], f"{statuses}", "[200, 200, 200]")

    def methods(self):
        s = self.server()
        path = f"/buildid/{self.lib_id}/debuginfo"
        try:
            _, body, _ = get(s.port, path)
            hs, hbody, hheaders = get(s.port, path, method="HEAD")
            ps, _, pheaders = get(s.port, path, method="POST")
        finally:
            s.stop()
        length = int(hheaders.get("Content-Length", -1))
        self.record("HEAD", hs == 200 and hbody == b"" and length == len(body),
                    f"{hs}, Content-Length {length}, {len(hbody)} body bytes", f"200, {len(body)}, 0")
        self.record("POST", ps == 405 and "GET" in pheaders.get("Allow", ""),
                    f"{ps}, Allow: {pheaders.get('Allow')}", "405, Allow: GET, HEAD")

    def log_forgery(self):
        s = self.server()
        try:
            get(s.port, "/buildid/00/debuginfo%0a127.0.0.1%20GET%20/forged%20200%201%20bytes")
        finally:
            log = s.stop()
        forged = any(line.startswith("127.0.0.1 GET /forged") for line in log.splitlines())
        self.record("%0a in a path", not forged and "\\x0a" in log,
                    "a forged line" if forged else "escaped as \\x0a", "escaped, no forged line")

    def bad_cache(self):
        afile = os.path.join(self.work, "a-file")
        open(afile, "w").close()
        results = []
        for cache in (afile, "/proc/self"):
            s = self.server("--cache", cache, expect_listen=False)
            try:
                s.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            log = s.stop()
            results.append((cache, s.proc.returncode, log.strip().splitlines()[-1:] if log.strip() else []))
        ok = all(code not in (0, None) and lines and "--cache" in lines[0] for _, code, lines in results)
        self.record("--cache a file / a folder it cannot write", ok,
                    "; ".join(f"{c}: exit {code} {lines}" for c, code, lines in results),
                    "a startup error naming the folder")

    def ipv6(self):
        if not socket.has_ipv6:
            return self.record("--bind ::1", None, "no IPv6 here", "http://[::1]:PORT")
        try:
            s = self.server(bind=LOOPBACK6)
        except RuntimeError as e:
            return self.record("--bind ::1", False, str(e)[:120], "http://[::1]:PORT")
        try:
            status, _, _ = get(s.port, f"/buildid/{self.lib_id}/debuginfo", host=LOOPBACK6)
        finally:
            s.stop()
        self.record("--bind ::1", s.url == f"http://[::1]:{s.port}" and status == 200,
                    f"{s.url}, answer {status}", "http://[::1]:PORT, 200")

    def per_client(self):
        s = self.server("--max-connections-per-client", "4")
        try:
            held = [socket.create_connection((LOOPBACK, s.port), timeout=5) for _ in range(4)]
            time.sleep(0.3)
            extra = socket.create_connection((LOOPBACK, s.port), timeout=5)
            try:
                extra.sendall(f"GET /buildid/{self.lib_id}/debuginfo HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                refused = extra.recv(100) == b""
            except OSError:
                refused = True
            extra.close()
            for c in held:
                c.close()
            time.sleep(0.3)
            status, _, _ = get(s.port, f"/buildid/{self.lib_id}/debuginfo")
        finally:
            s.stop()
        self.record("connections per client address", refused and status == 200,
                    f"5th of 4 {'closed' if refused else 'SERVED'}, after the 4 went: {status}",
                    "closed, then 200")

    def core_names_another_file(self):
        """A core (gdb's gcore) names a program; a different ELF put at that path afterwards is
        not indexed, the original is."""
        prog = os.path.join(self.work, "coreprog")
        src = os.path.join(self.work, "coreprog.c")
        with open(src, "w") as f:
            f.write("#include <unistd.h>\nint main(void) { pause(); return 0; }\n")
        subprocess.run(["gcc", "-g", src, "-o", prog], check=True)
        other = os.path.join(self.work, "coreprog.other")
        with open(src, "a") as f:
            f.write("int other(void) { return 1; }\n")
        subprocess.run(["gcc", "-g", src, "-o", other], check=True)
        core = os.path.join(self.work, "coreprog.core")
        p = subprocess.Popen([prog])
        try:
            time.sleep(0.3)
            subprocess.run(["gdb", "-nx", "-batch", "-p", str(p.pid), "-ex", f"gcore {core}"],
                           capture_output=True, timeout=60)
        finally:
            p.kill()
            p.wait()
        if not os.path.exists(core):
            return self.record("a core naming another ELF", None, "gdb could not write a core", "")
        original = build_id(prog)
        s = self.server(paths=[core])
        try:
            served_original = get(s.port, f"/buildid/{original}/executable")[0]
        finally:
            s.stop()
        shutil.copy(prog, prog + ".orig")
        shutil.copy(other, prog)  # the file at the core's path is now another program
        s = self.server(paths=[core])
        try:
            served_other = get(s.port, f"/buildid/{build_id(other)}/executable")[0]
        finally:
            log = s.stop()
            shutil.copy(prog + ".orig", prog)
        noted = "is not the" in log
        self.record("a core naming another ELF", served_original == 200 and served_other == 404 and noted,
                    f"the core's own program {served_original}, another ELF at its path {served_other}"
                    f"{', noted' if noted else ''}", "200, then 404 with a note")

    def run(self, only):
        probes = [self.load, self.executable_streamed, self.many_headers, self.body, self.cache_links,
                  self.second_server, self.keep_alive, self.methods, self.log_forgery, self.bad_cache,
                  self.ipv6, self.per_client, self.core_names_another_file, self.slow_upstream]
        for probe in probes:
            if only and probe.__name__ not in only:
                continue
            start = time.monotonic()
            try:
                probe()
            except Exception as e:  # a probe that could not run is a failure, named
                self.record(probe.__name__, False, f"{type(e).__name__}: {e}", "no error")
            if time.monotonic() - start > PROBE_SECONDS * 2:
                self.record(f"{probe.__name__} time", False, f"{time.monotonic() - start:.0f} s",
                            f"< {PROBE_SECONDS * 2} s")
        failed = [n for n, v in self.results if v == "FAIL"]
        skipped = [n for n, v in self.results if v == "skip"]
        if self.upstream:
            self.upstream.close()
        mode = f", every server's --upstream a {self.upstream_mode} fake" if self.upstream else ""
        print("\nhostile-server summary: "
              f"{len(self.results) - len(failed) - len(skipped)} ok, {len(failed)} failed, "
              f"{len(skipped)} skipped (loopback only{mode})")
        for line in self.figures:
            print(f"  {line}")
        for n in failed:
            print(f"  FAILED: {n}")
        return 1 if failed else 0


def main():
    args = sys.argv[1:]
    only = set()
    if "--only" in args:
        i = args.index("--only")
        only = set(args[i + 1].split(","))
        del args[i:i + 2]
    upstream = None
    if "--upstream" in args:
        i = args.index("--upstream")
        upstream = args[i + 1]
        if upstream not in ("slow", "liar"):
            sys.exit(f"--upstream {upstream}: slow or liar")
        del args[i:i + 2]
    unwindkit, work = args
    sys.exit(Probes(unwindkit, work, upstream).run(only))


if __name__ == "__main__":
    main()
