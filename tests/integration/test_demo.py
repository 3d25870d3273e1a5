#!/usr/bin/env python3
"""scripts/demo's report (issue P): run on this build (UNWINDKIT_BUILD_DIR), it must succeed and
read well — no line over 100 columns, no tab, none of the shell's crash noise (`Segmentation
fault`, `core dumped`) — and show GDB, LLDB and the CLI on the same stripped core, each
comparison ending in a verdict line. The verdicts for GDB and LLDB with the plugin against each
debugger alone on the copy that kept .eh_frame must say "the same, line for line": the demo
compares the debuggers' own text, so this fails whenever the plugins' output differs."""
import os
import subprocess
import sys

SOURCE = os.environ["UNWINDKIT_SOURCE_DIR"]
BUILD = os.environ["UNWINDKIT_BUILD_DIR"]


def main():
    p = subprocess.run([os.path.join(SOURCE, "scripts", "demo")], capture_output=True, text=True,
                       env=dict(os.environ, UNWINDKIT_BUILD_DIR=BUILD), timeout=600)
    report = p.stdout
    problems = []
    if p.returncode != 0:
        problems.append(f"scripts/demo exited {p.returncode}: {p.stderr[-2000:]}")
    lines = report.splitlines()
    for n, line in enumerate(lines, 1):
        if len(line) > 100:
            problems.append(f"line {n} has {len(line)} columns: {line!r}")
        if "\t" in line:
            problems.append(f"line {n} has a tab: {line!r}")
    for noise in ("Segmentation fault", "core dumped", "Aborted"):
        if noise in report or noise in p.stderr:
            problems.append(f"shell noise in the report: {noise!r}")
    for tool in ("--- unwindkit bt", "--- gdb alone", "--- gdb + plugin",
                 f"--- lldb-{os.environ.get('UNWINDKIT_LLDB_VERSION', '22')} + plugin"):
        if not any(line.startswith(tool) for line in lines):
            problems.append(f"no block for {tool[4:]!r}")
    verdicts = [line for line in lines if line.startswith("=> ")]
    same = [v for v in verdicts if v.startswith("=> the same, line for line")]
    if len(verdicts) != 4:
        problems.append(f"{len(verdicts)} verdict lines, want 4: {verdicts}")
    if len(same) != 2:
        problems.append(f"GDB and LLDB with the plugin should each equal the .eh_frame copy: {verdicts}")
    print(f"demo: {len(lines)} lines, widest {max(map(len, lines), default=0)} columns; "
          f"verdicts: {verdicts}")
    for problem in problems:
        print("FAIL", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
