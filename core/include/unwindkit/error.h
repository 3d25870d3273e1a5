// Errors are values: every reader returns Result<T>, never throws, never aborts.
// An Error always says where in which table the problem is, so a user can find the
// bad byte with a hex dump: "<section>+0x<offset>: <field>: <message>".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

namespace unwindkit {

// What kind of failure an Error is, for code that must tell failures apart (the text is for
// people and may change): gimli's ErrorKind, cut to the distinctions unwindkit's callers make.
enum class ErrorKind : uint8_t {
  BadValue,          // a field holds a value the format does not allow
  Truncated,         // a read or range runs past the end of its table or file
  Unsupported,       // well-formed, but a version, ABI or feature this code does not handle
  NotFound,          // the table, entry or slice asked for is not there
  UnreadableMemory,  // the process's memory could not be read (stepper, core files)
  UnknownRegister,   // a register a rule needs has no known or trusted value
  Io,                // the file could not be opened or read
};

// "bad value", "truncated", ... (for tests and logs; branch on the enum).
std::string_view error_kind_name(ErrorKind kind);

struct Error {
  std::string section;  // table or container name: ".sframe", "__unwind_info", "ELF", "core"
  uint64_t offset = 0;  // byte offset inside `section`
  std::string field;    // the field being read or checked: "sfh_num_fdes", "fre[3].start"
  std::string message;  // what is wrong with it
  ErrorKind kind = ErrorKind::BadValue;

  std::string to_string() const;
  bool operator==(const Error&) const = default;
};

template <class T>
using Result = tl::expected<T, Error>;

// Builds the unexpected value: `return fail(".sframe", off, "sfh_version", "unknown version 9");`
// (kind BadValue), or with the kind first when it is another.
tl::unexpected<Error> fail(std::string_view section, uint64_t offset, std::string_view field,
                           std::string message);
tl::unexpected<Error> fail(ErrorKind kind, std::string_view section, uint64_t offset,
                           std::string_view field, std::string message);

}  // namespace unwindkit
