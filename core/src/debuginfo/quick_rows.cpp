// quick_rows (see quick_rows.h): the section's checked walk on a thread of its own, the
// caller's visits on its thread, batches of functions handed over in order. The walk and the
// writer each take about half of a 1 M-function module's quick file (about 50 and 40 ms of
// CPU); in turn, LLDB's loading thread waited for both.
#include "quick_rows.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "unwindkit/prologue/lower.h"
#include "unwindkit/sframe/rule_rows.h"

namespace unwindkit::debuginfo {
namespace {

// Functions per batch: a batch's rows (a few hundred KB) are written while the next are read.
constexpr size_t kBatchFunctions = 8192;
// Batches read ahead of the writer at most: the memory held when writing is the slower.
constexpr size_t kBatchesAhead = 4;

struct Batch {
  struct Function {
    uint64_t start = 0, end = 0;
    size_t rows_end = 0;  // its rows end here in `rows`, and start where the previous one's end
  };
  std::vector<Function> functions;
  std::vector<dwarf::CfiRuleRow> rows;
  std::vector<UnwindRule> rules;  // the writer's table when the batch was closed (it only grows)
  // Emptied to be filled again (its capacity kept).
  void clear() {
    functions.clear();
    rows.clear();
  }
};

void visit_batch(const Batch& batch, const QuickVisit& visit) {
  size_t from = 0;
  for (const Batch::Function& fn : batch.functions) {
    visit(fn.start, fn.end, std::span(batch.rows).subspan(from, fn.rows_end - from), batch.rules);
    from = fn.rows_end;
  }
}

// Batches in order from the reading thread to the writing one. Written batches come back to be
// filled again: after the first few the walk takes no new memory.
class Handoff {
 public:
  // Waits for room; false once the writer has stopped taking (the reader stops).
  bool put(Batch&& batch) {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return full_.size() < kBatchesAhead || left_; });
    if (left_) return false;
    full_.push_back(std::move(batch));
    ready_.notify_one();
    return true;
  }
  Batch spare() {
    std::lock_guard lock(mutex_);
    if (spares_.empty()) return {};
    Batch batch = std::move(spares_.back());
    spares_.pop_back();
    return batch;
  }
  // The next batch; nullopt once the reader has finished and every batch was taken.
  std::optional<Batch> take() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return !full_.empty() || finished_; });
    if (full_.empty()) return std::nullopt;
    Batch batch = std::move(full_.front());
    full_.pop_front();
    room_.notify_one();
    return batch;
  }
  void give_back(Batch&& batch) {
    batch.clear();
    std::lock_guard lock(mutex_);
    spares_.push_back(std::move(batch));
  }
  void finish() {
    std::lock_guard lock(mutex_);
    finished_ = true;
    ready_.notify_one();
  }
  void leave() {
    std::lock_guard lock(mutex_);
    left_ = true;
    room_.notify_one();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<Batch> full_;
  std::vector<Batch> spares_;
  bool finished_ = false, left_ = false;
};

