#include "runtime/vulkan/command_stream.h"

#include <algorithm>
#include <cstring>

#include "runtime/common/error.h"
#include "runtime/vulkan/vk_check.h"
#include "runtime/vulkan/vulkan_device.h"

namespace loom::vk {

namespace {

// Staging chunks grow like memory blocks: the first of each direction is kFirstChunk, each new
// one twice the largest there is, up to kMaxChunk (a transfer larger than that gets a chunk of
// its own, given back once idle). Small runtimes stage through a few hundred kilobytes.
constexpr VkDeviceSize kFirstChunk = 256ull << 10;
constexpr VkDeviceSize kMaxChunk = 16ull << 20;
constexpr VkPipelineStageFlags kWorkStages =
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;

VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }

// Everything written so far becomes visible to the host once the submission completes.
void record_host_read_barrier(VkCommandBuffer cb) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, kWorkStages, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                       nullptr);
}

}  // namespace

CommandStream::CommandStream(VulkanDevice& device, MemoryAllocator& allocator, bool deferred)
    : device_(device), allocator_(allocator), deferred_(deferred) {
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = device.queue_family();
  check(vkCreateCommandPool(device.device(), &pci, device.host_allocator(), &pool_),
        "creating a command pool");
  // Deferred: the host's frames say what completed. Otherwise fences, one per submission.
  if (deferred || !device.timeline_semaphores()) return;
  VkSemaphoreTypeCreateInfo tci{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  tci.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  sci.pNext = &tci;
  VkResult r = vkCreateSemaphore(device.device(), &sci, device.host_allocator(), &timeline_);
  if (r != VK_SUCCESS) {
    vkDestroyCommandPool(device.device(), pool_, device.host_allocator());
    check(r, "creating a timeline semaphore");
  }
}

CommandStream::~CommandStream() {
  try {
    // Deferred: the host let its frames complete before destroying the runtime (the
    // contract); recordings it never executed are simply freed.
    if (last_submitted_ && !deferred_) wait(last_submitted_);
  } catch (...) {  // a lost device: nothing left to wait for
  }
  chunks_.clear();
  for (const Fenced& f : fenced_)
    vkDestroyFence(device_.device(), f.fence, device_.host_allocator());
  for (VkFence f : spare_fences_) vkDestroyFence(device_.device(), f, device_.host_allocator());
  if (timeline_) vkDestroySemaphore(device_.device(), timeline_, device_.host_allocator());
  if (pool_) vkDestroyCommandPool(device_.device(), pool_, device_.host_allocator());
}

uint64_t CommandStream::completed() {
  if (deferred_) {
    while (!executed_.empty() && executed_.front().frame <= frames_completed_) {
      deferred_completed_ = executed_.front().value;
      executed_.pop_front();
    }
    return deferred_completed_;
  }
  if (timeline_) {
    uint64_t v = 0;
    check(vkGetSemaphoreCounterValue(device_.device(), timeline_, &v),
          "reading the timeline semaphore");
    return v;
  }
  while (!fenced_.empty()) {
    VkResult r = vkGetFenceStatus(device_.device(), fenced_.front().fence);
    if (r == VK_NOT_READY) break;
    check(r, "reading a submission's fence");
    check(vkResetFences(device_.device(), 1, &fenced_.front().fence), "resetting a fence");
    fence_completed_ = fenced_.front().value;
    spare_fences_.push_back(fenced_.front().fence);
    fenced_.pop_front();
  }
  return fence_completed_;
}

VkFence CommandStream::fence_for_submission() {
  if (!spare_fences_.empty()) {
    VkFence f = spare_fences_.back();
    spare_fences_.pop_back();
    return f;
  }
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence f = VK_NULL_HANDLE;
  check(vkCreateFence(device_.device(), &fci, device_.host_allocator(), &f), "creating a fence");
  return f;
}

bool CommandStream::wait_for_value(uint64_t value, uint64_t timeout_ns) {
  if (deferred_) {
    if (completed() >= value) return true;
    throw Error(
        "Loom would have to wait for the engine's queue: the runtime runs in the engine-owned "
        "queue mode, where Loom never submits or waits, and the work in question has not run "
        "in a frame the engine completed (record reads with loom_array_read_into or "
        "loom_texture_read_into instead)");
  }
  VkResult r;
  if (timeline_) {
    VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wi.semaphoreCount = 1;
    wi.pSemaphores = &timeline_;
    wi.pValues = &value;
    r = vkWaitSemaphores(device_.device(), &wi, timeout_ns);
  } else {
    // Values are consecutive: the fence of `value` is at a fixed distance from the front.
    if (fenced_.empty() || value < fenced_.front().value) return true;
    const Fenced& f = fenced_.at(static_cast<size_t>(value - fenced_.front().value));
    r = vkWaitForFences(device_.device(), 1, &f.fence, VK_TRUE, timeout_ns);
  }
  if (r == VK_TIMEOUT) return false;
  check(r, "waiting for the device");
  return true;
}

VkCommandBuffer CommandStream::recording() {
  if (current_ >= 0) return cmds_[static_cast<size_t>(current_)].cb;
  uint64_t done = completed();
  for (size_t i = 0; i < cmds_.size() && current_ < 0; ++i)
    if (cmds_[i].busy_until <= done) current_ = static_cast<int>(i);
  if (current_ < 0) {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool_;
    ai.level = deferred_ ? VK_COMMAND_BUFFER_LEVEL_SECONDARY : VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    Cmd c;
    check(vkAllocateCommandBuffers(device_.device(), &ai, &c.cb), "allocating a command buffer");
    cmds_.push_back(c);
    current_ = static_cast<int>(cmds_.size() - 1);
  }
  Cmd& c = cmds_[static_cast<size_t>(current_)];
  c.busy_until = kRecording;
  check(vkResetCommandBuffer(c.cb, 0), "resetting a command buffer");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VkCommandBufferInheritanceInfo inherit{VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
  if (deferred_) bi.pInheritanceInfo = &inherit;  // executed outside any render pass
  check(vkBeginCommandBuffer(c.cb, &bi), "beginning a command buffer");
  return c.cb;
}

void CommandStream::hazard(const Accesses& accesses) {
  if (hazards_.conflicts(accesses)) {
    record_work_barrier(recording());
    ++stats_.barriers;
    hazards_.clear();
  }
  hazards_.add(accesses);
}

void CommandStream::prepare_image(GpuImage& image) {
  if (image.in_general_layout()) return;
  VkImageMemoryBarrier ib{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
  ib.srcAccessMask = 0;
  ib.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                     VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  ib.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  ib.newLayout = VK_IMAGE_LAYOUT_GENERAL;
  ib.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  ib.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  ib.image = image.image();
  ib.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  vkCmdPipelineBarrier(recording(), VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, kWorkStages, 0, 0, nullptr,
                       0, nullptr, 1, &ib);
  ++stats_.barriers;
  image.set_general_layout();
}

CommandStream::Chunk& CommandStream::staging(VkDeviceSize bytes, VkDeviceSize alignment,
                                             bool readback, VkDeviceSize* offset) {
  // A chunk the current recording already uses, with room left.
  for (auto& c : chunks_) {
    if (c->readback != readback || c->busy_until != kRecording) continue;
    VkDeviceSize at = align_up(c->used, alignment);
    if (at + bytes <= c->buffer.size()) {
      c->used = at + bytes;
      *offset = at;
      return *c;
    }
  }
  // A finished chunk big enough, else a new one.
  uint64_t done = completed();
  Chunk* chosen = nullptr;
  for (auto& c : chunks_)
    if (c->readback == readback && c->busy_until != kRecording && c->busy_until <= done &&
        c->buffer.size() >= bytes) {
      chosen = c.get();
      break;
    }
  if (!chosen) {
    VkDeviceSize size = kFirstChunk;
    for (auto& c : chunks_)
      if (c->readback == readback) size = std::max(size, std::min(kMaxChunk, c->buffer.size() * 2));
    auto c = std::make_unique<Chunk>();
    c->readback = readback;
    c->buffer = GpuBuffer(device_, allocator_, std::max(size, align_up(bytes, 1 << 16)),
                          VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                              VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT,
                          readback ? MemoryUse::Readback : MemoryUse::Upload, "staging memory");
    chunks_.push_back(std::move(c));
    chosen = chunks_.back().get();
  }
  chosen->busy_until = kRecording;
  chosen->used = bytes;
  *offset = 0;
  return *chosen;
}

uint8_t* CommandStream::scratch(VkDeviceSize bytes, VkDeviceSize alignment, VkBuffer* buffer,
                                VkDeviceSize* offset) {
  Chunk& c = staging(bytes, std::max<VkDeviceSize>(alignment, 16), false, offset);
  *buffer = c.buffer.handle();
  recording();
  return c.buffer.mapped() + *offset;
}

void CommandStream::upload(VkBuffer dst, uint64_t id, VkDeviceSize offset, const void* data,
                           VkDeviceSize bytes) {
  if (bytes == 0) return;
  VkDeviceSize at;
  Chunk& c = staging(bytes, 16, false, &at);
  std::memcpy(c.buffer.mapped() + at, data, bytes);
  hazard({{id, kWrite}});
  VkBufferCopy region{at, offset, bytes};
  vkCmdCopyBuffer(recording(), c.buffer.handle(), dst, 1, &region);
  stats_.bytes_uploaded += bytes;
  ++pending_;
}

void CommandStream::upload_image(GpuImage& dst, const void* data) {
  VkDeviceSize bytes = dst.bytes(), at;
  Chunk& c = staging(bytes, 16, false, &at);
  std::memcpy(c.buffer.mapped() + at, data, bytes);
  prepare_image(dst);
  hazard({{dst.id(), kWrite}});
  VkBufferImageCopy region{};
  region.bufferOffset = at;
  region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  region.imageExtent = dst.extent();
  vkCmdCopyBufferToImage(recording(), c.buffer.handle(), dst.image(), VK_IMAGE_LAYOUT_GENERAL, 1,
                         &region);
  stats_.bytes_uploaded += bytes;
  ++pending_;
}

void CommandStream::update(const GpuBuffer& dst, VkDeviceSize offset, const void* data,
                           VkDeviceSize bytes) {
  if (bytes == 0) return;
  if (bytes > 65536 || bytes % 4 || offset % 4) {
    upload(dst, offset, data, bytes);
    return;
  }
  hazard({{dst.id(), kWrite}});
  vkCmdUpdateBuffer(recording(), dst.handle(), offset, bytes, data);
  stats_.bytes_updated += bytes;
  ++pending_;
}

void CommandStream::fill(const GpuBuffer& dst, uint32_t value) {
  hazard({{dst.id(), kWrite}});
  vkCmdFillBuffer(recording(), dst.handle(), 0, VK_WHOLE_SIZE, value);
  ++pending_;
}

void CommandStream::download(VkBuffer src, uint64_t id, VkDeviceSize offset, void* host,
                             VkDeviceSize bytes) {
  if (bytes == 0) return;
  VkDeviceSize at;
  Chunk& c = staging(bytes, 16, true, &at);
  hazard({{id, kRead}, {c.buffer.id(), kWrite}});
  VkBufferCopy region{offset, at, bytes};
  vkCmdCopyBuffer(recording(), src, c.buffer.handle(), 1, &region);
  downloads_.push_back({c.buffer.mapped() + at, host, bytes, kRecording});
  stats_.bytes_downloaded += bytes;
  ++pending_;
}

void CommandStream::download_image(GpuImage& src, void* host) {
  VkDeviceSize bytes = src.bytes(), at;
  Chunk& c = staging(bytes, 16, true, &at);
  prepare_image(src);
  hazard({{src.id(), kRead}, {c.buffer.id(), kWrite}});
  VkBufferImageCopy region{};
  region.bufferOffset = at;
  region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  region.imageExtent = src.extent();
  vkCmdCopyImageToBuffer(recording(), src.image(), VK_IMAGE_LAYOUT_GENERAL, c.buffer.handle(), 1,
                         &region);
  downloads_.push_back({c.buffer.mapped() + at, host, bytes, kRecording});
  stats_.bytes_downloaded += bytes;
  ++pending_;
}

uint64_t CommandStream::submit(const std::vector<SemaphoreWait>& waits,
                               const std::vector<SemaphoreSignal>& signals) {
  if (current_ < 0 && waits.empty() && signals.empty()) return last_submitted_;
  if (deferred_) return park(waits, signals);
  for (const SemaphoreWait& w : waits)
    if (!w.semaphore || !w.stages)
      throw Error("a submission waits for a VK_NULL_HANDLE semaphore or at no pipeline stage");
  for (const SemaphoreSignal& s : signals)
    if (!s.semaphore) throw Error("a submission signals a VK_NULL_HANDLE semaphore");
  if (!timeline_) {
    for (const SemaphoreWait& w : waits)
      if (w.value)
        throw Error("a submission waits for timeline value " + std::to_string(w.value) +
                    ", but timeline semaphores are not enabled on the device (binary "
                    "semaphores take value 0)");
    for (const SemaphoreSignal& s : signals)
      if (s.value)
        throw Error("a submission signals timeline value " + std::to_string(s.value) +
                    ", but timeline semaphores are not enabled on the device (binary "
                    "semaphores take value 0)");
  }
  VkCommandBuffer cb = VK_NULL_HANDLE;
  if (current_ >= 0) {
    cb = cmds_[static_cast<size_t>(current_)].cb;
    record_host_read_barrier(cb);
    check(vkEndCommandBuffer(cb), "ending a command buffer");
  }
  uint64_t value = last_submitted_ + 1;
  std::vector<VkSemaphore> wait_semaphores, signal_semaphores;
  std::vector<uint64_t> wait_values, signal_values;
  if (timeline_) {
    signal_semaphores.push_back(timeline_);
    signal_values.push_back(value);
  }
  std::vector<VkPipelineStageFlags> wait_stages;
  for (const SemaphoreWait& w : waits) {
    wait_semaphores.push_back(w.semaphore);
    wait_values.push_back(w.value);
    wait_stages.push_back(w.stages);
  }
  for (const SemaphoreSignal& s : signals) {
    signal_semaphores.push_back(s.semaphore);
    signal_values.push_back(s.value);
  }
  VkTimelineSemaphoreSubmitInfo ts{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  ts.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
  ts.pWaitSemaphoreValues = wait_values.data();
  ts.signalSemaphoreValueCount = static_cast<uint32_t>(signal_values.size());
  ts.pSignalSemaphoreValues = signal_values.data();
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.pNext = timeline_ ? &ts : nullptr;
  si.waitSemaphoreCount = static_cast<uint32_t>(wait_semaphores.size());
  si.pWaitSemaphores = wait_semaphores.data();
  si.pWaitDstStageMask = wait_stages.data();
  si.commandBufferCount = cb ? 1 : 0;
  si.pCommandBuffers = &cb;
  si.signalSemaphoreCount = static_cast<uint32_t>(signal_semaphores.size());
  si.pSignalSemaphores = signal_semaphores.data();
  VkFence fence = timeline_ ? VK_NULL_HANDLE : fence_for_submission();
  VkResult submitted =
      device_.with_queue([&] { return vkQueueSubmit(device_.queue(), 1, &si, fence); });
  if (submitted != VK_SUCCESS && fence) spare_fences_.push_back(fence);
  check(submitted, "submitting work to the device");
  if (fence) fenced_.push_back({value, fence});
  last_submitted_ = value;
  ++stats_.submits;
  if (current_ < 0) return value;
  mark_submitted(value);
  return value;
}

uint64_t CommandStream::park(const std::vector<SemaphoreWait>& waits,
                             const std::vector<SemaphoreSignal>& signals) {
  if (!waits.empty() || !signals.empty())
    throw Error(
        "a submission with semaphores, but the runtime runs in the engine-owned queue mode: "
        "Loom submits nothing; the engine's own submission waits and signals");
  if (current_ < 0) return last_submitted_;
  VkCommandBuffer cb = cmds_[static_cast<size_t>(current_)].cb;
  record_host_read_barrier(cb);
  check(vkEndCommandBuffer(cb), "ending a command buffer");
  uint64_t value = ++last_submitted_;
  parked_.push_back({value, cb});
  ++stats_.parked;
  mark_submitted(value);
  return value;
}

void CommandStream::mark_submitted(uint64_t value) {
  cmds_[static_cast<size_t>(current_)].busy_until = value;
  for (auto& ch : chunks_)
    if (ch->busy_until == kRecording) ch->busy_until = value;
  for (auto& d : downloads_)
    if (d.value == kRecording) d.value = value;
  current_ = -1;
  pending_ = 0;
}

std::vector<VkCommandBuffer> CommandStream::take_parked(uint64_t frame) {
  if (!deferred_) throw Error("take_parked: the command stream submits to the queue itself");
  submit();
  std::vector<VkCommandBuffer> out;
  for (const Parked& p : parked_) {
    out.push_back(p.cb);
    executed_.push_back({p.value, frame});
  }
  parked_.clear();
  return out;
}

void CommandStream::host_frames_completed(uint64_t frame) {
  frames_completed_ = std::max(frames_completed_, frame);
  land_downloads(completed());
}

void CommandStream::land_downloads(uint64_t done) {
  auto landed = [&](const Pending& d) { return d.value != kRecording && d.value <= done; };
  for (const Pending& d : downloads_)
    if (landed(d)) std::memcpy(d.host, d.staging, d.bytes);
  downloads_.erase(std::remove_if(downloads_.begin(), downloads_.end(), landed), downloads_.end());
}

void CommandStream::wait(uint64_t value) {
  if (value == 0) return;
  if (completed() < value) {
    wait_for_value(value, UINT64_MAX);
    ++stats_.waits;
  }
  uint64_t done = completed();
  land_downloads(done);
  // Staging chunks grown for one large transfer are given back once idle.
  chunks_.erase(std::remove_if(chunks_.begin(), chunks_.end(),
                               [&](const std::unique_ptr<Chunk>& c) {
                                 return c->busy_until != kRecording && c->busy_until <= done &&
                                        c->buffer.size() > kMaxChunk;
                               }),
                chunks_.end());
  // The hazard sets stay: a host wait makes device writes available to the host, not visible
  // to later device commands, which still need a barrier.
}

bool CommandStream::wait_within(uint64_t value, uint64_t timeout_ns) {
  if (value == 0 || completed() >= value) {
    wait(value);
    return true;
  }
  if (!wait_for_value(value, timeout_ns)) return false;
  wait(value);  // done now: lands the downloads
  return true;
}

void CommandStream::finish() { wait(submit()); }

}  // namespace loom::vk
