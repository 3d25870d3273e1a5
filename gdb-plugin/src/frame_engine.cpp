#include "frame_engine.h"

#include <fmt/format.h>

#include <algorithm>

namespace unwindkit::gdb {

namespace {

constexpr size_t kRecentErrorsKept = 16;

// GDB's own DWARF CFI unwinds the frames it covers; our SFrame covers the rest, and the
// program's entry point ends the stack. With `prefer sframe`, SFrame is asked first.
constexpr Source kPreferCfi[] = {Source::Cfi, Source::SFrame, Source::EntryPoint};
constexpr Source kPreferSFrame[] = {Source::SFrame, Source::Cfi, Source::EntryPoint};

}  // namespace

FrameEngine::FrameEngine() {
  options_.sources = unwind::builtin_sources(kPreferCfi);
  options_.left_to_debugger = {Source::Cfi};
}

void FrameEngine::add(std::shared_ptr<unwind::Module> module) {
  modules_.add(std::move(module));
  stepper_.reset();
}

void FrameEngine::clear() {
  modules_.clear();
  stepper_.reset();
  ended_at_.clear();
}

void FrameEngine::set_prefer_sframe(bool prefer) {
  prefer_sframe_ = prefer;
  options_.sources = unwind::builtin_sources(prefer ? std::span<const Source>(kPreferSFrame)
                                                    : std::span<const Source>(kPreferCfi));
  stepper_.reset();
}

std::optional<unwind::StepOutcome> FrameEngine::unwind(unsigned level, const RegisterSet& regs,
                                                       const MemoryReader& mem) {
  // The stack's words are in the architecture's byte order: s390x's big-endian, those of the
  // others GDB's names map to (arch_from_gdb_name: x86-64, aarch64) little-endian.
  const Endian endian = regs.arch() == Arch::S390x ? Endian::Big : Endian::Little;
  if (!stepper_ || stepper_memory_ != &mem || options_.endian != endian) {
    options_.endian = endian;
    stepper_.emplace(modules_, mem, options_);
    stepper_memory_ = &mem;
  }
  unwind::StepOutcome out = stepper_->step(regs, level == 0);
  switch (out.kind) {
    case unwind::StepOutcome::Kind::LeftToDebugger: return std::nullopt;
    case unwind::StepOutcome::Kind::Stepped: ++claimed_; return out;
    case unwind::StepOutcome::Kind::Ended:
      if (out.stop == unwind::StopKind::Outermost) ended_at_.insert(out.frame.pc());
      break;
  }
  // A frame no table of ours covers, or where the stack ends, is GDB's business; a table of
  // ours that covers it but could not step it is a failure worth showing.
  const unwind::Frame& f = out.frame;
  const bool ours_failed = std::any_of(f.passed_over.begin(), f.passed_over.end(), [](const auto& p) {
    return p.source == Source::SFrame && p.why != unwind::PassedOver::Why::NotCovered;
  });
  if (f.source || !ours_failed || f.module == nullptr || !f.module->sframe()) return std::nullopt;
  ++failed_;
  record_error(fmt::format("{}: pc {:#x}: {}", f.module->path(), f.pc(), out.stop_reason));
  return std::nullopt;
}

void FrameEngine::record_error(std::string message) {
  if (recent_errors_.size() == kRecentErrorsKept) recent_errors_.pop_front();
  recent_errors_.push_back(std::move(message));
}

}  // namespace unwindkit::gdb
