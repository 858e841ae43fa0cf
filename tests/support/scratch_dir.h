// Temporary files for tests: a directory of this test process's own, removed at exit. ctest
// runs tests in parallel, and other checkouts run theirs on the same machine, so fixed names
// under /tmp collide.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace loom::test {

class ScratchDir {
 public:
  // A fresh directory "<tmp>/PREFIX_XXXXXX".
  explicit ScratchDir(const std::string& prefix) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
    if (!mkdtemp(pattern.data()))
      throw std::runtime_error("cannot create a scratch directory: " + pattern);
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// `name` inside this process's scratch directory (made on first use).
inline std::string scratch_path(const std::string& name) {
  static ScratchDir dir("loom_test");
  return dir.path() + "/" + name;
}

}  // namespace loom::test
