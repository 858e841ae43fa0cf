// A VkPipelineCache kept on disk, one file per device and driver, so a warm start builds no
// pipeline from scratch. A file from another device or driver is ignored; an unreadable or
// damaged one is reported through the warning callback and replaced. An engine may instead
// seed it with data it kept (same checks), or hand Loom its own VkPipelineCache
// (VulkanDevice::host_pipeline_cache(): used, never saved or destroyed).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace loom::vk {

class VulkanDevice;

class PipelineCache {
 public:
  // `directory` empty: an in-memory cache only. `initial_data`: a cache's data to start from
  // when there is no file (an engine's, from data() of an earlier run).
  PipelineCache(VulkanDevice& device, const std::string& directory,
                std::function<void(const std::string&)> warn,
                const std::vector<uint8_t>& initial_data = {});
  ~PipelineCache();  // saves
  PipelineCache(const PipelineCache&) = delete;
  PipelineCache& operator=(const PipelineCache&) = delete;

  VkPipelineCache handle() const { return cache_; }
  const std::string& path() const { return path_; }
  bool loaded_from_disk() const { return loaded_; }
  void save();  // atomic: temp file, then rename
  // The cache's data now (vkGetPipelineCacheData), to keep and give back as initial_data.
  std::vector<uint8_t> data() const;

 private:
  VulkanDevice& device_;
  std::function<void(const std::string&)> warn_;
  std::string path_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  bool external_ = false;  // the host's cache
  bool loaded_ = false;
};

}  // namespace loom::vk
