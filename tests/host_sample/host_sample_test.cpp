// The host renderer sample (engine_plugin/host_sample) as a user runs it: headless, under the
// Vulkan validation layer, its frames compared with references/*.png with a tolerance, and
// hot reload while it plays: an edited module swaps in and changes only what it draws, edited
// simulations keep their state, a corrupt file is reported and play goes on.
//
// Runs compared with each other use one lavapipe thread (LP_NUM_THREADS=1): mpm88's
// float atomics then add in one order and the frames are bit-identical run to run. The
// references take a tolerance instead (other thread counts, other drivers).
// LOOM_UPDATE_REFERENCE=1 rewrites the references from this run's frames.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/render/png.h"
#include "tests/support/run_loom.h"
#include "tests/support/vulkan_required.h"

namespace {

namespace fs = std::filesystem;

constexpr int kExitNoDevice = 77;  // the sample found no Vulkan device

using Outcome = loom::test::CliRun;  // exit status, stdout and stderr together
using loom::test::run_command;

// This test's folder in the build tree, emptied: frames, module copies, diff images.
std::string test_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::path(LOOM_HOST_SAMPLE_OUT_DIR) / info->name();
  fs::remove_all(dir);
  fs::create_directories(dir);
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); !xdg || !*xdg) {  // Mesa wants one
    fs::path runtime_dir = fs::path(LOOM_HOST_SAMPLE_OUT_DIR) / "xdg";
    fs::create_directories(runtime_dir);
    chmod(runtime_dir.c_str(), 0700);
    setenv("XDG_RUNTIME_DIR", runtime_dir.c_str(), 1);
  }
  return dir.string();
}

// Runs the sample headless under the validation layer, writing PNGs into `dir`/`name`/.
Outcome run_sample(const std::string& dir, const std::string& name, const std::string& args,
                   bool one_thread) {
  fs::create_directories(dir + "/" + name);
  std::string command = std::string(one_thread ? "env LP_NUM_THREADS=1 " : "") + "'" +
                        LOOM_HOST_SAMPLE + "' --headless --validation --png '" + dir + "/" + name +
                        "/frame_%04d.png' " + args;
  Outcome r = run_command(command);
  std::ofstream(dir + "/" + name + ".log") << command << "\n" << r.out;
  return r;
}

std::string frame_path(const std::string& dir, const std::string& name, int frame) {
  char file[32];
  std::snprintf(file, sizeof file, "frame_%04d.png", frame);
  return dir + "/" + name + "/" + file;
}

// The sample's modules copied into `dir`/modules, for runs that overwrite them.
std::string copy_modules(const std::string& dir) {
  std::string modules = dir + "/modules";
  fs::create_directories(modules);
  for (const char* m : {"cloth", "mpm88", "julia"})
    fs::copy_file(std::string(LOOM_HOST_SAMPLE_MODULE_DIR) + "/" + m + ".loommod",
                  modules + "/" + m + ".loommod", fs::copy_options::overwrite_existing);
  return modules;
}

// assets/graphs/`graph`.loom.json with `from` replaced by `to` (once, it must be there),
// compiled for Vulkan by the `loom` command line: an edit someone makes while the game plays.
std::string compile_edited(const std::string& dir, const std::string& graph,
                           const std::string& from, const std::string& to) {
  std::ifstream in(std::string(LOOM_SOURCE_DIR) + "/assets/graphs/" + graph + ".loom.json");
  std::stringstream text;
  text << in.rdbuf();
  std::string doc = text.str();
  size_t at = doc.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << graph << ".loom.json no longer contains '" << from
                  << "': update the test's edit";
    return "";
  }
  doc.replace(at, from.size(), to);
  std::string edited = dir + "/" + graph + "_edited.loom.json";
  std::ofstream(edited) << doc;
  std::string module = dir + "/" + graph + "_edited.loommod";
  Outcome r = run_command(std::string("'") + LOOM_CLI + "' compile '" + edited + "' -o '" + module +
                          "' --arch vulkan");
  EXPECT_EQ(r.code, 0) << r.out;
  return module;
}

struct Difference {
  double mean = 0;        // mean absolute difference per colour channel (0 to 255)
  double over = 0;        // fraction of pixels with a channel differing by more than the threshold
  int largest = 0;        // the largest channel difference
  int first_column = -1;  // the leftmost column with a differing pixel (-1: none)
  int last_column = -1;   // the rightmost
};

