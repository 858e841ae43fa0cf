// One host command buffer during one frame, as Loom records launches into it: the entry
// barrier before Loom's first command, hazards since the last barrier, args slots and
// argpack writes. Internal to HostFrames and VulkanRuntime.
#pragma once

#include <vulkan/vulkan.h>

#include <vector>

#include <cstdint>

#include "runtime/vulkan/hazard_set.h"

namespace loom::vk {

class HostFrames;

class HostCommandBuffer {
 public:
  HostCommandBuffer(HostFrames& frames, VkCommandBuffer cb) : frames(frames), cb(cb) {}
  // A barrier first on a hazard, or before the first of Loom's commands this frame.
  void hazard(const Accesses& accesses);
  // Host-visible memory the GPU may read until this frame completes.
  uint8_t* args_slot(VkDeviceSize bytes, VkDeviceSize alignment, VkBuffer* buffer,
                     VkDeviceSize* offset);
  // Secondary command buffers (the stream's, where the engine owns the queue), after the
  // entry barrier, with a barrier after them before Loom's next commands here.
  void execute(const std::vector<VkCommandBuffer>& secondaries);
  // An argpack's new contents, written inside the command buffer.
  void update(VkBuffer dst, uint64_t id, const void* data, VkDeviceSize bytes);

  HostFrames& frames;
  const VkCommandBuffer cb;

 private:
  HazardSet hazards_;
  bool entered_ = false;
};

}  // namespace loom::vk
