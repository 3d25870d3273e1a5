// Capstone, opened once per thread and architecture, and its register numbers mapped to
// DWARF's (arch.h), sub-registers onto the register they are part of (ebx → rbx, w19 → x19,
// s8 → d8) so that a write to any part counts as a write to the whole.
#pragma once

#include <capstone/capstone.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "unwindkit/arch.h"
#include "unwindkit/bytes.h"

namespace unwindkit::prologue::detail {

class Decoder {
 public:
  // nullptr when Capstone cannot decode `arch` (i386 is not analyzed).
  static Decoder* for_arch(Arch arch);

  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
  ~Decoder();

  csh handle() const { return handle_; }
  cs_insn* insn() const { return insn_; }
  Arch arch() const { return arch_; }
  // The DWARF number of a Capstone register id, when it (or the register it is part of) has one.
  std::optional<uint16_t> dwarf(unsigned capstone_reg) const {
    if (capstone_reg >= dwarf_.size() || dwarf_[capstone_reg] < 0) return std::nullopt;
    return static_cast<uint16_t>(dwarf_[capstone_reg]);
  }
  // Whether the register is a whole 8-byte slot's worth (x19, d8; not w19, s8): what a save
  // must store for the caller's value to be in the slot.
  bool full_width(unsigned capstone_reg) const {
    return capstone_reg < full_.size() && full_[capstone_reg];
  }

 private:
  friend class Instructions;
  Decoder(Arch arch, csh handle);

  Arch arch_;
  csh handle_;
  cs_insn* insn_;
  std::vector<int16_t> dwarf_;
  std::vector<bool> full_;
  // Instructions (each with its detail) that one function's Instructions at a time decodes
  // into, kept from one function to the next: cs_disasm() allocated every instruction's detail
  // anew, and malloc, free and the kernel's page clearing were a third of a side file's
  // synthesis. Grows to the longest function kept (kMaxKept instructions at most).
  std::vector<cs_insn*> pool_;
  bool pool_taken_ = false;

  // Instructions decoded before, by their bytes: Capstone decoding (and formatting its text)
  // was most of a large module's side file, whose prologues and epilogues repeat the same
  // few instructions. Only an instruction whose decoding depends on nothing but the bytes it
  // is kept by is kept: those bytes alone, decoded at another address, give the same
  // instruction (not a relative branch). They are its own bytes, and for a one-byte
  // instruction the byte after it too, unless it ends the code (a function's `ret`).
  // Bounded: a kept one is about 0.8 KB. The vector grows as they are kept (reserved whole at
  // the first one, it held 2 MB after a single function's analysis); a growth copies them, 2 MB
  // at most in a process's life, and nothing holds one across remember(). The chains' heads
  // are a small hashed table: a process's first function, often its only one (GDB's side file
  // of a small program), paid for clearing a 2^16-entry table.
  static constexpr size_t kMaxKnown = 1024;
  static constexpr size_t kMaxChain = 8;  // kept ones starting with the same two bytes
  static constexpr unsigned kBucketBits = 12;
  // The part of cs_detail Capstone writes for the largest of the architectures analyzed
  // (detail_size_ is one's). cs_detail has room for every architecture Capstone knows (1.8 KB,
  // x86-64's part 0.5 KB): kept whole, its clearing and page faults were a quarter of a small
  // program's side file (Capstone loaded: 4.0 ms, now 3.0; a 1 M-function module's the same).
  static constexpr size_t kKeptDetail =
      std::max({offsetof(cs_detail, x86) + sizeof(cs_x86),
                offsetof(cs_detail, arm64) + sizeof(cs_arm64),
                offsetof(cs_detail, sysz) + sizeof(cs_sysz)});
  struct Known {
    cs_insn insn;
    alignas(cs_detail) uint8_t detail[kKeptDetail];  // its first detail_size_ bytes
    uint8_t match;     // the bytes it is kept by: insn.bytes, and for a one-byte one the next
                       // unless it ends the code
    uint8_t next;
    uint32_t key;      // its first two bytes, or its last one (key_of)
    int32_t chain;     // the next kept one in the same bucket, or -1
  };
  // The instruction kept for the code at `code`, or nullptr.
  const Known* known(const uint8_t* code, size_t size) const;
  // Keeps `insn`, just decoded from `code` (`size` bytes were left), if its decoding depends
  // on those bytes alone.
  void remember(const cs_insn& insn, const uint8_t* code, size_t size);
  size_t detail_size_;           // the part of cs_detail Capstone writes for this architecture
  std::vector<Known> known_;
  std::vector<int32_t> buckets_;  // by the hash of the key: the first Known, or -1
  cs_insn* check_;               // where remember() decodes the bytes again
};

// A function's instructions in order, for the analyzer's walks over it. Decoded once for all
// the walks when the function has at most kMaxKept instructions (a walk repeats Capstone's
// decoding and text formatting otherwise: most of a side file's synthesis); a longer function
// is decoded again by each walk, bounding the memory hostile code can take (a kept
// instruction with its detail is about 2 KB).
class Instructions {
 public:
  static constexpr size_t kMaxKept = 4096;

  Instructions(Decoder& d, Bytes code, uint64_t address);
  Instructions(const Instructions&) = delete;
  Instructions& operator=(const Instructions&) = delete;
  ~Instructions();

  // Reads the function from its start again.
  class Walk {
   public:
    // The next instruction and its address; nullptr at the end, or where no instruction
    // decodes (`at` is then where).
    const cs_insn* next(uint64_t& at);

   private:
    friend class Instructions;
    explicit Walk(const Instructions& all);
    const Instructions& all_;
    size_t index_ = 0;
    const uint8_t* p_;
    size_t left_;
    uint64_t address_;
  };
  Walk walk() const { return Walk(*this); }
  // Whether every instruction was decoded once and kept: a walk then decodes nothing again.
  bool kept_whole() const { return whole_; }

 private:
  const cs_insn* kept(size_t i) const { return pooled_ ? d_.pool_[i] : &owned_[i]; }

  Decoder& d_;
  Bytes code_;
  uint64_t address_;
  bool whole_ = false;   // all of them are kept: count_ of them
  bool pooled_ = false;  // in the decoder's pool, else in owned_ (the pool was taken)
  cs_insn* owned_ = nullptr;
  size_t count_ = 0;
};

// A call returns to the next instruction: no edge into the function's code, even when it calls
// the function itself (recursion). Capstone 4 files AArch64 `bl` under the jump group.
bool is_call(Arch arch, const cs_insn& insn);
// An x86_64 instruction after which the next bytes never run: a return, an unconditional
// jump, a trap or a halt (calls aside: whether one returns is the caller's question).
bool x86_64_never_falls_through(unsigned insn_id);
// A jump other than a call (conditional or not, direct or not).
bool is_jump(const Decoder& d, const cs_insn& insn);
// A direct jump's or call's target (the last operand, an immediate, on every architecture here).
std::optional<uint64_t> direct_target(Arch arch, const cs_insn& insn);

}  // namespace unwindkit::prologue::detail