Difference compare(const loom::RgbaImage& a, const loom::RgbaImage& b, int threshold) {
  Difference d;
  if (a.width != b.width || a.height != b.height) {
    d.mean = d.over = 1e9;
    return d;
  }
  double sum = 0;
  size_t over = 0;
  for (int y = 0; y < a.height; ++y)
    for (int x = 0; x < a.width; ++x) {
      int worst = 0;
      for (int c = 0; c < 3; ++c) {
        int diff = std::abs(int{a.at(x, y)[c]} - int{b.at(x, y)[c]});
        sum += diff;
        worst = std::max(worst, diff);
      }
      d.largest = std::max(d.largest, worst);
      over += worst > threshold;
      if (worst > 0) {
        if (d.first_column < 0 || x < d.first_column) d.first_column = x;
        d.last_column = std::max(d.last_column, x);
      }
    }
  double pixels = double(a.width) * a.height;
  d.mean = sum / (pixels * 3);
  d.over = over / pixels;
  return d;
}

std::string describe(const Difference& d, int threshold) {
  char text[200];
  std::snprintf(text, sizeof text,
                "mean abs diff %.3f, %.3f%% of pixels differ by > %d, largest %d, columns %d to %d",
                d.mean, d.over * 100, threshold, d.largest, d.first_column, d.last_column);
  return text;
}

// Reference or actual frame; a missing or unreadable file fails the test.
bool read(const std::string& path, loom::RgbaImage* image) {
  try {
    *image = loom::read_png(path);
    return true;
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
    return false;
  }
}

// Frames of the "plain" and "reload" runs in `dir`: identical before `edit_frame`; from it
// on, `after` checks them.
void compare_runs(
    const std::string& dir, const std::vector<int>& frames, int edit_frame,
    const std::function<void(int, const loom::RgbaImage&, const Difference&)>& after) {
  for (int frame : frames) {
    loom::RgbaImage a, b;
    ASSERT_TRUE(read(frame_path(dir, "plain", frame), &a))
        << "frame " << frame << " of the plain run";
    ASSERT_TRUE(read(frame_path(dir, "reload", frame), &b))
        << "frame " << frame << " of the reloading run";
    Difference d = compare(a, b, 24);
    std::printf("frame %d, reloaded against plain: %s\n", frame, describe(d, 24).c_str());
    if (frame < edit_frame)
      EXPECT_EQ(d.largest, 0) << "frame " << frame
                              << " before the edit differs: " << describe(d, 24);
    else
      after(frame, a, d);
  }
}

// Writes `actual` with the pixels differing from `expected` by more than `threshold` in magenta.
void write_diff(const loom::RgbaImage& expected, const loom::RgbaImage& actual, int threshold,
                const std::string& path) {
  loom::RgbaImage diff = expected;
  for (size_t i = 0; i < diff.pixels.size(); i += 4) {
    int worst = 0;
    for (int c = 0; c < 3; ++c)
      worst = std::max(worst, std::abs(int{expected.pixels[i + c]} - int{actual.pixels[i + c]}));
    uint8_t grey =
        static_cast<uint8_t>((actual.pixels[i] + actual.pixels[i + 1] + actual.pixels[i + 2]) / 6);
    diff.pixels[i] = worst > threshold ? 255 : grey;
    diff.pixels[i + 1] = worst > threshold ? 0 : grey;
    diff.pixels[i + 2] = worst > threshold ? 255 : grey;
  }
  loom::write_png(path, diff);
}

// The no-device policy (support/vulkan_required.h) when the sample found no Vulkan device;
// otherwise it must have succeeded.
#define EXPECT_SAMPLE_RAN(r)                                                              \
  do {                                                                                    \
    if ((r).code == kExitNoDevice) LOOM_SKIP_FOR_NO_VULKAN("\n" + (r).out);               \
    ASSERT_EQ((r).code, 0) << "the sample failed (exit status 3: validation messages):\n" \
                           << (r).out;                                                    \
    EXPECT_NE((r).out.find("validation: 0 message(s)"), std::string::npos) << (r).out;    \
  } while (0)

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

