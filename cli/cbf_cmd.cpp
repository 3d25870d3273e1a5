// `unwindkit cbf decode|encode`: Swift's Compact Backtrace Format from raw bytes, hex, base64
// or a Swift Backtrace's JSON, and back from a frame list or `unwindkit bt --json` output.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "unwindkit/cbf/decode.h"
#include "unwindkit/cbf/dump.h"
#include "unwindkit/cbf/encode.h"
#include "unwindkit/cbf/report.h"
#include "unwindkit/cbf/text.h"

namespace unwindkit::cli {
namespace {

struct DecodeOptions {
  std::string file, hex, base64, json_file;
  bool json = false;
};

bool report(const Error& e) {
  std::fprintf(stderr, "unwindkit: %s\n", e.to_string().c_str());
  return false;
}

// The CBF bytes from whichever source was given.
bool load_bytes(const DecodeOptions& o, std::vector<uint8_t>& out) {
  if (!o.file.empty()) return read_whole_file(o.file, out);
  if (!o.hex.empty()) {
    auto b = cbf::from_hex(o.hex);
    if (!b) return report(b.error());
    out = std::move(*b);
    return true;
  }
  std::string b64 = o.base64;
  if (!o.json_file.empty()) {
    std::vector<uint8_t> text;
    if (!read_whole_file(o.json_file, text)) return false;
    // A Swift Backtrace encodes as {"architecture": "...", "backtrace": "<base64>", ...}.
    const auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("backtrace") ||
        !j["backtrace"].is_string()) {
      std::fprintf(stderr, "unwindkit: %s: no \"backtrace\" string in a JSON object\n",
                   o.json_file.c_str());
      return false;
    }
    b64 = j["backtrace"].get<std::string>();
  }
  auto b = cbf::from_base64(b64);
  if (!b) return report(b.error());
  out = std::move(*b);
  return true;
}

int run_decode(const DecodeOptions& o) {
  std::vector<uint8_t> bytes;
  if (!load_bytes(o, bytes)) return kExitDataProblem;
  const auto records = cbf::decode_stream(bytes);
  if (records.empty()) {
    std::fprintf(stderr, "unwindkit: no CBF data\n");
    return kExitDataProblem;
  }
  // Every problem also goes to stderr, as the CLI's errors do; the exit code says there was one.
  int rc = kExitOk;
  for (const auto& rec : records) {
    if (!rec) break;
    if (rec->problem) rc = (report(*rec->problem), kExitDataProblem);
  }
  const cbf::DecodeReport r = cbf::decode_report(records, 0);
  write_stdout(o.json ? cbf::decode_json(records) : r.text);
  if (r.error) {
    std::fprintf(stderr, "unwindkit: %s\n", r.error->c_str());
    rc = kExitDataProblem;
  }
  return rc;
}

// "pc 0x1000", "ra 0x1010", "async 0x...", "omit N", "truncated"; '#' starts a comment.
bool parse_frame_list(const std::string& text, std::vector<cbf::Run>& runs) {
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string kind, value, extra;
    if (!(words >> kind)) continue;
    words >> value >> extra;
    cbf::Frame f;
    uint64_t v = 0;
    const bool needs_value = kind != "truncated";
    if (kind == "pc") f.kind = cbf::FrameKind::ProgramCounter;
    else if (kind == "ra") f.kind = cbf::FrameKind::ReturnAddress;
    else if (kind == "async") f.kind = cbf::FrameKind::AsyncResumePoint;
    else if (kind == "omit") f.kind = cbf::FrameKind::Omitted;
    else if (kind == "truncated") f.kind = cbf::FrameKind::Truncated;
    else {
      std::fprintf(stderr, "unwindkit: line %d: unknown frame kind '%s'\n", n, kind.c_str());
      return false;
    }
    if (!extra.empty() || (needs_value ? !parse_address(value, v) : !value.empty())) {
      std::fprintf(stderr, "unwindkit: line %d: expected '%s%s'\n", n, kind.c_str(),
                   needs_value ? " NUMBER" : "");
      return false;
    }
    f.value = v;
    cbf::append(runs, f);
  }
  return true;
}

