// main() for the fuzz targets where libFuzzer is not linked (gcc builds): runs
// LLVMFuzzerTestOneInput once over every file given, folders read file by file in name
// order. ctest runs each target over its corpus this way, so an input that crashed once
// stays a regression test. Flags (-runs=0, ...) are libFuzzer's and ignored here.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_target.h"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs_of(const fs::path& arg) {
  if (!fs::is_directory(arg)) return {arg};
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(arg))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  size_t ran = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.starts_with("-")) continue;
    if (!fs::exists(arg)) {
      std::fprintf(stderr, "%s: no such file or folder\n", arg.c_str());
      return 2;
    }
    for (const fs::path& path : inputs_of(arg)) {
      std::vector<uint8_t> bytes = read_bytes(path);
      std::fprintf(stderr, "running %s (%zu bytes)\n", path.c_str(), bytes.size());
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++ran;
    }
  }
  std::fprintf(stderr, "%zu inputs ran\n", ran);
  // An empty corpus tests nothing: a path typo must not pass silently.
  return ran > 0 ? 0 : 1;
}
