#!/usr/bin/env python3
"""`unwindkit cbf decode|encode` end to end on the vectors of shared/notes/formats.md §4.

Expected frames are the notes' statements; base64 is computed here with Python's base64
module (not our code); Swift's JSON form is {"backtrace": <base64 without padding>, ...}.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile

UK = os.environ["UNWINDKIT"]
MIXED = bytes.fromhex("02 11 10 00 20 10 21 ff 00 35 7f ff 00 00 10 f0 44 61 03 e8"
                      " 29 20 20 80 11 10 10 88 09 01")
MIXED_FRAMES = ([("pc", 0x1000), ("ra", 0x1010), ("ra", 0xf10), ("async", 0x7fff00002000),
                 ("omit", 5), ("omit", 1000)] + [("ra", 0x2020)] * 2 + [("pc", 0x3030)] * 10
                + [("truncated", None)])
failures = []


def run(*args, stdin=None):
    p = subprocess.run([UK, "cbf", *args], input=stdin, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def frames_of(js):
    out = []
    for f in js["frames"]:
        v = f.get("address")
        v = int(v, 16) if v is not None else f.get("omitted")
        out += [(f["kind"], v)] * f["repeat"]
    return out


def decode_json(*source):
    rc, out, err = run("decode", *source, "--json")
    return rc, (json.loads(out)["records"] if out else None), err


with tempfile.TemporaryDirectory() as tmp:
    raw = os.path.join(tmp, "mixed.cbf")
    with open(raw, "wb") as f:
        f.write(MIXED)
    b64 = base64.b64encode(MIXED).decode().rstrip("=")
    swift_json = os.path.join(tmp, "bt.json")
    with open(swift_json, "w") as f:
        json.dump({"architecture": "arm64", "backtrace": b64}, f)
    urlsafe = base64.urlsafe_b64encode(MIXED).decode().rstrip("=")
    for source in (["--hex", MIXED.hex()], [raw], ["--base64", b64], ["--base64", urlsafe],
                   ["--json-file", swift_json]):
        rc, recs, err = decode_json(*source)
        check(rc == 0 and len(recs) == 1, f"decode {source[0]}: rc {rc} {err}")
        if recs:
            check(frames_of(recs[0]) == MIXED_FRAMES, f"decode {source[0]} frames")

    # The repeat-limit vector: pc 0x7f then 0x100001 repeats = 1,048,578 frames.
    rc, recs, _ = decode_json("--hex", "0218 7f8a 1000 0100")
    check(rc == 0 and recs[0]["frame_count"] == 1048578, "repeat limit vector")
    check(recs[0]["frames"] == [{"kind": "pc", "address": "0x7f", "repeat": 1048578}],
          "repeat limit frames")
    # One more repeat is over the limit: truncated, exit 1, the offset of the count named.
    rc, recs, err = decode_json("--hex", "0218 7f8a 1000 0200")
    check(rc == 1 and recs[0]["frames"][-1]["kind"] == "truncated", "over-limit truncates")
    check("CBF+0x4: rep.count" in err, f"over-limit names offset/field: {err!r}")
    # Malformed forms: exit 1 with an error naming the offset.
    for hexs, where in (("0212 10", "CBF+0x3: address"), ("0280", "CBF+0x1: rep"),
                        ("0202", "CBF+0x1: instruction"), ("03 10 01 00", "CBF+0x0: info.size")):
        rc, _, err = run("decode", "--hex", hexs)
        check(rc == 1 and where in err, f"malformed {hexs}: rc {rc} {err!r}")
    # Concatenated records are split.
    rc, recs, _ = decode_json("--hex", "02 10 05 00" + MIXED.hex())
    check(rc == 0 and len(recs) == 2 and frames_of(recs[1]) == MIXED_FRAMES, "stream split")
    # Usage errors exit 2.
    check(run("decode")[0] == 2, "decode without a source is a usage error")
    check(run("decode", "--hex", "00", "--base64", "AA")[0] == 2, "two sources: usage error")
    check(run("encode", "--width", "48", stdin="")[0] == 2, "bad width: usage error")

    # Encode the mixed frames back: Swift's bytes exactly.
    listing = "\n".join(f"{k} {v:#x}" if k not in ("omit", "truncated") else
                        (f"omit {v}" if k == "omit" else "truncated") for k, v in MIXED_FRAMES)
    rc, out, err = run("encode", stdin=listing + "\n")
    lines = dict(l.split(": ", 1) for l in out.splitlines())
    check(rc == 0 and lines.get("hex") == " ".join(f"{b:02x}" for b in MIXED), f"encode hex {out}")
    check(lines.get("base64") == b64, "encode base64")
    # 16 address frames (4 + 2 + 10) x 8 bytes plain.
    check(lines.get("size") == f"{len(MIXED)} bytes (plain: 128 bytes)", f"size line {out}")
    rc, _, err = run("encode", stdin="pc zz\n")
    check(rc == 1, "bad frame line is a data problem")

    # From `unwindkit bt --json`: frame 0 is a pc, then return addresses (one record/thread).
    bt = {"threads": [{"frames": [{"pc": "0x401000"}, {"pc": "0x401100"}]}]}
    rc, out, _ = run("encode", "--width", "32", stdin=json.dumps(bt))
    lines = dict(l.split(": ", 1) for l in out.splitlines())
    # 32-bit info 01; pc +0x401000 in 3 bytes (12 40 10 00); ra +0x100 (21 01 00); end.
    check(rc == 0 and lines.get("hex") == "01 12 40 10 00 21 01 00 00", f"bt json encode {out}")

    # --swift-json writes the JSON a Swift Backtrace encodes to; --json-file reads it back.
    rc, out, err = run("encode", "--swift-json", "--arch", "arm64", stdin=listing + "\n")
    written = json.loads(out) if rc == 0 else {}
    check(written == {"architecture": "arm64", "backtrace": b64}, f"--swift-json: {out} {err}")
    with open(swift_json, "w") as f:
        f.write(out)
    rc, recs, err = decode_json("--json-file", swift_json)
    check(rc == 0 and frames_of(recs[0]) == MIXED_FRAMES, f"--swift-json round trip: {err}")
    check(run("encode", "--arch", "arm64", stdin=listing)[0] == 2, "--arch needs --swift-json")

print("FAILURES:" if failures else "ok", *failures, sep="\n")
sys.exit(1 if failures else 0)
