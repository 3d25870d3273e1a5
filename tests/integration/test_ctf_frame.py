#!/usr/bin/env python3
"""CTF Frame (issue K, #19): sections made by ctf_frame.py from real SFrame v1 sections (by the
CTF Frame patch's layout, not by our reader) read exactly as their v1 twins.

1. The binutils 2.40 vectors (../shared/vectors/sframe/*-2.40.json, v1 sections with
   readelf 2.40's text): each one's CTF Frame twin as a raw section (`--raw`, the format told
   from the bytes): `sframe dump` equals readelf's text for the v1 section, format names
   aside (the title line, CTF_FRAME_ for SFRAME_); `check` passes and says `.ctf_frame OK`;
   `lookup` at every row readelf lists equals `lookup` on the v1 section. Corrupt copies
   (bad magic, version 2, FRE type 0 and 4, truncations): `check` and `dump` exit 1 naming
   `.ctf_frame`, the byte offset and the field.
2. Truth programs (truth/build.py, CASES below; binutils 2.40 writes SFrame v1): the stripped
   copy's `.sframe` turned into `.ctf_frame` (objcopy, same address and size). On the stripped copy's core, with the CTF copy as the executable:
   `sframe dump`, `check`, `lookup` at every row, `unwindkit bt`, GDB's `thread apply all bt`
   with the plugin and LLDB's `bt all` with the plugin each equal the v1 copy's; GDB's
   `unwindkit status` names `.ctf_frame` and a side file for the CTF copy.
Prints one line per check with its figures."""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from ctf_frame import make_ctf_elf, v1_to_ctf  # noqa: E402
from lldb_same_bt import bt_all  # noqa: E402
from test_gdb_same_bt import run_bt  # noqa: E402

UNWINDKIT = os.environ["UNWINDKIT"]
_ROW = re.compile(r"^    ([0-9a-f]{16})  ")
_FUNC = re.compile(r"^    func idx \[\d+\]: pc = (0x[0-9a-f]+)")
# Programs without shared libraries of their own (a twin's library would need a sysroot at the
# path the core names): the PLT (a PCMASK function), threads, a signal frame, realignment.
CASES = tuple(("x86_64", c) for c in ("opt_mix", "omit_fp", "realign", "plt_libc", "threads",
                                      "signal_handler", "signal_entry")) + \
    tuple(("aarch64", c) for c in ("opt_mix", "omit_fp", "plt_libc", "threads"))


