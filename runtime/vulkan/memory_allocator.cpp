#include "runtime/vulkan/memory_allocator.h"

#include <algorithm>
#include <cstdio>

#include "runtime/common/error.h"
#include "runtime/vulkan/vk_check.h"
#include "runtime/vulkan/vulkan_device.h"

namespace loom::vk {

namespace {

VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) { return a ? (v + a - 1) / a * a : v; }

std::string mib(VkDeviceSize bytes) {
  return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB";
}

// Budgets differ from usage by fractions of a MiB: one decimal, so they never read alike.
std::string mib_tenths(VkDeviceSize bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

}  // namespace

MemoryAllocator::MemoryAllocator(VulkanDevice& device, VkDeviceSize min_block,
                                 VkDeviceSize max_block, BudgetSource budget)
    // A first block of at least 64 KiB: the doubling in shared_block_size starts from it.
    : device_(device),
      min_block_(std::max<VkDeviceSize>(min_block, 64 << 10)),
      max_block_(std::max(min_block_, max_block)),
      budget_(std::move(budget)) {
  if (!budget_)
    budget_ = [&device](VkPhysicalDeviceMemoryBudgetPropertiesEXT* out) {
      return device.memory_budget(out);
    };
}

MemoryAllocator::~MemoryAllocator() {
  for (auto& [id, b] : blocks_) release(b);
}

// Back to where the block came from; unmapped first, so a host's block allocator gets its
// memory back as it gave it.
void MemoryAllocator::release(const Block& b) {
  if (b.mapped) vkUnmapMemory(device_.device(), b.memory);
  device_.free_memory(b.memory);
}

// Memory types that can hold the resource, best first.
std::vector<uint32_t> MemoryAllocator::candidate_types(uint32_t type_bits, MemoryUse use) const {
  const VkPhysicalDeviceMemoryProperties& mp = device_.memory_properties();
  VkMemoryPropertyFlags required = 0, preferred = 0, avoided = 0;
  switch (use) {
    case MemoryUse::DeviceLocal: preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT; break;
    case MemoryUse::Upload:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      avoided = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
      break;
    case MemoryUse::Readback:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
      break;
  }
  std::vector<std::pair<int, uint32_t>> scored;
  for (uint32_t i = 0; i < mp.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    VkMemoryPropertyFlags f = mp.memoryTypes[i].propertyFlags;
    if ((f & required) != required) continue;
    int score = ((f & preferred) == preferred ? 2 : 0) + ((f & avoided) ? 0 : 1);
    scored.push_back({-score, i});
  }
  std::stable_sort(scored.begin(), scored.end());
  std::vector<uint32_t> out;
  out.reserve(scored.size());
  for (auto& s : scored) out.push_back(s.second);
  return out;
}

bool MemoryAllocator::take(Block& b, const VkMemoryRequirements& req, Allocation* out) {
  for (size_t i = 0; i < b.free.size(); ++i) {
    Range r = b.free[i];
    VkDeviceSize start = align_up(r.offset, req.alignment);
    if (start + req.size > r.offset + r.size) continue;
    // Split: what lies before the aligned start and after the end stays free.
    std::vector<Range> rest;
    if (start > r.offset) rest.push_back({r.offset, start - r.offset});
    VkDeviceSize end = start + req.size;
    if (end < r.offset + r.size) rest.push_back({end, r.offset + r.size - end});
    b.free.erase(b.free.begin() + static_cast<long>(i));
    b.free.insert(b.free.begin() + static_cast<long>(i), rest.begin(), rest.end());
    out->memory = b.memory;
    out->offset = start;
    out->size = req.size;
    out->mapped = b.mapped ? b.mapped + start : nullptr;
    out->type = b.type;
    ++b.live;
    b.used += req.size;
    return true;
  }
  return false;
}

int64_t MemoryAllocator::new_block(uint32_t type, VkDeviceSize size, bool linear, bool dedicated,
                                   VkResult* result) {
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = size;
  ai.memoryTypeIndex = type;
  Block b;
  *result = device_.allocate_memory(ai, &b.memory);
  if (*result != VK_SUCCESS) return -1;
  b.size = size;
  b.type = type;
  b.linear = linear;
  b.dedicated = dedicated;
  b.free.push_back({0, size});
  if (device_.memory_properties().memoryTypes[type].propertyFlags &
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
    void* p = nullptr;
    *result = vkMapMemory(device_.device(), b.memory, 0, VK_WHOLE_SIZE, 0, &p);
    if (*result != VK_SUCCESS) {
      device_.free_memory(b.memory);
      return -1;
    }
    b.mapped = static_cast<uint8_t*>(p);
  }
  int64_t id = next_block_++;
  blocks_[id] = std::move(b);
  ++stats_.blocks;
  stats_.reserved += size;
  return id;
}

// The next shared block of this type and tiling: twice the largest there is, between
// min_block_ and max_block_, and never smaller than the request.
VkDeviceSize MemoryAllocator::shared_block_size(uint32_t type, bool linear,
                                                VkDeviceSize request) const {
  VkDeviceSize largest = 0;
  for (const auto& [id, b] : blocks_)
    if (b.type == type && b.linear == linear && !b.dedicated) largest = std::max(largest, b.size);
  VkDeviceSize size = largest ? std::min(max_block_, largest * 2) : min_block_;
  while (size < request) size *= 2;  // shared blocks hold requests up to max_block_ / 2
  return size;
}

Allocation MemoryAllocator::allocate(const VkMemoryRequirements& req, MemoryUse use, bool linear,
                                     const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<uint32_t> types = candidate_types(req.memoryTypeBits, use);
  if (types.empty()) throw Error("no Vulkan memory type can hold " + what);
  VkMemoryRequirements r = req;
  r.alignment = std::max<VkDeviceSize>(r.alignment, 16);
  Allocation a;
  VkResult last = VK_SUCCESS;
  // Heap budgets, asked for once, when a new block is needed.
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  bool budget_asked = false, budgeted = false;
  std::string over_budget;  // the heaps a new block would have taken past their budget
  const VkPhysicalDeviceMemoryProperties& mp = device_.memory_properties();
  for (uint32_t type : types) {
    // An existing block of this type and tiling with room.
    for (auto& [id, b] : blocks_) {
      if (b.type != type || b.linear != linear || b.dedicated) continue;
      if (take(b, r, &a)) {
        a.block = id;
        ++stats_.allocations;
        stats_.used += a.size;
        return a;
      }
    }
    // A new block: shared blocks for small resources, a dedicated one for large ones.
    bool dedicated = r.size > max_block_ / 2;
    VkDeviceSize need = align_up(r.size, 1 << 16);
    VkDeviceSize size = dedicated ? need : shared_block_size(type, linear, need);
    if (!budget_asked) {
      budgeted = budget_(&budget);
      budget_asked = true;
    }
    if (budgeted) {
      uint32_t heap = mp.memoryTypes[type].heapIndex;
      VkDeviceSize cap = budget.heapBudget[heap], in_use = budget.heapUsage[heap];
      VkDeviceSize left = cap > in_use ? cap - in_use : 0;
      if (need > left) {  // not even the resource fits: another type, or the error below
        if (over_budget.find("heap " + std::to_string(heap) + " ") == std::string::npos)
          over_budget += (over_budget.empty() ? "" : "; ") + std::string("heap ") +
                         std::to_string(heap) + " (budget " + mib_tenths(cap) + ", " +
                         mib_tenths(in_use) + " in use)";
        continue;
      }
      // A grown shared block that would pass the budget shrinks to what is left (64 KiB
      // multiples, still holding the resource).
      if (size > left) size = left / (1 << 16) * (1 << 16);
    }
    int64_t id = new_block(type, size, linear, dedicated, &last);
    if (id < 0) continue;  // this type is full: try the next candidate
    take(blocks_[id], r, &a);
    a.block = id;
    ++stats_.allocations;
    stats_.used += a.size;
    return a;
  }
  if (!over_budget.empty() && last == VK_SUCCESS)
    throw Error("out of device memory allocating " + what + " (" + mib(req.size) +
                "): a new block would exceed the memory budget of " + over_budget + "; " +
                mib(stats_.used) + " in use by Loom");
  std::string why = last == VK_ERROR_OUT_OF_DEVICE_MEMORY ? "out of device memory"
                    : last == VK_ERROR_OUT_OF_HOST_MEMORY
                        ? "out of host memory"
                        : std::string("vkAllocateMemory failed: ") + result_name(last);
  throw Error(why + " allocating " + what + " (" + mib(req.size) + "; " + mib(stats_.used) +
              " in use by Loom" + (over_budget.empty() ? "" : "; over budget: " + over_budget) +
              ")");
}

void MemoryAllocator::free(const Allocation& a) {
  if (!a) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(a.block);
  if (it == blocks_.end()) return;
  Block& b = it->second;
  --stats_.allocations;
  stats_.used -= a.size;
  b.used -= a.size;
  if (--b.live == 0 && b.dedicated) {
    release(b);
    stats_.reserved -= b.size;
    --stats_.blocks;
    blocks_.erase(it);
    return;
  }
  // Back into the sorted free list, merged with touching neighbours.
  Range r{a.offset, a.size};
  auto pos = std::lower_bound(b.free.begin(), b.free.end(), r,
                              [](const Range& x, const Range& y) { return x.offset < y.offset; });
  pos = b.free.insert(pos, r);
  if (pos + 1 != b.free.end() && pos->offset + pos->size == (pos + 1)->offset) {
    pos->size += (pos + 1)->size;
    b.free.erase(pos + 1);
  }
  if (pos != b.free.begin() && (pos - 1)->offset + (pos - 1)->size == pos->offset) {
    (pos - 1)->size += pos->size;
    b.free.erase(pos);
  }
}

MemoryAllocator::Stats MemoryAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::vector<MemoryAllocator::TypeUsage> MemoryAllocator::usage_by_type() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const VkPhysicalDeviceMemoryProperties& mp = device_.memory_properties();
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  bool budgeted = budget_(&budget);
  std::vector<TypeUsage> out;
  for (const auto& entry : blocks_) {
    const Block& b = entry.second;
    auto it =
        std::find_if(out.begin(), out.end(), [&](const TypeUsage& u) { return u.type == b.type; });
    if (it == out.end()) {
      TypeUsage u;
      u.type = b.type;
      u.heap = mp.memoryTypes[b.type].heapIndex;
      u.flags = mp.memoryTypes[b.type].propertyFlags;
      if (budgeted) {
        u.heap_budget = budget.heapBudget[u.heap];
        u.heap_usage = budget.heapUsage[u.heap];
      }
      out.push_back(u);
      it = out.end() - 1;
    }
    ++it->blocks;
    it->reserved += b.size;
    it->used += b.used;
  }
  std::sort(out.begin(), out.end(),
            [](const TypeUsage& x, const TypeUsage& y) { return x.type < y.type; });
  return out;
}

}  // namespace loom::vk
