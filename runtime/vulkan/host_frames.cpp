#include "runtime/vulkan/host_frames.h"

#include <algorithm>
#include <cstring>

#include "runtime/common/error.h"
#include "runtime/vulkan/command_stream.h"
#include "runtime/vulkan/host_command_buffer.h"
#include "runtime/vulkan/memory_allocator.h"
#include "runtime/vulkan/vulkan_runtime.h"

namespace loom::vk {

namespace {

constexpr VkDeviceSize kChunkSize = 64 << 10;

VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }

}  // namespace

uint8_t* HostFrames::args_slot(VkDeviceSize bytes, VkDeviceSize alignment, VkBuffer* buffer,
                               VkDeviceSize* offset) {
  alignment = std::max<VkDeviceSize>(alignment, 16);
  stats_.args_bytes += bytes;
  Chunk* chosen = nullptr;
  for (auto& c : chunks_) {  // one this frame already uses, with room left
    if (c->frame != frame_) continue;
    VkDeviceSize at = align_up(c->used, alignment);
    if (at + bytes > c->buffer.size()) continue;
    c->used = at + bytes;
    *offset = at;
    chosen = c.get();
    break;
  }
  if (!chosen) {  // else one whose frames have completed, else a new one
    for (auto& c : chunks_)
      if (c->frame <= runtime_.frame_completed_ && c->buffer.size() >= bytes) {
        chosen = c.get();
        break;
      }
    if (!chosen) {
      auto c = std::make_unique<Chunk>();
      c->buffer = GpuBuffer(runtime_.device(), *runtime_.allocator_,
                            std::max(kChunkSize, align_up(bytes, 256)),
                            VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                            MemoryUse::Upload, "the arguments of host frames");
      chunks_.push_back(std::move(c));
      stats_.ring_chunks = chunks_.size();
      chosen = chunks_.back().get();
    }
    chosen->frame = frame_;
    chosen->used = bytes;
    *offset = 0;
  }
  *buffer = chosen->buffer.handle();
  return chosen->buffer.mapped() + *offset;
}

HostFrames::HostFrames(VulkanRuntime& runtime, uint32_t frames_in_flight)
    : runtime_(runtime), in_flight_(frames_in_flight) {
  if (frames_in_flight == 0) throw Error("HostFrames: frames_in_flight must be at least 1");
  if (runtime.frames_) throw Error("HostFrames: this runtime has one already (one per runtime)");
  runtime.frames_ = this;
}

HostFrames::~HostFrames() {
  // The host let every frame complete before destroying this (the contract).
  runtime_.frame_completed_ = runtime_.frame_;
  runtime_.frames_ = nullptr;
}

void HostFrames::begin_frame() {
  uint64_t next = frame_ + 1;
  begin_frame(next, next > in_flight_ ? next - in_flight_ : 0);
}

uint64_t HostFrames::completed() const { return runtime_.frame_completed_; }

void HostFrames::begin_frame(uint64_t frame, uint64_t completed) {
  if (frame <= frame_)
    throw Error("begin_frame: frame " + std::to_string(frame) + " does not follow frame " +
                std::to_string(frame_) + " (frame numbers only grow)");
  if (completed >= frame)
    throw Error("begin_frame: frame " + std::to_string(completed) +
                " cannot have completed before frame " + std::to_string(frame) + " begins");
  if (completed < runtime_.frame_completed_)
    throw Error("begin_frame: frames up to " + std::to_string(runtime_.frame_completed_) +
                " were already reported complete, now only up to " + std::to_string(completed));
  frame_ = frame;
  runtime_.frame_ = frame_;
  runtime_.frame_completed_ = completed;
  recording_.clear();
  runtime_.host_frame_begun();
  for (auto it = readbacks_.begin(); it != readbacks_.end();) {
    if (it->second.released && it->second.frame <= runtime_.frame_completed_)
      it = readbacks_.erase(it);
    else
      ++it;
  }
}

void HostFrames::run_stream_in(HostCommandBuffer& host) {
  CommandStream& stream = *runtime_.stream_;
  if (!stream.deferred()) {
    stream.submit();  // on the queue before the host's command buffer
    return;
  }
  std::vector<VkCommandBuffer> parked = stream.take_parked(frame_);
  if (parked.empty()) return;
  host.execute(parked);
  stats_.stream_executions += parked.size();
}

