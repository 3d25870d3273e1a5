"""Hostile data in the debuggers (issue G, robustness 2).

Builds the truth programs of tests/integration/truth (x86_64: stripped copies that keep
.sframe, crashed to cores) and a `.trace` program (tests/integration/test_trace_debuggers.py),
and Mach-O images of tests/fixtures-src/macho (test_compact_unwind_llvm.py), then, for each
run, writes a mutated copy of one program: its `.sframe`, `.trace` or `__unwind_info` bytes
replaced in place (same size, same address), or its core's stack patched into a loop
(stack_loops.py). Each copy is loaded with the plugin in `gdb -batch -nx` and `lldb-22 -b -x`
running `bt` of every thread and the dump/check commands, under a time limit; a mutated
`.sframe` or `.trace` program is also served by `unwindkit debuginfod` (server.py). A Mach-O image
has no core (none can run here): its runs are the compact unwind dump, check and lookup
commands, counted for crashes and hangs only.

Native unwinding "came through" when frame #0 of every thread is the PC the kernel wrote in
the core (NT_PRSTATUS) and every thread's backtrace has at least as many frames as the
debugger alone prints for that core (the debugger alone never reads .sframe or .trace, so its output on the
unmutated stripped copy is its output on every section mutation; for a patched core it is
measured on that core).

Runs are deterministic from the seed: run i draws everything from random.Random(f"{seed}/{i}").
"""
import argparse
import concurrent.futures
import dataclasses
import json
import os
import random
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
sys.path.insert(0, os.path.dirname(HERE))

import truth  # noqa: E402
from truth.tools import Skip, run as run_tool  # noqa: E402
from hostile import (debuggers, elf_files, macho_files, server, sframe_mutations,  # noqa: E402
                     stack_loops, trace_mutations, unwind_info_mutations)

# Mach-O programs: name -> the image test_compact_unwind_llvm.build_fixtures links.
MACHO_PROGRAMS = {"macho_frames_x86_64": "frames-x86_64-O2.out", "macho_eh_arm64": "eh-arm64.out",
                  "macho_dwarf_x86_64": "dwarf_mode-x86_64.out",
                  "macho_table_arm64": "table-arm64.out"}
DEFAULT_PROGRAMS = ("opt_mix", "omit_fp", "realign", "plt_libc", "shared_lib", "threads",
                    "signal_handler", "cxx_terminate", "trace_c", *MACHO_PROGRAMS)
SECTION_MUTATORS = {".sframe": sframe_mutations.mutate, ".trace": trace_mutations.mutate}
MACHO_MUTATORS = {"__unwind_info": unwind_info_mutations.mutate}
STACK_SHARE = 0.2  # of runs that patch the core's stack instead of a section


@dataclasses.dataclass
class Program:
    name: str
    exe: str
    core: str  # None for a Mach-O image
    sections: dict  # name -> (file offset, size)
    pcs: list  # each thread's PC, from the core's NT_PRSTATUS notes; Mach-O: addresses to look up
    baseline: dict = dataclasses.field(default_factory=dict)  # debugger -> [[pc...]]


@dataclasses.dataclass
class RunResult:
    index: int
    program: str
    mutation: str
    verdict: str  # rejected | accepted | n/a (our validator on the mutated section)
    outcomes: dict  # debugger -> summary dict


def build_programs(names, work, unwindkit):
    src = os.path.join(ROOT, "tests", "programs")
    programs = []
    cases = {c.name: c for c in truth.cases_for("x86_64")}
    macho_dir = None
    for name in names:
        if name in MACHO_PROGRAMS:
            if macho_dir is None:
                macho_dir = os.path.join(work, "macho")
                os.makedirs(macho_dir)
                build_macho(macho_dir)
            programs.append(macho_program(name, os.path.join(macho_dir, MACHO_PROGRAMS[name])))
            continue
        if name == "trace_c":
            from test_trace_debuggers import build as trace_build
            _, stripped = trace_build("c", work, os.path.join(ROOT, "tests", "integration",
                                                              "programs"))
        else:
            stripped = truth.build_pair(cases[name], truth.X86_64, work, src).stripped
        core = truth.make_core(stripped, truth.X86_64)
        sections = {s: elf_files.section(stripped.exe, s) for s in SECTION_MUTATORS}
        programs.append(Program(name, stripped.exe, core,
                                {k: v for k, v in sections.items() if v and v[1]},
                                core_pcs(core)))
    return programs


def build_macho(work):
    os.environ.setdefault("UNWINDKIT_SOURCE_DIR", ROOT)
    from test_compact_unwind_llvm import build_fixtures
    build_fixtures(work)


