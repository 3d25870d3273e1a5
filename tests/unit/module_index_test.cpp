// The module index's memos (IndexOptions::memo_dir): held to their budget, least recently
// used out first, and a memo found again counts as used.
#include "unwindkit/server/module_index.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "scratch_folder.h"
#include "test_support.h"

namespace unwindkit::server {
namespace {

namespace fs = std::filesystem;

// A module with a build-id, unchanged for years: its memo is written when first indexed.
const std::string kModule =
    (test::shared_dir() / "fixtures" / "sframe-v2-x86_64" / "stripped" / "prog").string();

class ModuleIndexMemoTest : public test::ScratchFolderTest {
 protected:
  void index_module() {
    ModuleIndex index({.memo_dir = dir_});
    std::vector<std::string> notes;
    index.add_file(kModule, notes);
    ASSERT_EQ(index.size(), 1u) << "the fixture was not indexed";
  }
  // The fixture's build-id, as readelf reads it.
  static std::string index_build_id() {
    const std::string readelf = test::run_output("readelf -n " + kModule + " 2>&1");
    const size_t at = readelf.find("Build ID: ");
    return at == std::string::npos ? "" : readelf.substr(at + 10, readelf.find('\n', at) - at - 10);
  }
  // The memos in the folder (the fixture's among them once indexed): it holds nothing else.
  std::vector<fs::path> memos() const {
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(dir_)) found.push_back(entry.path());
    return found;
  }
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

// The index's identity of a module: its build-id as readelf reads it, and the SHA-256 of its
// bytes as sha256sum gives it.
TEST(ModuleIndexTest, AModulesIdentityIsItsBuildIdAndItsBytesSha256) {
  ModuleIndex index;
  std::vector<std::string> notes;
  index.add_file(kModule, notes);
  ASSERT_EQ(index.size(), 1u);
  const std::string readelf = test::run_output("readelf -n " + kModule + " 2>&1");
  const size_t at = readelf.find("Build ID: ");
  ASSERT_NE(at, std::string::npos) << readelf;
  const std::string build_id = readelf.substr(at + 10, readelf.find('\n', at) - at - 10);
  const IndexedModule* module = index.find(build_id);
  ASSERT_NE(module, nullptr) << build_id;
  const std::string sha256sum = test::run_output("sha256sum " + kModule);
  EXPECT_EQ(module->content_hash, sha256sum.substr(0, sha256sum.find(' ')));
}

// IndexOptions::hash_later: a module no memo remembers is indexed without its hash, which
// hashed() works out (sha256sum's) and remembers, so that the next index of it has it.
TEST_F(ModuleIndexMemoTest, AModuleIndexedToHashLaterIsHashedWhenAsked) {
  ModuleIndex index({.memo_dir = dir_, .hash_later = true});
  std::vector<std::string> notes;
  index.add_file(kModule, notes);
  ASSERT_EQ(index.size(), 1u);
  const std::string build_id = index_build_id();
  ASSERT_NE(index.find(build_id), nullptr);
  EXPECT_TRUE(index.find(build_id)->content_hash.empty());
  EXPECT_TRUE(memos().empty()) << "remembered with no hash";
  const IndexedModule* hashed = index.hashed(build_id);
  ASSERT_NE(hashed, nullptr);
  const std::string sha256sum = test::run_output("sha256sum " + kModule);
  EXPECT_EQ(hashed->content_hash, sha256sum.substr(0, sha256sum.find(' ')));
  EXPECT_EQ(memos().size(), 1u);

  ModuleIndex again({.memo_dir = dir_, .hash_later = true});
  again.add_file(kModule, notes);
  ASSERT_NE(again.find(build_id), nullptr);
  EXPECT_EQ(again.find(build_id)->content_hash, hashed->content_hash) << "not remembered";
}

}  // namespace
}  // namespace unwindkit::server
