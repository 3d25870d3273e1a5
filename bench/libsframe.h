// binutils' own SFrame decoder, libsframe.so.0 (binutils 2.40: SFrame v1 only), opened with
// dlopen so the build needs no binutils headers. The prototypes are those of 2.40's
// sframe-api.h. Its sframe_frame_row_entry is treated as opaque (only libsframe reads it)
// and given more room than 2.40's layout needs, so a layout difference cannot corrupt us.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace unwindkit::bench {

class LibSframe {
 public:
  // Opens the library and decodes `section`, which must outlive this object (whether
  // libsframe copies it is its business). Exits on failure.
  explicit LibSframe(std::span<const uint8_t> section);
  ~LibSframe();
  LibSframe(const LibSframe&) = delete;
  LibSframe& operator=(const LibSframe&) = delete;

  // sframe_find_fre. In 2.40, `pc` is compared with the raw sfde_func_start_address, which
  // v1 stores relative to the section start: pass the address minus the section address.
  bool find_fre(int32_t pc);
  // The CFA offset of the row the last successful find_fre returned.
  std::optional<int32_t> cfa_offset();

 private:
  struct Row {
    alignas(8) unsigned char bytes[64];
  };
  using DecodeFn = void* (*)(const char*, size_t, int*);
  using FindFreFn = int (*)(void*, int32_t, void*);
  using CfaOffsetFn = int32_t (*)(void*, void*, int*);
  using FreeFn = void (*)(void**);

  void* lib_ = nullptr;
  void* ctx_ = nullptr;
  FindFreFn find_fre_ = nullptr;
  CfaOffsetFn cfa_offset_ = nullptr;
  FreeFn free_ = nullptr;
  Row row_{};
};

}  // namespace unwindkit::bench
