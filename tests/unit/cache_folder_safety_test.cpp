// What the server does with a cache folder someone else can write to: a link planted at a
// cache file's name or at a temporary file's is never followed, and a file not as the server
// sealed it (truncated, altered, another user's) is never served, but made again.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "scratch_folder.h"
#include "test_support.h"
#include "unwindkit/server/debug_file_cache.h"
#include "unwindkit/server/sealed_file.h"

namespace unwindkit::server {
namespace {

namespace fs = std::filesystem;

const std::string kModule =
    (test::shared_dir() / "fixtures" / "sframe-v2-x86_64" / "stripped" / "prog").string();
constexpr auto kLldb = debuginfo::FallbackNames::Lldb;
const std::string kSecret = "root:secret-hash:19000:0:99999:7:::\n";

std::string contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class CacheFolderSafetyTest : public test::ScratchFolderTest {
 protected:
  void SetUp() override {
    ScratchFolderTest::SetUp();
    std::vector<std::string> notes;
    index_.add_file(kModule, notes);
    ASSERT_EQ(index_.size(), 1u) << "the fixture was not indexed";
    const std::string readelf = test::run_output("readelf -n " + kModule);
    const size_t at = readelf.find("Build ID: ");
    ASSERT_NE(at, std::string::npos);
    const std::string id = readelf.substr(at + 10, readelf.find('\n', at) - at - 10);
    ASSERT_NE(index_.find(id), nullptr);
    module_ = *index_.find(id);
    victim_ = dir_.parent_path() / (dir_.filename().string() + "-victim");
    std::ofstream(victim_) << kSecret;
  }
  void TearDown() override {
    fs::remove(victim_);
    ScratchFolderTest::TearDown();
  }

  // The path the cache keeps the module's file at, found by making it once in a folder of
  // its own (the key is the cache's to choose).
  fs::path cache_file_name() {
    DebugFileCache probe(dir_, {}, {0, std::nullopt});
    CacheSource source = CacheSource::Made;
    EXPECT_TRUE(probe.get(module_, source, kLldb).bytes);
    const auto stored = probe.stored(module_, kLldb);
    EXPECT_TRUE(stored.has_value());
    fs::remove(*stored);
    return stored.value_or(dir_ / "none");
  }

  // Where a fresh cache (nothing in memory) gets the module's file from, and that it is the
  // synthesized file: an ELF file with the module's build-id, not the planted bytes.
  CacheSource ask_fresh_cache() {
    DebugFileCache cache(dir_, {}, {0, std::nullopt});
    CacheSource source = CacheSource::Made;
    const CachedFile file = cache.get(module_, source, kLldb);
    EXPECT_TRUE(file.bytes && file.bytes->size() > 4 && (*file.bytes)[0] == 0x7f &&
                (*file.bytes)[1] == 'E')
        << file.note;
    return source;
  }

  ModuleIndex index_;
  IndexedModule module_;
  fs::path victim_;
};

TEST_F(CacheFolderSafetyTest, ALinkAtACacheFilesNameIsNotServedNorWrittenThrough) {
  const fs::path name = cache_file_name();
  fs::create_symlink(victim_, name);
  EXPECT_EQ(ask_fresh_cache(), CacheSource::Made);
  EXPECT_EQ(contents(victim_), kSecret) << "written through the link";
  EXPECT_FALSE(fs::is_symlink(name)) << "the made file should have replaced the link";
  EXPECT_EQ(ask_fresh_cache(), CacheSource::Disk) << "the file made in its place is kept";
}

TEST_F(CacheFolderSafetyTest, ATruncatedOrAlteredCacheFileIsMadeAgain) {
  const fs::path name = cache_file_name();
  EXPECT_EQ(ask_fresh_cache(), CacheSource::Made);
  const auto size = fs::file_size(name);
  fs::resize_file(name, size - 100);
  EXPECT_EQ(ask_fresh_cache(), CacheSource::Made) << "a truncated file was served";
  EXPECT_EQ(ask_fresh_cache(), CacheSource::Disk);
  {
    std::fstream f(name, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(64);
    f.put('\x5a');
  }
  EXPECT_EQ(ask_fresh_cache(), CacheSource::Made) << "an altered file was served";
}

TEST_F(CacheFolderSafetyTest, AFileOfAnotherUserIsNotServed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  const fs::path name = cache_file_name();
  EXPECT_EQ(ask_fresh_cache(), CacheSource::Made);
  ASSERT_EQ(::chown(name.c_str(), 65534, 65534), 0);
  const auto opened = open_sealed(name, SealCheck::Hash);
  ASSERT_FALSE(opened.has_value());
  EXPECT_NE(opened.error().message.find("owned by uid 65534"), std::string::npos)
      << opened.error().to_string();
  EXPECT_EQ(ask_fresh_cache(), CacheSource::Made);
}

TEST_F(CacheFolderSafetyTest, LinksPlantedAtTemporaryNamesAreNotFollowed) {
  // The temporary names this process would use next (write_atomically: .tmpPID.COUNT).
  const fs::path path = dir_ / "file.debug";
  for (int i = 0; i < 1024; ++i)
    fs::create_symlink(victim_, fmt::format("{}.tmp{}.{}", path.string(), ::getpid(), i));
  const std::vector<uint8_t> bytes(1000, 0x41);
  const bool written = write_sealed(path, bytes);
  EXPECT_EQ(contents(victim_), kSecret) << "written through a planted link";
  if (written) {
    EXPECT_FALSE(fs::is_symlink(path));
    const auto opened = open_sealed(path, SealCheck::Hash);
    ASSERT_TRUE(opened.has_value()) << opened.error().to_string();
    EXPECT_EQ(opened->size, bytes.size());
  } else {
    EXPECT_FALSE(fs::exists(path));
  }
}

TEST_F(CacheFolderSafetyTest, ASealedFileOpensWithItsSizeAndNotThroughALink) {
  const fs::path path = dir_ / "file.debug";
  const std::vector<uint8_t> bytes(5000, 0x42);
  ASSERT_TRUE(write_sealed(path, bytes));
  EXPECT_EQ(fs::file_size(path), bytes.size() + kSealBytes);
  auto opened = open_sealed(path, SealCheck::Hash);
  ASSERT_TRUE(opened.has_value()) << opened.error().to_string();
  EXPECT_EQ(opened->size, bytes.size());
  fs::create_symlink(path, dir_ / "link.debug");
  EXPECT_FALSE(open_sealed(dir_ / "link.debug", SealCheck::Shape).has_value());
  std::ofstream(dir_ / "plain.debug") << std::string(5000, 'x');
  const auto plain = open_sealed(dir_ / "plain.debug", SealCheck::Shape);
  ASSERT_FALSE(plain.has_value());
  EXPECT_NE(plain.error().message.find("no seal"), std::string::npos) << plain.error().to_string();
}

}  // namespace
}  // namespace unwindkit::server
