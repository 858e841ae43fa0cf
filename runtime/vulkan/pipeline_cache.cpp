#include "runtime/vulkan/pipeline_cache.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "runtime/vulkan/vk_check.h"
#include "runtime/vulkan/vulkan_device.h"

namespace loom::vk {

namespace {

// The header every pipeline cache blob starts with (VkPipelineCacheHeaderVersionOne).
bool header_matches(const std::vector<char>& data, const DeviceCaps& caps) {
  if (data.size() < 32) return false;
  uint32_t words[4];
  std::memcpy(words, data.data(), 16);
  return words[0] >= 32 && words[1] == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
         words[2] == caps.vendor_id && words[3] == caps.device_id &&
         std::memcmp(data.data() + 16, caps.pipeline_cache_uuid, VK_UUID_SIZE) == 0;
}

}  // namespace

PipelineCache::PipelineCache(VulkanDevice& device, const std::string& directory,
                             std::function<void(const std::string&)> warn,
                             const std::vector<uint8_t>& initial_data)
    : device_(device), warn_(std::move(warn)) {
  if (device.host_pipeline_cache()) {
    cache_ = device.host_pipeline_cache();
    external_ = true;
    return;
  }
  std::vector<char> data;
  if (!directory.empty()) {
    char name[96];
    const DeviceCaps& caps = device.caps();
    std::snprintf(name, sizeof name, "vulkan-pipelines-%04x-%04x-%08x.bin", caps.vendor_id,
                  caps.device_id, caps.driver_version);
    path_ = (std::filesystem::path(directory) / name).string();
    std::error_code ec;
    if (std::filesystem::exists(path_, ec) && !std::filesystem::is_regular_file(path_, ec)) {
      if (warn_)
        warn_("warning: the Vulkan pipeline cache " + path_ +
              " is not a file; pipelines are not kept on disk");
      path_.clear();
    }
    std::ifstream in(path_, std::ios::binary);
    if (!path_.empty() && in) {
      data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      if (!header_matches(data, caps)) {
        if (warn_)
          warn_("warning: ignoring the Vulkan pipeline cache " + path_ +
                " (damaged or from another driver)");
        data.clear();
      }
    }
  }
  if (data.empty() && !initial_data.empty()) {
    data.assign(initial_data.begin(), initial_data.end());
    if (!header_matches(data, device.caps())) {
      if (warn_)
        warn_("warning: ignoring the pipeline cache data given (" +
              std::to_string(initial_data.size()) +
              " bytes: damaged, or from another device or driver)");
      data.clear();
    }
  }
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  ci.initialDataSize = data.size();
  ci.pInitialData = data.empty() ? nullptr : data.data();
  VkResult r = vkCreatePipelineCache(device.device(), &ci, device.host_allocator(), &cache_);
  if (r != VK_SUCCESS && !data.empty()) {  // the driver refused the blob: start empty
    if (warn_)
      warn_("warning: the driver refused the Vulkan pipeline cache " + path_ +
            "; starting a new one");
    ci.initialDataSize = 0;
    ci.pInitialData = nullptr;
    r = vkCreatePipelineCache(device.device(), &ci, device.host_allocator(), &cache_);
    data.clear();
  }
  check(r, "creating a pipeline cache");
  loaded_ = !data.empty();
}

PipelineCache::~PipelineCache() {
  try {
    save();
  } catch (...) {
  }
  if (cache_ && !external_)
    vkDestroyPipelineCache(device_.device(), cache_, device_.host_allocator());
}

std::vector<uint8_t> PipelineCache::data() const {
  size_t size = 0;
  check(vkGetPipelineCacheData(device_.device(), cache_, &size, nullptr),
        "reading the pipeline cache's size");
  std::vector<uint8_t> out(size);
  check(vkGetPipelineCacheData(device_.device(), cache_, &size, out.data()),
        "reading the pipeline cache");
  out.resize(size);
  return out;
}

void PipelineCache::save() {
  if (path_.empty() || !cache_ || external_) return;
  size_t size = 0;
  if (vkGetPipelineCacheData(device_.device(), cache_, &size, nullptr) != VK_SUCCESS || size == 0)
    return;
  std::vector<char> data(size);
  if (vkGetPipelineCacheData(device_.device(), cache_, &size, data.data()) != VK_SUCCESS) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
  std::string tmp = path_ + ".tmp" + std::to_string(reinterpret_cast<uintptr_t>(this));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(size));
    if (!out) {
      if (warn_) warn_("warning: cannot write the Vulkan pipeline cache " + tmp);
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path_, ec);
  if (ec && warn_)
    warn_("warning: cannot replace the Vulkan pipeline cache " + path_ + ": " + ec.message());
}

}  // namespace loom::vk
