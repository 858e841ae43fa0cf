#include "queue_counter.h"

#include <dlfcn.h>
#include <vulkan/vulkan.h>

#include <atomic>
#include <cstring>

namespace {

std::atomic<uint64_t> submits{0}, queue_wait_idles{0}, device_wait_idles{0}, unlocked{0},
    host_submits{0};
std::atomic<int> lock_depth{0};

bool from_loom(const void* return_address) {
  Dl_info info;
  return dladdr(return_address, &info) && info.dli_fname &&
         std::strstr(info.dli_fname, "libloom.so") != nullptr;
}

void count(std::atomic<uint64_t>& counter) {
  ++counter;
  if (lock_depth.load() == 0) ++unlocked;
}

template <typename F>
F next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

VKAPI_ATTR VkResult VKAPI_CALL vkQueueSubmit(VkQueue queue, uint32_t count_, const VkSubmitInfo* s,
                                             VkFence fence) {
  if (from_loom(__builtin_return_address(0)))
    count(submits);
  else
    ++host_submits;
  static auto real = next<PFN_vkQueueSubmit>("vkQueueSubmit");
  return real(queue, count_, s, fence);
}

VKAPI_ATTR VkResult VKAPI_CALL vkQueueWaitIdle(VkQueue queue) {
  if (from_loom(__builtin_return_address(0))) count(queue_wait_idles);
  static auto real = next<PFN_vkQueueWaitIdle>("vkQueueWaitIdle");
  return real(queue);
}

VKAPI_ATTR VkResult VKAPI_CALL vkDeviceWaitIdle(VkDevice device) {
  if (from_loom(__builtin_return_address(0))) count(device_wait_idles);
  static auto real = next<PFN_vkDeviceWaitIdle>("vkDeviceWaitIdle");
  return real(device);
}

QueueCounts queue_counter_read(void) {
  return QueueCounts{submits.load(), queue_wait_idles.load(), device_wait_idles.load(),
                     unlocked.load(), host_submits.load()};
}

void queue_counter_lock(void*) { ++lock_depth; }
void queue_counter_unlock(void*) { --lock_depth; }

}  // extern "C"
