// The process's table of C ABI handles. A handle the host holds is never a pointer Loom
// dereferences: it encodes a slot of this table, the slot's generation and the handle's
// kind, and every call looks it up here first. Destroying an object bumps its slot's
// generation, so a stale handle, a double destroy, a handle cast to another kind or a value
// that never was a handle is an error, not a use-after-free. Guarded by a mutex: calls on
// different runtimes may come from different threads (and a call on a runtime another
// thread's call is inside is refused in the same lookup: call_scope.h).
#pragma once

#include <loom/loom.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "engine_plugin/c_api/c_api_error.h"

namespace loom::capi {

enum class HandleKind : uint8_t {
  Runtime = 1,
  Module,
  Kernel,
  Pipeline,
  Array,
  Texture,
  Argpack,
  Readback
};
constexpr uint32_t kLastHandleKind = static_cast<uint32_t>(HandleKind::Readback);

inline const char* handle_type_name(HandleKind k) {
  switch (k) {
    case HandleKind::Runtime: return "LoomRuntime";
    case HandleKind::Module: return "LoomModule";
    case HandleKind::Kernel: return "LoomKernel";
    case HandleKind::Pipeline: return "LoomPipeline";
    case HandleKind::Array: return "LoomArray";
    case HandleKind::Texture: return "LoomTexture";
    case HandleKind::Argpack: return "LoomArgpack";
    case HandleKind::Readback: return "LoomReadback";
  }
  return "handle";
}

static_assert(sizeof(void*) == 8, "handles carry a 64-bit slot and generation");

// Layout of a handle value: bits 0..7 a tag (0xA0 | kind: never the low byte of an aligned
// pointer), bits 8..31 the slot, bits 32..63 the slot's generation when it was handed out.
class HandleTable {
 public:
  static HandleTable& instance() {
    static HandleTable table;
    return table;
  }

  uint64_t add(HandleKind kind, void* object) {
    std::lock_guard<std::mutex> lock(mutex_);
    uint32_t index;
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else {
      if (slots_.size() >= kMaxSlots)
        throw ApiError(LOOM_ERROR_DEVICE, "more than 16 million Loom objects at once");
      index = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    Slot& s = slots_[index];
    s.kind = kind;
    s.object = object;
    return uint64_t{s.generation} << 32 | uint64_t{index} << 8 | tag(kind);
  }

  void remove(uint64_t value) {
    std::lock_guard<std::mutex> lock(mutex_);
    uint32_t index = static_cast<uint32_t>(value >> 8) & 0xffffffu;
    Slot& s = slots_.at(index);
    s.object = nullptr;
    // A slot whose generation wraps is never handed out again, so no old handle aliases it.
    if (++s.generation != 0) free_.push_back(index);
  }

  // The object `value` names, of `kind`; throws LOOM_ERROR_INVALID_HANDLE naming `what`.
  // `found(object)` runs under the table's lock, while the object cannot leave the table.
  template <typename Found>
  void* find(uint64_t value, HandleKind kind, const std::string& what, Found&& found) {
    uint32_t tag_byte = static_cast<uint32_t>(value & 0xffu);
    uint32_t index = static_cast<uint32_t>(value >> 8) & 0xffffffu;
    uint32_t generation = static_cast<uint32_t>(value >> 32);
    std::lock_guard<std::mutex> lock(mutex_);
    bool tagged = (tag_byte & 0xf0u) == 0xA0u && (tag_byte & 0x0fu) >= 1 &&
                  (tag_byte & 0x0fu) <= kLastHandleKind;
    if (!tagged || index >= slots_.size() || generation == 0 ||
        generation > slots_[index].generation)
      throw ApiError(LOOM_ERROR_INVALID_HANDLE, what + ": the value is not a Loom handle");
    auto given = static_cast<HandleKind>(tag_byte & 0x0fu);
    if (given != kind)
      throw ApiError(LOOM_ERROR_INVALID_HANDLE, what + ": the handle is a " +
                                                    handle_type_name(given) + ", not a " +
                                                    handle_type_name(kind));
    const Slot& s = slots_[index];
    if (generation != s.generation)
      throw ApiError(LOOM_ERROR_INVALID_HANDLE,
                     what + ": the " + handle_type_name(kind) +
                         " was destroyed (or the module or runtime it belonged to was)");
    if (s.kind != kind || !s.object)
      throw ApiError(LOOM_ERROR_INVALID_HANDLE, what + ": the value is not a Loom handle");
    found(s.object);
    return s.object;
  }

 private:
  static constexpr size_t kMaxSlots = size_t{1} << 24;
  static uint64_t tag(HandleKind kind) { return 0xA0u | static_cast<uint32_t>(kind); }

  struct Slot {
    uint32_t generation = 1;
    HandleKind kind = HandleKind::Runtime;
    void* object = nullptr;
  };
  std::mutex mutex_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
};

// An object's entry in the table, for as long as the object lives: made with it, removed
// (its handles turning stale) when it goes.
class HandleSlot {
 public:
  HandleSlot(HandleKind kind, void* object) : value_(HandleTable::instance().add(kind, object)) {}
  ~HandleSlot() { HandleTable::instance().remove(value_); }
  HandleSlot(const HandleSlot&) = delete;
  HandleSlot& operator=(const HandleSlot&) = delete;

  // The handle the host gets, as the public opaque pointer type.
  template <typename H>
  H as() const {
    return reinterpret_cast<H>(static_cast<uintptr_t>(value_));
  }

 private:
  uint64_t value_;
};

}  // namespace loom::capi