// `unwindkit bt --json`: {"threads":[{"frames":[{"pc":"0x..."}, ...]}]}. Frame 0 of each
// thread is where it stopped (a pc), the rest are return addresses. One record per thread.
bool parse_bt_json(const std::string& text, std::vector<std::vector<cbf::Run>>& threads) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("threads") || !j["threads"].is_array()) {
    std::fprintf(stderr, "unwindkit: input is not `unwindkit bt --json` output\n");
    return false;
  }
  for (const auto& t : j["threads"]) {
    std::vector<cbf::Run> runs;
    if (!t.is_object() || !t.contains("frames") || !t["frames"].is_array()) return false;
    for (const auto& fr : t["frames"]) {
      uint64_t pc = 0;
      const auto* v = fr.is_object() && fr.contains("pc") ? &fr["pc"] : nullptr;
      const bool ok = v != nullptr && ((v->is_string() && parse_address(v->get<std::string>(), pc)) ||
                                       (v->is_number_unsigned() && (pc = v->get<uint64_t>(), true)));
      if (!ok) {
        std::fprintf(stderr, "unwindkit: a frame without a \"pc\" address\n");
        return false;
      }
      cbf::append(runs, cbf::Frame{runs.empty() ? cbf::FrameKind::ProgramCounter
                                                : cbf::FrameKind::ReturnAddress,
                                   pc});
    }
    threads.push_back(std::move(runs));
  }
  return true;
}

struct EncodeOptions {
  int width = 64;
  std::string input;
  bool swift_json = false;
  std::string arch = "x86_64";
};

int run_encode(const EncodeOptions& o) {
  std::string text;
  if (o.input.empty() || o.input == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::vector<uint8_t> raw;
    if (!read_whole_file(o.input, raw)) return kExitDataProblem;
    text.assign(raw.begin(), raw.end());
  }
  std::vector<std::vector<cbf::Run>> records;
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    if (!parse_bt_json(text, records)) return kExitDataProblem;
  } else {
    records.emplace_back();
    if (!parse_frame_list(text, records.back())) return kExitDataProblem;
  }
  const cbf::WordSize ws = o.width == 16   ? cbf::WordSize::Bits16
                           : o.width == 32 ? cbf::WordSize::Bits32
                                           : cbf::WordSize::Bits64;
  for (size_t i = 0; i < records.size(); ++i) {
    auto bytes = cbf::encode(ws, records[i]);
    if (!bytes) {
      report(bytes.error());
      return kExitDataProblem;
    }
    if (o.swift_json) {
      // What a Swift Backtrace encodes to (Codable): one object per record, one per line.
      const nlohmann::json j = {{"architecture", o.arch}, {"backtrace", cbf::to_base64(*bytes)}};
      std::printf("%s\n", j.dump().c_str());
      continue;
    }
    cbf::EncodeShown shown{std::nullopt, true, true, {}};
    if (records.size() > 1) shown.thread = i;
    write_stdout(cbf::encode_text(records[i], ws, *bytes, shown));
  }
  return kExitOk;
}

}  // namespace

void add_cbf_commands(CLI::App& app, int& exit_code) {
  auto* cbf = app.add_subcommand("cbf", "Swift Compact Backtrace Format: decode and encode");
  cbf->require_subcommand(1);

  auto opts = std::make_shared<DecodeOptions>();
  auto* dec = cbf->add_subcommand("decode", "Decode CBF records (concatenated records are split)");
  auto* file = dec->add_option("FILE", opts->file, "Raw CBF bytes")->check(CLI::ExistingFile);
  auto* hex = dec->add_option("--hex", opts->hex, "CBF bytes as hex");
  auto* b64 = dec->add_option("--base64", opts->base64, "CBF bytes as base64 (as Swift writes)");
  auto* jf = dec->add_option("--json-file", opts->json_file,
                             "A Swift Backtrace's JSON: {\"backtrace\": \"<base64>\", ...}")
                 ->check(CLI::ExistingFile);
  file->excludes(hex, b64, jf);
  hex->excludes(b64, jf);
  b64->excludes(jf);
  dec->add_flag("--json", opts->json, "JSON output (docs/cbf.md)");
  dec->callback([opts, file, hex, b64, jf, &exit_code] {
    if (file->count() + hex->count() + b64->count() + jf->count() != 1)
      throw CLI::RequiredError("one of FILE, --hex, --base64, --json-file");
    exit_code = run_decode(*opts);
  });

  auto eo = std::make_shared<EncodeOptions>();
  auto* enc = cbf->add_subcommand(
      "encode", "Encode frames ('pc 0x..' / 'ra 0x..' / 'async 0x..' / 'omit N' lines, or "
                "`unwindkit bt --json` output) as CBF");
  enc->add_option("--width", eo->width, "Machine word size")->check(CLI::IsMember({16, 32, 64}));
  enc->add_option("--input", eo->input, "Input file (default: standard input)");
  auto* sj = enc->add_flag("--swift-json", eo->swift_json,
                           "Print the JSON a Swift Backtrace encodes to: {\"architecture\": "
                           "ARCH, \"backtrace\": \"<base64>\"}, one line per record");
  enc->add_option("--arch", eo->arch, "The \"architecture\" of --swift-json (default x86_64)")
      ->needs(sj);
  enc->callback([eo, &exit_code] { exit_code = run_encode(*eo); });
}

}  // namespace unwindkit::cli
