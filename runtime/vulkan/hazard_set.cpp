#include "runtime/vulkan/hazard_set.h"

namespace loom::vk {

bool HazardSet::conflicts(const Accesses& accesses) const {
  for (const auto& [id, bits] : accesses) {
    if (written_.count(id)) return true;
    if ((bits & kWrite) && read_.count(id)) return true;
  }
  return false;
}

void HazardSet::add(const Accesses& accesses) {
  for (const auto& [id, bits] : accesses) {
    if (bits & kWrite) written_.insert(id);
    if (bits & kRead) read_.insert(id);
  }
}

void HazardSet::clear() {
  written_.clear();
  read_.clear();
}

void record_work_barrier(VkCommandBuffer cb) {
  constexpr VkPipelineStageFlags kWork =
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                     VK_ACCESS_UNIFORM_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                     VK_ACCESS_TRANSFER_WRITE_BIT;
  vkCmdPipelineBarrier(cb, kWork, kWork, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

}  // namespace loom::vk
