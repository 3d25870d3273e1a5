#!/usr/bin/env python3
"""`unwindkit debuginfod --upstream URL` (issue D3, item 3), loopback only: a server that
indexed nothing, in front of another that holds the module, serves the module's synthesized
file (byte for byte the one the upstream makes) and its executable; an unknown build-id is
404; an upstream that answers with another ELF file than the build-id asked for (a fake one,
Python's http.server) is not believed: 404.
Without --upstream, DEBUGINFOD_URLS is the upstream (as for elfutils' debuginfod), less the
server's own URL (by address or by name, with or without a path): the module is served, an
unknown id asked once upstream, never of itself. A request whose X-Forwarded-For has
--forwarded-ttl-limit hops is not passed on; one hop fewer is.
/metrics (parsed as test_debuginfod_metrics parses it): the front's upstream fetches by result
and its fetch-time histogram agree with the requests this test made, and with what the
upstream's own /metrics counted."""
import http.server
import os
import shutil
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_debuginfod import Server, build_id, free_port  # noqa: E402
from test_debuginfod_metrics import parse  # noqa: E402
from truth.tools import exit_with  # noqa: E402


class Liar(http.server.BaseHTTPRequestHandler):
    """Answers every request with the same ELF file, whatever build-id was asked for."""
    body = b""

    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


PREFIX = "unwindkit_debuginfod_"
UNKNOWN = "0123456789abcdef0123"
HOPS = 3  # --forwarded-ttl-limit of the DEBUGINFOD_URLS front


def metrics(server):
    status, text = server.get("/metrics")
    samples, parser = parse(text.decode())
    return (lambda name, **labels: samples.get((PREFIX + name, frozenset(labels.items())), 0)), parser


def check_fetch_metrics(front, upstream, want, upstream_want, problems):
    """The front's fetch counters are `want` ({result: count}), its histogram counts the
    fetches that asked upstream, and the upstream's own counters are `upstream_want` (the
    executables it sent, the 404s it answered, from its start)."""
    value, parser = metrics(front)
    for result in ("found", "not_found", "wrong_file", "error", "busy", "hop_limit"):
        if value("upstream_fetches_total", result=result) != want.get(result, 0):
            problems.append(f"upstream_fetches_total{{result={result!r}}} is "
                            f"{value('upstream_fetches_total', result=result)}, the test made "
                            f"{want.get(result, 0)}")
    asked = want.get("found", 0) + want.get("not_found", 0)
    count = value("upstream_fetch_seconds_count")
    inf = value("upstream_fetch_seconds_bucket", le="+Inf")
    total = value("upstream_fetch_seconds_sum")
    if count != asked or inf != asked or not 0 < total < 30 * max(asked, 1):
        problems.append(f"upstream_fetch_seconds: count {count}, +Inf {inf}, sum {total}; "
                        f"{asked} fetches asked upstream")
    up, _ = metrics(upstream)
    got = (up("files_total", source="executable"), up("requests_total", status="404"))
    if got != upstream_want:
        problems.append(f"the upstream sent {got[0]} executables and {got[1]} 404s, not "
                        f"{upstream_want[0]} and {upstream_want[1]}")
    return parser


def check_environment(module, bid, upstream, work, problems):
    """DEBUGINFOD_URLS as the upstream, this server's own URLs left out; the hop limit."""
    empty = os.path.join(work, "empty")
    port = free_port()
    own = [f"http://127.0.0.1:{port}", f"http://localhost:{port}/", f"http://[::ffff:127.0.0.1]:{port}"]
    env = {k: v for k, v in os.environ.items() if k != "DEBUGINFOD_URLS"}
    env["DEBUGINFOD_URLS"] = " ".join([own[0], upstream.url, *own[1:]])
    front = Server([empty], os.path.join(work, "cache-env"), port=port, env=env,
                   extra=("--forwarded-ttl-limit", str(HOPS)))
    try:
        status, body = front.get(f"/buildid/{bid}/executable")
        with open(module, "rb") as f:
            if status != 200 or body != f.read():
                problems.append(f"through DEBUGINFOD_URLS: {status}")
        if front.get(f"/buildid/{UNKNOWN}/debuginfo")[0] != 404:
            problems.append("an id no one has, through DEBUGINFOD_URLS: not 404")
        chain = ", ".join(["192.0.2.1"] * HOPS)
        status, _ = front.get(f"/buildid/{UNKNOWN}ff/debuginfo", headers=[("X-Forwarded-For", chain)])
        fewer = ", ".join(["192.0.2.1"] * (HOPS - 1))
        status_fewer, _ = front.get(f"/buildid/{UNKNOWN}ee/debuginfo",
                                    headers=[("X-Forwarded-For", fewer)])
        if (status, status_fewer) != (404, 404):
            problems.append(f"X-Forwarded-For of {HOPS} and {HOPS - 1} hops: {status}, {status_fewer}")
        # The module, an unknown id and one hop fewer than the limit were asked upstream (once
        # each: a loop to itself would ask again); the request at the limit was not.
        check_fetch_metrics(front, upstream, {"found": 1, "not_found": 2, "hop_limit": 1}, (2, 3),
                            problems)
        left_out = [line for line in front.log if "is this server: left out" in line]
        if len(left_out) != len(own) or not any(upstream.url in line and "DEBUGINFOD_URLS" in line
                                                for line in front.log):
            problems.append(f"this server's own URLs: {len(left_out)} of {len(own)} left out; "
                            f"log {front.log[:4]}")
    finally:
        front.stop()