// A run as a user makes one; frames 30, 60 and 90 against the references: the cloth falling
// onto the sphere and draping, the particles splashing in their box, the fractal turning.
TEST(HostSample, FramesMatchReferences) {
  std::string dir = test_dir();
  Outcome r = run_sample(dir, "frames", "--frames 90 --every 30 --size 640x360", false);
  EXPECT_SAMPLE_RAN(r);
  EXPECT_TRUE(contains(r.out, "timings:")) << r.out;
  EXPECT_FALSE(fs::exists(frame_path(dir, "frames", 15))) << "--every 30 wrote frame 15";

  const int threshold = 24;  // mpm88's particles differ a little with the order of its atomics
  const bool update = std::getenv("LOOM_UPDATE_REFERENCE") &&
                      std::string(std::getenv("LOOM_UPDATE_REFERENCE")) == "1";
  for (int frame : {30, 60, 90}) {
    std::string actual_path = frame_path(dir, "frames", frame);
    char name[32];
    std::snprintf(name, sizeof name, "frame_%04d.png", frame);
    std::string reference_path =
        std::string(LOOM_SOURCE_DIR) + "/tests/host_sample/references/" + name;
    if (update) {
      fs::copy_file(actual_path, reference_path, fs::copy_options::overwrite_existing);
      std::printf("rewrote %s\n", reference_path.c_str());
      continue;
    }
    loom::RgbaImage actual, reference;
    ASSERT_TRUE(read(actual_path, &actual)) << actual_path;
    ASSERT_TRUE(read(reference_path, &reference)) << reference_path;
    Difference d = compare(reference, actual, threshold);
    std::printf("frame %d against its reference: %s\n", frame, describe(d, threshold).c_str());
    if (d.mean <= 1.5 && d.over <= 0.015) continue;
    std::string diff_path = dir + "/" + name + ".diff.png";
    if (d.mean < 1e9) write_diff(reference, actual, threshold, diff_path);
    ADD_FAILURE() << "frame " << frame << " differs from its reference: " << describe(d, threshold)
                  << " (allowed: mean 1.5, 1.5% of pixels)\n  actual:    " << actual_path
                  << "\n  reference: " << reference_path << "\n  diff:      " << diff_path
                  << "\n  if the change is intended, run with LOOM_UPDATE_REFERENCE=1";
  }
}

// The fractal's graph edited while playing: from frame 15 on the fractal panel (the left of
// the frame) changes; before it, and everywhere else, the frames are those of a plain run.
TEST(HostSample, HotReloadSwapsTheEditedModule) {
  std::string dir = test_dir();
  std::string edited =
      compile_edited(dir, "julia", "0.35 + 0.65 * (n / 200.0)", "0.9 - 0.6 * (n / 200.0)");
  ASSERT_FALSE(edited.empty());
  const std::string frames = "--frames 30 --every 5 --size 320x180 ";
  Outcome plain = run_sample(dir, "plain", frames, true);
  EXPECT_SAMPLE_RAN(plain);
  Outcome reload = run_sample(
      dir, "reload",
      frames + "--modules '" + copy_modules(dir) + "' --replace-at 15:julia='" + edited + "'",
      true);
  EXPECT_SAMPLE_RAN(reload);
  EXPECT_TRUE(
      contains(reload.out, "frame 15: " + dir + "/modules/julia.loommod reloaded (generation 1)"))
      << reload.out;

  compare_runs(dir, {5, 10, 15, 20, 25, 30}, 15,
               [](int frame, const loom::RgbaImage& a, const Difference& d) {
                 EXPECT_GT(d.over, 0.03)
                     << "frame " << frame
                     << ": the edited fractal does not show: " << describe(d, 24);
                 EXPECT_LT(d.last_column, a.width / 2)
                     << "frame " << frame
                     << ": pixels right of the fractal panel changed (the cloth, the particles): "
                     << describe(d, 24);
               });
}

