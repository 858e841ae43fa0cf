#include "runtime/render/frame_loop.h"

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cstring>

#include "runtime/common/error.h"
#include "runtime/vulkan/command_stream.h"
#include "runtime/vulkan/gpu_buffer.h"
#include "runtime/vulkan/gpu_image.h"
#include "runtime/vulkan/memory_allocator.h"
#include "runtime/vulkan/pipeline_cache.h"
#include "runtime/vulkan/vk_check.h"
#include "runtime/vulkan/vulkan_device.h"

namespace loom::render {

using vk::check;

// An image the loop owns (offscreen colour, depth) in sub-allocated memory.
struct FrameLoop::Attachment {
  VkDevice device = VK_NULL_HANDLE;
  vk::MemoryAllocator* allocator = nullptr;
  VkImage image = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
  vk::Allocation memory;

  Attachment(vk::VulkanDevice& dev, vk::MemoryAllocator& alloc, VkFormat format, VkExtent2D extent,
             VkImageUsageFlags usage, VkImageAspectFlags aspect, const std::string& what)
      : device(dev.device()), allocator(&alloc) {
    VkImageCreateInfo ci{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    ci.imageType = VK_IMAGE_TYPE_2D;
    ci.format = format;
    ci.extent = {extent.width, extent.height, 1};
    ci.mipLevels = 1;
    ci.arrayLayers = 1;
    ci.samples = VK_SAMPLE_COUNT_1_BIT;
    ci.tiling = VK_IMAGE_TILING_OPTIMAL;
    ci.usage = usage;
    ci.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    check(vkCreateImage(device, &ci, nullptr, &image), "creating the " + what);
    try {
      VkMemoryRequirements req;
      vkGetImageMemoryRequirements(device, image, &req);
      memory = alloc.allocate(req, vk::MemoryUse::DeviceLocal, false, "the " + what);
      check(vkBindImageMemory(device, image, memory.memory, memory.offset),
            "binding memory to the " + what);
      VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
      vi.image = image;
      vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
      vi.format = format;
      vi.subresourceRange = {aspect, 0, 1, 0, 1};
      check(vkCreateImageView(device, &vi, nullptr, &view), "creating a view of the " + what);
    } catch (...) {
      release();
      throw;
    }
  }
  ~Attachment() { release(); }
  Attachment(const Attachment&) = delete;
  Attachment& operator=(const Attachment&) = delete;
  void release() {
    if (view) vkDestroyImageView(device, view, nullptr);
    if (image) vkDestroyImage(device, image, nullptr);
    if (memory) allocator->free(memory);
    view = VK_NULL_HANDLE;
    image = VK_NULL_HANDLE;
    memory = {};
  }
};

struct FrameLoop::Target {
  VkImage image = VK_NULL_HANDLE;     // a swapchain image, or `owned`
  VkImageView view = VK_NULL_HANDLE;  // ours for swapchain images
  VkFramebuffer framebuffer = VK_NULL_HANDLE;
  std::unique_ptr<Attachment> owned;
};

struct FrameLoop::Slot {
  uint32_t index = 0;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkFence done = VK_NULL_HANDLE;          // signalled when the slot's last frame completed
  VkSemaphore acquired = VK_NULL_HANDLE;  // the swapchain image may be drawn into
  bool submitted = false;                 // `done` will signal (or has)
  uint64_t frame = 0;                     // the frame last submitted from this slot
  bool capture_requested = false;
  bool has_capture = false;
  VkExtent2D capture_extent{};
  bool capture_bgra = false;
  std::unique_ptr<vk::GpuBuffer> readback;
};

namespace {

bool format_supports(VkPhysicalDevice pd, VkFormat format, VkFormatFeatureFlags need) {
  VkFormatProperties p;
  vkGetPhysicalDeviceFormatProperties(pd, format, &p);
  return (p.optimalTilingFeatures & need) == need;
}

bool is_bgra(VkFormat f) { return f == VK_FORMAT_B8G8R8A8_UNORM || f == VK_FORMAT_B8G8R8A8_SRGB; }

}  // namespace

// ------------------------------------------------------------------------------ creation

FrameLoop::FrameLoop(vk::VulkanDevice& device, GLFWwindow* window, const FrameLoopOptions& options)
    : device_(device), window_(window), options_(options) {}

std::unique_ptr<FrameLoop> FrameLoop::for_window(vk::VulkanDevice& device, GLFWwindow* window,
                                                 const FrameLoopOptions& options) {
  if (!window) throw Error("FrameLoop::for_window: no GLFW window");
  if (!device.surface())
    throw Error("Vulkan device '" + device.caps().name +
                "' has no window surface: create it with DeviceOptions::surface "
                "(glfwCreateWindowSurface) and "
                "graphics = true");
  std::unique_ptr<FrameLoop> loop(new FrameLoop(device, window, options));
  loop->create_common();
  int w = 0, h = 0;
  glfwGetFramebufferSize(window, &w, &h);
  loop->build_swapchain(static_cast<uint32_t>(std::max(w, 0)),
                        static_cast<uint32_t>(std::max(h, 0)));
  return loop;
}

std::unique_ptr<FrameLoop> FrameLoop::offscreen(vk::VulkanDevice& device, uint32_t width,
                                                uint32_t height, const FrameLoopOptions& options) {
  if (width == 0 || height == 0 || width > 16384 || height > 16384)
    throw Error("offscreen frame of " + std::to_string(width) + "x" + std::to_string(height) +
                " pixels: sizes are 1 to 16384");
  std::unique_ptr<FrameLoop> loop(new FrameLoop(device, nullptr, options));
  loop->create_common();
  loop->build_targets(width, height);
  return loop;
}

VkDevice FrameLoop::vk() const { return device_.device(); }

void FrameLoop::create_common() {
  if (options_.frames_in_flight < 1 || options_.frames_in_flight > 3)
    throw Error("frames in flight must be 1, 2 or 3, not " +
                std::to_string(options_.frames_in_flight));
  VkPhysicalDevice pd = device_.physical();
  VkQueueFamilyProperties family{};
  {
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
    std::vector<VkQueueFamilyProperties> all(n);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, all.data());
    if (device_.queue_family() < n) family = all[device_.queue_family()];
  }
  if (!(family.queueFlags & VK_QUEUE_GRAPHICS_BIT))
    throw Error(
        "Vulkan device '" + device_.caps().name +
        "' was made without a graphics queue: create it with DeviceOptions::graphics = true");

