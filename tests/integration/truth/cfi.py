"""`readelf --debug-dump=frames-interp` (readelf -wF) as data: the reference text of a file's
CFI, read by the prologue oracle (test_prologue_oracle.py) and by scripts/bench gdb-jit."""
import re

FDE_RE = re.compile(r"FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)")


def fde_tables(text):
    """[(start, end, [(loc, {column: cell})])], one per FDE in the text's order; the columns
    are readelf's ("CFA", "rbx", ..., "ra") and the cells its rules ("rsp+8", "c-16", "u")."""
    fdes = []
    rows = None
    cols = None
    for line in text.splitlines():
        m = FDE_RE.search(line)
        if m:
            rows = []
            fdes.append((int(m.group(1), 16), int(m.group(2), 16), rows))
            cols = None
            continue
        words = line.split()
        if rows is None:
            continue
        if not words:
            rows = None
            continue
        if words[0] == "LOC":
            cols = words[1:]
            continue
        if cols and re.fullmatch(r"[0-9a-f]+", words[0]) and len(words) == len(cols) + 1:
            rows.append((int(words[0], 16), dict(zip(cols, words[1:]))))
    return fdes


def parse_cfi(text):
    """{function start: [(loc, {register column: cell})]}: fde_tables without the CFA column,
    FDEs that share a start together."""
    fdes = {}
    for start, _, rows in fde_tables(text):
        fdes.setdefault(start, []).extend(
            (loc, {col: cell for col, cell in cells.items() if col != "CFA"})
            for loc, cells in rows)
    return fdes
