// Replays a fuzz target's regression inputs without libFuzzer: linked with one
// tests/fuzz/fuzz_*.cpp, it runs that target's LLVMFuzzerTestOneInput (the very code the
// fuzzer runs) on every file in the directory given, so a crash once found stays fixed.
// A directory without inputs fails: a replay that runs nothing would pass vacuously.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s REGRESSIONS_DIR\n", argv[0]);
    return 2;
  }
  size_t replayed = 0;
  for (const auto& entry : fs::directory_iterator(argv[1])) {
    if (!entry.is_regular_file() || entry.path().filename() == "README.md") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<uint8_t> input{std::istreambuf_iterator<char>(in),
                                     std::istreambuf_iterator<char>()};
    std::printf("%s (%zu bytes)\n", entry.path().c_str(), input.size());
    std::fflush(stdout);  // the last name printed is the input that crashed
    (void)LLVMFuzzerTestOneInput(input.data(), input.size());
    ++replayed;
  }
  if (replayed == 0) {
    std::fprintf(stderr, "%s: no inputs\n", argv[1]);
    return 1;
  }
  return 0;
}