def uk(*args):
    p = subprocess.run([UNWINDKIT, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def as_sframe(text):
    """A CTF Frame dump with the format's names spelled as SFrame's."""
    text = text.replace("Contents of the CTF Frame section .ctf_frame:",
                        "Contents of the SFrame section .sframe:", 1)
    return text.replace("CTF_FRAME_", "SFRAME_")


def row_addresses(readelf_text):
    """Every row address readelf lists, PCMASK blocks (offsets, not addresses) left out."""
    out, mask = [], False
    for line in readelf_text.splitlines():
        if _FUNC.match(line):
            mask = False
        elif line.lstrip().startswith("STARTPC"):
            mask = "[m]" in line
        elif (m := _ROW.match(line)) and not mask:
            out.append(int(m.group(1), 16))
    return out


def same_lookups(ctf_args, v1_args, addresses, ctf_name, v1_name):
    """(equal, total, first difference) of `lookup` at each address, file names aside (a
    function of size 0 has a row and covers no address: both say so)."""
    equal, first = 0, ""
    for a in addresses:
        got = uk("sframe", "lookup", *ctf_args, hex(a))
        want = uk("sframe", "lookup", *v1_args, hex(a))
        got = (got[0], got[1].replace(ctf_name, "FILE"), got[2].replace(ctf_name, "FILE"))
        want = (want[0], want[1].replace(v1_name, "FILE"), want[2].replace(v1_name, "FILE"))
        if got == want:
            equal += 1
        elif not first:
            first = f"{a:#x}: CTF {got}, v1 {want}"
    return equal, len(addresses), first


def check_vectors(shared, work, failures):
    vectors = sorted(glob.glob(os.path.join(shared, "vectors", "sframe", "*-2.40.json")))
    totals = [0, 0, 0]  # dumps equal, rows equal, rows
    inexpressible = []
    for path in vectors:
        name = os.path.basename(path)[:-len(".json")]
        with open(path) as f:
            v = json.load(f)
        base = v["section_base"]
        v1 = bytes(v["content"])
        try:
            ctf = v1_to_ctf(v1, base, base)
        except ValueError as e:  # PAuth: CTF Frame has no bits for it
            inexpressible.append(f"{name} ({e})")
            continue
        v1_file, ctf_file = os.path.join(work, name + ".sframe"), os.path.join(work, name + ".ctf")
        with open(v1_file, "wb") as f:
            f.write(v1)
        with open(ctf_file, "wb") as f:
            f.write(ctf)
        raw = ["--raw", "--section-address", hex(base)]
        # readelf 2.40's text from "Contents of" on (its first lines name the file).
        want = v["groundtruth"][v["groundtruth"].index("Contents of"):]
        rc, dump, err = uk("sframe", "dump", ctf_file, *raw)
        if rc != 0 or as_sframe(dump) != want:
            failures.append(f"{name}: CTF dump differs from readelf's v1 text (exit {rc}) {err}"
                            f"\n--- ours\n{dump}\n--- readelf\n{want}")
        else:
            totals[0] += 1
        if not dump.startswith("Contents of the CTF Frame section .ctf_frame:\n"):
            failures.append(f"{name}: the dump does not say CTF Frame: {dump[:80]!r}")
        rc, out, _ = uk("sframe", "check", ctf_file, *raw)
        if rc != 0 or not out.endswith(".ctf_frame OK\n"):
            failures.append(f"{name}: check: exit {rc}: {out}")
        equal, total, first = same_lookups([ctf_file, *raw], [v1_file, *raw],
                                           row_addresses(want), ctf_file, v1_file)
        totals[1] += equal
        totals[2] += total
        if first:
            failures.append(f"{name}: lookup: {first}")
    done = len(vectors) - len(inexpressible)
    print(f"vectors (binutils 2.40, v1): {len(vectors)}, {len(inexpressible)} not expressible in "
          f"CTF Frame: {', '.join(inexpressible) or 'none'}; CTF dump == readelf's v1 text: "
          f"{totals[0]}/{done}; lookups equal at readelf's rows: {totals[1]}/{totals[2]}")
    if done == 0:
        failures.append("no binutils 2.40 vectors found")


def check_corruptions(work, failures):
    """`sframe check` and `dump` on corrupt raw CTF Frame sections (--format ctf-frame): exit 1
    and the byte offset and field as the patch's layout places them (27-byte header: magic at
    0, version at 2, cth_fdeoff at 19; FDE 0's ctf_func_info at 27 + 16)."""
    with open(os.path.join(os.environ["UNWINDKIT_SHARED_DIR"], "vectors", "sframe",
                           "test-x86_64-2.40.json")) as f:
        v = json.load(f)
    good = v1_to_ctf(bytes(v["content"]), v["section_base"], v["section_base"])

    def patched(at, value):
        b = bytearray(good)
        b[at] = value
        return bytes(b)

    cases = [("bad magic", patched(0, 0x12), 0, "ctfp_magic"),
             ("version 2", patched(2, 2), 2, "ctfp_version"),
             ("FRE type 0", patched(43, good[43] & 0xF0), 43, "fde[0].info"),
             ("FRE type 4", patched(43, (good[43] & 0xF0) | 4), 43, "fde[0].info"),
             ("truncated header", good[:20], 19, "cth_fdeoff"),
             ("truncated FREs", good[:-1], 15, "cth_fre_len")]
    passed = 0
    for label, data, offset, field in cases:
        path = os.path.join(work, "corrupt.ctf")
        with open(path, "wb") as f:
            f.write(data)
        want = f".ctf_frame+{offset:#x}: {field}: "
        rc, out, _ = uk("sframe", "check", "--raw", "--format", "ctf-frame", path)
        drc, _, derr = uk("sframe", "dump", "--raw", "--format", "ctf-frame", path)
        if rc == 1 and want in out and drc == 1 and want in derr:
            passed += 1
        else:
            failures.append(f"corruption {label}: want {want!r}; check exit {rc}: {out}"
                            f"dump exit {drc}: {derr}")
    print(f"corruptions (check and dump, offset and field): {passed}/{len(cases)}")


def normalized_gdb(lines, folders):
    out = []
    for line in lines:
        for folder in folders:
            line = line.replace(folder, "<copy>")
        out.append(line.rstrip())
    return out


def check_program(arch, case, work, src, failures):
    pair = truth.build_pair(case, arch, work, src)
    core = truth.make_core(pair.stripped, arch)
    ctf_dir = os.path.join(os.path.dirname(pair.stripped.dir), "ctffrm")
    os.makedirs(ctf_dir, exist_ok=True)
    v1_exe, ctf_exe = pair.stripped.exe, os.path.join(ctf_dir, "prog")
    prefix = arch.cc[: -len("gcc")]
    make_ctf_elf(v1_exe, ctf_exe, truth.tools.need(prefix + "objcopy"))
    label = f"{arch.name} {case.name}"
    folders = [pair.stripped.dir, ctf_dir]

    rc, ctf_dump, err = uk("sframe", "dump", ctf_exe)
    _, v1_dump, _ = uk("sframe", "dump", v1_exe)
    dump_ok = rc == 0 and as_sframe(ctf_dump) == v1_dump
    if not dump_ok:
        failures.append(f"{label}: dump differs from the v1 copy's (exit {rc}) {err}")
    rc, out, _ = uk("sframe", "check", ctf_exe)
    if rc != 0:
        failures.append(f"{label}: check: {out}")
    readelf = subprocess.run([truth.tools.need(prefix + "readelf"), "--sframe", v1_exe],
                             capture_output=True, text=True, check=True).stdout
    equal, total, first = same_lookups([ctf_exe], [v1_exe], row_addresses(readelf), ctf_exe,
                                       v1_exe)
    if first or total == 0:
        failures.append(f"{label}: lookup: {first or 'no rows'}")

    ours_ctf, _ = truth.our_bt(truth.Build(ctf_dir, ctf_exe, []), core)
    ours_v1, _ = truth.our_bt(pair.stripped, core)
    frames = sum(len(t.pcs) for t in ours_v1)
    bt_ok = [(t.pcs, t.names) for t in ours_ctf] == [(t.pcs, t.names) for t in ours_v1]
    if not bt_ok or frames == 0:
        failures.append(f"{label}: unwindkit bt differs from the v1 copy's")

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": work,
           "UNWINDKIT_CACHE_DIR": os.path.join(work, "gdb-cache")}
    gdb_ctf, status, _ = run_bt(arch, ctf_exe, core, env, True, False)
    gdb_v1, _, _ = run_bt(arch, v1_exe, core, env, True, False)
    gdb_ctf, gdb_v1 = normalized_gdb(gdb_ctf, folders), normalized_gdb(gdb_v1, folders)
    gdb_frames = sum(1 for line in gdb_v1 if line.startswith("#"))
    if gdb_ctf != gdb_v1 or gdb_frames == 0:
        failures.append(f"{label}: GDB bt with the plugin differs:\n" +
                        "\n".join(gdb_ctf[:40]) + "\n--- v1\n" + "\n".join(gdb_v1[:40]))
    if not re.search(r"\.ctf_frame at 0x[0-9a-f]+, \d+ functions", status) or \
            "side file" not in status:
        failures.append(f"{label}: GDB's unwindkit status names no .ctf_frame/side file:\n"
                        f"{status}")

    lldb_ctf = normalized_gdb(bt_all(ctf_exe, core, plugin=True), folders)
    lldb_v1 = normalized_gdb(bt_all(v1_exe, core, plugin=True), folders)
    lldb_frames = sum(1 for line in lldb_v1 if "frame #" in line)
    if lldb_ctf != lldb_v1 or lldb_frames == 0:
        failures.append(f"{label}: LLDB bt with the plugin differs:\n" +
                        "\n".join(lldb_ctf[:40]) + "\n--- v1\n" + "\n".join(lldb_v1[:40]))
    print(f"{label}: dump {'equal' if dump_ok else 'DIFFERS'}; lookups equal {equal}/{total}; "
          f"unwindkit bt {'equal' if bt_ok else 'DIFFERS'} ({frames} frames, "
          f"{len(ours_v1)} threads); GDB bt lines equal "
          f"{sum(a == b for a, b in zip(gdb_ctf, gdb_v1))}/{max(len(gdb_ctf), len(gdb_v1))} "
          f"({gdb_frames} frames); LLDB bt lines equal "
          f"{sum(a == b for a, b in zip(lldb_ctf, lldb_v1))}/{max(len(lldb_ctf), len(lldb_v1))} "
          f"({lldb_frames} frames)")


def main():
    shared = os.environ["UNWINDKIT_SHARED_DIR"]
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "programs")
    failures = []
    with tempfile.TemporaryDirectory(prefix="uk-ctf-frame-") as work:
        check_vectors(shared, work, failures)
        check_corruptions(work, failures)
        for arch_name, case_name in CASES:
            arch = truth.X86_64 if arch_name == "x86_64" else truth.AARCH64
            case = next(c for c in truth.cases_for(arch_name) if c.name == case_name)
            try:
                check_program(arch, case, work, src, failures)
            except truth.Skip as skip:
                print(f"SKIP {arch_name} {case_name}: {skip}")
    for f in failures:
        print(f"FAIL {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
