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
// Where a frame's register came from: "thread" (frame 0, the thread's own), "carried" (the
// callee's, proven unchanged), the table of the callee's rule ("cfi", "sframe",
// "compact-unwind", "fp"), "sframe+code" (a slot the prologue analyzer found), or
// "unavailable" when nothing proves its value.
std::string_view register_origin(const Frame& frame, uint16_t reg);
// The registers `--registers` shows for a frame: SP and every callee-saved register.
std::vector<uint16_t> shown_registers(Arch arch);
// `      rbx=0x1 [sframe+code]  rbp=0x7ffe… [sframe]  r12 unavailable ...`
std::string bt_registers_line(const Frame& frame);
// `stopped: <stop_reason>`.
std::string bt_stop_line(const Walk& walk);
// Every frame line (each followed by its registers line with `registers`), then the stop
// line, each ending in a newline.
std::string bt_text(const Walk& walk, const std::vector<std::optional<SymbolHit>>& names,
                    bool registers = false);

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
