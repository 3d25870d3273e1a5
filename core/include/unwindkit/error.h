// Errors are values: every reader returns Result<T>, never throws, never aborts.
// An Error always says where in which table the problem is, so a user can find the
// bad byte with a hex dump: "<section>+0x<offset>: <field>: <message>".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

namespace unwindkit {

struct Error {
  std::string section;  // table or container name: ".sframe", "__unwind_info", "ELF", "core"
  uint64_t offset = 0;  // byte offset inside `section`
  std::string field;    // the field being read or checked: "sfh_num_fdes", "fre[3].start"
  std::string message;  // what is wrong with it

  std::string to_string() const;
  bool operator==(const Error&) const = default;
};

template <class T>
using Result = tl::expected<T, Error>;

// Builds the unexpected value: `return fail(".sframe", off, "sfh_version", "unknown version 9");`
tl::unexpected<Error> fail(std::string_view section, uint64_t offset, std::string_view field,
                           std::string message);

}  // namespace unwindkit
