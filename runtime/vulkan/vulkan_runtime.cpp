#include "runtime/vulkan/vulkan_runtime.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "runtime/common/error.h"
#include "runtime/host/argpack.h"
#include "runtime/host/extent_check.h"
#include "runtime/vulkan/command_stream.h"
#include "runtime/vulkan/descriptor_allocator.h"
#include "runtime/vulkan/gpu_buffer.h"
#include "runtime/vulkan/gpu_image.h"
#include "runtime/vulkan/host_command_buffer.h"
#include "runtime/vulkan/host_frames.h"
#include "runtime/vulkan/memory_allocator.h"
#include "runtime/vulkan/pipeline_cache.h"
#include "runtime/vulkan/texture_format.h"
#include "runtime/vulkan/vk_check.h"
#include "runtime/vulkan/vulkan_kernel.h"

namespace loom::vk {

namespace {

constexpr VkBufferUsageFlags kStorageUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                             VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                             VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// Every buffer Loom makes may also feed a host engine's draws (export_buffer): host copies
// of fields and ndarrays as much as device-only buffers.
constexpr VkBufferUsageFlags kDeviceBufferUsage =
    kStorageUsage | VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | VK_BUFFER_USAGE_INDEX_BUFFER_BIT |
    VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;

std::string mib(size_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

std::string token(const void* key) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", key);
  return buf;
}

}  // namespace

struct VulkanRuntime::DeviceResource {
  enum class Kind { Buffer, Image, Argpack } kind = Kind::Buffer;
  std::string name;
  uint8_t* host = nullptr;  // the host copy; null: device-only, never uploaded or read back
  size_t bytes = 0;
  GpuBuffer buffer;  // Loom's memory; both empty for a host's imported resource
  GpuImage image;
  // What kernels bind and export_* reports: Loom's handles or the host's.
  VkBuffer vk_buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0, range = VK_WHOLE_SIZE;
  VkImage vk_image = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
  VkImageLayout layout = VK_IMAGE_LAYOUT_GENERAL;
  TextureFormat format = TextureFormat::RGBA32F;
  VkExtent3D extent{};
  bool linear_filter = false;
  uint64_t id = 0;  // hazard tracking and descriptor-set keys
  host::Argpack* pack = nullptr;
  bool host_newer = true;     // upload before the next use
  bool device_newer = false;  // download before the host reads
  bool caller_memory = false;
  int users = 1;  // program resources sharing this host memory (wrapped ndarrays)

