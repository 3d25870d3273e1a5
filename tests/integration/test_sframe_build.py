#!/usr/bin/env python3
"""`unwindkit sframe build` (issue 19, part 2): SFrame for a program that gas never gave one.

1. Truth. Each program of a subset of tests/programs/ (truth/cases.py; SUBSET below, to keep the
   debugger runs few) is compiled WITHOUT `-Wa,--gsframe` and linked (truth/build.py
   build_program). For v2 and v3:
   - "intact" = `unwindkit sframe build` of that link (symbols and .eh_frame kept: the truth);
   - "stripd", x86_64 = the intact copy stripped of symbols, `.eh_frame` and `.eh_frame_hdr`
     by `llvm-strip`: the order the issue names. AArch64 = the link stripped of symbols
     (`strip --strip-all`), given .sframe by `unwindkit sframe build`, then stripped of
     `.eh_frame` and `.eh_frame_hdr` with `llvm-objcopy -R`, which keeps every file offset:
     qemu-user (like kernels before 5.18) finds the program headers from the first segment's
     offset-to-address difference, and any strip after the build moves the new segment in the
     file. Not GNU strip after the build: BFD lays the segment holding the program headers out
     anew (patchelf's known problem) and may move its addresses (seen: threads, x86_64,
     `section .sframe lma 0x5348 adjusted to 0x6308`, then a crash at start; README, Limits).
     Both copies get the same loaded segments and the same .sframe bytes (checked).
   Both crash to cores (truth/cores.py). GDB on the intact core is the truth; `unwindkit bt` on
   the stripped core must give its PCs in every thread (truth/compare.py), and GDB and LLDB with
   the plugins on the stripped core must line up every truth frame and show no wrong
   callee-saved register (test_registers_truth.run_pair: the same comparison and thresholds).
2. readelf. The same programs built WITH `-Wa,--gsframe` (binutils 2.40 gas: v1), and
   `unwindkit sframe build --version 1` of the build without it: binutils 2.40 `readelf
   --sframe` of both must agree, function by function (keyed by pc; code addresses are the same
   in both links), except the differences in ALLOWED, each with its reason; anything else fails.
Prints the figures per program, version and tool.
"""
import os
import re
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from truth.build import Build, Pair, build_program  # noqa: E402
from truth.tools import Skip, llvm, need, run  # noqa: E402
from truth.ours import unwindkit  # noqa: E402
import test_registers_truth as registers  # noqa: E402

# Cases per architecture and version. AArch64 runs under qemu and is slower: fewer there (its
# deep_recursion passes too, but its 10,000 frames cost GDB and LLDB minutes under qemu).
SUBSET = {
    ("x86_64", "3"): ("opt_mix", "omit_fp", "deep_recursion", "realign", "plt_libc", "threads",
                      "signal_entry"),
    ("x86_64", "2"): ("opt_mix", "realign", "threads"),
    ("aarch64", "3"): ("opt_mix", "omit_fp", "realign"),
    ("aarch64", "2"): ("opt_mix", "omit_fp", "realign"),
}
# Not in the AArch64 subset: threads. Its links are static, and a static glibc's thread exit
# unwinds with libgcc (_Unwind_ForcedUnwind) through .eh_frame, which the stripped copy no
# longer has: it dies elsewhere than the intact copy, so there is no truth for its core.
READELF_CASES = ("opt_mix", "omit_fp", "deep_recursion", "realign", "plt_libc", "threads")

# readelf differences that are not errors: (kind, reason). Kinds:
#   extra-function: ours describes a function gas's section does not.
#   header-counts: "Num FDEs"/"Num FREs" differ by exactly the extra functions' FDEs and FREs.
ALLOWED = {
    "extra-function": "gas writes SFrame only for the objects it assembles with --gsframe; the "
                      "tool converts every FDE of the link's .eh_frame, so it also describes "
                      "functions of objects built without it (crt1.o's _start, crti.o, "
                      "libc.a in a static link, ld's .plt.got stubs). Each extra function must "
                      "be one that none of the program's own objects defines.",
    "header-counts": "follows from the extra functions: the counts differ by exactly their "
                     "FDEs and FREs",
}


