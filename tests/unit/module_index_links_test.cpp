// The index's symlink rule (docs/debuginfod.md): a link found in an indexed folder is not
// followed, to a file or to a folder; a path given is indexed where it resolves, and served
// from there only.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "scratch_folder.h"
#include "test_support.h"
#include "unwindkit/server/module_index.h"

namespace unwindkit::server {
namespace {

namespace fs = std::filesystem;

const fs::path kModule = test::shared_dir() / "fixtures" / "sframe-v2-x86_64" / "stripped" / "prog";

using ModuleIndexLinksTest = test::ScratchFolderTest;

ModuleIndex scan(const std::vector<std::string>& paths) {
  std::vector<std::string> notes;
  return ModuleIndex::scan(paths, {}, notes);
}

TEST_F(ModuleIndexLinksTest, ALinkInAFolderToAFileElsewhereIsNotIndexed) {
  fs::create_symlink(kModule, dir_ / "prog");
  EXPECT_EQ(scan({dir_.string()}).size(), 0u);
  fs::copy_file(kModule, dir_ / "copy");
  EXPECT_EQ(scan({dir_.string()}).size(), 1u) << "the folder's own file should be indexed";
}

TEST_F(ModuleIndexLinksTest, ALinkInAFolderToAFolderElsewhereIsNotFollowed) {
  fs::create_directory_symlink(kModule.parent_path(), dir_ / "elsewhere");
  EXPECT_EQ(scan({dir_.string()}).size(), 0u);
}

TEST_F(ModuleIndexLinksTest, AGivenLinkIsIndexedWhereItResolves) {
  fs::create_symlink(kModule, dir_ / "prog");
  const ModuleIndex index = scan({(dir_ / "prog").string()});
  ASSERT_EQ(index.size(), 1u);
  const std::string readelf = test::run_output("readelf -n " + kModule.string());
  const size_t at = readelf.find("Build ID: ");
  ASSERT_NE(at, std::string::npos);
  const IndexedModule* module = index.find(readelf.substr(at + 10, readelf.find('\n', at) - at - 10));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->path, fs::canonical(kModule).string());
  // Served from that path only: the file opens, and would not were it replaced by a link.
  EXPECT_TRUE(open_indexed_file(*module).has_value());
}

}  // namespace
}  // namespace unwindkit::server