  allocator_ = std::make_unique<vk::MemoryAllocator>(device_, 32ull << 20);
  uploads_ = std::make_unique<vk::CommandStream>(device_, *allocator_);
  pipeline_cache_ =
      std::make_unique<vk::PipelineCache>(device_, options_.pipeline_cache_dir, nullptr);

  // Depth: D32 where it can be an attachment, else the 24-bit formats (one is always there).
  const VkFormat depths[] = {VK_FORMAT_D32_SFLOAT, VK_FORMAT_X8_D24_UNORM_PACK32,
                             VK_FORMAT_D24_UNORM_S8_UINT, VK_FORMAT_D32_SFLOAT_S8_UINT,
                             VK_FORMAT_D16_UNORM};
  depth_format_ = VK_FORMAT_UNDEFINED;
  for (VkFormat f : depths)
    if (format_supports(pd, f, VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT)) {
      depth_format_ = f;
      break;
    }
  if (depth_format_ == VK_FORMAT_UNDEFINED)
    throw Error("Vulkan device '" + device_.caps().name + "' offers no depth attachment format");

  if (window_) {
    VkSurfaceKHR surface = device_.surface();
    uint32_t n = 0;
    check(vkGetPhysicalDeviceSurfaceFormatsKHR(pd, surface, &n, nullptr),
          "listing the window's surface formats");
    std::vector<VkSurfaceFormatKHR> formats(n);
    vkGetPhysicalDeviceSurfaceFormatsKHR(pd, surface, &n, formats.data());
    if (formats.empty()) throw Error("the window's surface offers no image formats");
    // UNORM, as Dear ImGui's colours and our shaders expect (they write display values).
    VkSurfaceFormatKHR chosen = formats[0];
    if (chosen.format == VK_FORMAT_UNDEFINED)
      chosen = {VK_FORMAT_B8G8R8A8_UNORM, VK_COLOR_SPACE_SRGB_NONLINEAR_KHR};
    bool found = false;
    for (VkFormat want : {VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_R8G8B8A8_UNORM})
      for (const auto& f : formats)
        if (!found && f.format == want && f.colorSpace == VK_COLOR_SPACE_SRGB_NONLINEAR_KHR) {
          chosen = f;
          found = true;
        }
    color_format_ = chosen.format;
    color_space_ = chosen.colorSpace;
    check(vkGetPhysicalDeviceSurfacePresentModesKHR(pd, surface, &n, nullptr),
          "listing present modes");
    std::vector<VkPresentModeKHR> modes(n);
    vkGetPhysicalDeviceSurfacePresentModesKHR(pd, surface, &n, modes.data());
    present_mode_ = VK_PRESENT_MODE_FIFO_KHR;  // always offered
    if (!options_.vsync)
      for (VkPresentModeKHR want : {VK_PRESENT_MODE_MAILBOX_KHR, VK_PRESENT_MODE_IMMEDIATE_KHR})
        if (present_mode_ == VK_PRESENT_MODE_FIFO_KHR &&
            std::count(modes.begin(), modes.end(), want))
          present_mode_ = want;
  } else {
    color_format_ = VK_FORMAT_R8G8B8A8_UNORM;  // blendable colour attachment on every device
  }
  create_render_pass();

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = device_.queue_family();
  check(vkCreateCommandPool(vk(), &pci, nullptr, &pool_),
        "creating the render loop's command pool");

