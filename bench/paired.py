#!/usr/bin/env python3
"""Times two commands against each other for scripts/bench: runs alternate (ours, theirs,
ours, ...) so both see the same machine load, output to /dev/null, and prints the median
wall time of each and the ratio ours / theirs.
Usage: paired.py RUNS TITLE TARGET -- OURS... -- THEIRS...
"""
import os
import statistics
import subprocess
import sys
import time


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def label(cmd):
    """The command without its paths: `unwindkit sframe dump`."""
    return " ".join([os.path.basename(cmd[0])] + [a for a in cmd[1:] if "/" not in a])


def main():
    runs, title, target = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    rest = sys.argv[5:]
    split = rest.index("--")
    ours, theirs = rest[:split], rest[split + 1:]
    ours_t, theirs_t = [], []
    for _ in range(runs):
        ours_t.append(timed(ours))
        theirs_t.append(timed(theirs))
    o, t = statistics.median(ours_t), statistics.median(theirs_t)
    print(f"{title}   median of {runs}, alternating (s)")
    print(f"  {label(ours):38} {o:8.3f}")
    print(f"  {label(theirs):38} {t:8.3f}")
    print(f"  ratio unwindkit / reference            {o / t:8.2f}  (target <= {target:.2f})")


if __name__ == "__main__":
    main()
