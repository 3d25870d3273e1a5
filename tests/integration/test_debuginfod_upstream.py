#!/usr/bin/env python3
"""`unwindkit debuginfod --upstream URL` (issue D3, item 3), loopback only: a server that
indexed nothing, in front of another that holds the module, serves the module's synthesized
file (byte for byte the one the upstream makes) and its executable; an unknown build-id is
404; an upstream that answers with another ELF file than the build-id asked for (a fake one,
Python's http.server) is not believed: 404."""
import http.server
import os
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_debuginfod import Server, build_id  # noqa: E402
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
            front = Server([empty], os.path.join(work, "cache-front"), extra=("--upstream", upstream.url))
            try:
                status, body = front.get(f"/buildid/{bid}/debuginfo")
                if status != 200 or body != wanted:
                    problems.append(f"debuginfo through the upstream: {status}, "
                                    f"{'the same file' if body == wanted else 'another file'}")
                status, body = front.get(f"/buildid/{bid}/executable")
                with open(module, "rb") as f:
                    if status != 200 or body != f.read():
                        problems.append(f"executable through the upstream: {status}")
                status, _ = front.get("/buildid/0123456789abcdef0123/debuginfo")
                if status != 404:
                    problems.append(f"an id no one has: {status}")
            finally:
                front.stop()
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
            finally:
                front.stop()
        finally:
            liar.shutdown()
    for p in problems:
        print(f"FAIL {p}")
    if not problems:
        print("served through the upstream; an unknown id and a lying upstream: 404")
    return 1 if problems else 0


if __name__ == "__main__":
    exit_with(main)
