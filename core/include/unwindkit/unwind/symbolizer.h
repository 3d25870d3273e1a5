// Names for code addresses: the function symbol (.symtab, else .dynsym) that covers an
// address in a module, with the module's load bias applied. A module whose own file was
// stripped is looked up again in its separate debug file (<debug-dir>/.build-id/xx/rest.debug,
// as Debian's -dbg packages install them) when one with the same build-id exists.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "unwindkit/elf/elf_file.h"
#include "unwindkit/unwind/code_address.h"
#include "unwindkit/unwind/modules.h"

namespace unwindkit::unwind {

struct SymbolHit {
  std::string name;
  uint64_t offset = 0;  // address - symbol start
};

struct SymbolizerOptions {
  std::vector<std::string> debug_dirs = {"/usr/lib/debug"};
};

class Symbolizer {
 public:
  explicit Symbolizer(SymbolizerOptions options = {}) : options_(std::move(options)) {}

  // The function covering `address` in `module`, looked up at its lookup address (a call
  // that ends a function, to abort say, returns to the first byte of the next one). The
  // offset is from the pc itself.
  std::optional<SymbolHit> lookup(Module& module, CodeAddress address);

 private:
  struct Table {
    std::vector<elf::Symbol> functions;  // sorted by address
  };
  const Table& table(Module& module);

  SymbolizerOptions options_;
  std::map<const Module*, Table> tables_;
};

// Picks the function covering ELF address `address` from `functions` (sorted by value):
// one whose [value, value + size) holds it, else the nearest one before it with size 0.
// Among aliases, global beats weak beats local.
const elf::Symbol* covering_function(const std::vector<elf::Symbol>& functions, uint64_t address);

}  // namespace unwindkit::unwind
