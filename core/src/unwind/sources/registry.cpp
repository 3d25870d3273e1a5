// Every built-in rule source, once. Adding a source: its file in this folder, its factory in
// sources.h, and one line in kBuiltins.
#include <algorithm>
#include <utility>

#include "sources.h"

namespace unwindkit::unwind {
namespace {

struct Builtin {
  Source kind;
  std::shared_ptr<const RuleSource> (*make)();
};

constexpr Builtin kBuiltins[] = {
    {Source::Cfi, sources::cfi},
    {Source::SFrame, sources::sframe},
    {Source::CompactUnwind, sources::compact_unwind},
    {Source::FramePointer, sources::frame_pointer},
    {Source::EntryPoint, sources::entry_point},
};

}  // namespace

RuleSources builtin_sources(std::span<const Source> kinds) {
  RuleSources out;
  for (Source kind : kinds) {
    auto it = std::find_if(std::begin(kBuiltins), std::end(kBuiltins),
                           [kind](const Builtin& b) { return b.kind == kind; });
    if (it != std::end(kBuiltins)) out.push_back(it->make());
  }
  return out;
}

}  // namespace unwindkit::unwind
