#include "runtime/vulkan/gpu_image.h"

#include <utility>

#include "runtime/common/error.h"
#include "runtime/vulkan/gpu_buffer.h"
#include "runtime/vulkan/vk_check.h"
#include "runtime/vulkan/vulkan_device.h"

namespace loom::vk {

GpuImage::GpuImage(VulkanDevice& device, MemoryAllocator& allocator, TextureFormat format,
                   uint32_t width, uint32_t height, uint32_t depth, int ndim,
                   const std::string& what)
    : device_(&device),
      allocator_(&allocator),
      format_(format),
      extent_{width, height, depth},
      id_(next_resource_id()) {
  VkFormatProperties fp;
  vkGetPhysicalDeviceFormatProperties(device.physical(), vk_format(format), &fp);
  VkFormatFeatureFlags need =
      VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT | VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT |
      VK_FORMAT_FEATURE_TRANSFER_SRC_BIT | VK_FORMAT_FEATURE_TRANSFER_DST_BIT;
  if ((fp.optimalTilingFeatures & need) != need)
    throw Error(what + ": device '" + device.caps().name + "' cannot use " +
                texture_format_name(format) + " images for storage and sampling");
  linear_filter_ = fp.optimalTilingFeatures & VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT;
  VkImageCreateInfo ci{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ci.imageType = ndim == 3 ? VK_IMAGE_TYPE_3D : VK_IMAGE_TYPE_2D;
  ci.format = vk_format(format);
  ci.extent = extent_;
  ci.mipLevels = 1;
  ci.arrayLayers = 1;
  ci.samples = VK_SAMPLE_COUNT_1_BIT;
  ci.tiling = VK_IMAGE_TILING_OPTIMAL;
  ci.usage = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT |
             VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
  ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ci.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  check(vkCreateImage(device.device(), &ci, device.host_allocator(), &image_),
        "creating the image of " + what);
  try {
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(device.device(), image_, &req);
    memory_ = allocator.allocate(req, MemoryUse::DeviceLocal, false, what);
    check(vkBindImageMemory(device.device(), image_, memory_.memory, memory_.offset),
          "binding memory to " + what);
    VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    vi.image = image_;
    vi.viewType = ndim == 3 ? VK_IMAGE_VIEW_TYPE_3D : VK_IMAGE_VIEW_TYPE_2D;
    vi.format = ci.format;
    vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    check(vkCreateImageView(device.device(), &vi, device.host_allocator(), &view_),
          "creating the view of " + what);
  } catch (...) {
    reset();
    throw;
  }
}

GpuImage::~GpuImage() { reset(); }

void GpuImage::reset() {
  if (view_) vkDestroyImageView(device_->device(), view_, device_->host_allocator());
  if (image_) vkDestroyImage(device_->device(), image_, device_->host_allocator());
  if (memory_) allocator_->free(memory_);
  view_ = VK_NULL_HANDLE;
  image_ = VK_NULL_HANDLE;
  memory_ = {};
}

GpuImage::GpuImage(GpuImage&& o) noexcept { *this = std::move(o); }

GpuImage& GpuImage::operator=(GpuImage&& o) noexcept {
  if (this == &o) return *this;
  reset();
  device_ = o.device_;
  allocator_ = o.allocator_;
  image_ = std::exchange(o.image_, VK_NULL_HANDLE);
  view_ = std::exchange(o.view_, VK_NULL_HANDLE);
  memory_ = std::exchange(o.memory_, Allocation{});
  format_ = o.format_;
  extent_ = o.extent_;
  linear_filter_ = o.linear_filter_;
  general_ = o.general_;
  id_ = o.id_;
  return *this;
}

}  // namespace loom::vk
