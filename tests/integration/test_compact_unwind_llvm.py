#!/usr/bin/env python3
"""Compact unwind against llvm-objdump and the code itself.

Builds Mach-O fixtures at test time (the release's clang for x86_64 and arm64, -O0/-O2, with and
without -fomit-frame-pointer; C++ exceptions against a hand-written libSystem.tbd; generated
assembly with hand-written __compact_unwind tables of > 127 encodings), then checks:
  - `compact-unwind dump` and `dump` equal `llvm-objdump --macho --unwind-info` byte for
    byte, for linked images and for objects (and per slice of a universal file);
  - `compact-unwind check` finds nothing wrong;
  - the same for i386 objects (20-byte __compact_unwind entries; ld64.lld cannot link i386);
  - every mode of both architectures occurs across the fixtures;
  - x86_64 rules (CFA offset, saved-register slots) equal what the prologue in the
    disassembly does (push / sub / mov %rsp,%rbp), which includes every permutation that
    clang emitted and STACK_IND's immediate;
  - the hand-written table produced a regular page and page-local encodings;
  - DWARF-mode entries (dwarf_mode-*.s: frames compact unwind cannot describe) hand over to
    __eh_frame: `lookup` at every CFI row's address gives the rule llvm-dwarfdump
    --eh-frame prints for that row, also when the encoding's __eh_frame offset hint is 0.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth.tools import llvm  # noqa: E402

UK = os.environ["UNWINDKIT"]
SRC = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests/fixtures-src/macho")
FAILURES = []


def run(*args, check=True):
    p = subprocess.run(args, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise SystemExit(f"failed: {' '.join(args)}\n{p.stdout}{p.stderr}")
    return p


def expect(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def link(arch, objs, out, extra=()):
    run(llvm("ld64.lld"), "-arch", arch, "-platform_version", "macos", "11.0", "11.0", "-e", "_main",
        "-o", out, *objs, *extra)


def build_fixtures(tmp):
    images, objects = [], []
    for arch in ("x86_64", "arm64"):
        target = f"{arch}-apple-macos11"
        for tag, flags in (("O0", ["-O0"]), ("O2", ["-O2"]),
                           ("O2-nofp", ["-O2", "-fomit-frame-pointer"])):
            o = os.path.join(tmp, f"frames-{arch}-{tag}.o")
            run(llvm("clang"), "-target", target, *flags, "-fno-stack-protector", "-c",
                os.path.join(SRC, "frames.c"), "-o", o)
            out = o[:-2] + ".out"
            link(arch, [o], out)
            objects.append((arch, o))
            images.append((arch, out))
        o = os.path.join(tmp, f"eh-{arch}.o")
        run(llvm("clang"), "-x", "c++", "-target", target, "-O2", "-c", os.path.join(SRC, "eh.cpp"),
            "-o", o)
        out = o[:-2] + ".out"
        link(arch, [o], out, [os.path.join(SRC, "libSystem.tbd")])
        objects.append((arch, o))
        images.append((arch, out))
        o = os.path.join(tmp, f"dwarf_mode-{arch}.o")
        run(llvm("clang"), "-target", target, "-c", os.path.join(SRC, f"dwarf_mode-{arch}.s"),
            "-o", o)
        out = o[:-2] + ".out"
        link(arch, [o], out)
        objects.append((arch, o))
        images.append((arch, out))
        s = os.path.join(tmp, f"table-{arch}.s")
        run(sys.executable, os.path.join(SRC, "gen_table.py"), arch, s)
        o = s[:-2] + ".o"
        run(llvm("clang"), "-target", target, "-c", s, "-o", o)
        out = s[:-2] + ".out"
        link(arch, [o], out)
        objects.append((arch, o))
        images.append((arch, out))
    return images, objects


def build_i386_objects(tmp):
    """i386 objects (ld64.lld cannot link i386): 20-byte __compact_unwind entries."""
    objects = []
    for name, lang, flags in (("frames.c", "c", ["-O0"]), ("frames.c", "c", ["-O2"]),
                              ("eh.cpp", "c++", ["-O2"])):
        o = os.path.join(tmp, f"i386-{name}{flags[0]}.o")
        run(llvm("clang"), "-x", lang, "-target", "i386-apple-macos10.14", *flags,
            "-fno-stack-protector", "-c", os.path.join(SRC, name), "-o", o)
        objects.append(("i386", o))
    return objects


def check_i386_entry_size(objects):
    for _, path in objects:
        ref = run(llvm("llvm-objdump"), "--macho", "--unwind-info", path).stdout
        offsets = [int(x, 16) for x in re.findall(r"Entry at offset 0x([0-9a-f]+):", ref)]
        expect(len(offsets) >= 2 and all(b - a == 20 for a, b in zip(offsets, offsets[1:])),
               f"{path}: llvm-objdump's entries are not 20 bytes apart: {offsets}")


def compare_dumps(files):
    for arch, path in files:
        ref = run(llvm("llvm-objdump"), "--macho", "--unwind-info", path).stdout
        ours = run(UK, "compact-unwind", "dump", path).stdout
        expect(ours == ref, f"compact-unwind dump differs from llvm-objdump: {path}")
        whole = run(UK, "dump", path).stdout
        expect(whole == ref, f"dump differs from llvm-objdump: {path}")
        chk = run(UK, "compact-unwind", "check", path, check=False)
        expect(chk.returncode == 0, f"check failed on {path}: {chk.stdout}{chk.stderr}")


def compare_fat(tmp, images):
    x = next(p for a, p in images if a == "x86_64" and "frames" in p)
    a = next(p for a, p in images if a == "arm64" and "frames" in p)
    fat = os.path.join(tmp, "fat.out")
    run(llvm("llvm-lipo"), "-create", x, a, "-output", fat)
    for arch in ("x86_64", "arm64"):
        ref = run(llvm("llvm-objdump"), "--macho", "--unwind-info", f"--arch={arch}", fat).stdout
        ours = run(UK, "compact-unwind", "dump", "--arch", arch, fat).stdout
        expect(ours == ref, f"universal file, {arch} slice differs from llvm-objdump")
    usage = run(UK, "compact-unwind", "lookup", fat, "0x100000000", check=False)
    expect(usage.returncode == 2, "lookup in a universal file without --arch must be a usage error")


def entries(path):
    doc = json.loads(run(UK, "compact-unwind", "dump", "--json", path).stdout)
    for sl in doc["slices"]:
        for t in sl["tables"]:
            if t["section"] == "__unwind_info":
                for p in t["pages"]:
                    for e in p["entries"]:
                        yield sl["arch"], e
            else:
                for e in t["entries"]:
                    yield sl["arch"], e


def check_modes(images, objects):
    seen = {"x86_64": set(), "arm64": set()}
    for arch, path in images + objects:
        for _, e in entries(path):
            if e["encoding"]:
                seen[arch].add(e["decoded"]["mode"])
    print("modes seen:", {k: sorted(v) for k, v in seen.items()})
    expect(seen["x86_64"] >= {"RBP_FRAME", "STACK_IMMD", "STACK_IND", "DWARF"},
           f"x86_64 modes missing: {seen['x86_64']}")
    expect(seen["arm64"] >= {"FRAME", "FRAMELESS", "DWARF", "FRAME_PAUTH_LR"},
           f"arm64 modes missing: {seen['arm64']}")


PUSH = re.compile(r"\bpushq\s+%(\w+)")
SUBRSP = re.compile(r"\bsubq\s+\$0x([0-9a-f]+), %rsp")
CALLEE_SAVED = {"rbx", "rbp", "r12", "r13", "r14", "r15"}
MOVRBP = re.compile(r"\bmovq\s+%rsp, %rbp")


def prologue(path, start):
    """CFA offsets the prologue at `start` gives each pushed register, the CFA rule it
    leaves (('rbp', 16) or ('rsp', size)), from llvm-objdump's disassembly. A shrink-wrapped
    function's prologue follows its early-exit path: the simulation starts at the first push
    or stack adjustment. Pushes of scratch registers (rax) only align the stack."""
    dis = run(llvm("llvm-objdump"), "-d", "--no-show-raw-insn", f"--start-address={start:#x}",
              f"--stop-address={start + 64:#x}", path).stdout
    depth, saved, frame, started = 8, {}, False, False
    for line in dis.splitlines():
        if not re.match(r"\s*[0-9a-f]+:", line):
            continue
        started = started or bool(PUSH.search(line) or SUBRSP.search(line))
        if not started:
            continue
        if m := PUSH.search(line):
            depth += 8
            if m.group(1) in CALLEE_SAVED:
                saved[m.group(1)] = -depth
        elif m := SUBRSP.search(line):
            depth += int(m.group(1), 16)
        elif MOVRBP.search(line):
            frame = True
        else:
            break
    return (("rbp", 16) if frame else ("rsp", depth)), saved


RULE = re.compile(r"cfa=(\w+)\+(\d+) ra=\[cfa-8\] fp=(\S+)(.*)")


def check_x86_rules(images):
    checked = 0
    for arch, path in images:
        if arch != "x86_64" or "table" in path:
            continue
        for _, e in entries(path):
            mode = e["decoded"]["mode"]
            if mode not in ("RBP_FRAME", "STACK_IMMD", "STACK_IND"):
                continue
            res = json.loads(run(UK, "compact-unwind", "lookup", "--json", path,
                                 hex(e["address"])).stdout)
            m = RULE.match(res["rule"])
            expect(m is not None, f"{path} {e['address']:#x}: rule {res['rule']}")
            if not m:
                continue
            cfa, saved = prologue(path, e["address"])
            got_saved = dict(re.findall(r"(\w+)=\[cfa(-\d+)\]", m.group(4)))
            if m.group(3) != "same":
                got_saved["rbp"] = re.match(r"\[cfa(-\d+)\]", m.group(3)).group(1)
            got_saved = {k: int(v) for k, v in got_saved.items()}
            what = f"{path} {e['address']:#x} {mode} {res['rule']}"
            expect((m.group(1), int(m.group(2))) == cfa, f"{what}: prologue gives cfa {cfa}")
            expect(got_saved == saved, f"{what}: prologue saves {saved}")
            checked += 1
    print("x86_64 rules checked against prologues:", checked)
    expect(checked >= 8, "too few x86_64 rules checked")


def check_pages(images):
    x = next(p for a, p in images if a == "x86_64" and "table" in p)
    ref = run(llvm("llvm-objdump"), "--macho", "--unwind-info", x).stdout
    expect(re.search(r"encoding=0x", ref) is not None, "hand-written table: no regular page")
    expect("Page encodings:" in ref, "hand-written table: no page-local encodings")


FDE = re.compile(r"^[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ FDE cie=[0-9a-f]+ pc=([0-9a-f]+)\.\.\.([0-9a-f]+)$")
ROW = re.compile(r"^  0x([0-9a-f]+): CFA=(\w+)([+-]\d+)?(?:: (.*))?$")
# llvm-dwarfdump's register names → ours (the return-address column is "ra").
DWARFDUMP_REGS = {"RIP": "ra", "RBP": "fp", "RSP": "rsp", "W30": "ra", "W29": "fp", "WSP": "sp"}


def eh_frame_rows(path):
    """[(row address, end of its FDE, (cfa reg, offset), {reg: cfa offset})] from
    llvm-dwarfdump --eh-frame."""
    rows, end = [], None
    for line in run(llvm("llvm-dwarfdump"), "--eh-frame", path).stdout.splitlines():
        if m := FDE.match(line):
            end = int(m.group(2), 16)
        elif (m := ROW.match(line)) and end is not None:
            regs = {}
            for item in (m.group(4) or "").split(", "):
                if item:
                    name, where = item.split("=")
                    name = DWARFDUMP_REGS.get(name, name.lower().replace("w", "x", 1))
                    regs[name] = int(re.fullmatch(r"\[CFA([+-]\d+)\]", where).group(1))
            cfa_reg = DWARFDUMP_REGS.get(m.group(2), m.group(2).lower())
            rows.append((int(m.group(1), 16), end, (cfa_reg, int(m.group(3) or 0)), regs))
    return rows


def parse_rule(text):
    """(cfa, {reg: cfa offset}) of our rule text; registers the rule leaves in place (ra in
    lr, fp same) are left out, as llvm-dwarfdump leaves them out."""
    parts = text.split()
    cfa = re.fullmatch(r"cfa=(\w+)([+-]\d+)?", parts[0])
    regs = {}
    for item in parts[1:]:
        name, where = item.split("=")
        if m := re.fullmatch(r"\[cfa([+-]\d+)\]", where):
            regs[name] = int(m.group(1))
        else:
            expect(where in ("same", "lr"), f"unexpected register rule {item} in {text}")
    return (cfa.group(1), int(cfa.group(2) or 0)), regs


def check_dwarf_rows(path, arch, label):
    checked = 0
    rows = eh_frame_rows(path)
    for i, (addr, end, cfa, regs) in enumerate(rows):
        last_of_fde = i + 1 == len(rows) or rows[i + 1][1] != end
        # The row's first byte, and for an FDE's last row the FDE's last byte.
        for pc in [addr] + ([end - 1] if last_of_fde and end - 1 > addr else []):
            res = json.loads(run(UK, "compact-unwind", "lookup", "--json", path, hex(pc)).stdout)
            if res["mode"] != "DWARF":
                continue
            what = f"{label} {arch} {pc:#x}: {res['rule']}"
            expect(res["result"] == "dwarf", what)
            expect(parse_rule(res["rule"]) == (cfa, regs),
                   f"{what}: llvm-dwarfdump says CFA={cfa} {regs}")
            checked += 1
    return checked


def check_dwarf_handover(tmp, images):
    for arch, path in images:
        if "dwarf_mode" not in path:
            continue
        checked = check_dwarf_rows(path, arch, path)
        print(f"{arch}: DWARF-mode rows checked against llvm-dwarfdump: {checked}")
        expect(checked >= 3, f"{path}: too few DWARF-mode rows checked ({checked})")
        # The encoding's __eh_frame offset is a hint: with it zeroed (every DWARF-mode
        # encoding in the common-encodings array), the FDE must still be found by pc.
        data = bytearray(open(path, "rb").read())
        encodings = re.findall(r"encoding\[\d+\]: 0x([0-9a-f]{8})",
                               run(llvm("llvm-objdump"), "--macho", "--unwind-info", path).stdout)
        mode_mask = 0x0F000000
        dwarf_mode = 0x04000000 if arch == "x86_64" else 0x03000000
        patched = 0
        for enc in {int(e, 16) for e in encodings}:
            if enc & mode_mask == dwarf_mode and enc & 0xFFFFFF:
                old, new = enc.to_bytes(4, "little"), (enc & ~0xFFFFFF).to_bytes(4, "little")
                expect(data.count(old) == 1, f"{path}: encoding {enc:#x} not unique in the file")
                data = data.replace(old, new)
                patched += 1
        zeroed = os.path.join(tmp, f"dwarf_mode-{arch}-nohint.out")
        with open(zeroed, "wb") as f:
            f.write(data)
        expect(patched >= 1, f"{path}: no DWARF-mode encoding with an offset to zero")
        dump = run(llvm("llvm-objdump"), "--macho", "--unwind-info", zeroed).stdout
        expect(f"0x{dwarf_mode:08x}" in dump, f"{zeroed}: llvm-objdump does not see the zeroed hint")
        checked = check_dwarf_rows(zeroed, arch, "hint 0:")
        expect(checked >= 3, f"{zeroed}: too few DWARF-mode rows checked ({checked})")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        images, objects = build_fixtures(tmp)
        compare_dumps(images + objects)
        i386_objects = build_i386_objects(tmp)
        compare_dumps(i386_objects)
        check_i386_entry_size(i386_objects)
        compare_fat(tmp, images)
        check_modes(images, objects)
        check_x86_rules(images)
        check_pages(images)
        check_dwarf_handover(tmp, images)
    if FAILURES:
        print(f"{len(FAILURES)} failures")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