// The cloth and the particles' graphs edited (damping, gravity) while playing: the modules
// swap with their fields' contents, so the frame of the swap is nearly the frame of a plain
// run. Had the state been reset, the cloth would jump back above the sphere and the
// particles to their starting block.
TEST(HostSample, HotReloadKeepsSimulationState) {
  std::string dir = test_dir();
  std::string cloth = compile_edited(dir, "cloth", "0.9995", "0.9994");
  std::string mpm = compile_edited(dir, "mpm88", "0.0002 * 9.8", "0.0002 * 9.7");
  ASSERT_FALSE(cloth.empty() || mpm.empty());
  const std::string frames = "--frames 55 --every 5 --size 320x180 ";
  Outcome plain = run_sample(dir, "plain", frames, true);
  EXPECT_SAMPLE_RAN(plain);
  Outcome reload =
      run_sample(dir, "reload",
                 frames + "--modules '" + copy_modules(dir) + "' --replace-at 50:cloth='" + cloth +
                     "' --replace-at 50:mpm88='" + mpm + "'",
                 true);
  EXPECT_SAMPLE_RAN(reload);
  for (const char* m : {"cloth", "mpm88"})
    EXPECT_TRUE(contains(reload.out,
                         "frame 50: " + dir + "/modules/" + m + ".loommod reloaded (generation 1)"))
        << reload.out;

  compare_runs(dir, {45, 50, 55}, 50, [](int frame, const loom::RgbaImage&, const Difference& d) {
    EXPECT_LT(d.mean, 0.5) << "frame " << frame
                           << ": the simulations did not carry on: " << describe(d, 24);
    EXPECT_LT(d.over, 0.01) << "frame " << frame
                            << ": the simulations did not carry on: " << describe(d, 24);
  });
}

// A corrupt module file while playing: the error is printed, the old module keeps running
// (the frames are those of a plain run), and a good file written later swaps in.
TEST(HostSample, CorruptModuleKeepsPlaying) {
  std::string dir = test_dir();
  std::string edited =
      compile_edited(dir, "julia", "0.35 + 0.65 * (n / 200.0)", "0.9 - 0.6 * (n / 200.0)");
  ASSERT_FALSE(edited.empty());
  // The module cut short, as a build tool interrupted halfway leaves it.
  std::string corrupt = dir + "/corrupt.loommod";
  {
    std::ifstream whole(std::string(LOOM_HOST_SAMPLE_MODULE_DIR) + "/julia.loommod",
                        std::ios::binary);
    std::vector<char> head(200);
    whole.read(head.data(), static_cast<std::streamsize>(head.size()));
    std::ofstream(corrupt, std::ios::binary).write(head.data(), whole.gcount());
  }
  const std::string frames = "--frames 30 --every 5 --size 320x180 ";
  Outcome plain = run_sample(dir, "plain", frames, true);
  EXPECT_SAMPLE_RAN(plain);
  Outcome reload =
      run_sample(dir, "reload",
                 frames + "--modules '" + copy_modules(dir) + "' --replace-at 10:julia='" +
                     corrupt + "' --replace-at 20:julia='" + edited + "'",
                 true);
  EXPECT_SAMPLE_RAN(reload);
  EXPECT_TRUE(
      contains(reload.out, "frame 10: hot reload of " + dir + "/modules/julia.loommod failed"))
      << reload.out;
  EXPECT_TRUE(
      contains(reload.out, "frame 20: " + dir + "/modules/julia.loommod reloaded (generation 1)"))
      << reload.out;

  // The corrupt file at frame 10 changes nothing; the good one at 20 swaps in.
  compare_runs(dir, {5, 10, 15, 20, 25, 30}, 20,
               [](int frame, const loom::RgbaImage&, const Difference& d) {
                 EXPECT_GT(d.over, 0.03)
                     << "frame " << frame << ": the good file did not swap in: " << describe(d, 24);
               });
}

// Mistakes on the command line: a clear message and exit status 2, before any Vulkan.
TEST(HostSample, RejectsBadCommandLines) {
  for (const char* args :
       {"--replace-at 3:julia=x.loommod", "--size 0x360", "--frames -1", "--png out.png",
        "--every 0", "--replace-at julia=x", "--no-such-option"}) {
    Outcome r = run_command(std::string("'") + LOOM_HOST_SAMPLE + "' --headless " + args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "loom-host-sample: ")) << args << "\n" << r.out;
  }
  Outcome help = run_command(std::string("'") + LOOM_HOST_SAMPLE + "' --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_TRUE(contains(help.out, "--replace-at")) << help.out;
}
