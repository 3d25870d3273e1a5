// ELF container (ELF32/ELF64, either byte order; executables, shared objects, relocatable
// objects and cores), built on elfutils' libelf. Section contents are borrowed from the file
// image, which the ElfFile keeps alive; nothing here interprets the sections themselves (an
// object's relocations apart, which contents() applies as readelf does).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/elf/constants.h"
#include "unwindkit/error.h"
#include "unwindkit/file_bytes.h"
#include "unwindkit/rules.h"

namespace unwindkit::elf {

struct Section {
  std::string name;
  uint32_t index = 0;
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t addr = 0;
  uint64_t offset = 0;  // file offset
  uint64_t size = 0;
  uint64_t addralign = 0;
  uint32_t link = 0;     // sh_link (of a relocation section: its symbol table's index)
  uint32_t info = 0;     // sh_info (of a relocation section: the index of what it relocates)
  uint64_t entsize = 0;  // sh_entsize
  Bytes data;  // the file's bytes, unrelocated (contents() relocates); empty for SHT_NOBITS
};

struct Segment {
  uint32_t type = 0;
  uint32_t flags = 0;
  uint64_t offset = 0;
  uint64_t vaddr = 0;
  uint64_t filesz = 0;
  uint64_t memsz = 0;
  uint64_t align = 0;
};

struct Note {
  std::string name;  // "CORE", "GNU", "LINUX"
  uint32_t type = 0;
  Bytes desc;
  uint64_t offset = 0;  // file offset of the descriptor
};

struct Symbol {
  std::string name;
  uint64_t value = 0;
  uint64_t size = 0;
  uint8_t type = 0;  // STT_*
  uint8_t bind = 0;  // STB_*
  uint16_t shndx = 0;
};

class ElfFile {
 public:
  // Which of a file's bytes open() reads.
  enum class Contents : uint8_t {
    Whole,
    // The headers, the section names and the notes: what says what a file is (its type,
    // build-id and layout). Other sections have no data.
    Headers,
    // Every section's contents but code's (SHF_EXECINSTR): unwind tables, symbols and notes,
    // without a large program's instructions or the holes between its segments. Code sections
    // have no data, and bytes_at_address() finds none of their bytes.
    NoCode,
  };
  // Reads the file into memory (the whole file, or the parts `contents` names) and parses its
  // headers. A part not read takes no memory.
  static Result<ElfFile> open(const std::string& path, Contents contents = Contents::Whole);
  // As open(), but maps the file read-only instead of reading it, so only the pages used are
  // ever read: for large files of which a part is used (headers, unwind tables), as the CLI
  // and the plugins' modules read them. A file truncated while mapped faults (SIGBUS) on
  // access; open() reads a copy, for files kept whole or rewritten while read.
  static Result<ElfFile> map(const std::string& path);
  // Parses an image already in memory; `name` is used in errors.
  static Result<ElfFile> parse(std::shared_ptr<const std::vector<uint8_t>> image,
                               std::string name);
  static Result<ElfFile> parse(const FileImage& file, std::string name);

  const std::string& name() const { return name_; }
  bool is_64() const { return is_64_; }
  Endian endian() const { return endian_; }
  uint16_t machine() const { return machine_; }
  uint16_t type() const { return type_; }
  uint64_t entry() const { return entry_; }
  std::optional<Arch> arch() const;
  Bytes image() const { return image_; }

  const std::vector<Section>& sections() const { return sections_; }
  const Section* section(std::string_view name) const;
  // A section's bytes as readelf reads them: in a relocatable object (ET_REL), with the
  // object's relocations for it applied (relocations.h), kept for the file's lifetime; in
  // any other file, or a section nothing relocates, its `data`. Every format reader that
  // may be handed an object reads its table through here.
  Result<Bytes> contents(const Section& section) const;
  const std::vector<Segment>& segments() const { return segments_; }
  // Notes from PT_NOTE segments (cores, linked images) or SHT_NOTE sections (objects).
  const std::vector<Note>& notes() const { return notes_; }
  // The NT_GNU_BUILD_ID descriptor, if the file has one.
  std::optional<std::vector<uint8_t>> build_id() const;
  // Function and object symbols from .symtab, or .dynsym when .symtab is absent.
  Result<std::vector<Symbol>> symbols() const;

  // Bytes of the file at a virtual address range, from the PT_LOAD segment that holds them
  // in the file (no memsz-only bytes). Empty if not in the file.
  Bytes bytes_at_address(uint64_t addr, uint64_t size) const;

 private:
  struct Handle;
  struct Relocated;
  static Result<ElfFile> parse_image(std::shared_ptr<const void> owner, Bytes image,
                                     std::string name);
  static Result<ElfFile> open_part(const std::string& path, Contents contents);

  std::string name_;
  std::shared_ptr<const void> owner_;  // keeps image_'s bytes alive
  Bytes image_;
  std::shared_ptr<Handle> handle_;  // the libelf descriptor that section data points into
  std::shared_ptr<Relocated> relocated_;  // contents() of relocated sections, made once each
  bool is_64_ = true;
  Endian endian_ = Endian::Little;
  uint16_t machine_ = 0;
  uint16_t type_ = 0;
  uint64_t entry_ = 0;
  std::vector<Section> sections_;
  std::vector<Segment> segments_;
  std::vector<Note> notes_;
  // File ranges [offset, end) of section contents open() did not read.
  std::vector<std::pair<uint64_t, uint64_t>> unread_;
};

}  // namespace unwindkit::elf
