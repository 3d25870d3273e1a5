// `unwindkit trace dump|lookup|check|build`: Intel traceback `.trace` sections.
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/file_report.h"
#include "unwindkit/trace/constants.h"
#include "unwindkit/trace/decode.h"
#include "unwindkit/trace/elf_section.h"
#include "unwindkit/trace/dump.h"
#include "unwindkit/trace/encode.h"
#include "unwindkit/trace/from_dwarf.h"
#include "unwindkit/trace/lookup.h"
#include "unwindkit/trace/report.h"

extern char** environ;

namespace unwindkit::cli {
namespace {

struct Input {
  std::string path;
  bool raw = false;           // the file is the section's bytes, not an ELF file
  unsigned pointer_size = 8;  // for --raw
};

// The section bytes and pointer size, from an ELF file's .trace or a raw file.
struct Loaded {
  std::vector<uint8_t> raw;
  std::unique_ptr<elf::ElfFile> elf;
  Bytes bytes;
  unsigned pointer_size = 8;
};

bool report(const Error& e) {
  std::fprintf(stderr, "unwindkit: %s\n", e.to_string().c_str());
  return false;
}

bool load(const Input& in, Loaded& out) {
  if (in.raw) {
    if (!read_whole_file(in.path, out.raw)) return false;
    out.bytes = out.raw;
    out.pointer_size = in.pointer_size;
    return true;
  }
  auto f = elf::ElfFile::open(in.path);
  if (!f) return report(f.error());
  out.elf = std::make_unique<elf::ElfFile>(std::move(*f));
  const elf::Section* s = out.elf->section(trace::kSectionName);
  if (s == nullptr) {
    std::fprintf(stderr, "unwindkit: %s", no_table_text(in.path, {}, trace::kSectionName).c_str());
    return false;
  }
  auto bytes = trace::section_bytes(*out.elf, *s);
  if (!bytes) return report(bytes.error());
  out.bytes = *bytes;
  out.pointer_size = out.elf->is_64() ? 8 : 4;
  return true;
}

Result<trace::Section> load_decoded(const Input& in, Loaded& l) {
  // load() has reported why already: an Io Error tells the callers not to report it again.
  if (!load(in, l)) return fail(ErrorKind::Io, in.path, 0, "file", "not loaded");
  return trace::decode(l.bytes, l.pointer_size);
}

int run_dump(const Input& in, bool lines, bool json) {
  Loaded l;
  auto s = load_decoded(in, l);
  if (!s) return s.error().kind == ErrorKind::Io ? kExitDataProblem : (report(s.error()), kExitDataProblem);
  // The table list is named: GCC 16 takes a temporary one inside the conditional for a
  // pointer that may dangle (-Wdangling-pointer).
  std::string text;
  if (json) {
    text = trace::dump_json(*s);
  } else if (lines) {
    text = trace::dump_lines(*s);
  } else {
    const std::vector<trace::FileTable> files{{in.path, &*s, l.bytes, {}}};
    text = trace::dump_text(files);
  }
  write_stdout(text);
  return kExitOk;
}

int run_lookup(const Input& in, const std::vector<std::string>& addrs, bool json) {
  Loaded l;
  auto s = load_decoded(in, l);
  if (!s) return s.error().kind == ErrorKind::Io ? kExitDataProblem : (report(s.error()), kExitDataProblem);
  int rc = kExitOk;
  for (const std::string& a : addrs) {
    uint64_t pc = 0;
    parse_address(a, pc);  // validated by CLI11
    const auto loc = trace::lookup(*s, pc);
    if (!loc) rc = kExitDataProblem;
    write_stdout(json ? trace::lookup_json(in.path, pc, 0, loc)
                      : trace::lookup_text(in.path, pc, 0, loc));
  }
  return rc;
}

int run_check(const Input& in) {
  Loaded l;
  if (!load(in, l)) return kExitDataProblem;
  const auto problems = trace::validate(l.bytes, l.pointer_size);
  for (const Error& e : problems) report(e);
  if (!problems.empty()) return kExitDataProblem;
  const auto s = trace::decode(l.bytes, l.pointer_size);
  size_t routines = 0;
  for (const auto& m : s->modules) routines += m.routines.size();
  std::printf("ok: %zu modules, %zu routines, %zu ranges\n", s->modules.size(), routines,
              s->rows.size());
  return kExitOk;
}

// Runs a program without a shell; its stderr goes to `errfile`. True when it exits 0.
bool run_tool(std::vector<std::string> args, const std::string& errfile) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, errfile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  const int err = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (err != 0) return false;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// objcopy cannot be told the alignment of a section it adds (--set-section-alignment is
// ignored for it), so sh_addralign is written here: the spec wants the pointer size.
bool set_alignment(const std::string& path, unsigned align) {
  auto f = elf::ElfFile::open(path);
  if (!f) return report(f.error());
  const elf::Section* s = f->section(trace::kSectionName);
  if (s == nullptr) return false;
  ByteReader r(f->image(), f->endian(), "ELF");
  const bool wide = f->is_64();
  auto shoff = r.uint_at(wide ? 0x28 : 0x20, wide ? 8 : 4, "e_shoff");
  auto shentsize = r.uint_at(wide ? 0x3a : 0x2e, 2, "e_shentsize");
  if (!shoff || !shentsize) return report(!shoff ? shoff.error() : shentsize.error());
  const uint64_t at = *shoff + s->index * *shentsize + (wide ? 0x30 : 0x20);
  const unsigned width = wide ? 8 : 4;
  if (!r.uint_at(at, width, "sh_addralign")) return false;
  std::vector<uint8_t> v(width);
  for (unsigned i = 0; i < width; ++i) {
    const unsigned shift = 8 * (f->endian() == Endian::Little ? i : width - 1 - i);
    v[i] = static_cast<uint8_t>(uint64_t{align} >> shift);
  }
  std::fstream out(path, std::ios::in | std::ios::out | std::ios::binary);
  out.seekp(static_cast<std::streamoff>(at));
  out.write(reinterpret_cast<const char*>(v.data()), width);
  return static_cast<bool>(out);
}

// The section goes in with objcopy (binutils), the robust way to add a section to a linked
// ELF: allocated, read-only data, at the first page boundary past the last PT_LOAD, so its
// address collides with nothing the program maps. objcopy does not create a program header
// for it, so it is not mapped at run time ("allocated section not in segment"); the
// debugger plugins and `trace dump` read it from the file, which is what they need.
int run_build(const std::string& binary, const std::string& out) {
  auto f = elf::ElfFile::open(binary);
  if (!f) return report(f.error()), kExitDataProblem;
  const unsigned p = f->is_64() ? 8 : 4;
  auto modules = trace::lines_from_dwarf(binary);
  if (!modules) return report(modules.error()), kExitDataProblem;
  auto bytes = trace::encode(*modules, p);
  if (!bytes) return report(bytes.error()), kExitDataProblem;

  constexpr uint64_t kPage = 0x1000;
  uint64_t end = 0;
  for (const auto& seg : f->segments())
    if (seg.type == elf::kSegmentLoad) end = std::max(end, seg.vaddr + seg.memsz);
  const uint64_t addr = (end + kPage - 1) & ~(kPage - 1);

  const std::string tmp = out + ".trace.tmp", err = out + ".objcopy.err";
  {
    std::ofstream t(tmp, std::ios::binary);
    t.write(reinterpret_cast<const char*>(bytes->data()),
            static_cast<std::streamsize>(bytes->size()));
    if (!t) {
      std::fprintf(stderr, "unwindkit: %s: cannot write\n", tmp.c_str());
      return kExitDataProblem;
    }
  }
  const bool ok = run_tool({"objcopy", "--add-section", ".trace=" + tmp, "--set-section-flags",
                            ".trace=alloc,readonly,data", "--change-section-address",
                            fmt::format(".trace={:#x}", addr), binary, out},
                           err);
  std::remove(tmp.c_str());
  if (!ok) {
    std::vector<uint8_t> msg;
    read_whole_file(err, msg);
    std::fprintf(stderr, "unwindkit: objcopy failed: %.*s\n", static_cast<int>(msg.size()),
                 reinterpret_cast<const char*>(msg.data()));
    std::remove(err.c_str());
    return kExitDataProblem;
  }
  std::remove(err.c_str());
  if (!set_alignment(out, p)) return kExitDataProblem;

  auto written = elf::ElfFile::open(out);
  if (!written) return report(written.error()), kExitDataProblem;
  bool loaded = false;
  for (const auto& seg : written->segments())
    loaded |= seg.type == elf::kSegmentLoad && seg.vaddr <= addr && addr < seg.vaddr + seg.memsz;
  std::printf("%s: .trace of %zu bytes (%zu modules) at %#llx, %s\n", out.c_str(), bytes->size(),
              modules->size(), static_cast<unsigned long long>(addr),
              loaded ? "in a PT_LOAD segment"
                     : "allocated but in no PT_LOAD segment (not mapped at run time; read it "
                       "from the file)");
  return kExitOk;
}

void add_input(CLI::App* cmd, Input& in) {
  cmd->add_option("FILE", in.path, "ELF file with a .trace section (or raw bytes with --raw)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_flag("--raw", in.raw, "FILE holds the section's bytes");
  cmd->add_option("--pointer-size", in.pointer_size, "Pointer size of a --raw section")
      ->check(CLI::IsMember({4, 8}));
}

}  // namespace

void add_trace_commands(CLI::App& app, int& exit_code) {
  auto* trace = app.add_subcommand("trace", "Intel traceback .trace sections");
  trace->require_subcommand(1);

  auto dump_in = std::make_shared<Input>();
  auto lines = std::make_shared<bool>(false), json = std::make_shared<bool>(false);
  auto* dump = trace->add_subcommand("dump", "Dump records (default), the line table, or JSON");
  add_input(dump, *dump_in);
  auto* l = dump->add_flag("--lines", *lines, "Line table: routine, file, line, [start, end)");
  dump->add_flag("--json", *json, "JSON (docs/trace-json.md)")->excludes(l);
  dump->callback([=, &exit_code] { exit_code = run_dump(*dump_in, *lines, *json); });

  auto look_in = std::make_shared<Input>();
  auto addrs = std::make_shared<std::vector<std::string>>();
  auto* look = trace->add_subcommand("lookup", "Routine, file and line of addresses");
  add_input(look, *look_in);
  auto look_json = std::make_shared<bool>(false);
  look->add_option("ADDR", *addrs, "Addresses (link-time)")->required()->check(address_validator());
  look->add_flag("--json", *look_json, "One JSON object per address (docs/trace-json.md)");
  look->callback([=, &exit_code] { exit_code = run_lookup(*look_in, *addrs, *look_json); });

  auto check_in = std::make_shared<Input>();
  auto* check = trace->add_subcommand("check", "Validate: report every problem with its offset");
  add_input(check, *check_in);
  check->callback([=, &exit_code] { exit_code = run_check(*check_in); });

  auto binary = std::make_shared<std::string>(), out = std::make_shared<std::string>();
  auto* build = trace->add_subcommand(
      "build", "Copy a -g binary with a .trace section built from its DWARF line table");
  build->add_option("BINARY", *binary, "Input ELF file with DWARF")->required()->check(CLI::ExistingFile);
  build->add_option("-o,--output", *out, "Output file")->required();
  build->callback([=, &exit_code] { exit_code = run_build(*binary, *out); });
}

}  // namespace unwindkit::cli