def strip_tool(arch):
    return need(arch.cc[: -len("gcc")] + "strip")


def sframe_build(src, dst, version):
    p = run([unwindkit(), "sframe", "build", src, "--version", version, "-o", dst])
    return p.stderr.strip()


def make_copies(case, arch, base, src_dir, version, plain):
    """The intact and stripped copies of `plain` (the link without --gsframe) for `version`."""
    intact_dir, stripped_dir = os.path.join(base, "intact"), os.path.join(base, "stripd")
    for d in (intact_dir, stripped_dir):
        os.makedirs(d)
    intact = Build(intact_dir, os.path.join(intact_dir, "prog"), [])
    summary = sframe_build(plain.exe, intact.exe, version)
    stripped = Build(stripped_dir, os.path.join(stripped_dir, "prog"), [])
    if not arch.runner:  # runs natively: given .sframe, then stripped, as the issue says
        run([need(llvm("llvm-strip")), "--strip-all", "-R", ".eh_frame", "-R", ".eh_frame_hdr",
             intact.exe, "-o", stripped.exe])
    else:
        bare = os.path.join(base, "bare")
        run([strip_tool(arch), "--strip-all", plain.exe, "-o", bare])
        sframed = os.path.join(base, "bare-sframe")
        sframe_build(bare, sframed, version)
        run([need(llvm("llvm-objcopy")), "-R", ".eh_frame", "-R", ".eh_frame_hdr", sframed,
             stripped.exe])
    sections = [run([need("readelf"), "-x", ".sframe", b.exe]).stdout.split("\n", 2)[-1]
                for b in (intact, stripped)]
    if sections[0] != sections[1]:
        raise RuntimeError("the intact and stripped copies got different .sframe bytes")
    return Pair(f"{arch.name} {case.name} v{version}", arch, intact, stripped), summary


def ours_against_truth(pair, intact_core, stripped_core, timeout):
    """`unwindkit bt` on the stripped core against GDB on the intact core."""
    out = truth.Outcome(pair.name, "agree")
    want = truth.gdb_truth(pair, intact_core, timeout)
    out.threads, out.truth = len(want), sum(len(t.pcs) for t in want)
    ours, warnings = truth.our_bt(pair.stripped, stripped_core, timeout)
    out.ours = f"{sum(len(t.pcs) for t in ours)} frames"
    diff = truth.compare(want, ours)
    # Frames past the truth's end: the truth's outermost frame must be ours too.
    extra = sum(max(0, len(o.pcs) - len(t.pcs)) for t, o in
                zip(sorted(want, key=lambda t: t.tid), sorted(ours, key=lambda t: t.tid)))
    if diff or extra:
        out.status = "differ"
        out.detail = (diff or f"{extra} frames past the truth's end") + \
            (f"; warnings: {warnings}" if warnings else "")
    return out


def register_verdict(rows):
    """test_registers_truth's comparison, without its 5 % bound on unavailable values: here
    libc's frames are SFrame too (static AArch64 links), and SFrame describes only CFA, RA and
    FP, so a register the prologue analyzer cannot prove saved is shown unavailable: honest,
    reported, not a failure. A wrong value is."""
    failures = [f"{r.program} [{r.debugger}]: {r.detail}" for r in rows if r.status == "error"]
    totals = {}
    for r in rows:
        if r.tally is not None:
            totals.setdefault(r.debugger, registers.Tally()).add(r.tally)
    print("\nper debugger: values compared, equal, unavailable (share), wrong")
    for name, t in totals.items():
        print(f"  {name}: {t.values} values, {t.equal} equal, {t.unavailable} unavailable "
              f"({100 * t.unavailable / max(t.values, 1):.1f}%), {t.wrong} wrong; arguments "
              f"{t.args_wrong} wrong of {t.args}; frames lined up {t.aligned}/{t.frames}")
        if t.wrong or t.args_wrong:
            failures.append(f"{name}: {t.wrong} wrong register values, {t.args_wrong} wrong "
                            "arguments")
        if t.values == 0:
            failures.append(f"{name}: no value compared: the check saw nothing")
    if not totals and not all(r.status == "skip" for r in rows):
        failures.append("no debugger run compared anything")
    elif not totals:
        print("  no plugin run: the plugins are not built here (sanitizer build)")
    return failures


