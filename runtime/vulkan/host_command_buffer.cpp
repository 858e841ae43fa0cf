#include "runtime/vulkan/host_command_buffer.h"

#include <cstring>

#include "runtime/vulkan/host_frames.h"

namespace loom::vk {

void HostCommandBuffer::hazard(const Accesses& accesses) {
  if (!entered_) {
    // After everything earlier on the queue, whoever recorded it, and whatever it wrote.
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                         1, &mb, 0, nullptr, 0, nullptr);
    entered_ = true;
    ++frames.stats_.barriers;
  } else if (hazards_.conflicts(accesses)) {
    record_work_barrier(cb);
    ++frames.stats_.barriers;
    hazards_.clear();
  }
  hazards_.add(accesses);
}

void HostCommandBuffer::execute(const std::vector<VkCommandBuffer>& secondaries) {
  if (secondaries.empty()) return;
  hazard({});  // the entry barrier, once per frame: after everything earlier on the queue
  vkCmdExecuteCommands(cb, static_cast<uint32_t>(secondaries.size()), secondaries.data());
  record_work_barrier(cb);  // what they wrote, before the commands Loom records next
  ++frames.stats_.barriers;
  hazards_.clear();
}

uint8_t* HostCommandBuffer::args_slot(VkDeviceSize bytes, VkDeviceSize alignment, VkBuffer* buffer,
                                      VkDeviceSize* offset) {
  return frames.args_slot(bytes, alignment, buffer, offset);
}

void HostCommandBuffer::update(VkBuffer dst, uint64_t id, const void* data, VkDeviceSize bytes) {
  hazard({{id, kWrite}});
  if (bytes <= 65536 && bytes % 4 == 0) {
    vkCmdUpdateBuffer(cb, dst, 0, bytes, data);
    return;
  }
  VkBuffer src;
  VkDeviceSize at;
  std::memcpy(args_slot(bytes, 16, &src, &at), data, bytes);
  VkBufferCopy region{at, 0, bytes};
  vkCmdCopyBuffer(cb, src, dst, 1, &region);
}

}  // namespace loom::vk
