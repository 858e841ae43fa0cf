// Zeroed, cache-line aligned bytes owned by one storage object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace loom::host {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes) : size_(bytes) {
    size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
    data_.reset(static_cast<uint8_t*>(std::aligned_alloc(kAlign, rounded == 0 ? kAlign : rounded)));
    if (data_) std::memset(data_.get(), 0, rounded == 0 ? kAlign : rounded);
  }
  uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }

  static constexpr size_t kAlign = 64;

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_ = 0;
};

}  // namespace loom::host