def truth_runs(src_dir, work):
    """Outcomes of `unwindkit bt` and register rows of the debuggers, per copy."""
    outcomes, rows, notes = [], [], []
    for arch in (truth.X86_64, truth.AARCH64):
        cases = {c.name: c for c in truth.cases_for(arch.name)}
        plain = {}
        for version in ("3", "2"):
            for name in SUBSET[(arch.name, version)]:
                case = cases[name]
                label = f"{arch.name} {name} v{version}"
                try:
                    if name not in plain:
                        plain[name] = build_program(case, arch, os.path.join(
                            work, arch.name, name, "plain"), src_dir, gsframe=False)[0]
                    base = os.path.join(work, arch.name, name, f"v{version}")
                    pair, summary = make_copies(case, arch, base, src_dir, version, plain[name])
                    notes.append(f"{label}: {summary}")
                    cores = truth.make_core(pair.intact, arch), truth.make_core(pair.stripped,
                                                                                arch)
                except Skip as e:
                    outcomes.append(truth.Outcome(label, "skip", str(e)))
                    continue
                except Exception as e:  # noqa: BLE001 - one broken case must not hide others
                    traceback.print_exc()
                    outcomes.append(truth.Outcome(label, "error", str(e)))
                    continue
                try:
                    outcomes.append(ours_against_truth(pair, *cores, case.timeout))
                except Exception as e:  # noqa: BLE001
                    traceback.print_exc()
                    outcomes.append(truth.Outcome(label, "error", str(e)))
                rows += registers.run_pair(pair, *cores, with_twins=False)
    return outcomes, rows, notes


# ---- readelf --sframe equality (v1) ----

_FUNC = re.compile(r"^\s+func idx \[\d+\]: pc = (0x[0-9a-f]+), size = (\d+) bytes")


def parse_dump(text):
    """(header lines, {pc: [function line without its index, rows...]})."""
    header, functions, current = [], {}, None
    for line in text.splitlines():
        m = _FUNC.match(line)
        if m:
            current = functions.setdefault(int(m.group(1), 16),
                                           [f"pc = {m.group(1)}, size = {m.group(2)} bytes"])
            continue
        if current is None:
            if line.strip():
                header.append(line.strip())
        elif line.strip():
            current.append(line.rstrip())
    return header, functions


def header_value(header, key):
    for line in header:
        if line.startswith(key + ":"):
            return line.split(":", 1)[1].strip()
    return None


def defined_symbols(objs, arch):
    prefix = arch.cc[: -len("gcc")]
    names = set()
    for o in objs:
        for line in run([need(prefix + "nm"), "--defined-only", o]).stdout.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTwW":
                names.add(parts[2])
    return names


def symbol_at(exe, arch):
    prefix = arch.cc[: -len("gcc")]
    out = {}
    for line in run([need(prefix + "nm"), "--defined-only", exe]).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwWiI":
            out.setdefault(int(parts[0], 16), parts[2])
    return out