void HostFrames::record_pending(VkCommandBuffer cb) {
  if (!cb) throw Error("record_pending: the command buffer is VK_NULL_HANDLE");
  if (frame_ == 0)
    throw Error(
        "recording into a host command buffer before the first begin_frame(); call it at the "
        "start of every frame");
  run_stream_in(command_buffer(cb));
}

uint64_t HostFrames::read_into(VkCommandBuffer cb, const void* key) {
  if (!cb) throw Error("read_into: the command buffer is VK_NULL_HANDLE");
  if (frame_ == 0)
    throw Error("read_into before the first begin_frame(); call it at the start of every frame");
  size_t bytes = runtime_.readable_bytes(key);
  Readback rb;
  rb.staging = GpuBuffer(runtime_.device(), *runtime_.allocator_, std::max<size_t>(bytes, 4),
                         VK_BUFFER_USAGE_TRANSFER_DST_BIT, MemoryUse::Readback,
                         "a read-back into a host command buffer");
  rb.frame = frame_;
  rb.bytes = bytes;
  runtime_.record_read(command_buffer(cb), key, rb.staging.handle());
  // Available to the host once the frame's fence signals.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0,
                       nullptr, 0, nullptr);
  ++stats_.barriers;
  ++stats_.readbacks;
  uint64_t id = next_readback_++;
  readbacks_.emplace(id, std::move(rb));
  return id;
}

const HostFrames::Readback& HostFrames::readback(uint64_t id) const {
  auto it = readbacks_.find(id);
  if (it == readbacks_.end() || it->second.released)
    throw Error("readback " + std::to_string(id) + " does not exist (released?)");
  return it->second;
}

bool HostFrames::readback_ready(uint64_t id) const {
  return readback(id).frame <= runtime_.frame_completed_;
}

size_t HostFrames::readback_bytes(uint64_t id) const { return readback(id).bytes; }

const uint8_t* HostFrames::readback_data(uint64_t id) const {
  const Readback& rb = readback(id);
  if (rb.frame > runtime_.frame_completed_)
    throw Error("readback " + std::to_string(id) + " of frame " + std::to_string(rb.frame) +
                " is not there yet: frames up to " + std::to_string(runtime_.frame_completed_) +
                " are known complete");
  return rb.staging.mapped();
}

void HostFrames::release_readback(uint64_t id) {
  auto it = readbacks_.find(id);
  if (it == readbacks_.end()) return;
  if (it->second.frame <= runtime_.frame_completed_)
    readbacks_.erase(it);
  else
    it->second.released = true;  // the GPU may still write it: freed once its frame completed
}

HostCommandBuffer& HostFrames::command_buffer(VkCommandBuffer cb) {
  auto& slot = recording_[cb];
  if (!slot) slot = std::make_unique<HostCommandBuffer>(*this, cb);
  return *slot;
}

void HostFrames::launch_into(VkCommandBuffer cb, VulkanKernel& kernel, LaunchContext& ctx) {
  if (!cb) throw Error("launch_into: the command buffer is VK_NULL_HANDLE");
  if (frame_ == 0)
    throw Error("launch_into before the first begin_frame(); call it at the start of every frame");
  runtime_.record(kernel, ctx, &command_buffer(cb));
  ++stats_.launches;
}

void HostFrames::barrier_for_graphics(VkCommandBuffer cb) {
  barrier_for(cb,
              VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT | VK_PIPELINE_STAGE_VERTEX_INPUT_BIT |
                  VK_PIPELINE_STAGE_VERTEX_SHADER_BIT | VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT |
                  VK_PIPELINE_STAGE_TRANSFER_BIT,
              VK_ACCESS_VERTEX_ATTRIBUTE_READ_BIT | VK_ACCESS_INDEX_READ_BIT |
                  VK_ACCESS_INDIRECT_COMMAND_READ_BIT | VK_ACCESS_UNIFORM_READ_BIT |
                  VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT);
}

void HostFrames::barrier_for(VkCommandBuffer cb, VkPipelineStageFlags dst_stages,
                             VkAccessFlags dst_access) {
  if (!cb) throw Error("barrier_for: the command buffer is VK_NULL_HANDLE");
  if (!dst_stages) throw Error("barrier_for: no destination stage");
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       dst_stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
  ++stats_.barriers;
}

}  // namespace loom::vk
