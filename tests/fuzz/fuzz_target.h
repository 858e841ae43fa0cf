// What every fuzz target shares: the libFuzzer entry point and how a reader's expected
// rejection differs from a finding.
//
// A reader of untrusted bytes promises to throw loom::Error on anything malformed. So a
// loom::Error is a rejected input; anything else (a sanitizer report, a crash, another
// exception type, a broken invariant checked with require()) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace loom::fuzz {

// An invariant of the code under test; aborts (a finding) with `what` when it does not hold.
inline void require(bool holds, const char* what) {
  if (holds) return;
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
  std::abort();
}

}  // namespace loom::fuzz
