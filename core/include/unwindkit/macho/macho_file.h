// Mach-O container: thin files (32/64-bit, either byte order) and fat (universal) files.
// Section contents are borrowed from the file image, which the MachOFile keeps alive;
// nothing here interprets unwind tables.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/error.h"
#include "unwindkit/rules.h"

namespace unwindkit::macho {

struct Relocation {
  uint32_t address = 0;   // offset inside the section
  uint32_t symbolnum = 0; // symbol index (extern) or 1-based section ordinal
  bool is_extern = false;
  bool scattered = false;
  uint32_t scattered_value = 0;  // scattered: the address the relocation refers to
};

struct Section {
  std::string segname;
  std::string sectname;
  uint64_t addr = 0;
  uint64_t size = 0;
  uint32_t offset = 0;  // file offset inside the slice
  uint32_t flags = 0;
  Bytes data;  // empty for zero-fill sections
  std::vector<Relocation> relocations;
};

struct Segment {
  std::string name;
  uint64_t vmaddr = 0;
  uint64_t vmsize = 0;
  uint64_t fileoff = 0;
  uint64_t filesize = 0;
};

struct Symbol {
  std::string name;
  uint8_t type = 0;
  uint8_t sect = 0;  // 1-based section ordinal, 0 = none
  uint64_t value = 0;
};

// One architecture's image (a whole thin file, or one slice of a fat file).
class Slice {
 public:
  static Result<Slice> parse(Bytes bytes);

  bool is_64() const { return is_64_; }
  Endian endian() const { return endian_; }
  uint32_t cputype() const { return cputype_; }
  uint32_t cpusubtype() const { return cpusubtype_; }
  uint32_t filetype() const { return filetype_; }
  std::optional<Arch> arch() const;
  // __TEXT's vmaddr: the base that compact-unwind function offsets are relative to
  // (0 in object files, which have no named segments).
  uint64_t image_base() const { return image_base_; }
  const std::optional<std::array<uint8_t, 16>>& uuid() const { return uuid_; }
  const std::vector<Segment>& segments() const { return segments_; }
  // In load-command order; a section's 1-based ordinal is its index + 1.
  const std::vector<Section>& sections() const { return sections_; }
  const Section* section(std::string_view segname, std::string_view sectname) const;
  const std::vector<Symbol>& symbols() const { return symbols_; }
  // Bytes of the slice at a virtual address range, from the section holding them.
  Bytes bytes_at_address(uint64_t addr, uint64_t size) const;

 private:
  Bytes bytes_;
  bool is_64_ = true;
  Endian endian_ = Endian::Little;
  uint32_t cputype_ = 0, cpusubtype_ = 0, filetype_ = 0;
  uint64_t image_base_ = 0;
  std::optional<std::array<uint8_t, 16>> uuid_;
  std::vector<Segment> segments_;
  std::vector<Section> sections_;
  std::vector<Symbol> symbols_;
};

class MachOFile {
 public:
  static Result<MachOFile> open(const std::string& path);
  static Result<MachOFile> parse(std::shared_ptr<const std::vector<uint8_t>> image);
  // True when the bytes start with a thin or fat Mach-O magic.
  static bool is_macho(Bytes bytes);

  bool is_fat() const { return fat_; }
  const std::vector<Slice>& slices() const { return slices_; }
  // The slice for `arch_name` ("x86_64", "arm64", "i386", "arm"); empty name: the only
  // slice, an error when a fat file has several.
  Result<const Slice*> select(std::string_view arch_name) const;

 private:
  std::shared_ptr<const std::vector<uint8_t>> image_;
  bool fat_ = false;
  std::vector<Slice> slices_;
};

// "x86_64", "arm64", "i386", "arm", or "cputype 0x..." for others.
std::string cpu_name(uint32_t cputype);

}  // namespace unwindkit::macho
