#!/usr/bin/env python3
"""`unwindkit debuginfod`'s /metrics (issue D3, item 4): parsed as Prometheus' text format
(prometheus_client's parser where installed, else the format's own line grammar, from
https://prometheus.io/docs/instrumenting/exposition_formats/), its counters agree with the
requests this test made: 200s by where the file came from and their bytes, a 400, 404s, a 405,
syntheses, connections."""
import http.client
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_debuginfod import Server, build_id  # noqa: E402

# The exposition format's sample line: name, optional {label="value",...}, value.
SAMPLE = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*)\})?'
                    r' ([-+]?(?:[0-9.]+(?:[eE][-+]?[0-9]+)?|NaN|[+-]?Inf))( -?[0-9]+)?')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"')
COMMENT = re.compile(r"# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


def parse(text):
    """{(name, frozenset(labels)): value}, or raise on any line outside the grammar."""
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        samples, typed = {}, {}
        for line in text.splitlines():
            if not line:
                continue
            m = COMMENT.fullmatch(line)
            if m:
                if m.group(1) == "TYPE":
                    if m.group(3) not in TYPES or m.group(2) in typed:
                        raise ValueError(f"bad TYPE line {line!r}")
                    typed[m.group(2)] = m.group(3)
                continue
            m = SAMPLE.fullmatch(line)
            if not m:
                raise ValueError(f"not a sample line: {line!r}")
            labels = frozenset(LABEL.findall(m.group(3) or ""))
            samples[(m.group(1), labels)] = float(m.group(4))
        return samples, "the format's grammar"
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return samples, "prometheus_client"


def get(port, path, method="GET"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request(method, path)
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, body, r.getheader("Content-Type")


def main():
    shared = os.environ["UNWINDKIT_SHARED_DIR"]
    module = os.path.join(shared, "fixtures", "sframe-v2-x86_64", "stripped", "prog")
    bid = build_id(module)
    problems = []
    with tempfile.TemporaryDirectory(prefix="uk-metrics-") as work:
        server = Server([module], os.path.join(work, "cache"), extra=("--memory-mib", "0"))
        try:
            sizes = [len(get(server.port, f"/buildid/{bid}/debuginfo")[1]) for _ in range(3)]
            exe = len(get(server.port, f"/buildid/{bid}/executable")[1])
            statuses = [get(server.port, "/buildid/zz/debuginfo")[0],
                        get(server.port, "/buildid/00/debuginfo")[0],
                        get(server.port, "/nothing")[0],
                        get(server.port, f"/buildid/{bid}/debuginfo", method="POST")[0]]
            status, text, kind = get(server.port, "/metrics")
        finally:
            server.stop()
    if statuses != [400, 404, 404, 405]:
        problems.append(f"the refusals answered {statuses}, not [400, 404, 404, 405]")
    if status != 200 or not (kind or "").startswith("text/plain"):
        problems.append(f"/metrics: {status} {kind}")
    samples, parser = parse(text.decode())
    p = "unwindkit_debuginfod_"

    def value(name, **labels):
        return samples.get((p + name, frozenset(labels.items())))

    # --memory-mib 0: made once, then read back from the folder twice.
    want = {("requests_total", ("status", "200")): 4, ("requests_total", ("status", "400")): 1,
            ("requests_total", ("status", "404")): 2, ("requests_total", ("status", "405")): 1,
            ("files_total", ("source", "made")): 1, ("files_total", ("source", "disk")): 2,
            ("files_total", ("source", "executable")): 1,
            ("sent_bytes_total", ("source", "made")): sizes[0],
            ("sent_bytes_total", ("source", "disk")): sizes[1] + sizes[2],
            ("sent_bytes_total", ("source", "executable")): exe}
    for (name, (label, lv)), expected in want.items():
        got = value(name, **{label: lv})
        if got != expected:
            problems.append(f"{name}{{{label}={lv!r}}} is {got}, the test made {expected}")
    if value("syntheses_total") != 1:
        problems.append(f"syntheses_total is {value('syntheses_total')}, not 1")
    if value("connections_accepted_total") != 9:
        problems.append(f"connections_accepted_total is {value('connections_accepted_total')}, "
                        "the test opened 9")
    if value("connections") != 1:
        problems.append(f"connections is {value('connections')} while /metrics alone was open")
    print(f"/metrics parsed by {parser}: {len(samples)} samples")
    for line in problems:
        print(f"FAIL {line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
