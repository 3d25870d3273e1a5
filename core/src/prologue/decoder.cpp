#include "decoder.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace unwindkit::prologue::detail {

namespace {

struct Mapped {
  int16_t dwarf = -1;
  bool full = false;
};

std::optional<unsigned> number(std::string_view s) {
  unsigned v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

Mapped by_table_name(Arch arch, std::string_view name, bool full) {
  for (const RegisterInfo& r : arch_info(arch).registers)
    if (r.name == name) return {static_cast<int16_t>(r.dwarf), full};
  return {};
}

// x86_64: the 64-bit names are arch.h's; eax/ax/al/ah and r8d/r8w/r8b are parts of them.
Mapped x86_64_reg(std::string_view n) {
  if (n.size() >= 2 && n[0] == 'r' && n[1] >= '0' && n[1] <= '9') {
    const bool part = n.back() == 'd' || n.back() == 'w' || n.back() == 'b';
    return by_table_name(Arch::X86_64, part ? n.substr(0, n.size() - 1) : n, !part);
  }
  if (n.size() == 3 && (n[0] == 'r' || n[0] == 'e')) {
    return by_table_name(Arch::X86_64, std::string("r").append(n.substr(1)), n[0] == 'r');
  }
  struct Part {
    std::string_view part, whole;
  };
  static constexpr std::array<Part, 20> kParts = {{
      {"ax", "rax"}, {"al", "rax"}, {"ah", "rax"}, {"bx", "rbx"}, {"bl", "rbx"},
      {"bh", "rbx"}, {"cx", "rcx"}, {"cl", "rcx"}, {"ch", "rcx"}, {"dx", "rdx"},
      {"dl", "rdx"}, {"dh", "rdx"}, {"si", "rsi"}, {"sil", "rsi"}, {"di", "rdi"},
      {"dil", "rdi"}, {"bp", "rbp"}, {"bpl", "rbp"}, {"sp", "rsp"}, {"spl", "rsp"},
  }};
  for (const Part& p : kParts)
    if (p.part == n) return by_table_name(Arch::X86_64, p.whole, false);
  return by_table_name(Arch::X86_64, n, true);
}

// AArch64: x<n>/w<n>, sp/wsp, fp/lr; the vector registers b/h/s/d/q/v<n> are parts of v<n>,
// whose DWARF number is 64 + n (arch.h names its low half d<n>).
Mapped aarch64_reg(std::string_view n) {
  if (n == "sp" || n == "wsp") return {static_cast<int16_t>(reg::aarch64::sp), n == "sp"};
  if (n == "fp") return {static_cast<int16_t>(reg::aarch64::x29), true};
  if (n == "lr") return {static_cast<int16_t>(reg::aarch64::x30), true};
  if (n.size() < 2) return {};
  const auto i = number(n.substr(1));
  if (!i || *i > 31) return {};
  switch (n[0]) {
    case 'x':
    case 'w':
      if (*i > 30) return {};
      return {static_cast<int16_t>(*i), n[0] == 'x'};
    case 'b':
    case 'h':
    case 's':
    case 'd':
    case 'q':
    case 'v':
      return {static_cast<int16_t>(reg::aarch64::v0 + *i), n[0] == 'd' || n[0] == 'q'};
    default: return {};
  }
}

// s390x: Capstone names the general registers by number alone ("6"), the floating-point
// ones as arch.h does ("f8").
Mapped s390x_reg(std::string_view n) {
  if (const auto i = number(n); i && *i < 16) return {static_cast<int16_t>(*i), true};
  return by_table_name(Arch::S390x, n, true);
}

}  // namespace

Decoder::Decoder(Arch arch, csh handle)
    : arch_(arch), handle_(handle), insn_(cs_malloc(handle)), check_(cs_malloc(handle)) {
  unsigned count = 0;
  // Capstone clears and fills the detail up to the end of the architecture's part only.
  switch (arch) {
    case Arch::X86_64:
      count = X86_REG_ENDING;
      detail_size_ = offsetof(cs_detail, x86) + sizeof(cs_x86);
      break;
    case Arch::AArch64:
      count = ARM64_REG_ENDING;
      detail_size_ = offsetof(cs_detail, arm64) + sizeof(cs_arm64);
      break;
    default:
      count = SYSZ_REG_ENDING;
      detail_size_ = offsetof(cs_detail, sysz) + sizeof(cs_sysz);
      break;
  }
  dwarf_.assign(count, -1);
  full_.assign(count, false);
  for (unsigned id = 1; id < count; ++id) {
    const char* name = cs_reg_name(handle, id);
    if (name == nullptr) continue;
    const Mapped m = arch == Arch::X86_64    ? x86_64_reg(name)
                     : arch == Arch::AArch64 ? aarch64_reg(name)
                                             : s390x_reg(name);
    dwarf_[id] = m.dwarf;
    full_[id] = m.full;
  }
}

Decoder::~Decoder() {
  for (cs_insn* insn : pool_) cs_free(insn, 1);
  cs_free(check_, 1);
  cs_free(insn_, 1);
  cs_close(&handle_);
}

Decoder* Decoder::for_arch(Arch arch) {
  cs_arch cs;
  cs_mode mode;
  switch (arch) {
    case Arch::X86_64: cs = CS_ARCH_X86, mode = CS_MODE_64; break;
    case Arch::AArch64: cs = CS_ARCH_ARM64, mode = CS_MODE_ARM; break;
    case Arch::S390x: cs = CS_ARCH_SYSZ, mode = CS_MODE_BIG_ENDIAN; break;
    default: return nullptr;
  }
  // One per thread: a handle is not safe to share, and opening one per function would cost
  // more than decoding a small function.
  thread_local std::array<std::unique_ptr<Decoder>, 3> decoders;
  auto& slot = decoders[arch == Arch::X86_64 ? 0 : arch == Arch::AArch64 ? 1 : 2];
  if (!slot) {
    csh handle = 0;
    if (cs_open(cs, mode, &handle) != CS_ERR_OK) return nullptr;
    cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON);
    slot.reset(new Decoder(arch, handle));
  }
  return slot.get();
}

