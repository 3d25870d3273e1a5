// The synthesized-file cache: where a file asked for again comes from (memory, the folder, or
// made anew) under its memory budget, and that what it hands out is the synthesized file.
#include "unwindkit/server/debug_file_cache.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "scratch_folder.h"
#include "test_support.h"
#include "unwindkit/elf/elf_file.h"

namespace unwindkit::server {
namespace {

// The SFrame fixture stripped of symbols and `.eh_frame`: a module with a file to make.
const std::string kModule =
    (test::shared_dir() / "fixtures" / "sframe-v2-x86_64" / "stripped" / "prog").string();

class DebugFileCacheTest : public test::ScratchFolderTest {
 protected:
  void SetUp() override {
    ScratchFolderTest::SetUp();
    std::vector<std::string> notes;
    index_.add_file(kModule, notes);
    auto file = elf::ElfFile::open(kModule);
    ASSERT_TRUE(file.has_value());
    std::string id;
    const auto build_id = file->build_id();
    ASSERT_TRUE(build_id.has_value());
    for (uint8_t b : *build_id) id += fmt::format("{:02x}", b);
    const IndexedModule* found = index_.find(id);
    ASSERT_NE(found, nullptr) << "the fixture was not indexed";
    module_ = *found;
  }

  // Where the second of two requests for the module's file got it, and how many were made.
  std::pair<CacheSource, uint64_t> ask_twice(DebugFileCache& cache) {
    CacheSource source = CacheSource::Made;
    const CachedFile first = cache.get(module_, source, debuginfo::FallbackNames::Lldb);
    EXPECT_EQ(source, CacheSource::Made);
    EXPECT_TRUE(first.bytes) << first.note;
    const CachedFile second = cache.get(module_, source, debuginfo::FallbackNames::Lldb);
    EXPECT_TRUE(second.bytes && first.bytes && *second.bytes == *first.bytes);
    return {source, cache.made()};
  }

  ModuleIndex index_;
  IndexedModule module_;
};

TEST_F(DebugFileCacheTest, WithinTheBudgetASecondRequestIsAnsweredFromMemory) {
  DebugFileCache cache(dir_, {});
  EXPECT_EQ(ask_twice(cache), std::make_pair(CacheSource::Memory, uint64_t{1}));
}

TEST_F(DebugFileCacheTest, OverTheBudgetAFileIsReadBackFromTheFolder) {
  DebugFileCache cache(dir_, {}, {0, std::nullopt});
  EXPECT_EQ(ask_twice(cache), std::make_pair(CacheSource::Disk, uint64_t{1}));
  // What the folder holds is what was made: the module's build-id in a file readelf reads.
  const auto stored = cache.stored(module_, debuginfo::FallbackNames::Lldb);
  ASSERT_TRUE(stored.has_value());
  const std::string notes = test::run_output("readelf -n " + stored->string());
  EXPECT_NE(notes.find("Build ID: " + module_.build_id), std::string::npos) << notes;
}

TEST_F(DebugFileCacheTest, OverTheBudgetWithNoFolderAFileIsMadeAgain) {
  DebugFileCache cache(std::nullopt, {}, {0, std::nullopt});
  EXPECT_EQ(ask_twice(cache), std::make_pair(CacheSource::Made, uint64_t{2}));
}

TEST_F(DebugFileCacheTest, TheLeastRecentlyAskedForGoesFirst) {
  // A budget for either file but not both: asking for the other naming pushes the first out
  // of memory.
  CacheSource source = CacheSource::Made;
  DebugFileCache probe(std::nullopt, {});
  const size_t lldb = probe.get(module_, source, debuginfo::FallbackNames::Lldb).bytes->size();
  const size_t plain = probe.get(module_, source, debuginfo::FallbackNames::None).bytes->size();
  DebugFileCache cache(std::nullopt, {}, {lldb + plain - 1, std::nullopt});
  cache.get(module_, source, debuginfo::FallbackNames::Lldb);
  cache.get(module_, source, debuginfo::FallbackNames::None);
  cache.get(module_, source, debuginfo::FallbackNames::None);
  EXPECT_EQ(source, CacheSource::Memory);
  cache.get(module_, source, debuginfo::FallbackNames::Lldb);
  EXPECT_EQ(source, CacheSource::Made);
  EXPECT_EQ(cache.made(), 3u);
}

TEST_F(DebugFileCacheTest, TheFolderKeepsTheMostRecentlyUsedFilesWithinItsBudget) {
  // Room on disk for either naming's file but not both: making the second removes the first.
  CacheSource source = CacheSource::Made;
  DebugFileCache probe(std::nullopt, {});
  const size_t lldb = probe.get(module_, source, debuginfo::FallbackNames::Lldb).bytes->size();
  const size_t plain = probe.get(module_, source, debuginfo::FallbackNames::None).bytes->size();
  DebugFileCache cache(dir_, {}, {0, lldb + plain - 1});
  cache.get(module_, source, debuginfo::FallbackNames::Lldb);
  ASSERT_TRUE(cache.stored(module_, debuginfo::FallbackNames::Lldb).has_value());
  cache.get(module_, source, debuginfo::FallbackNames::None);
  EXPECT_FALSE(cache.stored(module_, debuginfo::FallbackNames::Lldb).has_value());
  EXPECT_TRUE(cache.stored(module_, debuginfo::FallbackNames::None).has_value());
}

// A module indexed without its hash (IndexOptions::hash_later, the LLDB plugin's): its quick
// file is made and kept without one; its analyzed file is keyed by the hash, worked out when
// asked for, and found again from the unhashed module once the folder holds it.
TEST_F(DebugFileCacheTest, AModuleIndexedWithoutItsHashGetsBothFiles) {
  ModuleIndex later({.memo_dir = std::nullopt, .hash_later = true});
  std::vector<std::string> notes;
  later.add_file(kModule, notes);
  const IndexedModule* unhashed = later.find(module_.build_id);
  ASSERT_NE(unhashed, nullptr);
  ASSERT_TRUE(unhashed->content_hash.empty());
  DebugFileCache cache(dir_, {}, {0, std::nullopt});
  constexpr auto kLldb = debuginfo::FallbackNames::Lldb;
  CacheSource source = CacheSource::Made;
  EXPECT_TRUE(cache.get(*unhashed, source, kLldb, FileKind::Quick).bytes);
  EXPECT_TRUE(cache.stored(*unhashed, kLldb, FileKind::Quick));
  EXPECT_FALSE(cache.may_hold(*unhashed, kLldb));
  EXPECT_FALSE(cache.stored(*unhashed, kLldb));

  EXPECT_TRUE(cache.get(*unhashed, source, kLldb).bytes);
  EXPECT_TRUE(cache.may_hold(*unhashed, kLldb));
  const auto analyzed = cache.stored(*unhashed, kLldb);
  ASSERT_TRUE(analyzed);
  EXPECT_EQ(analyzed, cache.stored(module_, kLldb)) << "not the file of the hashed module";
  EXPECT_EQ(cache.made(), 2u);
}

}  // namespace
}  // namespace unwindkit::server