def macho_program(name, path):
    """The image, where its `__unwind_info` lies, and the addresses its runs look up: each of
    the first functions' start and middle (llvm-nm-22), one before the first, one past the end."""
    out = run_tool(["llvm-nm-22", "-n", "--defined-only", path]).stdout
    starts = sorted({int(a, 16) for a, t, sym in (line.split() for line in out.splitlines())
                     if t in "Tt" and sym != "__mh_execute_header"})
    pcs = [starts[0] - 1] if starts else []
    for start, end in list(zip(starts, starts[1:]))[:4]:
        pcs += [start, start + (end - start) // 2]
    if starts:
        pcs.append(starts[-1] + 0x10000)
    section = macho_files.section(path, "__unwind_info")
    return Program(name, path, None, {"__unwind_info": section} if section else {}, pcs)


def validator_verdict(unwindkit, section_name, exe):
    """Whether our own reader accepts the mutated section: `sframe check`, `trace dump` or
    `compact-unwind check`."""
    cmd = {".sframe": [unwindkit, "sframe", "check", exe],
           ".trace": [unwindkit, "trace", "dump", exe],
           "__unwind_info": [unwindkit, "compact-unwind", "check", exe]}[section_name]
    p = run_tool(cmd, check=False, timeout=60)
    return "accepted" if p.returncode == 0 else "rejected"


def plan(program, seed, index):
    """(kind, label, exe bytes or None, core bytes or None) for run `index`; deterministic."""
    rng = random.Random(f"{seed}/{index}")
    if (rng.random() < STACK_SHARE or not program.sections) and program.core:
        with open(program.core, "rb") as f:
            made = stack_loops.make_cyclic(f.read(), program.core, rng)
        if made:
            return "stack", made[0], None, made[1]
    name = rng.choice(sorted(program.sections))
    offset, size = program.sections[name]
    with open(program.exe, "rb") as f:
        image = bytearray(f.read())
    mutator = SECTION_MUTATORS.get(name) or MACHO_MUTATORS[name]
    label, data = mutator(bytes(image[offset:offset + size]), rng)
    assert len(data) == size
    image[offset:offset + size] = data
    return name, label, bytes(image), None


def native_ok(threads, baseline, pcs):
    """(frame #0 of each thread is the core's PC of a thread, at least as many frames per
    thread as the debugger alone, the same frames as the debugger alone). Threads pair by
    position: a debugger lists the threads of a core in the same order each time."""
    frame0 = len(threads) == len(pcs) and all(threads) and \
        sorted(t[0] for t in threads) == sorted(pcs)
    length = len(threads) == len(baseline) and all(len(t) >= len(b)
                                                   for t, b in zip(threads, baseline))
    return frame0, length, threads == baseline


def core_pcs(path):
    with open(path, "rb") as f:
        return [t[1] for t in stack_loops.threads(f.read())]


def one_run(args, programs, index, crash_dir):
    program = programs[random.Random(f"{args.seed}/{index}/program").randrange(len(programs))]
    kind, label, image, core_bytes = plan(program, args.seed, index)
    work = tempfile.mkdtemp(prefix=f"run{index:05d}-", dir=args.work)
    exe, core = program.exe, program.core
    if image is not None:
        exe = os.path.join(work, "prog")
        with open(exe, "wb") as f:
            f.write(image)
        os.chmod(exe, 0o755)
    if core_bytes is not None:
        core = os.path.join(work, "core")
        with open(core, "wb") as f:
            f.write(core_bytes)
    verdict = validator_verdict(args.unwindkit, kind, exe) if kind != "stack" else "n/a"
    outcomes, bad = {}, False
    for dbg in args.debuggers:
        start = time.monotonic()
        if core is None:  # a Mach-O image: crashes and hangs are all there is to count
            o = _run_macho(args, dbg, exe, program.pcs, work)
            outcomes[dbg] = {"crashed": o.crashed, "hung": o.hung, "frame0": None,
                             "length": None, "same_as_alone": None,
                             "seconds": round(time.monotonic() - start, 2)}
        else:
            o = _run_debugger(args, dbg, exe, core, True, work)
            seconds = time.monotonic() - start
            baseline = program.baseline[dbg]
            if kind == "stack" and not (o.crashed or o.hung):
                baseline = _run_debugger(args, dbg, exe, core, False, work).threads
            frame0, length, same = native_ok(o.threads, baseline, program.pcs)
            outcomes[dbg] = {"crashed": o.crashed, "hung": o.hung, "frame0": frame0,
                             "length": length, "same_as_alone": same,
                             "seconds": round(seconds, 2),
                             "frames": [len(t) for t in o.threads],
                             "baseline_frames": [len(t) for t in baseline]}
        if o.crashed or o.hung:
            bad = True
            with open(os.path.join(work, f"{dbg}.out"), "w") as f:
                f.write(o.output)
    # `unwindkit debuginfod` serves a mutated table's program too (its corrupt sections: 404).
    if core is not None and kind in (".sframe", ".trace"):
        o = server.run(args.unwindkit, exe, args.timeout, work)
        outcomes["server"] = {"crashed": o.crashed, "hung": o.hung, "frame0": None,
                              "length": None, "same_as_alone": None,
                              "seconds": round(o.seconds, 2)}
        if o.crashed or o.hung:
            bad = True
            with open(os.path.join(work, "server.out"), "w") as f:
                f.write(o.output)
    if bad:
        keep = os.path.join(crash_dir, f"run{index:05d}-{program.name}")
        shutil.rmtree(keep, ignore_errors=True)
        shutil.copytree(work, keep, ignore=shutil.ignore_patterns("lldb-cache"))
        with open(os.path.join(keep, "input.json"), "w") as f:
            json.dump({"seed": args.seed, "run": index, "program": program.name,
                       "mutation": label, "exe": "prog",
                       "core": core if core_bytes is None else "core",
                       "outcomes": outcomes}, f, indent=1)
        if core_bytes is None and program.core:
            shutil.copy(program.core, os.path.join(keep, "core"))
        if image is None:  # the work folder goes at the end: keep the program too
            shutil.copy(program.exe, os.path.join(keep, "prog"))
    shutil.rmtree(work, ignore_errors=True)
    return RunResult(index, program.name, f"{kind}:{label}", verdict, outcomes)


def _run_macho(args, dbg, path, pcs, work):
    if dbg == "gdb":
        return debuggers.gdb_macho(args.build_dir, path, pcs, args.timeout)
    return debuggers.lldb_macho(args.build_dir, path, pcs, args.timeout, work)


def _run_debugger(args, dbg, exe, core, plugin, work):
    if dbg == "gdb":
        return debuggers.gdb(args.build_dir, exe, core, plugin, args.timeout)
    return debuggers.lldb(args.build_dir, exe, core, plugin, args.timeout, work)


def summarize(results, args, wall):
    rows = []
    for dbg in [*args.debuggers, "server"]:
        outs = [r.outcomes[dbg] for r in results if dbg in r.outcomes]
        if dbg == "server" and not outs:
            continue
        cored = [o for o in outs if o["frame0"] is not None]  # Mach-O runs have no bt
        rows.append({
            "debugger": dbg, "runs": len(outs),
            "crashes": sum(1 for o in outs if o["crashed"]),
            "hangs": sum(1 for o in outs if o["hung"]),
            "with_core": len(cored),
            "native_ok": sum(1 for o in cored if o["frame0"] and o["length"]),
            "frame0_ok": sum(1 for o in cored if o["frame0"]),
            "length_ok": sum(1 for o in cored if o["length"]),
            "same_as_alone": sum(1 for o in cored if o["same_as_alone"]),
            "max_seconds": max((o["seconds"] for o in outs), default=0),
        })
    verdicts = {}
    for r in results:
        kind = r.mutation.split(":", 1)[0]
        v = verdicts.setdefault(kind, {"rejected": 0, "accepted": 0, "n/a": 0})
        v[r.verdict] += 1
    return {"seed": args.seed, "runs_planned": args.runs, "runs_done": len(results),
            "wall_seconds": round(wall, 1), "jobs": args.jobs, "timeout": args.timeout,
            "debuggers": rows, "validator": verdicts,
            "programs": sorted({r.program for r in results}),
            "bad_runs": [dataclasses.asdict(r) for r in results
                         if any(o["crashed"] or o["hung"] for o in r.outcomes.values())],
            "runs": [dataclasses.asdict(r) for r in results]}


def _write(path, summary):
    with open(path + ".tmp", "w") as f:
        json.dump(summary, f, indent=1)
    os.replace(path + ".tmp", path)


def print_table(summary, crash_dir):
    print(f"seed {summary['seed']}: {summary['runs_done']} of {summary['runs_planned']} runs in "
          f"{summary['wall_seconds']} s (-j{summary['jobs']}, time limit {summary['timeout']} s)")
    print("(native-ok, frame0-ok, >=alone and =alone count the runs with a core, column `cores`;"
          " the rest are Mach-O runs)")
    print(f"{'debugger':8} {'runs':>6} {'crashes':>8} {'hangs':>6} {'cores':>6} {'native-ok':>10} "
          f"{'frame0-ok':>10} {'>=alone':>8} {'=alone':>7} {'max s':>7}")
    for r in summary["debuggers"]:
        print(f"{r['debugger']:8} {r['runs']:>6} {r['crashes']:>8} {r['hangs']:>6} "
              f"{r['with_core']:>6} {r['native_ok']:>10} {r['frame0_ok']:>10} {r['length_ok']:>8} "
              f"{r['same_as_alone']:>7} "
              f"{r['max_seconds']:>7}")
    for kind, v in sorted(summary["validator"].items()):
        if kind == "stack":
            print(f"stack loops: {v['n/a']} runs (cores patched; no table changed)")
        else:
            print(f"{kind}: our validator rejected {v['rejected']}, accepted {v['accepted']}")
    for r in summary["bad_runs"]:
        print(f"BAD run {r['index']} {r['program']} {r['mutation']}: "
              + "; ".join(f"{d}: {'hang' if o['hung'] else o['crashed']}"
                          for d, o in r["outcomes"].items() if o["crashed"] or o["hung"])
              + f" -> {os.path.join(crash_dir, 'run%05d-%s' % (r['index'], r['program']))}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100, help="runs per debugger")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--debugger", choices=["gdb", "lldb", "both"], default="both")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=60, help="seconds per debugger run")
    ap.add_argument("--programs", default=",".join(DEFAULT_PROGRAMS))
    ap.add_argument("--build-dir", default=os.environ.get("UNWINDKIT_BUILD_DIR",
                                                         os.path.join(ROOT, "build", "dev")))
    ap.add_argument("--crash-dir", default=None, help="where crash/hang inputs are kept")
    ap.add_argument("--summary", default=None, help="also write the summary as JSON here")
    ap.add_argument("--until", type=float, default=None,
                    help="start no run after this Unix time (the counts say how many ran)")
    args = ap.parse_args(argv)
    args.jobs = max(1, min(args.jobs, 2))  # a 2-core machine shared with others
    args.debuggers = ["gdb", "lldb"] if args.debugger == "both" else [args.debugger]
    args.build_dir = os.path.abspath(args.build_dir)
    args.unwindkit = os.environ.get("UNWINDKIT") or os.path.join(args.build_dir, "cli",
                                                                 "unwindkit")
    os.environ["UNWINDKIT"] = args.unwindkit
    for need in ([args.unwindkit] +
                 ([os.path.join(args.build_dir, "gdb-plugin", "unwindkit-gdb.py")]
                  if "gdb" in args.debuggers else []) +
                 ([os.path.join(args.build_dir, "lldb-plugin", "libunwindkit-lldb.so")]
                  if "lldb" in args.debuggers else [])):
        if not os.path.exists(need):
            raise Skip(f"not built: {need}")
    args.work = tempfile.mkdtemp(prefix="unwindkit-hostile-")
    crash_dir = args.crash_dir or os.path.join(args.work + "-kept")
    os.makedirs(crash_dir, exist_ok=True)
    start = time.monotonic()
    try:
        programs = build_programs(args.programs.split(","), args.work, args.unwindkit)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            jobs = {pool.submit(_run_debugger, args, d, p.exe, p.core, False, args.work): (p, d)
                    for p in programs for d in args.debuggers if p.core}
            for job, (p, d) in jobs.items():
                p.baseline[d] = job.result().threads
                print(f"baseline {d} {p.name}: frames per thread {[len(t) for t in p.baseline[d]]}"
                      f"; sections {sorted(p.sections)}", flush=True)

            def guarded(i):
                if args.until and time.time() > args.until:
                    return None
                return one_run(args, programs, i, crash_dir)

            results = []
            for r in pool.map(guarded, range(args.runs)):
                if r is None:
                    continue
                results.append(r)
                if len(results) % 50 == 0:
                    print(f"{len(results)} runs, {time.monotonic() - start:.0f} s", flush=True)
                    if args.summary:  # so that a campaign cut short still leaves its counts
                        _write(args.summary, summarize(results, args, time.monotonic() - start))
    finally:
        shutil.rmtree(args.work, ignore_errors=True)
    summary = summarize(results, args, time.monotonic() - start)
    summary["crash_dir"] = crash_dir
    print_table(summary, crash_dir)
    if args.summary:
        _write(args.summary, summary)
    if summary["bad_runs"]:
        print(f"crash/hang inputs kept in {crash_dir}")
        return 1
    shutil.rmtree(crash_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Skip as e:
        print(f"SKIP: {e}")
        sys.exit(0)