namespace {

// What kept instructions for code starting with these bytes are found by: its first two
// bytes, or for a last byte that byte alone (after the 2^16 keys of two).
std::optional<uint32_t> key_of(const uint8_t* code, size_t size) {
  if (size == 0) return std::nullopt;
  if (size == 1) return (uint32_t{1} << 16) + code[0];
  return uint32_t{code[0]} | uint32_t{code[1]} << 8;
}

// Fibonacci hashing: the top bits of the key times 2^32 / phi.
size_t bucket_of(uint32_t key, unsigned bits) {
  return static_cast<uint32_t>(key * 2654435769u) >> (32 - bits);
}

}  // namespace

const Decoder::Known* Decoder::known(const uint8_t* code, size_t size) const {
  const auto key = key_of(code, size);
  if (!key || buckets_.empty()) return nullptr;
  for (int32_t i = buckets_[bucket_of(*key, kBucketBits)]; i >= 0;
       i = known_[static_cast<size_t>(i)].chain) {
    const Known& k = known_[static_cast<size_t>(i)];
    if (k.key == *key && k.match <= size && std::memcmp(k.insn.bytes, code, k.insn.size) == 0 &&
        (k.match == k.insn.size || code[k.insn.size] == k.next))
      return &k;
  }
  return nullptr;
}

void Decoder::remember(const cs_insn& insn, const uint8_t* code, size_t size) {
  // A one-byte instruction with the byte after it, or as the code's last byte.
  const size_t match = std::min(std::max<size_t>(insn.size, 2), size);
  const auto key = key_of(code, size);
  if (!key || known_.size() == kMaxKnown || check_ == nullptr) return;
  // A branch's target is its address plus an offset: never the same elsewhere.
  for (const cs_group_type g : {CS_GRP_JUMP, CS_GRP_CALL, CS_GRP_BRANCH_RELATIVE})
    if (cs_insn_group(handle_, &insn, g)) return;
  if (buckets_.empty()) buckets_.assign(size_t{1} << kBucketBits, -1);
  int32_t& head = buckets_[bucket_of(*key, kBucketBits)];
  size_t same = 0;
  for (int32_t i = head; i >= 0; i = known_[static_cast<size_t>(i)].chain)
    same += known_[static_cast<size_t>(i)].key == *key;
  if (same == kMaxChain) return;
  // The bytes it is kept by alone, at an address far from this one: the same instruction,
  // with nothing more read, or it is not kept.
  const uint8_t* p = code;
  size_t left = match;
  uint64_t elsewhere = insn.address ^ (uint64_t{1} << 40);
  if (!cs_disasm_iter(handle_, &p, &left, &elsewhere, check_) || left != match - insn.size ||
      check_->id != insn.id || check_->size != insn.size ||
      std::strcmp(check_->mnemonic, insn.mnemonic) != 0 ||
      std::strcmp(check_->op_str, insn.op_str) != 0 ||
      std::memcmp(check_->detail, insn.detail, detail_size_) != 0)
    return;
  Known& k = known_.emplace_back();
  k.insn = insn;
  k.insn.detail = nullptr;
  std::memcpy(k.detail, insn.detail, detail_size_);
  k.match = static_cast<uint8_t>(match);
  k.next = match > insn.size ? code[insn.size] : 0;
  k.key = *key;
  k.chain = head;
  head = static_cast<int32_t>(known_.size() - 1);
}

