// Work done in a detached process (see detached_maker.h). The GDB plugin's side_files.py
// _make_detached does the same for GDB.
#include "detached_maker.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

namespace unwindkit::lldb_plugin {
namespace {

// LLDB is idle when it used less than kIdleShare of one poll interval's CPU time (its own
// threads count: its loading of the same module); after kIdleWaitLimit the work starts anyway,
// at idle priority. Started at once, the work slowed LLDB's loading on a two-core machine.
constexpr auto kIdlePoll = std::chrono::milliseconds(100);
constexpr double kIdleShare = 0.2;
constexpr auto kIdleWaitLimit = std::chrono::seconds(10);

// Fields of /proc/PID/stat after the command name that come before utime (proc(5)).
constexpr int kFieldsBeforeUtime = 11;

// CPU seconds process `pid` has used, all its threads (/proc/PID/stat utime + stime); nullopt
// once it has ended.
std::optional<double> cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t name_end = text.rfind(')');  // the command name may hold spaces
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(name_end + 1));
  std::string skipped;
  for (int i = 0; i < kFieldsBeforeUtime; ++i) fields >> skipped;
  unsigned long long user = 0, system = 0;
  if (!(fields >> user >> system)) return std::nullopt;
  return static_cast<double>(user + system) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

void wait_until_idle(pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + kIdleWaitLimit;
  std::optional<double> used = cpu_seconds(pid);
  const double poll = std::chrono::duration<double>(kIdlePoll).count();
  while (used && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kIdlePoll);
    const std::optional<double> now = cpu_seconds(pid);
    if (!now || *now - *used < kIdleShare * poll) return;
    used = now;
  }
}

// In the detached process: the work, with the byte locked (the lock goes with the process).
void work_locked(const std::filesystem::path& lock_file, uint32_t lock_at,
                 const std::function<void()>& work) {
  const int lock = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0) return;
  struct flock byte {};
  byte.l_type = F_WRLCK;
  byte.l_whence = SEEK_SET;
  byte.l_start = static_cast<off_t>(lock_at);
  byte.l_len = 1;
  while (::fcntl(lock, F_SETLKW, &byte) != 0)
    if (errno != EINTR) return;
  work();
}

}  // namespace

void run_detached(const std::filesystem::path& lock_file, uint32_t lock_at,
                  const std::function<void()>& work) {
  const pid_t lldb = ::getpid();
  const pid_t middle = ::fork();
  if (middle < 0) return;
  if (middle > 0) {
    int status = 0;
    while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
    }
    return;  // (ECHILD: LLDB reaped it first)
  }
  // The middle process ends at once: the worker is then init's, no zombie under LLDB.
  if (::fork() != 0) ::_exit(0);
  try {
    ::setsid();
    const int null = ::open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);  // nobody waits on LLDB's pipes for it
    ::close_range(3, ~0U, 0);  // LLDB's sockets (the server's port), its files
    sched_param param{};
    if (::sched_setscheduler(0, SCHED_IDLE, &param) != 0) ::setpriority(PRIO_PROCESS, 0, 10);
    wait_until_idle(lldb);
    work_locked(lock_file, lock_at, work);
  } catch (...) {
  }
  ::_exit(0);
}

}  // namespace unwindkit::lldb_plugin
