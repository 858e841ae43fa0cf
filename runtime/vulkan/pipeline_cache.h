// A VkPipelineCache kept on disk, one file per device and driver, so a warm start builds no
// pipeline from scratch. A file from another device or driver is ignored; an unreadable or
// damaged one is reported through the warning callback and replaced.
#pragma once

#include <vulkan/vulkan.h>

#include <functional>
#include <string>

namespace loom::vk {

class VulkanDevice;

class PipelineCache {
 public:
  // `directory` empty: an in-memory cache only.
  PipelineCache(VulkanDevice& device, const std::string& directory,
                std::function<void(const std::string&)> warn);
  ~PipelineCache();  // saves
  PipelineCache(const PipelineCache&) = delete;
  PipelineCache& operator=(const PipelineCache&) = delete;

  VkPipelineCache handle() const { return cache_; }
  const std::string& path() const { return path_; }
  bool loaded_from_disk() const { return loaded_; }
  void save();  // atomic: temp file, then rename

 private:
  VulkanDevice& device_;
  std::function<void(const std::string&)> warn_;
  std::string path_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  bool loaded_ = false;
};

}  // namespace loom::vk
