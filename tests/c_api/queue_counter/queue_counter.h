// A shared library linked into a test before the Vulkan loader: its vkQueueSubmit,
// vkQueueWaitIdle and vkDeviceWaitIdle come first in the process's symbol lookup, count the
// calls libloom.so makes (by the caller's address) and forward every call to the loader.
// queue_counter_lock/unlock are a host's queue-lock callbacks for loom.h; calls libloom
// makes outside them are counted apart.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct QueueCounts {
  uint64_t submits;           /* vkQueueSubmit by libloom */
  uint64_t queue_wait_idles;  /* vkQueueWaitIdle by libloom */
  uint64_t device_wait_idles; /* vkDeviceWaitIdle by libloom */
  uint64_t unlocked;          /* of those, made while the host's queue lock was not held */
  uint64_t host_submits;      /* vkQueueSubmit by anything else (the host) */
} QueueCounts;

QueueCounts queue_counter_read(void);
void queue_counter_lock(void* user);
void queue_counter_unlock(void* user);

#ifdef __cplusplus
}
#endif
