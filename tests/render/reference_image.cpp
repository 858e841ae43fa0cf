#include "tests/render/reference_image.h"

#include <cstdlib>
#include <filesystem>

#include "runtime/common/error.h"

namespace loom::render_test {

std::string output_path(const std::string& file) {
  std::filesystem::create_directories(LOOM_RENDER_OUT_DIR);
  return std::string(LOOM_RENDER_OUT_DIR) + "/" + file;
}

::testing::AssertionResult matches_reference(const RgbaImage& actual, const std::string& name,
                                             Tolerance t, const std::string& reference_dir) {
  std::string reference = std::string(LOOM_SOURCE_DIR) + "/" + reference_dir + "/" + name + ".png";
  std::string out = output_path(name + ".png");
  write_png(out, actual);
  const char* update = std::getenv("LOOM_UPDATE_REFERENCE");
  if (update && std::string(update) == "1") {
    write_png(reference, actual);
    return ::testing::AssertionSuccess() << "reference " << reference << " rewritten";
  }
  RgbaImage expected;
  try {
    expected = read_png(reference);
  } catch (const Error& e) {
    return ::testing::AssertionFailure()
           << e.what() << "\n  actual image: " << out
           << "\n  to create the reference, run with LOOM_UPDATE_REFERENCE=1";
  }
  if (expected.width != actual.width || expected.height != actual.height)
    return ::testing::AssertionFailure()
           << name << ": actual image is " << actual.width << "x" << actual.height
           << ", the reference " << expected.width << "x" << expected.height
           << "\n  actual: " << out << "\n  reference: " << reference;
  RgbaImage diff = expected;
  size_t differing = 0;
  int worst = 0;
  for (size_t i = 0; i < actual.pixels.size(); i += 4) {
    int d = 0;
    for (size_t c = 0; c < 4; ++c)
      d = std::max(d, std::abs(int{actual.pixels[i + c]} - int{expected.pixels[i + c]}));
    worst = std::max(worst, d);
    uint8_t grey = static_cast<uint8_t>(
        (expected.pixels[i] + expected.pixels[i + 1] + expected.pixels[i + 2]) / 6);
    bool differs = d > t.channel;
    differing += differs;
    diff.pixels[i] = differs ? 255 : grey;
    diff.pixels[i + 1] = differs ? 0 : grey;
    diff.pixels[i + 2] = differs ? 255 : grey;
    diff.pixels[i + 3] = 255;
  }
  size_t pixels = actual.pixels.size() / 4;
  double fraction = pixels ? static_cast<double>(differing) / static_cast<double>(pixels) : 0.0;
  if (fraction <= t.fraction) return ::testing::AssertionSuccess();
  std::string diff_path = output_path(name + ".diff.png");
  write_png(diff_path, diff);
  return ::testing::AssertionFailure()
         << name << ": " << differing << " of " << pixels << " pixels (" << fraction * 100
         << "%) differ by more than " << t.channel << " (allowed: " << t.fraction * 100
         << "%; largest difference " << worst << ")\n  actual:    " << out
         << "\n  reference: " << reference << "\n  diff:      " << diff_path
         << "\n  if the change is intended, run with LOOM_UPDATE_REFERENCE=1";
}

}  // namespace loom::render_test
