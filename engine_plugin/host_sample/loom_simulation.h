// The engine's Loom glue, through loom.h alone: a runtime on the engine's own Vulkan device
// (loom_runtime_import_vulkan), the scene's three modules, their launches recorded into the
// engine's frame command buffer, hot reload of module files, and the device handles of what
// the renderer draws (exported, never copied to the host).
#pragma once

#include <loom/loom.h>

#include <string>
#include <vector>

#include "scene_renderer.h"

namespace host_sample {

class VulkanContext;

// Throws std::runtime_error with Loom's last error message unless `result` is LOOM_SUCCESS.
void check_loom(LoomResult result, const std::string& what);

class LoomSimulation {
 public:
  // Loads cloth.loommod, mpm88.loommod and julia.loommod from `module_dir`.
  LoomSimulation(const VulkanContext& context, const std::string& module_dir,
                 uint32_t frames_in_flight);
  ~LoomSimulation();
  LoomSimulation(const LoomSimulation&) = delete;
  LoomSimulation& operator=(const LoomSimulation&) = delete;

  // At the start of every frame, after waiting for its fence.
  void begin_frame();
  // Reloads the modules whose files changed; a module that fails keeps running as it was
  // and the error is printed. Returns how many modules were swapped.
  int reload_changed(uint64_t frame);
  // Records frame `frame` (from 1) of the simulation into the engine's command buffer, outside
  // a render pass: the modules' `init` pipelines on the first frame, their `step` pipelines,
  // the fractal repainted for this frame's time, and the barrier for the graphics that follow.
  void record(VkCommandBuffer commands, uint64_t frame);

  // The file a module was loaded from (hot reload watches it).
  std::string module_path(const std::string& name) const;
  const SimulationViews& views() const { return views_; }
  std::string device_name() const;

 private:
  struct Module {
    std::string name;
    std::string path;
    LoomModule module = nullptr;
    LoomPipeline init = nullptr;  // may be absent
    LoomPipeline step = nullptr;  // may be absent (julia is painted by its kernel)
  };
  Module& load(const std::string& name);
  void export_views();
  void retire_view(VkImageView view);

  const VulkanContext& context_;
  std::string module_dir_;
  uint32_t frames_in_flight_;
  LoomRuntime runtime_ = nullptr;
  std::vector<Module> modules_;  // cloth, mpm88, julia
  LoomArray cloth_x_ = nullptr;
  LoomArray particles_x_ = nullptr;
  LoomArray particles_v_ = nullptr;
  LoomTexture fractal_ = nullptr;
  LoomKernel paint_ = nullptr;  // julia's paint(img, cx, cy)
  SimulationViews views_;
  VkImageView own_view_ = VK_NULL_HANDLE;  // when Loom exports an image without a view
  std::vector<std::pair<VkImageView, uint64_t>>
      retired_views_;  // freed frames_in_flight frames later
  uint64_t frames_begun_ = 0;
};

}  // namespace host_sample