Instructions::Instructions(Decoder& d, Bytes code, uint64_t address)
    : d_(d), code_(code), address_(address) {
  if (!d.pool_taken_) {
    d.pool_taken_ = pooled_ = true;
    const uint8_t* p = code.data();
    size_t left = code.size();
    uint64_t at = address;
    while (left > 0 && count_ < kMaxKept) {
      if (count_ == d.pool_.size()) {
        cs_insn* insn = cs_malloc(d.handle_);
        if (insn == nullptr) break;  // then not whole: each walk decodes it
        d.pool_.push_back(insn);
      }
      cs_insn* insn = d.pool_[count_];
      if (const Decoder::Known* k = d.known(p, left)) {
        cs_detail* detail = insn->detail;
        *insn = k->insn;
        insn->detail = detail;
        std::memcpy(detail, k->detail, d.detail_size_);
        insn->address = at;
        p += insn->size;
        left -= insn->size;
        at += insn->size;
      } else if (const uint8_t* from = p; cs_disasm_iter(d.handle_, &p, &left, &at, insn)) {
        d.remember(*insn, from, left + insn->size);
      } else {
        break;
      }
      ++count_;
    }
    // Ended by an instruction that does not decode is whole too: a walk stops there.
    whole_ = left == 0 || (count_ < kMaxKept && count_ < d.pool_.size());
  } else {
    count_ = cs_disasm(d.handle(), code.data(), code.size(), address, kMaxKept, &owned_);
    size_t decoded = 0;
    for (size_t i = 0; i < count_; ++i) decoded += owned_[i].size;
    whole_ = count_ < kMaxKept || decoded == code.size();
  }
}

Instructions::~Instructions() {
  if (pooled_) d_.pool_taken_ = false;
  if (owned_ != nullptr) cs_free(owned_, count_);
}

Instructions::Walk::Walk(const Instructions& all)
    : all_(all), p_(all.code_.data()), left_(all.code_.size()), address_(all.address_) {}

const cs_insn* Instructions::Walk::next(uint64_t& at) {
  at = address_;
  if (left_ == 0) return nullptr;
  if (all_.whole_) {
    if (index_ == all_.count_) return nullptr;  // undecodable at `at`
    const cs_insn* insn = all_.kept(index_++);
    address_ += insn->size;
    left_ -= insn->size;
    return insn;
  }
  cs_insn* insn = all_.d_.insn();
  return cs_disasm_iter(all_.d_.handle(), &p_, &left_, &address_, insn) ? insn : nullptr;
}

bool x86_64_never_falls_through(unsigned insn_id) {
  switch (insn_id) {
    case X86_INS_RET:
    case X86_INS_RETF:
    case X86_INS_JMP:
    case X86_INS_LJMP:
    case X86_INS_UD2:
    case X86_INS_HLT:
    case X86_INS_INT3: return true;
    default: return false;
  }
}

bool is_call(Arch arch, const cs_insn& insn) {
  switch (arch) {
    case Arch::X86_64: return insn.id == X86_INS_CALL || insn.id == X86_INS_LCALL;
    case Arch::AArch64: return insn.id == ARM64_INS_BL || insn.id == ARM64_INS_BLR;
    default: return insn.id == SYSZ_INS_BRASL || insn.id == SYSZ_INS_BASR;
  }
}

std::optional<uint64_t> direct_target(Arch arch, const cs_insn& insn) {
  switch (arch) {
    case Arch::X86_64: {
      const cs_x86& x = insn.detail->x86;
      if (x.op_count > 0 && x.operands[x.op_count - 1].type == X86_OP_IMM)
        return static_cast<uint64_t>(x.operands[x.op_count - 1].imm);
      break;
    }
    case Arch::AArch64: {
      const cs_arm64& a = insn.detail->arm64;
      if (a.op_count > 0 && a.operands[a.op_count - 1].type == ARM64_OP_IMM)
        return static_cast<uint64_t>(a.operands[a.op_count - 1].imm);
      break;
    }
    default: {
      const cs_sysz& z = insn.detail->sysz;
      if (z.op_count > 0 && z.operands[z.op_count - 1].type == SYSZ_OP_IMM)
        return static_cast<uint64_t>(z.operands[z.op_count - 1].imm);
      break;
    }
  }
  return std::nullopt;
}

bool is_jump(const Decoder& d, const cs_insn& insn) {
  return cs_insn_group(d.handle(), &insn, CS_GRP_JUMP) && !is_call(d.arch(), insn) &&
         !cs_insn_group(d.handle(), &insn, CS_GRP_CALL);
}

}  // namespace unwindkit::prologue::detail
