#!/usr/bin/env python3
"""Load on `unwindkit debuginfod`, loopback only, bounded in count and time.

Usage: debuginfod_load.py UNWINDKIT WORKDIR [MODULES [CLIENTS [REQUESTS]]]
Builds MODULES (default 50) small shared libraries with SFrame (gcc -Wa,--gsframe, each with
its own functions, so its own build-id; stripped of `.eh_frame`, which a synthesized file
would leave to the module), serves them with a disk cache, and has CLIENTS
(default 200) concurrent clients fetch REQUESTS (default 20) debuginfo files each, at random
across the modules, one connection per request as debuginfod-find makes. Half-way the server
is stopped and started again over the same cache folder; then the restarted server takes the
same load again with one kept-alive connection per client. Prints requests/s, latency
percentiles and the server's peak RSS for both side by side, with their ratios, and fails unless there were no errors, every module was synthesized exactly once
in the first run and none was synthesized again after the restart (its log says so: each
request's line ends "made", "memory" or "disk")."""
import http.client
import os
import random
import re
import subprocess
import sys
import threading
import time

DEADLINE_SECONDS = 300  # the whole run is bounded


def build_modules(workdir, count):
    paths = []
    for i in range(count):
        lib = os.path.join(workdir, f"libload{i}.so")
        paths.append(lib)
        if os.path.exists(lib):
            continue
        src = os.path.join(workdir, f"load{i}.c")
        with open(src, "w") as f:
            for j in range(20):
                f.write(f"int load{i}_f{j}(int x) {{ volatile int a[{j + 2}]; a[0] = x; "
                        f"return a[0] * {i + 1} + {j}; }}\n")
        linked = lib + ".linked"
        subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-Wa,--gsframe", src, "-o", linked],
                       check=True)
        subprocess.run(["strip", "--strip-all", "-R", ".eh_frame", "-R", ".eh_frame_hdr",
                        linked, "-o", lib], check=True)
        os.remove(linked)
    return paths


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", out).group(1)


class Server:
    def __init__(self, unwindkit, port, cache, paths):
        self.proc = subprocess.Popen(
            [unwindkit, "debuginfod", "--port", str(port), "--cache", cache, *paths],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        self.port = int(re.search(r":(\d+)$", line.strip()).group(1))
        self.log = []
        self.reader = threading.Thread(target=lambda: self.log.extend(self.proc.stderr),
                                       daemon=True)
        self.reader.start()

    def peak_rss_mib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1)) / 1024

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.reader.join(timeout=30)


def load(port, ids, clients, requests, deadline, keep_alive=False):
    latencies, errors = [], []
    lock = threading.Lock()

    def client(seed):
        rng = random.Random(seed)
        kept = http.client.HTTPConnection("127.0.0.1", port, timeout=60) if keep_alive else None
        for _ in range(requests):
            if time.monotonic() > deadline:
                with lock:
                    errors.append("deadline")
                return
            bid = rng.choice(ids)
            start = time.monotonic()
            try:
                conn = kept or http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                conn.request("GET", f"/buildid/{bid}/debuginfo",
                             headers={} if kept else {"Connection": "close"})
                r = conn.getresponse()
                body = r.read()
                if not kept:
                    conn.close()
                ok = r.status == 200 and body[:4] == b"\x7fELF"
                problem = None if ok else f"status {r.status}"
            except OSError as e:
                problem = str(e)
            with lock:
                if problem:
                    errors.append(problem)
                else:
                    latencies.append(time.monotonic() - start)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, errors, time.monotonic() - t0


def made(server):
    """The build-ids this server synthesized, one entry per synthesis."""
    return [re.search(r"/buildid/(\w+)/", line).group(1) for line in server.log
            if "/debuginfo 200 " in line and line.rstrip().endswith(" made")]


def sources(server):
    out = {}
    for line in server.log:
        m = re.search(r"/debuginfo 200 \d+ bytes (\w+)$", line.rstrip())
        if m:
            out[m.group(1)] = out.get(m.group(1), 0) + 1
    return out


def main():
    unwindkit, workdir = sys.argv[1], sys.argv[2]
    modules = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    clients = int(sys.argv[4]) if len(sys.argv) > 4 else 200
    requests = int(sys.argv[5]) if len(sys.argv) > 5 else 20
    deadline = time.monotonic() + DEADLINE_SECONDS
    os.makedirs(workdir, exist_ok=True)
    paths = build_modules(workdir, modules)
    ids = [build_id(p) for p in paths]
    cache = os.path.join(workdir, "cache")
    subprocess.run(["rm", "-rf", cache], check=True)

    first = Server(unwindkit, 0, cache, paths)
    half = max(1, requests // 2)
    lat1, err1, t1 = load(first.port, ids, clients, half, deadline)
    first_rss = first.peak_rss_mib()
    first.stop()
    second = Server(unwindkit, first.port, cache, paths)  # restarted mid-run, same port and cache
    lat2, err2, t2 = load(second.port, ids, clients, requests - half, deadline)
    rss_fresh = max(first_rss, second.peak_rss_mib())
    lat3, err3, t3 = load(second.port, ids, clients, requests, deadline, keep_alive=True)
    rss_kept = second.peak_rss_mib()
    second.stop()

    latencies = sorted(lat1 + lat2)
    kept = sorted(lat3)
    errors = err1 + err2 + err3
    total = len(latencies) + len(kept) + len(errors)

    def pct(values, p):
        return values[min(len(values) - 1, int(p * len(values)))] * 1000 if values else 0

    fresh_rate, kept_rate = len(latencies) / (t1 + t2), len(kept) / t3
    print(f"debuginfod load: {clients} concurrent clients, {modules} modules, {total} requests, "
          f"loopback; a connection per request, then one kept-alive connection per client")
    print(f"  {'':22}{'new connection':>16}{'keep-alive':>14}{'ratio':>8}")
    print(f"  {'requests/s':22}{fresh_rate:16.0f}{kept_rate:14.0f}{kept_rate / fresh_rate:8.2f}")
    for name, p in (("latency p50 (ms)", 0.50), ("latency p99 (ms)", 0.99), ("latency max (ms)", 1.0)):
        a, b = pct(latencies, p), pct(kept, p)
        print(f"  {name:22}{a:16.1f}{b:14.1f}{b / a if a else 0:8.2f}")
    print(f"  {'server peak RSS (MiB)':22}{rss_fresh:16.1f}{rss_kept:14.1f}")
    print(f"  errors                {len(errors):10}" + (f"  e.g. {errors[0]}" if errors else ""))
    made_first = made(first)
    print(f"  first run:  {len(made_first)} syntheses of {len(set(made_first))} distinct modules "
          f"(of {modules}); answers {sources(first)}")
    print(f"  after the restart: {len(made(second))} syntheses; answers {sources(second)}")
    ok = not errors and sorted(made_first) == sorted(ids) and not made(second)
    print("  PASS" if ok else "  FAIL: want 0 errors, each module made once, none after the restart")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
