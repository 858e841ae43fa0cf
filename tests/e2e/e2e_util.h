// Shared helpers of the end-to-end tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include "engine_plugin/include/loom/program.h"
#include "runtime/common/error.h"

namespace loom::test {

inline std::string source_path(const std::string& relative) {
  return std::string(LOOM_SOURCE_DIR) + "/" + relative;
}

inline std::string doc_path(const std::string& name) {
  return source_path("tests/e2e/docs/" + name);
}

// A fresh, empty offline cache folder per test.
inline std::string fresh_cache_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("loom_e2e_cache_" + name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

inline ProgramOptions no_cache() {
  ProgramOptions o;
  o.offline_cache = false;
  return o;
}

template <typename T>
T element(const ArrayView& v, int64_t i) {
  T x;
  std::memcpy(&x, v.data + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return x;
}

// Runs `body` and returns the loom::Error message it throws ("" when it does not throw).
template <typename F>
std::string error_of(F&& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace loom::test
