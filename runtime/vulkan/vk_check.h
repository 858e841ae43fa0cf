// VkResult -> loom::Error with the result's name and what it means for the user.
#pragma once

#include <vulkan/vulkan.h>

#include <string>

namespace loom::vk {

const char* result_name(VkResult r);
// Throws loom::Error("<what>: VK_ERROR_... (<meaning>)") unless `r` is VK_SUCCESS (or another
// non-error status).
void check(VkResult r, const std::string& what);

}  // namespace loom::vk
