"""A valid but costly SFrame table, for the bad-table tests of both debuggers: the live test's
program with a 2 MB function (SFrame v2, by `unwindkit sframe convert`), that function made
PCMASK repeating its first row every byte. Every check passes it, but a side file would state
2 M rows (a 16 MB text's took GDB 26 s and 4 GB), past SynthesizeOptions::max_repeated_rows."""
import os
import struct
import subprocess

from test_gdb_live import PROGRAM, build_twins, leaf_breakpoint

# The live test's program with a function of 2 MB, never called.
PADDED = PROGRAM + r"""
NOINLINE void pad(void) { __asm__ volatile(".skip 2097152, 0x90"); }
"""
V2_FDE_SIZE = 20  # sframe_func_desc_entry (v2): start, size, fre_off, num_fres, info, rep_size
PCMASK = 0x10  # sfde_func_info: the FDE type bit


def sframe_file_offset(exe):
    """File offset of .sframe, from `readelf -S -W`."""
    out = subprocess.run(["readelf", "-S", "-W", exe], check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        fields = line.replace("[ ", "[").split()
        if ".sframe" in fields:
            i = fields.index(".sframe")
            return int(fields[i + 3], 16)
    raise RuntimeError(f"{exe} has no .sframe section")


def repeated_rows_program(work):
    """(stripped program, leaf's breakpoint address, the reason its status must give: the FDE's
    offset in .sframe and its field), built under `work`. Raises AssertionError when the table
    cannot be made so."""
    d = os.path.join(work, "padded")
    os.makedirs(d)
    intact, stripped = build_twins(d, PADDED)
    address = leaf_breakpoint(intact)
    v2 = os.path.join(d, "stripd", "prog.v2")
    subprocess.run([os.environ["UNWINDKIT"], "sframe", "convert", stripped, "--to-version", "2",
                    "-o", v2], check=True, capture_output=True)
    base = sframe_file_offset(v2)
    image = bytearray(open(v2, "rb").read())
    # sframe_header: num_fdes at 8, num_fres at 12, auxhdr_len at 7, fdeoff at 20.
    num_fdes, num_fres = struct.unpack_from("<II", image, base + 8)
    fdes = base + 28 + image[base + 7] + struct.unpack_from("<I", image, base + 20)[0]
    index = max(range(num_fdes),  # pad's: the largest
                key=lambda i: struct.unpack_from("<I", image, fdes + i * V2_FDE_SIZE + 4)[0])
    at = fdes + index * V2_FDE_SIZE
    start, size, fre_off, fres, info, _ = struct.unpack_from("<iIIIBB", image, at)
    if size < 2 << 20:
        raise AssertionError(f"no 2 MB function in the table (largest {size} bytes)")
    struct.pack_into("<iIIIBB", image, at, start, size, fre_off, 1, info | PCMASK, 1)
    struct.pack_into("<I", image, base + 12, num_fres - fres + 1)
    with open(stripped, "wb") as f:
        f.write(image)
    check = subprocess.run([os.environ["UNWINDKIT"], "sframe", "check", stripped],
                           capture_output=True, text=True)
    if check.returncode != 0:
        raise AssertionError(f"the table should pass the checks:\n{check.stdout}")
    return stripped, address, f".sframe+{at - base:#x}: fde[{index}].rep_size:"
