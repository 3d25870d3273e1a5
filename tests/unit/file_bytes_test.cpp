// read_file and map_file: a file's bytes as written, and the system's own message, never an
// exception, for what is no readable file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "scratch_folder.h"
#include "unwindkit/file_bytes.h"

namespace {

using namespace unwindkit;
using FileBytesTest = test::ScratchFolderTest;

TEST_F(FileBytesTest, ARegularFileWhole) {
  std::vector<uint8_t> written(300000);
  for (size_t i = 0; i < written.size(); ++i) written[i] = static_cast<uint8_t>(i * 7 + i / 251);
  const auto path = (dir_ / "f").string();
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(written.data()),
             static_cast<std::streamsize>(written.size()));
  auto bytes = read_file(path);
  ASSERT_TRUE(bytes) << bytes.error().to_string();
  EXPECT_TRUE(*bytes == written);
  auto mapped = map_file(path);
  ASSERT_TRUE(mapped) << mapped.error().to_string();
  EXPECT_TRUE(std::equal(mapped->bytes.begin(), mapped->bytes.end(), written.begin(),
                         written.end()));
  std::ofstream(dir_ / "empty", std::ios::binary).flush();  // nothing to map: read
  auto empty = read_file((dir_ / "empty").string());
  ASSERT_TRUE(empty) << empty.error().to_string();
  EXPECT_TRUE(empty->empty());
  auto empty_mapped = map_file((dir_ / "empty").string());
  ASSERT_TRUE(empty_mapped) << empty_mapped.error().to_string();
  EXPECT_TRUE(empty_mapped->bytes.empty());
}

TEST_F(FileBytesTest, ADirectoryOrNoFileIsTheSystemsError) {
  for (const auto& [path, error] : {std::pair{dir_.string(), EISDIR},
                                    std::pair{(dir_ / "none").string(), ENOENT}}) {
    SCOPED_TRACE(path);
    auto bytes = read_file(path);
    ASSERT_FALSE(bytes);
    EXPECT_EQ(bytes.error().kind, ErrorKind::Io);
    EXPECT_EQ(bytes.error().section, path);
    EXPECT_EQ(bytes.error().message, std::strerror(error));
    auto mapped = map_file(path);
    ASSERT_FALSE(mapped);
    EXPECT_EQ(mapped.error().to_string(), bytes.error().to_string());
  }
}

}  // namespace
