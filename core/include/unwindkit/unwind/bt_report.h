// What every `bt` prints — the CLI's `unwindkit bt`, and `unwindkit bt` in GDB and in LLDB —
// for one walk (walker.h): a line per frame and the line that says why the walk stopped, and
// the JSON of docs/bt-json.md. Front ends give each frame's name as their debugger (or the
// core's Symbolizer) finds it, at the frame's lookup address.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "unwindkit/unwind/symbolizer.h"
#include "unwindkit/unwind/walker.h"

namespace unwindkit::unwind {

// `#3   0x00005555555551bd  prog+0x11bd  leaf+0xd  [sframe]`, with ` <signal>` after a
// signal trampoline; `??` where the module or the name is unknown.
std::string bt_frame_line(const Frame& frame, const std::optional<SymbolHit>& name);
// `stopped: <stop_reason>`.
std::string bt_stop_line(const Walk& walk);
// Every frame line, then the stop line, each ending in a newline.
std::string bt_text(const Walk& walk, const std::vector<std::optional<SymbolHit>>& names);

struct ThreadBacktrace {
  int64_t tid = 0;
  int signal = 0;
  const Walk* walk = nullptr;
  std::vector<std::optional<SymbolHit>> names;  // one per frame
};

// The whole document of docs/bt-json.md.
std::string bt_json(const std::vector<ThreadBacktrace>& threads,
                    const std::vector<std::string>& warnings);

}  // namespace unwindkit::unwind