def main():
    shared = os.environ["UNWINDKIT_SHARED_DIR"]
    module = os.path.join(shared, "fixtures", "sframe-v2-x86_64", "stripped", "prog")
    other = "/bin/true"  # an ELF file of another build-id
    bid = build_id(module)
    problems = []
    with tempfile.TemporaryDirectory(prefix="uk-upstream-") as work:
        empty = os.path.join(work, "empty")
        os.makedirs(empty)
        upstream = Server([module], os.path.join(work, "cache-up"))
        try:
            _, wanted = upstream.get(f"/buildid/{bid}/debuginfo")
            # A folder of its own too, after --upstream: one URL per --upstream, the folder
            # is indexed (and its file served with no fetch).
            local = os.path.join(work, "local")
            os.makedirs(local)
            shutil.copy(other, local)
            front = Server([local, empty], os.path.join(work, "cache-front"),
                           extra=("--upstream", upstream.url))
            try:
                status, _ = front.get(f"/buildid/{build_id(other)}/executable")
                if status != 200:
                    problems.append(f"a folder given after --upstream URL: {status}, not indexed")
                status, body = front.get(f"/buildid/{bid}/debuginfo")
                if status != 200 or body != wanted:
                    problems.append(f"debuginfo through the upstream: {status}, "
                                    f"{'the same file' if body == wanted else 'another file'}")
                status, body = front.get(f"/buildid/{bid}/executable")
                with open(module, "rb") as f:
                    if status != 200 or body != f.read():
                        problems.append(f"executable through the upstream: {status}")
                status, _ = front.get(f"/buildid/{UNKNOWN}/debuginfo")
                if status != 404:
                    problems.append(f"an id no one has: {status}")
                # debuginfo made from the fetched file, the executable from the same fetch,
                # the unknown id asked upstream once.
                parser = check_fetch_metrics(front, upstream, {"found": 1, "not_found": 1}, (1, 1),
                                             problems)
            finally:
                front.stop()
            check_environment(module, bid, upstream, work, problems)
        finally:
            upstream.stop()
        with open(other, "rb") as f:
            Liar.body = f.read()
        liar = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Liar)
        threading.Thread(target=liar.serve_forever, daemon=True).start()
        try:
            front = Server([empty], os.path.join(work, "cache-liar"),
                           extra=("--upstream", f"http://127.0.0.1:{liar.server_address[1]}"))
            try:
                status, _ = front.get(f"/buildid/{bid}/debuginfo")
                if build_id(other) == bid or status != 404:
                    problems.append(f"an upstream sending another build-id's file: {status}, not 404")
                value, _ = metrics(front)
                if value("upstream_fetches_total", result="wrong_file") != 1:
                    problems.append("the lying upstream's answer is not counted as wrong_file")
            finally:
                front.stop()
        finally:
            liar.shutdown()
    for p in problems:
        print(f"FAIL {p}")
    if not problems:
        print("served through the upstream (--upstream and DEBUGINFOD_URLS, its own URLs left "
              "out); an unknown id, the hop limit and a lying upstream: 404; /metrics' fetches "
              f"agree (parsed by {parser})")
    return 1 if problems else 0


if __name__ == "__main__":
    exit_with(main)
