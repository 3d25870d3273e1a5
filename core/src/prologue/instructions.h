// Per-architecture instruction models: what one decoded instruction does to the frame model.
// Each models the instructions compilers emit in prologues and epilogues (pushes, stores of
// callee-saved registers, stack adjustments, frame-pointer setup, restores) and treats every
// other instruction by the registers it writes: SP or FP written some other way becomes
// unknown, and a callee-saved register written before its save is lost.
#pragma once

#include <capstone/capstone.h>

#include "decoder.h"
#include "frame_model.h"

namespace unwindkit::prologue::detail {

Flow apply_x86_64(FrameModel& m, const Decoder& d, const cs_insn& insn);
Flow apply_aarch64(FrameModel& m, const Decoder& d, const cs_insn& insn);
Flow apply_s390x(FrameModel& m, const Decoder& d, const cs_insn& insn);

// Every register `insn` writes, explicitly or not, passed to FrameModel::write, SP and FP
// made unknown (for architectures whose Capstone reports accesses).
void write_all(FrameModel& m, const Decoder& d, const cs_insn& insn);

}  // namespace unwindkit::prologue::detail