def section_of(exe, pc):
    for line in run([need("readelf"), "-SW", exe]).stdout.splitlines():
        m = re.match(r"^\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m and int(m.group(2), 16) <= pc < int(m.group(2), 16) + int(m.group(3), 16):
            return m.group(1)
    return None


def readelf_case(case, arch, work, src_dir):
    """(functions compared equal, extra functions allowed, failures) for one program."""
    base = os.path.join(work, "readelf", arch.name, case.name)
    gas, gas_objs = build_program(case, arch, os.path.join(base, "gas"), src_dir, gsframe=True)
    plain, _ = build_program(case, arch, os.path.join(base, "plain"), src_dir, gsframe=False)
    ours_exe = os.path.join(base, "ours")
    sframe_build(plain.exe, ours_exe, "1")
    gas_text = run([need("readelf"), "--sframe", gas.exe]).stdout
    ours_text = run([need("readelf"), "--sframe", ours_exe]).stdout
    (gh, gf), (oh, of) = parse_dump(gas_text), parse_dump(ours_text)
    failures = []
    if not gf:
        failures.append("gas's section dumps no function: the check would see nothing")
    for key in ("Version", "Flags"):
        if header_value(gh, key) != header_value(oh, key):
            failures.append(f"header {key}: gas {header_value(gh, key)!r}, "
                            f"ours {header_value(oh, key)!r}")
    own = defined_symbols(gas_objs, arch)
    symbols = symbol_at(plain.exe, arch)
    extra_fdes, extra_fres, equal = 0, 0, 0
    for pc in sorted(set(gf) | set(of)):
        if pc in gf and pc in of:
            if gf[pc] == of[pc]:
                equal += 1
            else:
                failures.append(f"function {pc:#x} ({symbols.get(pc, '?')}) differs:\n  gas:  " +
                                "\n        ".join(gf[pc]) + "\n  ours: " +
                                "\n        ".join(of[pc]))
        elif pc in gf:
            failures.append(f"function {pc:#x} ({symbols.get(pc, '?')}) is in gas's section, "
                            "not in ours")
        else:
            name = symbols.get(pc)
            where = section_of(plain.exe, pc)
            if (name is not None and name not in own) or \
                    (name is None and where is not None and where.startswith(".plt")):
                extra_fdes += 1
                extra_fres += sum(1 for line in of[pc][1:] if re.match(r"^\s+[0-9a-f]{16}", line))
            else:
                failures.append(f"extra function {pc:#x} ({name or where}) is defined by the "
                                "program's own objects: not an allowed difference")
    for key, extra in (("Num FDEs", extra_fdes), ("Num FREs", extra_fres)):
        g, o = header_value(gh, key), header_value(oh, key)
        if g is None or o is None or int(o) - int(g) != extra:
            failures.append(f"header {key}: gas {g}, ours {o}, extra functions account for "
                            f"{extra}")
    return equal, extra_fdes, failures


def readelf_runs(src_dir, work):
    results = []
    for arch in (truth.X86_64, truth.AARCH64):
        for case in truth.cases_for(arch.name):
            if case.name not in READELF_CASES:
                continue
            label = f"{arch.name} {case.name}"
            try:
                results.append((label, *readelf_case(case, arch, work, src_dir)))
            except Skip as e:
                results.append((label, 0, 0, [f"skip: {e}"]))
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                results.append((label, 0, 0, [f"error: {e}"]))
    return results


def main():
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "programs")
    only = set(sys.argv[1:])  # "truth" or "readelf", to run one part by hand
    started = time.monotonic()
    failures = []
    with tempfile.TemporaryDirectory(prefix="uk-sframe-build-") as work:
        if not only or "readelf" in only:
            print("== readelf --sframe: gas 2.40 (--gsframe) vs `unwindkit sframe build "
                  "--version 1`")
            for label, equal, extra, fails in readelf_runs(src, work):
                real = [f for f in fails if not f.startswith("skip:")]
                print(f"{label}: {equal} functions dumped identically, {extra} extra functions "
                      f"(allowed: extra-function), {len(real)} failures")
                for f in fails:
                    print(f"  {f}")
                failures += [f"{label}: {f}" for f in real]
            print("allowed differences:")
            for kind, reason in ALLOWED.items():
                print(f"  {kind}: {reason}")
        if not only or "truth" in only:
            print("\n== truth: programs built without --gsframe, .sframe by `unwindkit sframe "
                  "build`, stripped of symbols and .eh_frame")
            outcomes, rows, notes = truth_runs(src, work)
            for n in notes:
                print(n)
            truth.print_table(outcomes)
            registers.print_rows(rows)
            failures += [f"{o.name}: {o.status}: {o.detail}" for o in outcomes
                         if o.status in ("differ", "error")]
            failures += register_verdict(rows)
            failures += [f"{r.program} [{r.debugger}]: {r.tally.aligned} of {r.tally.frames} "
                         "truth frames lined up" for r in rows
                         if r.tally is not None and r.tally.aligned != r.tally.frames]
            if not outcomes or all(o.status == "skip" for o in outcomes):
                failures.append("no truth case ran")
    print(f"\nelapsed {time.monotonic() - started:.0f} s")
    for f in failures:
        print(f"FAIL {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
