// Screenshots of the editor in a real window (GLFW under the private Xvfb that
// tests/render/with_xvfb.sh starts; Vulkan on lavapipe in CI, validation on), compared with
// tests/editor_app/reference/*.png with a tolerance: the editor with a sample graph open, and
// the viewport after N frames of the fractal and of the MPM sample. Times are hidden so the
// pictures do not depend on the machine's speed. LOOM_UPDATE_REFERENCE=1 rewrites them; the
// actual images land in build/tests/render/render-out/.
#include <gtest/gtest.h>

#include <filesystem>

#include <unistd.h>

#include "editor/app/editor_host.h"
#include "tests/render/reference_image.h"
#include "tests/support/vulkan_required.h"

namespace loom::editor {
namespace {

constexpr const char* kReferences = "tests/editor_app/reference";

class EditorScreenshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Relative paths, as a user types them: the same text on every machine.
    ASSERT_EQ(::chdir(LOOM_SOURCE_DIR), 0);
    cache_ = std::filesystem::temp_directory_path() /
             ("loom-editor-shots-" + std::to_string(::getpid()));
    ::setenv("LOOM_CACHE_DIR", cache_.c_str(), 1);
    LOOM_REQUIRE_VULKAN_OR_SKIP();  // the host draws with Vulkan
    HostOptions o;
    o.width = 1280;
    o.height = 720;
    o.validation = true;
    o.backend = Backend::Cpu;
    o.hide_timings = true;
    o.offline_cache = false;
    host_ = std::make_unique<EditorHost>(o);
    ASSERT_TRUE(host_->windowed());
  }
  void TearDown() override {
    std::vector<std::string> messages =
        host_ ? host_->validation_messages() : std::vector<std::string>{};
    std::string text;
    for (const std::string& m : messages) text += "\n  " + m;
    EXPECT_TRUE(messages.empty()) << messages.size() << " Vulkan validation message(s):" << text;
    host_.reset();
    std::filesystem::remove_all(cache_);
  }
  // Runs `frames` frames and captures the last one.
  RgbaImage run(int frames) {
    for (int i = 1; i < frames; ++i) host_->frame();
    host_->frame(true);
    return host_->take_capture();
  }

  std::filesystem::path cache_;
  std::unique_ptr<EditorHost> host_;
};

TEST_F(EditorScreenshotTest, TheEditorWithTheHeatSampleOpen) {
  ASSERT_TRUE(host_->app().open("assets/graphs/heat.loom.json"));
  RgbaImage shot = run(12);
  EXPECT_EQ(shot.width, 1280);
  EXPECT_EQ(shot.height, 720);
  EXPECT_TRUE(render_test::matches_reference(shot, "editor_heat", {}, kReferences));
}

TEST_F(EditorScreenshotTest, TheViewportAfterSixtyFramesOfTheFractal) {
  ASSERT_TRUE(host_->app().open("assets/graphs/julia.loom.json"));
  host_->app().session().play();
  RgbaImage viewport = host_->viewport_of(run(60));
  EXPECT_EQ(host_->app().session().steps(), 60);
  EXPECT_TRUE(render_test::matches_reference(viewport, "viewport_julia", {}, kReferences));
}

TEST_F(EditorScreenshotTest, TheViewportAfterSixtyFramesOfTheMpmSample) {
  ASSERT_TRUE(host_->app().open("assets/graphs/mpm88.loom.json"));
  host_->app().session().play();
  RgbaImage viewport = host_->viewport_of(run(60));
  EXPECT_EQ(host_->app().session().steps(), 60);
  EXPECT_TRUE(render_test::matches_reference(viewport, "viewport_mpm88", {}, kReferences));
}

}  // namespace
}  // namespace loom::editor