  VkDescriptorPoolSize ui_sizes[] = {{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 64}};
  VkDescriptorPoolCreateInfo dci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dci.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
  dci.maxSets = 64;
  dci.poolSizeCount = 1;
  dci.pPoolSizes = ui_sizes;
  check(vkCreateDescriptorPool(vk(), &dci, nullptr, &ui_descriptors_),
        "creating the UI descriptor pool");

  for (uint32_t i = 0; i < options_.frames_in_flight; ++i) {
    auto s = std::make_unique<Slot>();
    s->index = i;
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    check(vkAllocateCommandBuffers(vk(), &ai, &s->commands), "allocating a frame's command buffer");
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(vk(), &fci, nullptr, &s->done), "creating a frame fence");
    VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    check(vkCreateSemaphore(vk(), &sci, nullptr, &s->acquired), "creating a frame semaphore");
    slots_.push_back(std::move(s));
  }
}

void FrameLoop::create_render_pass() {
  VkAttachmentDescription att[2]{};
  att[0].format = color_format_;
  att[0].samples = VK_SAMPLE_COUNT_1_BIT;
  att[0].loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  att[0].storeOp = VK_ATTACHMENT_STORE_OP_STORE;
  att[0].stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  att[0].stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  att[0].initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  att[0].finalLayout =
      window_ ? VK_IMAGE_LAYOUT_PRESENT_SRC_KHR : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
  att[1].format = depth_format_;
  att[1].samples = VK_SAMPLE_COUNT_1_BIT;
  att[1].loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  att[1].storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  att[1].stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  att[1].stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  att[1].initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  att[1].finalLayout = VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL;
  VkAttachmentReference color{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
  VkAttachmentReference depth{1, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL};
  VkSubpassDescription sub{};
  sub.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
  sub.colorAttachmentCount = 1;
  sub.pColorAttachments = &color;
  sub.pDepthStencilAttachment = &depth;
  VkSubpassDependency deps[2]{};
  // In: earlier frames' attachment writes and the previous readback of this image, and the
  // uploads submitted just before this frame (vertex, index and texture data).
  deps[0].srcSubpass = VK_SUBPASS_EXTERNAL;
  deps[0].dstSubpass = 0;
  deps[0].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT |
                         VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  deps[0].srcAccessMask =
      VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  deps[0].dstStageMask =
      VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT | VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT |
      VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT | VK_PIPELINE_STAGE_VERTEX_INPUT_BIT |
      VK_PIPELINE_STAGE_VERTEX_SHADER_BIT | VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT;
  deps[0].dstAccessMask =
      VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT | VK_ACCESS_COLOR_ATTACHMENT_READ_BIT |
      VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT | VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT |
      VK_ACCESS_VERTEX_ATTRIBUTE_READ_BIT | VK_ACCESS_INDEX_READ_BIT | VK_ACCESS_SHADER_READ_BIT;
  // Out: the colour written, to the readback copy (offscreen) or presentation.
  deps[1].srcSubpass = 0;
  deps[1].dstSubpass = VK_SUBPASS_EXTERNAL;
  deps[1].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  deps[1].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
  deps[1].dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT;
  deps[1].dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
  VkRenderPassCreateInfo ci{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
  ci.attachmentCount = 2;
  ci.pAttachments = att;
  ci.subpassCount = 1;
  ci.pSubpasses = &sub;
  ci.dependencyCount = 2;
  ci.pDependencies = deps;
  check(vkCreateRenderPass(vk(), &ci, nullptr, &render_pass_), "creating the render pass");
}

void FrameLoop::destroy_targets() {
  for (auto& t : targets_) {
    if (t->framebuffer) vkDestroyFramebuffer(vk(), t->framebuffer, nullptr);
    if (!t->owned && t->view) vkDestroyImageView(vk(), t->view, nullptr);
  }
  targets_.clear();
  depth_.reset();
}

namespace {

VkFramebuffer make_framebuffer(VkDevice device, VkRenderPass pass, VkImageView color,
                               VkImageView depth, VkExtent2D extent) {
  VkImageView views[2] = {color, depth};
  VkFramebufferCreateInfo ci{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
  ci.renderPass = pass;
  ci.attachmentCount = 2;
  ci.pAttachments = views;
  ci.width = extent.width;
  ci.height = extent.height;
  ci.layers = 1;
  VkFramebuffer fb;
  check(vkCreateFramebuffer(device, &ci, nullptr, &fb), "creating a framebuffer");
  return fb;
}

}  // namespace

void FrameLoop::build_targets(uint32_t width, uint32_t height) {
  destroy_targets();
  extent_ = {width, height};
  depth_ = std::make_unique<Attachment>(device_, *allocator_, depth_format_, extent_,
                                        VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT,
                                        VK_IMAGE_ASPECT_DEPTH_BIT, "depth image of the frame");
  for (size_t i = 0; i < slots_.size(); ++i) {
    auto t = std::make_unique<Target>();
    t->owned = std::make_unique<Attachment>(device_, *allocator_, color_format_, extent_,
                                            VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT |
                                                VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                                                VK_IMAGE_USAGE_SAMPLED_BIT,
                                            VK_IMAGE_ASPECT_COLOR_BIT, "offscreen colour image");
    t->image = t->owned->image;
    t->view = t->owned->view;
    t->framebuffer = make_framebuffer(vk(), render_pass_, t->view, depth_->view, extent_);
    targets_.push_back(std::move(t));
  }
  min_image_count_ = 2;
  image_count_ = std::max<uint32_t>(2, frames_in_flight());
}

void FrameLoop::build_swapchain(uint32_t width, uint32_t height) {
  VkPhysicalDevice pd = device_.physical();
  VkSurfaceKHR surface = device_.surface();
  VkSurfaceCapabilitiesKHR caps;
  check(vkGetPhysicalDeviceSurfaceCapabilitiesKHR(pd, surface, &caps),
        "reading the window surface's capabilities");
  VkExtent2D extent = caps.currentExtent;
  if (extent.width == UINT32_MAX) {  // the surface takes the swapchain's size
    extent.width = std::clamp(width, caps.minImageExtent.width, caps.maxImageExtent.width);
    extent.height = std::clamp(height, caps.minImageExtent.height, caps.maxImageExtent.height);
  }
  rebuild_ = false;
  if (extent.width == 0 || extent.height == 0) {  // minimised: nothing to build until it comes back
    extent_ = extent;
    return;
  }
  uint32_t count = std::max(caps.minImageCount + 1, frames_in_flight());
  if (caps.maxImageCount) count = std::min(count, caps.maxImageCount);
  swapchain_copyable_ = caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
  VkCompositeAlphaFlagBitsKHR alpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
  if (!(caps.supportedCompositeAlpha & alpha))
    for (VkCompositeAlphaFlagBitsKHR a :
         {VK_COMPOSITE_ALPHA_INHERIT_BIT_KHR, VK_COMPOSITE_ALPHA_PRE_MULTIPLIED_BIT_KHR,
          VK_COMPOSITE_ALPHA_POST_MULTIPLIED_BIT_KHR})
      if (caps.supportedCompositeAlpha & a) {
        alpha = a;
        break;
      }

  VkSwapchainCreateInfoKHR ci{VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR};
  ci.surface = surface;
  ci.minImageCount = count;
  ci.imageFormat = color_format_;
  ci.imageColorSpace = color_space_;
  ci.imageExtent = extent;
  ci.imageArrayLayers = 1;
  ci.imageUsage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT |
                  (swapchain_copyable_ ? VK_IMAGE_USAGE_TRANSFER_SRC_BIT : 0);
  ci.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ci.preTransform = caps.currentTransform;
  ci.compositeAlpha = alpha;
  ci.presentMode = present_mode_;
  ci.clipped = VK_TRUE;
  ci.oldSwapchain = swapchain_;
  VkSwapchainKHR fresh = VK_NULL_HANDLE;
  check(vkCreateSwapchainKHR(vk(), &ci, nullptr, &fresh), "creating the window's swapchain");
  destroy_targets();
  if (swapchain_) vkDestroySwapchainKHR(vk(), swapchain_, nullptr);
  swapchain_ = fresh;
  extent_ = extent;

  uint32_t n = 0;
  vkGetSwapchainImagesKHR(vk(), swapchain_, &n, nullptr);
  std::vector<VkImage> images(n);
  vkGetSwapchainImagesKHR(vk(), swapchain_, &n, images.data());
  depth_ = std::make_unique<Attachment>(device_, *allocator_, depth_format_, extent_,
                                        VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT,
                                        VK_IMAGE_ASPECT_DEPTH_BIT, "depth image of the window");
  for (VkImage image : images) {
    auto t = std::make_unique<Target>();
    t->image = image;
    VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    vi.image = image;
    vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
    vi.format = color_format_;
    vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    check(vkCreateImageView(vk(), &vi, nullptr, &t->view), "creating a view of a swapchain image");
    t->framebuffer = make_framebuffer(vk(), render_pass_, t->view, depth_->view, extent_);
    targets_.push_back(std::move(t));
  }
  // Semaphores stay across rebuilds: one may still be waited on by a presentation.
  while (rendered_.size() < images.size()) {
    VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    VkSemaphore s;
    check(vkCreateSemaphore(vk(), &sci, nullptr, &s), "creating a present semaphore");
    rendered_.push_back(s);
  }
  min_image_count_ = std::max<uint32_t>(2, caps.minImageCount);
  // Dear ImGui keeps this many vertex buffers and cycles through them: at least one per frame
  // in flight. Fixed at its init, so never lowered by a rebuild.
  image_count_ = std::max({image_count_, n, frames_in_flight(), min_image_count_});
  ++stats_.swapchain_rebuilds;
}

FrameLoop::~FrameLoop() {
  try {
    wait_all_frames();
  } catch (...) {  // a lost device: nothing left to wait for
  }
  uploads_.reset();  // waits for its own submissions
  // Presentation has no fence (before VK_EXT_swapchain_maintenance1): at teardown only, the
  // device must be idle before the swapchain and its semaphores go.
  if (swapchain_) vkDeviceWaitIdle(vk());
  retired_.clear();
  destroy_targets();
  if (swapchain_) vkDestroySwapchainKHR(vk(), swapchain_, nullptr);
  for (VkSemaphore s : rendered_) vkDestroySemaphore(vk(), s, nullptr);
  for (auto& s : slots_) {
    s->readback.reset();
    if (s->done) vkDestroyFence(vk(), s->done, nullptr);
    if (s->acquired) vkDestroySemaphore(vk(), s->acquired, nullptr);
  }
  slots_.clear();
  if (pool_) vkDestroyCommandPool(vk(), pool_, nullptr);
  if (ui_descriptors_) vkDestroyDescriptorPool(vk(), ui_descriptors_, nullptr);
  if (render_pass_) vkDestroyRenderPass(vk(), render_pass_, nullptr);
  pipeline_cache_.reset();
  allocator_.reset();
}

// ------------------------------------------------------------------------------ frames

void FrameLoop::wait_slot(Slot& s) {
  if (s.submitted) {
    if (vkGetFenceStatus(vk(), s.done) == VK_NOT_READY) ++stats_.fence_waits;
    check(vkWaitForFences(vk(), 1, &s.done, VK_TRUE, UINT64_MAX), "waiting for a frame");
    // Submissions complete in order for what a fence covers: every earlier frame is done too.
    completed_frames_ = std::max(completed_frames_, s.frame + 1);
    s.submitted = false;
  }
  if (s.has_capture) land_capture(s);
  auto done = [&](const auto& r) { return r.first < completed_frames_; };
  retired_.erase(std::remove_if(retired_.begin(), retired_.end(), done), retired_.end());
}

void FrameLoop::wait_all_frames() {
  for (auto& s : slots_) wait_slot(*s);
}

void FrameLoop::wait_frames() {
  if (in_frame_) throw Error("FrameLoop::wait_frames inside a frame");
  uploads_->finish();  // uploads not yet submitted may write what was retired
  wait_all_frames();
  retired_.clear();  // nothing recorded, submitted or in flight can use them now
}

bool FrameLoop::begin_frame(Frame* frame) {
  if (in_frame_)
    throw Error("FrameLoop::begin_frame: the previous frame was not ended (end_frame)");
  if (window_) {
    int w = 0, h = 0;
    glfwGetFramebufferSize(window_, &w, &h);
    if (w <= 0 || h <= 0) {
      ++stats_.skipped;
      return false;
    }
    if (rebuild_ || !swapchain_ || extent_.width != static_cast<uint32_t>(w) ||
        extent_.height != static_cast<uint32_t>(h)) {
      wait_all_frames();
      build_swapchain(static_cast<uint32_t>(w), static_cast<uint32_t>(h));
      if (!swapchain_ || extent_.width == 0 || extent_.height == 0) {
        ++stats_.skipped;
        return false;
      }
    }
  }
  uint32_t index = static_cast<uint32_t>(frame_number_ % slots_.size());
  Slot& s = *slots_[index];
  wait_slot(s);
  if (window_) {
    VkResult r = VK_ERROR_OUT_OF_DATE_KHR;
    for (int attempt = 0; attempt < 2 && r == VK_ERROR_OUT_OF_DATE_KHR; ++attempt) {
      r = vkAcquireNextImageKHR(vk(), swapchain_, UINT64_MAX, s.acquired, VK_NULL_HANDLE, &image_);
      if (r == VK_ERROR_OUT_OF_DATE_KHR) {
        int w = 0, h = 0;
        glfwGetFramebufferSize(window_, &w, &h);
        wait_all_frames();
        build_swapchain(static_cast<uint32_t>(std::max(w, 0)),
                        static_cast<uint32_t>(std::max(h, 0)));
        if (!swapchain_ || extent_.width == 0) break;
      }
    }
    if (r == VK_ERROR_OUT_OF_DATE_KHR) {
      ++stats_.skipped;
      return false;
    }
    if (r == VK_SUBOPTIMAL_KHR)
      rebuild_ = true;  // draw this one, rebuild before the next
    else
      check(r, "acquiring a swapchain image");
  } else {
    image_ = index;
  }
  check(vkResetFences(vk(), 1, &s.done), "resetting a frame fence");
  check(vkResetCommandBuffer(s.commands, 0), "resetting a frame's command buffer");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(s.commands, &bi), "beginning a frame's command buffer");
  VkClearValue clear[2]{};
  std::memcpy(clear[0].color.float32, options_.clear_color.data(), sizeof(float) * 4);
  clear[1].depthStencil = {1.0f, 0};
  VkRenderPassBeginInfo rbi{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
  rbi.renderPass = render_pass_;
  rbi.framebuffer = targets_[image_]->framebuffer;
  rbi.renderArea = {{0, 0}, extent_};
  rbi.clearValueCount = 2;
  rbi.pClearValues = clear;
  vkCmdBeginRenderPass(s.commands, &rbi, VK_SUBPASS_CONTENTS_INLINE);
  VkViewport vp{0, 0, static_cast<float>(extent_.width), static_cast<float>(extent_.height), 0, 1};
  VkRect2D scissor{{0, 0}, extent_};
  vkCmdSetViewport(s.commands, 0, 1, &vp);
  vkCmdSetScissor(s.commands, 0, 1, &scissor);
  in_frame_ = true;
  *frame = {s.commands, extent_, index, frame_number_};
  return true;
}

void FrameLoop::end_frame() {
  if (!in_frame_) throw Error("FrameLoop::end_frame without begin_frame");
  in_frame_ = false;
  Slot& s = *slots_[frame_number_ % slots_.size()];
  vkCmdEndRenderPass(s.commands);
  if (s.capture_requested) record_capture(s, targets_[image_]->image);
  check(vkEndCommandBuffer(s.commands), "ending a frame's command buffer");
  uploads_
      ->submit();  // before the frame, which reads what they write (the render pass orders them)

  VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &s.commands;
  if (window_) {
    si.waitSemaphoreCount = 1;
    si.pWaitSemaphores = &s.acquired;
    si.pWaitDstStageMask = &wait_stage;
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &rendered_[image_];
  }
  check(vkQueueSubmit(device_.queue(), 1, &si, s.done), "submitting a frame");
  s.submitted = true;
  s.frame = frame_number_++;
  ++stats_.frames;
  if (!window_) return;
  VkPresentInfoKHR pi{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
  pi.waitSemaphoreCount = 1;
  pi.pWaitSemaphores = &rendered_[image_];
  pi.swapchainCount = 1;
  pi.pSwapchains = &swapchain_;
  pi.pImageIndices = &image_;
  VkResult r = vkQueuePresentKHR(device_.queue(), &pi);
  if (r == VK_ERROR_OUT_OF_DATE_KHR || r == VK_SUBOPTIMAL_KHR)
    rebuild_ = true;
  else
    check(r, "presenting a frame");
}

void FrameLoop::resize(uint32_t width, uint32_t height) {
  if (in_frame_) throw Error("FrameLoop::resize inside a frame");
  if (window_) {
    rebuild_ = true;  // the window's framebuffer size decides
    return;
  }
  if (width == 0 || height == 0 || width > 16384 || height > 16384)
    throw Error("offscreen frame of " + std::to_string(width) + "x" + std::to_string(height) +
                " pixels: sizes are 1 to 16384");
  if (width == extent_.width && height == extent_.height) return;
  wait_all_frames();
  build_targets(width, height);
}

// ------------------------------------------------------------------------------ captures

void FrameLoop::capture_frame() {
  if (!in_frame_)
    throw Error(
        "FrameLoop::capture_frame outside a frame (call it between begin_frame and end_frame)");
  if (window_ && !swapchain_copyable_)
    throw Error("Vulkan device '" + device_.caps().name +
                "' cannot copy from the window's swapchain images: no screenshots of this window");
  slots_[frame_number_ % slots_.size()]->capture_requested = true;
}

void FrameLoop::record_capture(Slot& s, VkImage image) {
  s.capture_requested = false;
  VkDeviceSize bytes = VkDeviceSize{extent_.width} * extent_.height * 4;
  if (!s.readback || s.readback->size() < bytes)
    s.readback = std::make_unique<vk::GpuBuffer>(device_, *allocator_, bytes,
                                                 VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                                 vk::MemoryUse::Readback, "frame readback");
  VkImageMemoryBarrier ib{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
  ib.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  ib.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  ib.image = image;
  ib.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  if (window_) {  // presentable -> copy source (the render pass' own dependency covers offscreen)
    ib.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    ib.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    ib.oldLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    ib.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    vkCmdPipelineBarrier(s.commands, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0, nullptr, 1, &ib);
  }
  VkBufferImageCopy region{};
  region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  region.imageExtent = {extent_.width, extent_.height, 1};
  vkCmdCopyImageToBuffer(s.commands, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                         s.readback->handle(), 1, &region);
  if (window_) {
    ib.srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    ib.dstAccessMask = 0;
    ib.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    ib.newLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    vkCmdPipelineBarrier(s.commands, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0, nullptr, 0, nullptr, 1, &ib);
  }
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(s.commands, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                       &mb, 0, nullptr, 0, nullptr);
  // A newer capture replaces one not yet taken.
  for (auto& other : slots_) other->has_capture = false;
  s.has_capture = true;
  s.capture_extent = extent_;
  s.capture_bgra = is_bgra(color_format_);
  capture_slot_ = static_cast<int>(s.index);
  ++stats_.captures;
}

void FrameLoop::land_capture(Slot& s) {
  s.has_capture = false;
  capture_slot_ = -1;
  captured_.width = static_cast<int>(s.capture_extent.width);
  captured_.height = static_cast<int>(s.capture_extent.height);
  size_t bytes = static_cast<size_t>(captured_.width) * captured_.height * 4;
  captured_.pixels.assign(s.readback->mapped(), s.readback->mapped() + bytes);
  if (s.capture_bgra)
    for (size_t i = 0; i < bytes; i += 4) std::swap(captured_.pixels[i], captured_.pixels[i + 2]);
  have_capture_ = true;
}

RgbaImage FrameLoop::take_capture() {
  if (capture_slot_ >= 0) wait_slot(*slots_[static_cast<size_t>(capture_slot_)]);
  if (!have_capture_)
    throw Error(
        "FrameLoop::take_capture: no frame was captured (call capture_frame between begin_frame "
        "and end_frame)");
  have_capture_ = false;
  return std::move(captured_);
}

// ------------------------------------------------------------------------------ for renderers

RenderContext FrameLoop::context() const {
  RenderContext c;
  c.instance = device_.instance();
  c.physical_device = device_.physical();
  c.device = device_.device();
  c.queue_family = device_.queue_family();
  c.queue = device_.queue();
  c.pipeline_cache = pipeline_cache();
  c.descriptor_pool = ui_descriptors_;
  c.render_pass = render_pass_;
  c.min_image_count = min_image_count_;
  c.image_count = image_count_;
  return c;
}

VkPipelineCache FrameLoop::pipeline_cache() const { return pipeline_cache_->handle(); }

void FrameLoop::submit_once(const std::function<void(VkCommandBuffer)>& record) {
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb;
  check(vkAllocateCommandBuffers(vk(), &ai, &cb), "allocating a one-time command buffer");
  VkFence fence = VK_NULL_HANDLE;
  try {
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cb, &bi), "beginning a one-time command buffer");
    record(cb);
    check(vkEndCommandBuffer(cb), "ending a one-time command buffer");
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(vk(), &fci, nullptr, &fence), "creating a fence");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    check(vkQueueSubmit(device_.queue(), 1, &si, fence), "submitting a one-time command buffer");
    check(vkWaitForFences(vk(), 1, &fence, VK_TRUE, UINT64_MAX),
          "waiting for a one-time command buffer");
  } catch (...) {
    if (fence) vkDestroyFence(vk(), fence, nullptr);
    vkFreeCommandBuffers(vk(), pool_, 1, &cb);
    throw;
  }
  vkDestroyFence(vk(), fence, nullptr);
  vkFreeCommandBuffers(vk(), pool_, 1, &cb);
}

void FrameLoop::begin_uploads() {
  VkCommandBuffer cb = uploads_->recording();
  if (upload_barrier_at_ == uploads_->recording_value()) return;
  // Write-after-read: frames submitted earlier may still read what this recording overwrites.
  // An execution dependency on the device; the host does not wait.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  vkCmdPipelineBarrier(cb,
                       VK_PIPELINE_STAGE_VERTEX_INPUT_BIT | VK_PIPELINE_STAGE_VERTEX_SHADER_BIT |
                           VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  upload_barrier_at_ = uploads_->recording_value();
}

uint8_t* FrameLoop::upload_to(const vk::GpuBuffer& dst, VkDeviceSize offset, VkDeviceSize bytes) {
  if (bytes == 0) return nullptr;
  begin_uploads();
  VkBuffer staging;
  VkDeviceSize at;
  uint8_t* host = uploads_->scratch(bytes, 16, &staging, &at);
  uploads_->hazard({{dst.id(), vk::kWrite}});
  VkBufferCopy region{at, offset, bytes};
  vkCmdCopyBuffer(uploads_->recording(), staging, dst.handle(), 1, &region);
  stats_.upload_bytes += bytes;
  ++stats_.uploads;
  return host;
}

uint8_t* FrameLoop::upload_to(vk::GpuImage& dst) {
  begin_uploads();
  VkBuffer staging;
  VkDeviceSize at;
  uint8_t* host = uploads_->scratch(dst.bytes(), 16, &staging, &at);
  uploads_->prepare_image(dst);
  uploads_->hazard({{dst.id(), vk::kWrite}});
  VkBufferImageCopy region{};
  region.bufferOffset = at;
  region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  region.imageExtent = dst.extent();
  vkCmdCopyBufferToImage(uploads_->recording(), staging, dst.image(), VK_IMAGE_LAYOUT_GENERAL, 1,
                         &region);
  stats_.upload_bytes += dst.bytes();
  ++stats_.uploads;
  return host;
}

void FrameLoop::retire_shared(std::shared_ptr<void> resource) {
  // Frames up to the one being recorded (or, between frames, the last one) may use it: free
  // it once frame `frame_number_` has completed.
  retired_.emplace_back(frame_number_, std::move(resource));
}

}  // namespace loom::render
