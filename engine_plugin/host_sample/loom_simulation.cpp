#include "loom_simulation.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "gpu_resources.h"
#include "vulkan_context.h"

namespace host_sample {

void check_loom(LoomResult result, const std::string& what) {
  if (result == LOOM_SUCCESS) return;
  throw std::runtime_error(what + ": " + loom_result_name(result) + ": " +
                           loom_last_error_message());
}

namespace {

// The simulated time of frame `frame`: a fixed step, so every run draws the same frames.
constexpr double kFrameSeconds = 1.0 / 60.0;

void expect_array(LoomArray array, const std::string& what, uint32_t components, uint32_t ndim,
                  LoomArrayInfo* info) {
  check_loom(loom_array_get_info(array, info), what);
  if (info->dtype != LOOM_DTYPE_F32 || info->components != components || info->ndim != ndim ||
      info->soa)
    throw std::runtime_error(what + ": the renderer draws an f32x" + std::to_string(components) +
                             " array of " + std::to_string(ndim) +
                             " dimension(s), interleaved (AoS)");
}

}  // namespace

LoomSimulation::LoomSimulation(const VulkanContext& context, const std::string& module_dir,
                               uint32_t frames_in_flight)
    : context_(context), module_dir_(module_dir), frames_in_flight_(frames_in_flight) {
  uint32_t version = loom_version();
  if (LOOM_VERSION_MAJOR(version) != LOOM_VERSION_MAJOR(LOOM_HEADER_VERSION) ||
      LOOM_VERSION_MINOR(version) < LOOM_VERSION_MINOR(LOOM_HEADER_VERSION))
    throw std::runtime_error(std::string("libloom is ") + loom_version_string() +
                             ", this sample was built for ABI " +
                             std::to_string(LOOM_VERSION_MAJOR(LOOM_HEADER_VERSION)) + "." +
                             std::to_string(LOOM_VERSION_MINOR(LOOM_HEADER_VERSION)));

  // Loom runs on the engine's device and queue, with the features the engine enabled.
  LoomVulkanDeviceImport device{};
  device.struct_size = sizeof device;
  device.instance = context.instance();
  device.physical_device = context.physical_device();
  device.device = context.device();
  device.queue_family_index = context.queue_family();
  device.queue = context.queue();
  device.api_version = context.api_version();
  device.create_info = &context.device_create_info();
  device.frames_in_flight = frames_in_flight;
  check_loom(loom_runtime_import_vulkan(&device, &runtime_),
             "importing the engine's Vulkan device into Loom");
  modules_.reserve(3);  // load() hands out references into it
  try {
    Module& cloth = load("cloth");
    check_loom(loom_module_get_array(cloth.module, "x", &cloth_x_), cloth.path + ": field x");
    Module& mpm = load("mpm88");
    check_loom(loom_module_get_array(mpm.module, "x", &particles_x_), mpm.path + ": field x");
    check_loom(loom_module_get_array(mpm.module, "v", &particles_v_), mpm.path + ": field v");
    Module& julia = load("julia");
    check_loom(loom_module_get_texture(julia.module, "image", &fractal_),
               julia.path + ": texture image");
    check_loom(loom_module_get_kernel(julia.module, "paint", 0, nullptr, &paint_),
               julia.path + ": kernel paint");
    julia.step = nullptr;  // painted by its kernel with this frame's constant instead
    export_views();
  } catch (...) {
    for (Module& m : modules_) loom_module_destroy(m.module);
    loom_runtime_destroy(runtime_);
    throw;
  }
}

LoomSimulation::~LoomSimulation() {
  // The engine waited for its frames; Loom frees what they used.
  for (Module& m : modules_) loom_module_destroy(m.module);
  if (LoomResult r = loom_runtime_destroy(runtime_); r != LOOM_SUCCESS)
    std::fprintf(stderr, "loom_runtime_destroy: %s\n", loom_last_error_message());
  for (auto& [view, frame] : retired_views_) vkDestroyImageView(context_.device(), view, nullptr);
  if (own_view_) vkDestroyImageView(context_.device(), own_view_, nullptr);
}

std::string LoomSimulation::module_path(const std::string& name) const {
  return module_dir_ + "/" + name + ".loommod";
}

std::string LoomSimulation::device_name() const {
  LoomRuntimeInfo info{sizeof(LoomRuntimeInfo)};
  check_loom(loom_runtime_get_info(runtime_, &info), "loom_runtime_get_info");
  return info.device_name;
}

LoomSimulation::Module& LoomSimulation::load(const std::string& name) {
  Module m;
  m.name = name;
  m.path = module_path(name);
  check_loom(loom_module_load(runtime_, m.path.c_str(), &m.module), "loading " + m.path);
  modules_.push_back(m);  // destroyed with the others from here on
  Module& added = modules_.back();
  for (auto [pipeline, slot] : {std::pair{"init", &added.init}, std::pair{"step", &added.step}}) {
    LoomResult r = loom_module_get_pipeline(added.module, pipeline, slot);
    if (r == LOOM_ERROR_NOT_FOUND) continue;
    check_loom(r, m.path + ": pipeline " + pipeline);
  }
  return added;
}

void LoomSimulation::export_views() {
  SimulationViews v;
  LoomArrayInfo info{sizeof(LoomArrayInfo)};
  LoomVulkanBuffer buffer{};
  expect_array(cloth_x_, module_path("cloth") + ": field x", 3, 2, &info);
  check_loom(loom_array_export_vulkan(cloth_x_, &buffer), "exporting cloth's field x");
  v.cloth = buffer.buffer;
  v.cloth_offset = buffer.offset;
  v.cloth_size = info.bytes;
  v.cloth_rows = static_cast<uint32_t>(info.shape[0]);
  v.cloth_columns = static_cast<uint32_t>(info.shape[1]);

  expect_array(particles_x_, module_path("mpm88") + ": field x", 2, 1, &info);
  check_loom(loom_array_export_vulkan(particles_x_, &buffer), "exporting mpm88's field x");
  v.particles = buffer.buffer;
  v.particles_offset = buffer.offset;
  v.particle_count = static_cast<uint32_t>(info.shape[0]);
  LoomArrayInfo velocity_info{sizeof(LoomArrayInfo)};
  expect_array(particles_v_, module_path("mpm88") + ": field v", 2, 1, &velocity_info);
  if (velocity_info.shape[0] != info.shape[0])
    throw std::runtime_error(module_path("mpm88") + ": fields x and v differ in length");
  check_loom(loom_array_export_vulkan(particles_v_, &buffer), "exporting mpm88's field v");
  v.velocities = buffer.buffer;
  v.velocities_offset = buffer.offset;

  LoomVulkanImage image{};
  check_loom(loom_texture_export_vulkan(fractal_, &image), "exporting julia's texture image");
  if (image.ndim != 2 || image.layout != VK_IMAGE_LAYOUT_GENERAL)
    throw std::runtime_error(module_path("julia") +
                             ": texture image: the renderer samples a 2-d image in GENERAL");
  if (own_view_) retire_view(own_view_);
  own_view_ = VK_NULL_HANDLE;
  if (image.view == VK_NULL_HANDLE)
    own_view_ = create_image_view(context_.device(), image.image, image.format);
  v.fractal = image.view ? image.view : own_view_;

  v.generation = views_.generation + 1;
  views_ = v;
}

void LoomSimulation::retire_view(VkImageView view) {
  retired_views_.emplace_back(view, frames_begun_);
}

void LoomSimulation::begin_frame() {
  check_loom(loom_runtime_begin_frame(runtime_), "loom_runtime_begin_frame");
  ++frames_begun_;
  // A view retired at frame n was last used by frames begun before n: done once n + F begins.
  for (size_t i = 0; i < retired_views_.size();) {
    if (retired_views_[i].second + frames_in_flight_ < frames_begun_) {
      vkDestroyImageView(context_.device(), retired_views_[i].first, nullptr);
      retired_views_.erase(retired_views_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

int LoomSimulation::reload_changed(uint64_t frame) {
  int swapped = 0;
  for (Module& m : modules_) {
    LoomReloadStatus status = LOOM_RELOAD_UNCHANGED;
    if (loom_module_reload_if_changed(m.module, &status) != LOOM_SUCCESS) {
      std::fprintf(
          stderr, "frame %llu: hot reload of %s failed; the loaded module keeps running: %s\n",
          static_cast<unsigned long long>(frame), m.path.c_str(), loom_last_error_message());
      continue;
    }
    if (status != LOOM_RELOAD_SWAPPED) continue;
    LoomModuleInfo info{sizeof(LoomModuleInfo)};
    check_loom(loom_module_get_info(m.module, &info), m.path);
    std::printf("frame %llu: %s reloaded (generation %llu)\n",
                static_cast<unsigned long long>(frame), m.path.c_str(),
                static_cast<unsigned long long>(info.generation));
    ++swapped;
  }
  if (swapped) export_views();  // the swapped modules' buffers and images are new
  return swapped;
}

void LoomSimulation::record(VkCommandBuffer commands, uint64_t frame) {
  if (frame == 1)
    for (Module& m : modules_)
      if (m.init)
        check_loom(loom_pipeline_launch_into(m.init, commands), m.path + ": pipeline init");
  for (Module& m : modules_)
    if (m.step) check_loom(loom_pipeline_launch_into(m.step, commands), m.path + ": pipeline step");

  // The Julia set of c = 0.7885 e^(i a), a turning slowly with simulated time.
  double angle = 2.6 + 0.35 * static_cast<double>(frame) * kFrameSeconds;
  LoomArgument args[3] = {loom_arg_texture(fractal_),
                          loom_arg_f32(static_cast<float>(0.7885 * std::cos(angle))),
                          loom_arg_f32(static_cast<float>(0.7885 * std::sin(angle)))};
  check_loom(loom_launch_into(paint_, commands, 3, args), module_path("julia") + ": kernel paint");

  check_loom(loom_runtime_barrier_for_graphics(runtime_, commands),
             "loom_runtime_barrier_for_graphics");
}

}  // namespace host_sample
