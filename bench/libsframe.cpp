#include "libsframe.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>

namespace unwindkit::bench {

namespace {

[[noreturn]] void fail(const std::string& what) {
  fmt::print(stderr, "libsframe: {}\n", what);
  std::exit(2);
}

template <typename Fn>
Fn symbol(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (!p) fail(fmt::format("no symbol {}", name));
  return reinterpret_cast<Fn>(p);
}

}  // namespace

LibSframe::LibSframe(std::span<const uint8_t> section) {
  lib_ = dlopen("libsframe.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) fail(dlerror());
  auto decode = symbol<DecodeFn>(lib_, "sframe_decode");
  find_fre_ = symbol<FindFreFn>(lib_, "sframe_find_fre");
  cfa_offset_ = symbol<CfaOffsetFn>(lib_, "sframe_fre_get_cfa_offset");
  free_ = symbol<FreeFn>(lib_, "sframe_decoder_free");
  int err = 0;
  ctx_ = decode(reinterpret_cast<const char*>(section.data()), section.size(), &err);
  if (!ctx_) fail(fmt::format("sframe_decode failed (error {})", err));
}

LibSframe::~LibSframe() {
  free_(&ctx_);
  dlclose(lib_);
}

bool LibSframe::find_fre(int32_t pc) { return find_fre_(ctx_, pc, &row_) == 0; }

std::optional<int32_t> LibSframe::cfa_offset() {
  int err = 0;
  const int32_t offset = cfa_offset_(ctx_, &row_, &err);
  if (err != 0) return std::nullopt;
  return offset;
}

}  // namespace unwindkit::bench
