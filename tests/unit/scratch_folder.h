// A fixture for tests of kept folders: the test's own empty folder under the temp directory,
// removed after it, and files put there with the age of their last use.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

namespace unwindkit::test {

class ScratchFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("uk-scratch-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A file of `size` bytes last modified (used) `age` ago.
  std::filesystem::path put(const std::string& name, size_t size, std::chrono::minutes age) {
    const std::filesystem::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << std::string(size, 'x');
    std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now() - age);
    return path;
  }

  std::filesystem::path dir_;
};

}  // namespace unwindkit::test
