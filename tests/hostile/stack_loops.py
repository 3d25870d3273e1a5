"""Cores whose stacks loop: saved frame pointers and return addresses patched in the core's
PT_LOAD bytes (and, where a thread's rbp is not a stack address, its rbp in NT_PRSTATUS) so
that a walk following them never reaches the end of the stack.

x86_64 frame records: [fp] = caller's fp, [fp + 8] = return address.
"""
import struct

from .elf_files import file_offset, load_segments

NT_PRSTATUS = 1
PRSTATUS_REGS = 112  # offset of pr_reg in x86_64 struct elf_prstatus
RBP, RIP, RSP = 4, 16, 19  # indexes in user_regs_struct
PRSTATUS_PID = 32


def _notes(data):
    """[(type, desc offset, desc size)] of every note in the core's PT_NOTE segments."""
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    out = []
    for i in range(phnum):
        p_type, _, offset, _, _, filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type != 4:
            continue
        at, end = offset, offset + filesz
        while at + 12 <= end:
            namesz, descsz, n_type = struct.unpack_from("<III", data, at)
            desc = at + 12 + (namesz + 3) // 4 * 4
            out.append((n_type, desc, descsz))
            at = desc + (descsz + 3) // 4 * 4
    return out


def threads(data):
    """[(desc offset, rip, rsp, rbp)] per NT_PRSTATUS, in the core's order."""
    result = []
    for n_type, desc, _ in _notes(data):
        if n_type == NT_PRSTATUS:
            regs = struct.unpack_from("<27Q", data, desc + PRSTATUS_REGS)
            result.append((desc, regs[RIP], regs[RSP], regs[RBP]))
    return result


def _stack_words(segments, rsp, span):
    """Stack addresses from rsp up that the core holds (8-byte aligned), at most `span` bytes."""
    base = (rsp + 7) & ~7
    return [a for a in range(base, base + span, 8) if file_offset(segments, a) is not None]


def _put(data, segments, address, value):
    at = file_offset(segments, address)
    if at is not None:
        struct.pack_into("<Q", data, at, value & 0xFFFFFFFFFFFFFFFF)


def _get(data, segments, address):
    at = file_offset(segments, address)
    return None if at is None else struct.unpack_from("<Q", data, at)[0]


def _fp_chain(data, segments, rbp, rsp):
    """The thread's frame-pointer chain while it climbs the stack (at most 64 records)."""
    chain, fp = [], rbp
    while len(chain) < 64 and fp >= rsp and fp % 8 == 0 and _get(data, segments, fp) is not None:
        chain.append(fp)
        nxt = _get(data, segments, fp)
        if nxt <= fp:
            break
        fp = nxt
    return chain


def _loop_thread(data, segments, thread, rng):
    desc, rip, rsp, rbp = thread
    words = _stack_words(segments, rsp, 4096)
    if len(words) < 8:
        return None
    chain = _fp_chain(data, segments, rbp, rsp)
    kind = rng.randrange(4)
    if kind == 0 and len(chain) >= 2:
        # The chain as the program left it, with a later record pointing back to an earlier one.
        j, k = sorted(rng.sample(range(len(chain)), 2))
        _put(data, segments, chain[k], chain[j])
        return f"fp-loop-back{k - j}"
    if kind <= 1:
        # A record pointing at itself (or two at each other), return address = the crash PC;
        # the thread's rbp is pointed at it.
        s = rng.choice(words[2:-4])
        s &= ~15
        if file_offset(segments, s + 24) is None:
            return None
        two = rng.random() < 0.5
        _put(data, segments, s, s + 16 if two else s)
        _put(data, segments, s + 8, rip)
        if two:
            _put(data, segments, s + 16, s)
            _put(data, segments, s + 24, rip)
        struct.pack_into("<Q", data, desc + PRSTATUS_REGS + RBP * 8, s)
        return "fp-cycle2" if two else "fp-self"
    if kind == 2:
        # Every word above rsp: alternately a pointer back down the stack and the crash PC, so
        # that whatever CFA rule a table gives, the return address repeats and FP points down.
        start = rng.randrange(0, min(64, len(words) - 4))
        for n, a in enumerate(words[start:start + rng.choice([32, 128, 512])]):
            _put(data, segments, a, rip if n % 2 else rng.choice([a, rsp, a - 16]))
        return "ra-repeat"
    # Random stack pointers and copies of the crash PC sprinkled over the frame.
    for a in rng.sample(words, min(len(words), rng.randint(4, 64))):
        _put(data, segments, a, rng.choice([rip, rsp, rng.choice(words), a]))
    return "stack-scramble"


def make_cyclic(core_bytes, core_path, rng):
    """(label, patched core bytes), or None when no thread's stack is in the core."""
    data = bytearray(core_bytes)
    segments = load_segments(core_path)
    ts = threads(data)
    if not ts:
        return None
    picked = ts if rng.random() < 0.3 else [rng.choice(ts)]
    labels = [l for l in (_loop_thread(data, segments, t, rng) for t in picked) if l]
    if not labels:
        return None
    return "stack:" + "+".join(labels), bytes(data)
