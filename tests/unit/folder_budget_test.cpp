// Folders held to a size: which files stay, by last use, and which are never counted.
#include "unwindkit/server/folder_budget.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "scratch_folder.h"

namespace unwindkit::server {
namespace {

namespace fs = std::filesystem;

class FolderBudgetTest : public test::ScratchFolderTest {
 protected:
  bool has(const std::string& name) const { return fs::exists(dir_ / name); }
};

TEST_F(FolderBudgetTest, TheLeastRecentlyUsedGoUntilTheRestFit) {
  put("a.debug", 100, std::chrono::minutes(30));
  put("b.debug", 100, std::chrono::minutes(20));
  put("c.none", 100, std::chrono::minutes(10));
  const fs::path d = put("d.debug", 100, std::chrono::minutes(0));
  trim_folder(dir_, 250, {".debug", ".none"}, d);
  EXPECT_FALSE(has("a.debug"));
  EXPECT_FALSE(has("b.debug"));
  EXPECT_TRUE(has("c.none"));
  EXPECT_TRUE(has("d.debug"));
}

TEST_F(FolderBudgetTest, AFileUsedAgainStays) {
  const fs::path a = put("a.debug", 100, std::chrono::minutes(30));
  put("b.debug", 100, std::chrono::minutes(20));
  mark_used(a);
  const fs::path c = put("c.debug", 100, std::chrono::minutes(0));
  trim_folder(dir_, 200, {".debug"}, c);
  EXPECT_TRUE(has("a.debug"));
  EXPECT_FALSE(has("b.debug"));
  EXPECT_TRUE(has("c.debug"));
}

TEST_F(FolderBudgetTest, TheFileJustMadeStaysThoughItAloneIsOverTheBudget) {
  put("a.debug", 100, std::chrono::minutes(5));
  const fs::path big = put("big.debug", 1000, std::chrono::minutes(0));
  trim_folder(dir_, 500, {".debug"}, big);
  EXPECT_FALSE(has("a.debug"));
  EXPECT_TRUE(has("big.debug"));
}

TEST_F(FolderBudgetTest, OtherFilesAndSubfoldersAreLeftAloneAndStaleTemporariesGo) {
  put("notes.txt", 1000, std::chrono::minutes(600));
  fs::create_directories(dir_ / "served");
  std::ofstream(dir_ / "served" / "x.debug") << std::string(1000, 'x');
  put("a.debug.tmp123", 1000, std::chrono::minutes(120));  // its writer died
  put("b.debug.tmp456", 1000, std::chrono::minutes(0));    // being written
  const fs::path c = put("c.debug", 10, std::chrono::minutes(0));
  trim_folder(dir_, 100, {".debug"}, c);
  EXPECT_TRUE(has("notes.txt"));
  EXPECT_TRUE(fs::exists(dir_ / "served" / "x.debug"));
  EXPECT_FALSE(has("a.debug.tmp123"));
  EXPECT_TRUE(has("b.debug.tmp456"));
  EXPECT_TRUE(has("c.debug"));
}

}  // namespace
}  // namespace unwindkit::server
