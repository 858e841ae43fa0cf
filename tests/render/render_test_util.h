// Shared by the render tests: a graphics device under the validation layer (every message
// fails the test; no device at all skips it, see support/vulkan_required.h), an offscreen
// loop, and sample data.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "runtime/render/frame_loop.h"
#include "runtime/vulkan/vulkan_device.h"
#include "tests/support/vulkan_required.h"

namespace loom::render_test {

inline vk::DeviceOptions graphics_options() {
  vk::DeviceOptions o;
  o.validation = true;
  o.graphics = true;
  return o;
}

// Fails the current test with every validation message raised since the last call.
inline void expect_no_validation(vk::VulkanDevice& device) {
  std::vector<std::string> messages = device.take_messages();
  std::string text;
  for (const std::string& m : messages) text += "\n  " + m;
  EXPECT_TRUE(messages.empty()) << messages.size() << " Vulkan validation message(s):" << text;
}

class RenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LOOM_REQUIRE_VULKAN_OR_SKIP();
    device_ = std::make_unique<vk::VulkanDevice>(graphics_options());
  }
  void TearDown() override {
    loop_.reset();
    if (device_) expect_no_validation(*device_);
  }
  render::FrameLoop& offscreen(uint32_t width, uint32_t height,
                               render::FrameLoopOptions options = {}) {
    loop_ = render::FrameLoop::offscreen(*device_, width, height, options);
    return *loop_;
  }
  std::unique_ptr<vk::VulkanDevice> device_;
  std::unique_ptr<render::FrameLoop> loop_;
};

inline std::string source_path(const std::string& rel) {
  return std::string(LOOM_SOURCE_DIR) + "/" + rel;
}

// A spiral of `n` 2-d points (x, y interleaved) in [-1, 1]^2 and a scalar per point.
inline void spiral(size_t n, std::vector<float>* xy, std::vector<float>* scalar) {
  xy->resize(n * 2);
  scalar->resize(n);
  for (size_t i = 0; i < n; ++i) {
    float t = static_cast<float>(i) / static_cast<float>(n - 1);
    float a = t * 6.0f * 3.14159265f, r = 0.1f + 0.9f * t;
    (*xy)[i * 2] = r * std::cos(a);
    (*xy)[i * 2 + 1] = r * std::sin(a);
    (*scalar)[i] = t;
  }
}

}  // namespace loom::render_test
