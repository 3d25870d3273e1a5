// The module index's memos (IndexOptions::memo_dir): held to their budget, least recently
// used out first, and a memo found again counts as used.
#include "unwindkit/server/module_index.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace unwindkit::server {
namespace {

namespace fs = std::filesystem;

// A module with a build-id, unchanged for years: its memo is written when first indexed.
const std::string kModule =
    (test::shared_dir() / "fixtures" / "sframe-v2-x86_64" / "stripped" / "prog").string();

class ModuleIndexMemoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("uk-memo-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void index_module() {
    ModuleIndex index({.memo_dir = dir_});
    std::vector<std::string> notes;
    index.add_file(kModule, notes);
    ASSERT_EQ(index.size(), 1u) << "the fixture was not indexed";
  }
  // The memos in the folder (the fixture's among them once indexed): it holds nothing else.
  std::vector<fs::path> memos() const {
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(dir_)) found.push_back(entry.path());
    return found;
  }
  fs::path put(const std::string& name, size_t size, std::chrono::hours age) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << std::string(size, 'x');
    fs::last_write_time(path, fs::file_time_type::clock::now() - age);
    return path;
  }

  fs::path dir_;
};

TEST_F(ModuleIndexMemoTest, AMemoWrittenPutsTheOldestOutOverOneMebibyte) {
  const fs::path oldest = put("1-1", 700 << 10, std::chrono::hours(48));
  const fs::path newer = put("1-2", 400 << 10, std::chrono::hours(24));
  index_module();
  EXPECT_FALSE(fs::exists(oldest)) << "1,100 KiB of memos: over 1 MiB";
  EXPECT_TRUE(fs::exists(newer));
  EXPECT_EQ(memos().size(), 2u) << "the fixture's memo and the newer one";
}

TEST_F(ModuleIndexMemoTest, AMemoFoundAgainIsMarkedUsed) {
  index_module();
  ASSERT_EQ(memos().size(), 1u) << "the fixture's memo was not written";
  const fs::path memo = memos().front();
  const auto long_ago = fs::file_time_type::clock::now() - std::chrono::hours(48);
  fs::last_write_time(memo, long_ago);
  index_module();  // recalled, not read and hashed again
  EXPECT_GT(fs::last_write_time(memo), long_ago + std::chrono::hours(47));
}

}  // namespace
}  // namespace unwindkit::server
