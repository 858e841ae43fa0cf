// Screenshot comparison for render tests: an image against <reference_dir>/<name>.png
// with a tolerance. Every actual image is written to the build folder (render-out/<name>.png)
// for people to look at; on a mismatch a diff image too (render-out/<name>.diff.png: the
// reference in grey, differing pixels in magenta). LOOM_UPDATE_REFERENCE=1 rewrites the
// references instead of comparing.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "runtime/render/png.h"

namespace loom::render_test {

struct Tolerance {
  int channel = 40;         // a pixel differs when any channel differs by more than this
  double fraction = 0.004;  // of the pixels, how many may differ
};

// `reference_dir` is relative to the source tree.
::testing::AssertionResult matches_reference(
    const RgbaImage& actual, const std::string& name, Tolerance t = {},
    const std::string& reference_dir = "tests/render/reference");

std::string output_path(const std::string& file);  // in the build folder's render-out/

}  // namespace loom::render_test