// The walk, its functions put in batches (`spare` gives one to fill; `put` false: stop).
template <class Spare, class Put>
Result<void> read_batches(const elf::ElfFile& module, const elf::Section& section,
                          sframe::Format format, Arch arch,
                          const std::vector<sframe::AddressRange>& text,
                          uint64_t max_repeated_rows, Spare&& spare, Put&& put) {
  const auto plts = prologue::plt_ranges(module);
  auto in_plt = [&](uint64_t address) {
    return std::any_of(plts.begin(), plts.end(),
                       [&](const auto& r) { return address >= r.first && address < r.second; });
  };
  // Rule r of the section is the writer's 2r; 2r + 1 is its form for a PLT.
  std::vector<UnwindRule> rules;
  RepeatedRows repeated(section.name, max_repeated_rows);
  std::optional<Error> refused;  // rules of another architecture, or too many repeated rows
  bool stopped = false;
  Batch batch = spare();
  auto close = [&] {
    batch.rules = rules;
    stopped = !put(std::move(batch));
    batch = spare();
  };
  std::vector<Error> problems = sframe::visit_rule_rows(
      section.data, section.addr, text, format,
      [&](const sframe::FunctionRules& fn, std::span<const UnwindRule> table) {
        if (refused || stopped) return;
        for (size_t r = rules.size() / 2; r < table.size(); ++r) {
          if (table[r].arch != arch) {
            refused = Error{std::string(section.name), 0, "abi_arch",
                            "not the architecture of the ELF file's e_machine"};
            return;
          }
          rules.push_back(table[r]);
          rules.push_back(table[r]);
          rules.back().unlisted = Unlisted::Unchanged;
        }
        if (auto counted = repeated.add(fn.index, fn.offset, fn.size, fn.rep_size, fn.rows.size());
            !counted) {
          refused = counted.error();
          return;
        }
        const uint32_t form = in_plt(fn.start) ? 1 : 0;
        const uint64_t end = fn.start + fn.size;
        const uint32_t blocks = repetitions(fn.size, fn.rep_size);
        const size_t before = batch.rows.size();
        for (uint32_t block = 0; block < blocks; ++block)
          for (const sframe::RuleRow& row : fn.rows) {
            const uint64_t address = fn.start + uint64_t{block} * fn.rep_size + row.start_offset;
            if (address < end) batch.rows.push_back({address, 2 * row.rule + form});
          }
        if (batch.rows.size() != before) batch.functions.push_back({fn.start, end, batch.rows.size()});
        if (batch.functions.size() >= kBatchFunctions) close();
      });
  if (!stopped && !batch.functions.empty()) close();
  if (!problems.empty()) return tl::unexpected(std::move(problems.front()));
  if (refused) return tl::unexpected(*refused);
  return {};
}

}  // namespace

Result<void> RepeatedRows::add(size_t index, uint64_t offset, uint32_t size, uint32_t rep,
                               size_t rows) {
  if (rep == 0) return {};
  counted_ += uint64_t{repetitions(size, rep)} * rows;
  if (counted_ <= limit_) return {};
  return fail(ErrorKind::Unsupported, section_, offset, fmt::format("fde[{}].rep_size", index),
              fmt::format("a PCMASK function of {} bytes repeats its {} rows every {} bytes: "
                          "the module's repeated rows pass {}, the most a side file states",
                          size, rows, rep, limit_));
}

Result<void> quick_rows(const elf::ElfFile& module, const elf::Section& section,
                        sframe::Format format, Arch arch,
                        const std::vector<sframe::AddressRange>& text, uint64_t max_repeated_rows,
                        const QuickVisit& visit) {
  Handoff handoff;
  std::optional<Result<void>> outcome;
  std::exception_ptr reader_failed;
  std::thread reader;
  try {
    reader = std::thread([&] {
      try {
        outcome = read_batches(
            module, section, format, arch, text, max_repeated_rows,
            [&] { return handoff.spare(); },
            [&](Batch&& batch) { return handoff.put(std::move(batch)); });
      } catch (...) {  // out of memory: the caller's, after the join
        reader_failed = std::current_exception();
      }
      handoff.finish();
    });
  } catch (const std::system_error&) {  // no thread to be had: each batch written as read
    Batch kept;
    return read_batches(
        module, section, format, arch, text, max_repeated_rows, [&] { return std::move(kept); },
        [&](Batch&& batch) {
          visit_batch(batch, visit);
          batch.clear();
          kept = std::move(batch);
          return true;
        });
  }
  std::exception_ptr writer_failed;
  try {
    while (std::optional<Batch> batch = handoff.take()) {
      visit_batch(*batch, visit);
      handoff.give_back(std::move(*batch));
    }
  } catch (...) {
    writer_failed = std::current_exception();
  }
  handoff.leave();
  reader.join();
  if (writer_failed) std::rethrow_exception(writer_failed);
  if (reader_failed) std::rethrow_exception(reader_failed);
  return *outcome;
}

}  // namespace unwindkit::debuginfo
