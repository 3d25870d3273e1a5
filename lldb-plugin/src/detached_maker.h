// Work for later sessions done in a process of its own, detached from LLDB: a large module's
// analyzed side file, seconds of CPU, which LLDB does not wait for (it gets the quick file
// first: module_server.cpp) and which must outlive a batch session that ends long before.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>

namespace unwindkit::lldb_plugin {

// Runs `work` in a process forked from this one and detached from it (no zombie, no terminal,
// no file of LLDB's but the standard ones, pointed at /dev/null), at the lowest priority
// (SCHED_IDLE), once LLDB is idle (at its prompt, or gone) or after a bound, while holding
// byte `lock_at` of `lock_file`: processes doing the same work take turns, and one that finds
// it done can stop. `work` runs no LLDB code and the process ends when it returns, however it
// ends. Returns at once in LLDB.
void run_detached(const std::filesystem::path& lock_file, uint32_t lock_at,
                  const std::function<void()>& work);

}  // namespace unwindkit::lldb_plugin