  void own(GpuBuffer b) {
    buffer = std::move(b);
    vk_buffer = buffer.handle();
    id = buffer.id();
  }
  void own(GpuImage i) {
    image = std::move(i);
    vk_image = image.image();
    view = image.view();
    format = image.format();
    extent = image.extent();
    linear_filter = image.linear_filter();
    bytes = image.bytes();
    id = image.id();
  }
  const char* kind_name() const {
    return kind == Kind::Image ? "texture" : kind == Kind::Argpack ? "argpack" : "buffer";
  }
  // This resource, when it is of `expected` kind for kernel `kernel`'s binding (`what` it takes).
  DeviceResource& expect(Kind expected, const std::string& kernel, const char* what) {
    if (kind != expected)
      throw Error(Place{"", kernel, -1, name}, "kernel '" + kernel + "' is bound to " +
                                                   kind_name() + " '" + name + "' where it takes " +
                                                   what);
    return *this;
  }
};

VulkanRuntime::VulkanRuntime(const RuntimeOptions& options)
    : options_(options), device_(std::make_shared<VulkanDevice>(options.device)) {
  init();
}

VulkanRuntime::VulkanRuntime(std::shared_ptr<VulkanDevice> device, const RuntimeOptions& options)
    : options_(options), device_(std::move(device)) {
  if (!device_) throw Error("no Vulkan device to share");
  init();
}

void VulkanRuntime::init() {
  allocator_ = std::make_unique<MemoryAllocator>(*device_);
  pipeline_cache_ = std::make_unique<PipelineCache>(*device_, options_.pipeline_cache_dir,
                                                    options_.warn, options_.pipeline_cache_data);
  sets_ = std::make_unique<DescriptorAllocator>(*device_);
  stream_ = std::make_unique<CommandStream>(*device_, *allocator_, options_.engine_owned_queue);
  for (int mode = 0; mode < 4; ++mode) {
    bool linear = mode & 1, repeat = mode & 2;
    VkSamplerCreateInfo sci{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
    sci.magFilter = sci.minFilter = linear ? VK_FILTER_LINEAR : VK_FILTER_NEAREST;
    sci.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST;
    sci.addressModeU = sci.addressModeV = sci.addressModeW =
        repeat ? VK_SAMPLER_ADDRESS_MODE_REPEAT : VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
    sci.maxLod = 0;
    VkResult r =
        vkCreateSampler(device_->device(), &sci, device_->host_allocator(), &samplers_[mode]);
    if (r != VK_SUCCESS) {
      for (VkSampler& made : samplers_)
        if (made) vkDestroySampler(device_->device(), made, device_->host_allocator());
      check(r, "creating a sampler");
    }
  }
}

VulkanRuntime::~VulkanRuntime() {
  try {
    if (!options_.engine_owned_queue) stream_->finish();
  } catch (...) {
  }
  stream_.reset();
  retired_.clear();
  resources_.clear();
  for (VkSampler s : samplers_)
    if (s) vkDestroySampler(device_->device(), s, device_->host_allocator());
  sets_.reset();
  pipeline_cache_.reset();
  allocator_.reset();
  device_.reset();
}

// ------------------------------------------------------------------------------ resources

void VulkanRuntime::add_buffer(const std::string& name, uint8_t* host, size_t bytes,
                               bool caller_memory) {
  if (bytes > caps().max_storage_buffer_range)
    throw Error(Place{"", "", -1, name}, "'" + name + "' takes " + mib(bytes) + "; device '" +
                                             caps().name + "' binds storage buffers of at most " +
                                             mib(caps().max_storage_buffer_range));
  if (auto it = resources_.find(host); it != resources_.end()) {
    // The same caller memory wrapped twice shares one device copy; anything else would be two
    // device copies of one memory, each overwriting the other's results.
    DeviceResource& existing = *it->second;
    if (existing.kind == DeviceResource::Kind::Buffer && existing.caller_memory && caller_memory &&
        existing.bytes == bytes) {
      ++existing.users;
      return;
    }
    throw Error(Place{"", "", -1, name},
                "'" + name + "' uses the memory of '" + existing.name +
                    "' with another size; on Vulkan each device copy needs memory of its own");
  }
  auto r = std::make_unique<DeviceResource>();
  r->kind = DeviceResource::Kind::Buffer;
  r->name = name;
  r->host = host;
  r->bytes = bytes;
  r->caller_memory = caller_memory;
  r->own(GpuBuffer(*device_, *allocator_, bytes, kDeviceBufferUsage, MemoryUse::DeviceLocal,
                   "'" + name + "'"));
  resources_[host] = std::move(r);
}

void VulkanRuntime::add_texture(const std::string& name, uint8_t* host, TextureFormat format,
                                int width, int height, int depth, int ndim) {
  auto r = std::make_unique<DeviceResource>();
  r->kind = DeviceResource::Kind::Image;
  r->name = name;
  r->host = host;
  r->own(GpuImage(*device_, *allocator_, format, static_cast<uint32_t>(width),
                  static_cast<uint32_t>(height), static_cast<uint32_t>(depth), ndim,
                  "texture '" + name + "'"));
  resources_[host] = std::move(r);
}

void VulkanRuntime::add_argpack(const std::string& name, host::Argpack& pack) {
  auto r = std::make_unique<DeviceResource>();
  r->kind = DeviceResource::Kind::Argpack;
  r->name = name;
  r->host = pack.data();
  r->bytes = pack.size();
  r->pack = &pack;
  r->own(GpuBuffer(*device_, *allocator_, pack.size(),
                   VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                   MemoryUse::DeviceLocal, "argpack '" + name + "'"));
  resources_[pack.data()] = std::move(r);
}

void VulkanRuntime::check_new_key(const void* key, const std::string& name) const {
  if (!key)
    throw Error("device resource '" + name +
                "' has a null key; a key is the non-null ResourceView::data kernels are "
                "bound with");
  if (auto it = resources_.find(key); it != resources_.end())
    throw Error("device resource '" + name + "': key " + token(key) + " already names " +
                it->second->kind_name() + " '" + it->second->name + "'");
}

VulkanRuntime::DeviceResource& VulkanRuntime::add(const void* key,
                                                  std::unique_ptr<DeviceResource> r) {
  check_new_key(key, r->name);
  r->host = nullptr;
  r->host_newer = false;
  DeviceResource& added = *r;
  resources_[key] = std::move(r);
  return added;
}

VulkanRuntime::DeviceResource& VulkanRuntime::keyed(const void* key, const char* what) const {
  auto it = resources_.find(key);
  if (it == resources_.end())
    throw Error(std::string(what) + ": no device resource has key " + token(key) +
                "; add or import one with it first");
  return *it->second;
}

void VulkanRuntime::add_device_buffer(const void* key, size_t bytes, const std::string& name) {
  auto r = std::make_unique<DeviceResource>();
  r->name = name.empty() ? "device buffer " + token(key) : name;
  if (bytes == 0) throw Error("device buffer '" + r->name + "' has no bytes");
  if (bytes > caps().max_storage_buffer_range)
    throw Error(Place{"", "", -1, r->name},
                "'" + r->name + "' takes " + mib(bytes) + "; device '" + caps().name +
                    "' binds storage buffers of at most " + mib(caps().max_storage_buffer_range));
  r->bytes = bytes;
  check_new_key(key, r->name);
  r->own(GpuBuffer(*device_, *allocator_, bytes, kDeviceBufferUsage, MemoryUse::DeviceLocal,
                   "'" + r->name + "'"));
  add(key, std::move(r));
}

void VulkanRuntime::add_device_image(const void* key, TextureFormat format, int width, int height,
                                     int depth, int ndim, const std::string& name) {
  auto r = std::make_unique<DeviceResource>();
  r->kind = DeviceResource::Kind::Image;
  r->name = name.empty() ? "device image " + token(key) : name;
  check_new_key(key, r->name);
  r->own(GpuImage(*device_, *allocator_, format, static_cast<uint32_t>(width),
                  static_cast<uint32_t>(height), static_cast<uint32_t>(depth), ndim,
                  "texture '" + r->name + "'"));
  add(key, std::move(r));
}

void VulkanRuntime::import_buffer(const void* key, VkBuffer buffer, VkDeviceSize offset,
                                  VkDeviceSize bytes, const std::string& name) {
  auto r = std::make_unique<DeviceResource>();
  r->name = name.empty() ? "imported buffer " + token(key) : name;
  std::string what = "importing buffer '" + r->name + "': ";
  if (!buffer) throw Error(what + "the VkBuffer is VK_NULL_HANDLE");
  if (bytes == 0) throw Error(what + "it has no bytes");
  if (bytes > caps().max_storage_buffer_range)
    throw Error(what + mib(bytes) + " is more than device '" + caps().name + "' binds (" +
                mib(caps().max_storage_buffer_range) + ")");
  if (offset % caps().min_storage_offset_alignment)
    throw Error(what + "offset " + std::to_string(offset) +
                " is not a multiple of minStorageBufferOffsetAlignment (" +
                std::to_string(caps().min_storage_offset_alignment) + ")");
  r->vk_buffer = buffer;
  r->offset = offset;
  r->range = bytes;
  r->bytes = bytes;
  r->id = next_resource_id();
  add(key, std::move(r));
}

void VulkanRuntime::rebind_buffer(const void* key, VkBuffer buffer, VkDeviceSize offset) {
  DeviceResource& r = keyed(key, "rebind_buffer");
  std::string what = "rebinding '" + r.name + "': ";
  if (r.kind != DeviceResource::Kind::Buffer || r.buffer || r.host)
    throw Error(what + "only a buffer imported from the host can move to another");
  if (!buffer) throw Error(what + "the VkBuffer is VK_NULL_HANDLE");
  if (offset % caps().min_storage_offset_alignment)
    throw Error(what + "offset " + std::to_string(offset) +
                " is not a multiple of minStorageBufferOffsetAlignment (" +
                std::to_string(caps().min_storage_offset_alignment) + ")");
  r.vk_buffer = buffer;
  r.offset = offset;
  r.id = next_resource_id();  // new descriptor sets and hazards: another buffer
}

void VulkanRuntime::import_image(const void* key, VkImage image, VkImageView view, VkFormat format,
                                 VkExtent3D extent, VkImageLayout layout, const std::string& name) {
  auto r = std::make_unique<DeviceResource>();
  r->kind = DeviceResource::Kind::Image;
  r->name = name.empty() ? "imported image " + token(key) : name;
  std::string what = "importing image '" + r->name + "': ";
  if (!image || !view)
    throw Error(what + (image ? "the VkImageView" : "the VkImage") +
                std::string(" is VK_NULL_HANDLE"));
  if (!texture_format_of(format, &r->format))
    throw Error(what + "VkFormat " + std::to_string(format) +
                " is none Loom's kernels use (R32_SFLOAT, R32G32_SFLOAT, "
                "R32G32B32A32_SFLOAT, R8G8B8A8_UNORM)");
  if (layout != VK_IMAGE_LAYOUT_GENERAL && layout != VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL)
    throw Error(
        what +
        "kernels use images in VK_IMAGE_LAYOUT_GENERAL (or SHADER_READ_ONLY_OPTIMAL when they only "
        "sample them), not layout " +
        std::to_string(layout));
  if (!extent.width || !extent.height || !extent.depth) throw Error(what + "its extent is empty");
  VkFormatProperties fp;
  vkGetPhysicalDeviceFormatProperties(device_->physical(), format, &fp);
  r->linear_filter = fp.optimalTilingFeatures & VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT;
  r->vk_image = image;
  r->view = view;
  r->layout = layout;
  r->extent = extent;
  r->bytes = VkDeviceSize{extent.width} * extent.height * extent.depth * texel_bytes(r->format);
  r->id = next_resource_id();
  add(key, std::move(r));
}

BufferExport VulkanRuntime::export_buffer(const void* key) const {
  DeviceResource& r = keyed(key, "export_buffer");
  if (r.kind != DeviceResource::Kind::Buffer)
    throw Error("export_buffer: key " + token(key) + " names " + r.kind_name() + " '" + r.name +
                "', not a buffer");
  return {r.vk_buffer, r.offset, r.bytes};
}

ImageExport VulkanRuntime::export_image(const void* key) {
  DeviceResource& r = keyed(key, "export_image");
  if (r.kind != DeviceResource::Kind::Image)
    throw Error("export_image: key " + token(key) + " names " + r.kind_name() + " '" + r.name +
                "', not an image");
  if (r.image && !r.image.in_general_layout()) {  // out of UNDEFINED before the host sees it
    stream_->prepare_image(r.image);
    stream_->submit();
  }
  return {r.vk_image, r.view, vk_format(r.format), r.extent, r.layout};
}

namespace {

void check_range(const std::string& what, const std::string& name, size_t offset, size_t bytes,
                 size_t size) {
  if (offset > size || bytes > size - offset)
    throw Error(what + ": bytes [" + std::to_string(offset) + ", " +
                std::to_string(offset + bytes) + ") of '" + name + "', which has " +
                std::to_string(size));
}

}  // namespace

void VulkanRuntime::write_buffer(const void* key, size_t offset, const void* src, size_t bytes) {
  DeviceResource& r = keyed(key, "write_buffer");
  if (r.kind != DeviceResource::Kind::Buffer)
    throw Error("write_buffer: key " + token(key) + " names " + r.kind_name() + " '" + r.name +
                "', not a buffer");
  check_range("write_buffer", r.name, offset, bytes, r.bytes);
  upload_if_needed(r);  // a host copy's pending changes land first
  stream_->upload(r.vk_buffer, r.id, r.offset + offset, src, bytes);
  if (r.host) r.device_newer = true;
}

void VulkanRuntime::read_buffer(const void* key, size_t offset, size_t bytes, void* dst) {
  DeviceResource& r = keyed(key, "read_buffer");
  if (r.kind != DeviceResource::Kind::Buffer)
    throw Error("read_buffer: key " + token(key) + " names " + r.kind_name() + " '" + r.name +
                "', not a buffer");
  check_range("read_buffer", r.name, offset, bytes, r.bytes);
  refuse_wait("reading '" + r.name + "'");
  upload_if_needed(r);
  stream_->download(r.vk_buffer, r.id, r.offset + offset, dst, bytes);
  stream_->finish();
  check_validation();
}

void VulkanRuntime::remove(const void* host) {
  auto it = resources_.find(host);
  if (it == resources_.end()) return;
  if (--it->second->users > 0) return;
  if (options_.engine_owned_queue) {  // kept until the work that may use it has run
    retired_.push_back({std::move(it->second), stream_->recorded_value(), frame_});
    resources_.erase(it);
    return;
  }
  // The device may still use it: wait for the last submission that could.
  stream_->finish();
  resources_.erase(it);
}

bool VulkanRuntime::has(const void* host) const { return resources_.count(host) != 0; }

void VulkanRuntime::host_wrote(const void* host) {
  auto it = resources_.find(host);
  if (it == resources_.end() || !it->second->host) return;
  it->second->host_newer = true;
  it->second->device_newer = false;
}

void VulkanRuntime::upload(const void* host) {
  auto it = resources_.find(host);
  if (it == resources_.end()) return;
  upload_if_needed(*it->second);
  stream_->submit();
}

void VulkanRuntime::read_back(const void* host) {
  auto it = resources_.find(host);
  if (it == resources_.end() || !it->second->host || !it->second->device_newer) return;
  DeviceResource& r = *it->second;
  refuse_wait("reading '" + r.name + "'");
  if (r.kind == DeviceResource::Kind::Image) {
    stream_->download_image(r.image, r.host);
  } else {
    stream_->download(r.buffer, 0, r.host, r.bytes);
  }
  stream_->finish();
  r.device_newer = false;
  check_validation();
}

void VulkanRuntime::read_back_all() {
  bool any = false;
  for (auto& [host, r] : resources_) {
    if (!r->host || !r->device_newer) continue;
    refuse_wait("reading '" + r->name + "'");
    if (r->kind == DeviceResource::Kind::Image)
      stream_->download_image(r->image, r->host);
    else
      stream_->download(r->buffer, 0, r->host, r->bytes);
    r->device_newer = false;
    any = true;
  }
  if (any) stream_->finish();
  check_validation();
}

void VulkanRuntime::refuse_wait(const std::string& what) const {
  if (!options_.engine_owned_queue) return;
  throw Error(what +
              " would wait for the engine's queue, and this runtime runs in the engine-owned "
              "queue mode (Loom never submits to it or waits on it): record the read into a "
              "command buffer of the engine's (loom_array_read_into, loom_texture_read_into)");
}

void VulkanRuntime::host_frame_begun() {
  stream_->host_frames_completed(frame_completed_);
  uint64_t done = stream_->completed();
  retired_.erase(std::remove_if(retired_.begin(), retired_.end(),
                                [&](const Retired& r) {
                                  return r.value <= done && r.frame <= frame_completed_;
                                }),
                 retired_.end());
}

bool VulkanRuntime::read_would_wait(const void* key) const {
  if (!options_.engine_owned_queue) return false;
  auto it = resources_.find(key);
  if (it == resources_.end()) return false;
  return !it->second->host || it->second->device_newer;
}

uint64_t VulkanRuntime::work_recorded() const { return stream_->recorded_value(); }

bool VulkanRuntime::work_done(uint64_t value) { return stream_->completed() >= value; }

size_t VulkanRuntime::readable_bytes(const void* key) const {
  const DeviceResource& r = keyed(key, "read_into");
  if (r.kind == DeviceResource::Kind::Argpack)
    throw Error("read_into: '" + r.name + "' is an argpack, not a buffer or image");
  if (r.kind == DeviceResource::Kind::Image && r.layout != VK_IMAGE_LAYOUT_GENERAL)
    throw Error("reading image '" + r.name +
                "': the host keeps it in SHADER_READ_ONLY_OPTIMAL, a layout copies cannot read; "
                "read it with Vulkan");
  return r.bytes;
}

void VulkanRuntime::record_read(HostCommandBuffer& host, const void* key, VkBuffer dst) {
  DeviceResource& r = keyed(key, "read_into");
  upload_if_needed(r);  // what the host wrote reaches the device copy first
  frames_->run_stream_in(host);
  host.hazard({{r.id, kRead}});
  if (r.kind == DeviceResource::Kind::Image) {
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = r.extent;
    vkCmdCopyImageToBuffer(host.cb, r.vk_image, VK_IMAGE_LAYOUT_GENERAL, dst, 1, &region);
  } else {
    VkBufferCopy region{r.offset, 0, r.bytes};
    vkCmdCopyBuffer(host.cb, r.vk_buffer, dst, 1, &region);
  }
}

void VulkanRuntime::copy_device(const void* from, const void* to) {
  DeviceResource& a = keyed(from, "copy_device");
  DeviceResource& b = keyed(to, "copy_device");
  if (a.kind != b.kind || a.bytes != b.bytes || a.kind == DeviceResource::Kind::Argpack)
    throw Error("copy_device: '" + a.name + "' (" + a.kind_name() + ", " + std::to_string(a.bytes) +
                " bytes) and '" + b.name + "' (" + b.kind_name() + ", " + std::to_string(b.bytes) +
                " bytes) are not copies of one thing");
  upload_if_needed(a);  // the source's device copy current first
  if (b.image) stream_->prepare_image(b.image);
  stream_->hazard({{a.id, kRead}, {b.id, kWrite}});
  VkCommandBuffer cb = stream_->recording();
  if (a.kind == DeviceResource::Kind::Image) {
    if (a.layout != VK_IMAGE_LAYOUT_GENERAL || b.layout != VK_IMAGE_LAYOUT_GENERAL)
      throw Error("copy_device: '" + a.name + "' or '" + b.name +
                  "' is not in VK_IMAGE_LAYOUT_GENERAL");
    VkImageCopy region{};
    region.srcSubresource = region.dstSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.extent = a.extent;
    vkCmdCopyImage(cb, a.vk_image, VK_IMAGE_LAYOUT_GENERAL, b.vk_image, VK_IMAGE_LAYOUT_GENERAL, 1,
                   &region);
  } else {
    VkBufferCopy region{a.offset, b.offset, a.bytes};
    vkCmdCopyBuffer(cb, a.vk_buffer, b.vk_buffer, 1, &region);
  }
  b.host_newer = false;  // the device copy is the newer one now
  b.device_newer = b.host != nullptr;
}

void VulkanRuntime::flush() { stream_->submit(); }

void VulkanRuntime::submit(const std::vector<SemaphoreWait>& wait,
                           const std::vector<SemaphoreSignal>& signal) {
  stream_->submit(wait, signal);
}

void VulkanRuntime::synchronize() {
  if (options_.engine_owned_queue && stream_->completed() < stream_->recorded_value())
    refuse_wait("waiting for the runtime's work");
  stream_->finish();
  check_validation();
}

bool VulkanRuntime::synchronize_within(uint64_t timeout_ns) {
  if (options_.engine_owned_queue && stream_->completed() < stream_->recorded_value())
    refuse_wait("waiting for the runtime's work");
  if (!stream_->wait_within(stream_->submit(), timeout_ns)) return false;
  check_validation();
  return true;
}

void VulkanRuntime::check_validation() {
  std::vector<std::string> messages = device_->take_messages();
  if (messages.empty()) return;
  std::string text =
      "Vulkan validation reported " + std::to_string(messages.size()) + " problem(s):";
  for (const std::string& m : messages) text += "\n  " + m;
  throw Error(text);
}

VulkanRuntime::DeviceResource& VulkanRuntime::resource(const void* host, const std::string& kernel,
                                                       const char* what) {
  auto it = resources_.find(host);
  if (it == resources_.end())
    throw Error(Place{"", kernel, -1, ""}, std::string("kernel '") + kernel + "' is bound to " +
                                               what +
                                               " that has no device copy or device resource on '" +
                                               caps().name + "' (key " + token(host) + ")");
  return *it->second;
}

void VulkanRuntime::upload_if_needed(DeviceResource& r) {
  if (r.image) stream_->prepare_image(r.image);  // Loom's images (a host's stay in their layout)
  if (!r.host || (!r.host_newer && !r.caller_memory)) return;
  if (r.kind == DeviceResource::Kind::Image)
    stream_->upload_image(r.image, r.host);
  else
    stream_->upload(r.buffer, 0, r.host, r.bytes);
  stats_.last_launch.resource_bytes += r.bytes;
  r.host_newer = false;
}

// ------------------------------------------------------------------------------ kernels

std::shared_ptr<VulkanKernel> VulkanRuntime::load(const KernelABI& abi, const SpirvKernel& code) {
  // A module compiled for a newer Vulkan than the device runs (or the host's instance asked
  // for) would be refused by the driver, or worse: say which version it needs.
  uint32_t takes = max_spirv_version(caps().api_version);
  for (size_t t = 0; t < code.tasks.size(); ++t) {
    uint32_t version = code.tasks[t].spirv.size() > 1 ? code.tasks[t].spirv[1] : 0;
    if (version > takes)
      throw Error(Place{"", abi.name, -1, ""},
                  "kernel '" + abi.name + "' task " + std::to_string(t) + " is SPIR-V " +
                      spirv_version_text(version) + ", newer than Vulkan " +
                      vulkan_version_text(caps().api_version) + " on '" + caps().name +
                      "' accepts (SPIR-V " + spirv_version_text(takes) +
                      "); compile it for that Vulkan version",
                  ErrorKind::Capability);
  }
  auto k =
      std::make_shared<VulkanKernel>(*device_, *allocator_, *pipeline_cache_, *sets_, abi, code);
  stats_.pipelines += code.tasks.size();
  stats_.pipeline_ms += k->pipeline_ms();
  check_validation();
  return k;
}

void VulkanRuntime::launch(VulkanKernel& kernel, LaunchContext& ctx) {
  record(kernel, ctx, nullptr);
}

namespace {

// Launches into a host's command buffer cannot be waited for, so nothing may be read back.
void check_launchable_into_host(const KernelABI& abi, const SpirvKernel& code, bool into_host) {
  for (const SpirvBinding& b : code.bindings)
    if (b.kind == BindingKind::Returns || b.kind == BindingKind::Error)
      throw Error(Place{"", abi.name, -1, ""},
                  "kernel '" + abi.name + "' " +
                      (b.kind == BindingKind::Returns ? "returns values"
                                                      : "reports errors (a debug build)") +
                      ", which Loom reads after waiting for the launch; " +
                      (into_host ? "launch it on Loom's stream, not into a host command buffer"
                                 : "the runtime runs in the engine-owned queue mode, where Loom "
                                   "never waits for the engine's queue"));
}

// What each binding is used for over all tasks.
std::vector<uint8_t> binding_uses(const SpirvKernel& code) {
  std::vector<uint8_t> used(code.bindings.size(), 0);
  for (const SpirvTask& task : code.tasks)
    for (size_t b = 0; b < used.size(); ++b) used[b] |= task.access.at(b);
  return used;
}

// The args block: seed, value parameters, extents of ndarrays and textures.
std::vector<uint8_t> args_block(const VulkanKernel& kernel, const LaunchContext& ctx) {
  const KernelABI& abi = kernel.abi();
  const ArgsLayout& layout = kernel.args();
  std::vector<uint8_t> args(layout.size, 0);
  std::memcpy(args.data() + layout.seed, &ctx.seed, 8);
  for (size_t p = 0; p < abi.params.size(); ++p) {
    if (layout.params[p] < 0) continue;
    const ParamDesc& d = abi.params[p];
    std::memcpy(
        args.data() + layout.params[p], ctx.params[p],
        static_cast<size_t>(size_of(d.type.scalar)) * static_cast<size_t>(d.type.components()));
  }
  for (size_t s = 0; s < abi.resources.size(); ++s) {
    if (layout.shapes[s] < 0) continue;
    for (int d = 0; d < std::max(abi.resources[s].ndim, 1); ++d) {
      auto e = static_cast<int32_t>(ctx.resources[s].shape[d]);
      std::memcpy(args.data() + layout.shapes[s] + 4 * static_cast<ptrdiff_t>(d), &e, 4);
    }
  }
  return args;
}

bool is_image_binding(BindingKind k) {
  return k == BindingKind::StorageImage || k == BindingKind::SampledImage ||
         k == BindingKind::Sampler;
}

// The hazard-tracked accesses of one task (samplers and the args block are never written).
Accesses task_accesses(const SpirvKernel& code, const SpirvTask& task,
                       const std::vector<uint64_t>& key) {
  Accesses accesses;
  for (size_t b = 0; b < code.bindings.size(); ++b) {
    uint8_t bits = task.access.at(b);
    BindingKind k = code.bindings[b].kind;
    if (!bits || k == BindingKind::Sampler || k == BindingKind::Args) continue;
    accesses.push_back({key[b], bits});
  }
  return accesses;
}

void copy_returns(VulkanKernel& kernel, LaunchContext& ctx) {
  const KernelABI& abi = kernel.abi();
  std::vector<uint32_t> offsets = return_offsets(abi);
  const uint8_t* src = kernel.returns().mapped();
  size_t c = 0;
  for (const ValueType& t : abi.returns)
    for (int k = 0; k < t.components(); ++k, ++c) {
      size_t size = static_cast<size_t>(size_of(t.scalar));
      std::memcpy(ctx.returns + offsets[c], src + c * kReturnSlotBytes, size);
    }
}

bool has_returns(const SpirvKernel& code) {
  return std::any_of(code.bindings.begin(), code.bindings.end(),
                     [](const SpirvBinding& b) { return b.kind == BindingKind::Returns; });
}

}  // namespace

// One launch's bindings as record() resolves them, binding by binding.
struct VulkanRuntime::LaunchBindings {
  explicit LaunchBindings(size_t n) : key(n), bound(n, nullptr), buffers(n), images(n) {}
  std::vector<uint8_t> args;  // the args block
  std::vector<uint8_t> used;  // kAccess* bits over all tasks
  std::vector<uint64_t> key;  // identity of what is bound: the descriptor set cache key, hazards
  std::vector<DeviceResource*> bound;  // host storage and device resources; null for the rest
  std::vector<VkDescriptorBufferInfo> buffers;
  std::vector<VkDescriptorImageInfo> images;
  VkBuffer args_buffer = VK_NULL_HANDLE;
  VkDeviceSize args_offset = 0;
  bool wait_for_results = false;  // returns or an error record to read after the launch
};

void VulkanRuntime::record(VulkanKernel& kernel, LaunchContext& ctx, HostCommandBuffer* host) {
  const SpirvKernel& code = kernel.code();
  // Where nothing may wait (the engine owns the queue), a launch on the stream is recorded
  // like one into a host command buffer: what needs a wait afterwards is refused up front.
  if (host || options_.engine_owned_queue)
    check_launchable_into_host(kernel.abi(), code, host != nullptr);
  stats_.last_launch = {};
  LaunchBindings launch(code.bindings.size());
  launch.used = binding_uses(code);
  launch.args = args_block(kernel, ctx);
  stats_.last_launch.argument_bytes = launch.args.size();

  for (size_t b = 0; b < code.bindings.size(); ++b) bind(kernel, ctx, host, b, launch);
  check_linear_filtering(kernel, launch);
  VkDescriptorSet set = descriptor_set_for(kernel, launch, host);
  // Into a host's command buffer: what the stream recorded (uploads, image layouts) runs
  // first: submitted to the queue, or executed inside it where the engine owns the queue.
  if (host) frames_->run_stream_in(*host);
  record_dispatches(kernel, ctx, host, launch, set);
  bool caller_written = mark_device_writes(launch);
  count_launch(stats_.last_launch);
  if (host) return;

  if (launch.wait_for_results || caller_written) {
    stream_->finish();
    check_validation();
    if (has_returns(code)) copy_returns(kernel, ctx);
    if (kernel.error() && ctx.error)
      std::memcpy(ctx.error, kernel.error().mapped(), sizeof(LaunchError));
  } else if (stream_->pending() >= options_.batch) {
    stream_->submit();
  }
}

// Resolves binding `b`: its device object, the upload of what the host changed, its key.
void VulkanRuntime::bind(VulkanKernel& kernel, const LaunchContext& ctx, HostCommandBuffer* host,
                         size_t b, LaunchBindings& launch) {
  const SpirvBinding& binding = kernel.code().bindings[b];
  switch (binding.kind) {
    case BindingKind::Args: {
      VkDeviceSize align = caps().min_uniform_offset_alignment;
      size_t bytes = launch.args.size();
      uint8_t* slot =
          host ? host->args_slot(bytes, align, &launch.args_buffer, &launch.args_offset)
               : stream_->scratch(bytes, align, &launch.args_buffer, &launch.args_offset);
      std::memcpy(slot, launch.args.data(), bytes);
      launch.buffers[b] = {launch.args_buffer, 0, bytes};
      launch.key[b] = reinterpret_cast<uint64_t>(launch.args_buffer);
      return;
    }
    case BindingKind::Temps:
      launch.buffers[b] = {kernel.temps().handle(), 0, VK_WHOLE_SIZE};
      launch.key[b] = kernel.temps().id();
      return;
    case BindingKind::Returns:
      stream_->fill(kernel.returns(), 0);
      launch.buffers[b] = {kernel.returns().handle(), 0, VK_WHOLE_SIZE};
      launch.key[b] = kernel.returns().id();
      launch.wait_for_results = true;
      return;
    case BindingKind::Error:
      stream_->fill(kernel.error(), 0);
      launch.buffers[b] = {kernel.error().handle(), 0, VK_WHOLE_SIZE};
      launch.key[b] = kernel.error().id();
      launch.wait_for_results = true;
      return;
    case BindingKind::Argpack: return bind_argpack(kernel, ctx, host, b, launch);
    case BindingKind::Buffer: return bind_buffer(kernel, ctx, host, b, launch);
    case BindingKind::StorageImage:
    case BindingKind::SampledImage: return bind_image(kernel, ctx, b, launch);
    case BindingKind::Sampler:
      launch.images[b] = {samplers_[binding.index & 3], VK_NULL_HANDLE, VK_IMAGE_LAYOUT_UNDEFINED};
      launch.key[b] = static_cast<uint64_t>(binding.index);
      return;
  }
}

// A dirty argpack is written once, in order with the launches (vkCmdUpdateBuffer).
void VulkanRuntime::bind_argpack(VulkanKernel& kernel, const LaunchContext& ctx,
                                 HostCommandBuffer* host, size_t b, LaunchBindings& launch) {
  const std::string& name = kernel.abi().name;
  DeviceResource& r = resource(ctx.params[kernel.code().bindings[b].index], name, "an argpack")
                          .expect(DeviceResource::Kind::Argpack, name, "an argpack");
  if (r.pack->dirty()) {
    if (host) {
      host->update(r.vk_buffer, r.id, r.pack->data(), r.pack->size());
      stream_->external({{r.id, kWrite}});
    } else {
      stream_->update(r.buffer, 0, r.pack->data(), r.pack->size());
    }
    r.pack->clear_dirty();
    ++stats_.last_launch.argpack_uploads;
    stats_.last_launch.argpack_bytes += r.pack->size();
  }
  launch.buffers[b] = {r.vk_buffer, 0, VK_WHOLE_SIZE};
  launch.key[b] = r.id;
  launch.bound[b] = &r;
}

void VulkanRuntime::bind_buffer(VulkanKernel& kernel, const LaunchContext& ctx,
                                HostCommandBuffer* host, size_t b, LaunchBindings& launch) {
  const KernelABI& abi = kernel.abi();
  int slot = kernel.code().bindings[b].index;
  const ResourceDesc& rd = abi.resources.at(static_cast<size_t>(slot));
  const char* what = rd.kind == ResourceKind::Field ? "a field" : "an ndarray";
  DeviceResource& r = resource(ctx.resources[slot].data, abi.name, what)
                          .expect(DeviceResource::Kind::Buffer, abi.name, what);
  if (host && r.caller_memory && (launch.used[b] & kAccessWrite))
    throw Error(Place{"", abi.name, -1, r.name},
                "kernel '" + abi.name + "' writes caller memory '" + r.name +
                    "', which Loom reads back after waiting for the launch; "
                    "launch it on Loom's stream, or bind a device buffer");
  upload_if_needed(r);
  launch.buffers[b] = {r.vk_buffer, r.offset, r.range};
  launch.key[b] = r.id;
  launch.bound[b] = &r;
}

void VulkanRuntime::bind_image(VulkanKernel& kernel, const LaunchContext& ctx, size_t b,
                               LaunchBindings& launch) {
  const std::string& name = kernel.abi().name;
  const SpirvBinding& binding = kernel.code().bindings[b];
  DeviceResource& r = resource(ctx.resources[binding.index].data, name, "a texture")
                          .expect(DeviceResource::Kind::Image, name, "a texture");
  if (binding.kind == BindingKind::StorageImage && r.layout != VK_IMAGE_LAYOUT_GENERAL)
    throw Error(Place{"", name, -1, r.name},
                "kernel '" + name + "' loads or stores texels of '" + r.name +
                    "', which is kept in a read-only layout; import it in "
                    "VK_IMAGE_LAYOUT_GENERAL");
  upload_if_needed(r);
  launch.images[b] = {VK_NULL_HANDLE, r.view, r.layout};
  launch.key[b] = r.id;
  launch.bound[b] = &r;
}

// Linear filtering needs format support (32-bit float formats often lack it).
void VulkanRuntime::check_linear_filtering(const VulkanKernel& kernel,
                                           const LaunchBindings& launch) const {
  const std::string& name = kernel.abi().name;
  const std::vector<SpirvBinding>& bindings = kernel.code().bindings;
  for (size_t b = 0; b < bindings.size(); ++b) {
    if (bindings[b].kind != BindingKind::SampledImage || !bindings[b].sampled_linearly) continue;
    const DeviceResource& r = *launch.bound[b];
    if (!r.linear_filter)
      throw Error(Place{"", name, -1, r.name},
                  "kernel '" + name + "' samples texture '" + r.name + "' linearly; device '" +
                      caps().name + "' cannot filter " + texture_format_name(r.format) + " images");
  }
}

// The kernel's cached set for these bindings, or a set written for them now.
VkDescriptorSet VulkanRuntime::descriptor_set_for(VulkanKernel& kernel,
                                                  const LaunchBindings& launch,
                                                  HostCommandBuffer* host) {
  const std::vector<SpirvBinding>& bindings = kernel.code().bindings;
  GpuUse use = host ? GpuUse{0, frame_} : GpuUse{stream_->recording_value(), 0};
  return kernel.set_for(
      launch.key, use, GpuUse{stream_->completed(), frame_completed_}, [&](VkDescriptorSet s) {
        std::vector<VkWriteDescriptorSet> writes(bindings.size());
        for (size_t b = 0; b < bindings.size(); ++b) {
          VkWriteDescriptorSet& w = writes[b];
          w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
          w.dstSet = s;
          w.dstBinding = bindings[b].binding;
          w.descriptorCount = 1;
          w.descriptorType = descriptor_type(bindings[b].kind);
          if (is_image_binding(bindings[b].kind))
            w.pImageInfo = &launch.images[b];
          else
            w.pBufferInfo = &launch.buffers[b];
        }
        vkUpdateDescriptorSets(device_->device(), static_cast<uint32_t>(writes.size()),
                               writes.data(), 0, nullptr);
        ++stats_.descriptor_sets;
      });
}

// Workgroups for one task; none when its host-evaluable range is empty.
std::optional<VulkanRuntime::GroupCount> VulkanRuntime::dispatch_groups(
    const VulkanKernel& kernel, const SpirvTask& task, const LaunchContext& ctx) const {
  if (task.kind == 0) return GroupCount{1, 1};  // serial
  uint32_t cap_x = std::min<uint32_t>(caps().max_workgroup_count_x, 65535);
  uint32_t cap_y = std::min<uint32_t>(caps().max_workgroup_count_y, 65535);
  // Bounds only the shader knows: enough groups to fill the device; the grid-stride
  // loops cover the rest and idle invocations leave at once. The same on CPU devices: with
  // few groups each invocation strides far through memory and lavapipe's sums ran 1.7x the
  // GLSL baseline's time (64 groups) instead of 1.0x (4096; bench/README.md).
  GroupCount advisory = task.grid_dims == 2 ? GroupCount{std::min<uint32_t>(64, cap_x),
                                                         std::min<uint32_t>(256, cap_y)}
                                            : GroupCount{std::min<uint32_t>(4096, cap_x), 1};
  if (!task.host_extent) return advisory;
  // A parallel task writes the temps binding only to combine reductions: each workgroup
  // ends with a combine through shared memory and an atomic, so the advisory grid (fewer,
  // fuller workgroups, each invocation's partial covering many elements) is at most used.
  bool reduces = false;
  const SpirvKernel& code = kernel.code();
  for (size_t b = 0; b < code.bindings.size() && b < task.access.size(); ++b)
    reduces |= code.bindings[b].kind == BindingKind::Temps && (task.access[b] & kAccessWrite);
  int64_t inner = 1, outer = 1;
  for (size_t d = 0; d < task.begin.size(); ++d) {
    int64_t e = std::max<int64_t>(
        0, host::range_bound_value(task.end[d], ctx) - host::range_bound_value(task.begin[d], ctx));
    (task.grid_dims == 2 && d + 1 < task.begin.size() ? outer : inner) *= e;
  }
  if (inner == 0 || outer == 0) return std::nullopt;
  const std::string& name = kernel.abi().name;
  if (inner > UINT32_MAX || outer > UINT32_MAX)
    throw Error(Place{"", name, -1, ""},
                "kernel '" + name + "' has a range of " +
                    std::to_string(static_cast<double>(inner) * static_cast<double>(outer)) +
                    " iterations; a Vulkan dispatch counts at most 2^32 per dimension");
  if (task.direct) return direct_groups(task, inner, outer, name);
  uint32_t wg = task.workgroup_size;
  GroupCount exact{static_cast<uint32_t>(std::min<int64_t>((inner + wg - 1) / wg, cap_x)),
                   static_cast<uint32_t>(std::min<int64_t>(outer, cap_y))};
  if (!reduces) return exact;
  GroupCount fuller{std::min(exact.x, advisory.x), std::min(exact.y, advisory.y)};
  // Each invocation walks rows / y groups rows of columns / (x groups * wg) elements; past
  // kMaxGridStrideTrips the exact grid (a few iterations each) keeps clear of llvmpipe's
  // loop cut, which the shader does not guard against for these tasks.
  auto per = [](int64_t n, int64_t by) { return (n + by - 1) / by; };
  int64_t cols = per(inner, static_cast<int64_t>(fuller.x) * wg);
  int64_t trips = task.grid_dims == 2 ? per(outer, fuller.y) * (cols + 1) : cols;
  return trips <= kMaxGridStrideTrips ? fuller : exact;
}

// The grid of a direct-form task (SpirvTask::direct): every element its own invocation. Rows
// of workgroups along y, then z; x across a row when one fits, else the rows end to end.
VulkanRuntime::GroupCount VulkanRuntime::direct_groups(const SpirvTask& task, int64_t inner,
                                                       int64_t outer,
                                                       const std::string& kernel) const {
  const int64_t cap_x = caps().max_workgroup_count_x, cap_y = caps().max_workgroup_count_y,
                cap_z = caps().max_workgroup_count_z;
  const int64_t wg = task.workgroup_size;
  int64_t per_row = (inner + wg - 1) / wg;
  int64_t x = 0, rows = 0;
  bool end_to_end = false;
  bool one_row = task.grid_dims == 1;
  if (task.tile_cols > 0) {  // one workgroup per tile, numbered like 1-d elements
    const int64_t tile_rows = wg / task.tile_cols;
    per_row = (inner + task.tile_cols - 1) / task.tile_cols * ((outer + tile_rows - 1) / tile_rows);
    one_row = true;
  }
  if (one_row) {  // one row of per_row workgroups, folded into rows of cap_x
    x = std::min(per_row, cap_x);
    rows = (per_row + x - 1) / x;
  } else if (per_row <= cap_x) {
    x = per_row;
    rows = outer;
  } else {  // laid end to end: the shader splits the place of a workgroup by per_row
    end_to_end = true;
    x = cap_x;
    rows = (per_row * outer + x - 1) / x;
  }
  int64_t y = std::min(rows, cap_y);
  int64_t z = (rows + y - 1) / y;
  // The shader numbers workgroups (and 1-d elements) in 32 bits.
  int64_t places = task.tile_cols > 0    ? x * y * z
                   : task.grid_dims == 1 ? x * y * z * wg
                                         : per_row * outer;
  if (z > cap_z || places > int64_t{UINT32_MAX})
    throw Error(Place{"", kernel, -1, ""},
                "kernel '" + kernel + "' has a range of " +
                    std::to_string(static_cast<double>(inner) * static_cast<double>(outer)) +
                    " iterations, more than the device's workgroup grid covers");
  return GroupCount{static_cast<uint32_t>(x), static_cast<uint32_t>(y), static_cast<uint32_t>(z),
                    end_to_end};
}

// One dispatch per task with a non-empty range, each after the barrier its hazards need.
void VulkanRuntime::record_dispatches(VulkanKernel& kernel, const LaunchContext& ctx,
                                      HostCommandBuffer* host, const LaunchBindings& launch,
                                      VkDescriptorSet set) {
  const SpirvKernel& code = kernel.code();
  VkCommandBuffer cb = host ? host->cb : stream_->recording();
  uint32_t dynamic_offset = static_cast<uint32_t>(launch.args_offset);
  bool dynamic = !code.args_in_push_constants;
  for (size_t t = 0; t < code.tasks.size(); ++t) {
    const SpirvTask& task = code.tasks[t];
    std::optional<GroupCount> groups = dispatch_groups(kernel, task, ctx);
    if (!groups) continue;
    Accesses accesses = task_accesses(code, task, launch.key);
    if (host) {
      host->hazard(accesses);
      stream_->external(accesses);  // the stream's later commands come after the host's
    } else {
      stream_->hazard(accesses);
    }
    vkCmdBindPipeline(
        cb, VK_PIPELINE_BIND_POINT_COMPUTE,
        groups->rows_end_to_end ? kernel.rows_end_to_end_pipeline(t) : kernel.pipeline(t));
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, kernel.layout(), 0, 1, &set,
                            dynamic ? 1 : 0, dynamic ? &dynamic_offset : nullptr);
    if (code.args_in_push_constants)
      vkCmdPushConstants(cb, kernel.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                         static_cast<uint32_t>(launch.args.size()), launch.args.data());
    vkCmdDispatch(cb, groups->x, groups->y, groups->z);
    if (!host) stream_->count_dispatch();
    ++stats_.last_launch.dispatches;
  }
}

// What the launch wrote is now newer on the device (device-only resources have no host
// copy); caller memory is downloaded at once. True when some was.
bool VulkanRuntime::mark_device_writes(const LaunchBindings& launch) {
  bool caller_written = false;
  for (size_t b = 0; b < launch.bound.size(); ++b) {
    DeviceResource* r = launch.bound[b];
    if (!r || !r->host || !(launch.used[b] & kAccessWrite)) continue;
    r->device_newer = true;
    r->host_newer = false;
    if (r->caller_memory) {
      stream_->download(r->buffer, 0, r->host, r->bytes);
      r->device_newer = false;
      caller_written = true;
    }
  }
  return caller_written;
}

void VulkanRuntime::count_launch(const LaunchCounters& launch) {
  ++stats_.launches;
  stats_.total.argpack_uploads += launch.argpack_uploads;
  stats_.total.argpack_bytes += launch.argpack_bytes;
  stats_.total.argument_bytes += launch.argument_bytes;
  stats_.total.resource_bytes += launch.resource_bytes;
  stats_.total.dispatches += launch.dispatches;
}

std::vector<uint8_t> VulkanRuntime::pipeline_cache_data() const { return pipeline_cache_->data(); }

std::vector<MemoryAllocator::TypeUsage> VulkanRuntime::memory_usage() const {
  return allocator_->usage_by_type();
}

const RuntimeStats& VulkanRuntime::stats() {
  const CommandStream::Stats& s = stream_->stats();
  stats_.submits = s.submits;
  stats_.waits = s.waits;
  stats_.barriers = s.barriers;
  stats_.bytes_downloaded = s.bytes_downloaded;
  return stats_;
}

}  // namespace loom::vk
