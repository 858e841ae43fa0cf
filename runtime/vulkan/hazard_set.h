// Which resources the commands since the last barrier read and wrote. A barrier is needed
// only before a command that reads or writes what was written, or writes what was read.
// Loom's CommandStream keeps one; so does every host command buffer Loom records into.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <unordered_set>
#include <utility>
#include <vector>

namespace loom::vk {

enum Access : uint8_t { kRead = 1, kWrite = 2 };

// (resource id, Access bits) of one command.
using Accesses = std::vector<std::pair<uint64_t, uint8_t>>;

class HazardSet {
 public:
  bool conflicts(const Accesses& accesses) const;
  void add(const Accesses& accesses);
  void clear();

 private:
  std::unordered_set<uint64_t> written_, read_;
};

// The barrier a hazard needs: compute and transfer writes made visible to compute and
// transfer reads and writes.
void record_work_barrier(VkCommandBuffer cb);

}  // namespace loom::vk
