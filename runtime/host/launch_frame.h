// Everything one launch of a kernel points at: parameter bytes, resource views, the returns
// and temporaries buffers and the error record, gathered into a LaunchContext. Reusable
// across launches; binding by parameter index or field name.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/common/kernel_abi.h"
#include "runtime/host/aligned_buffer.h"
#include "runtime/host/scalar_traits.h"

namespace loom::host {

class Argpack;
class Field;
class Ndarray;
class Texture;

class LaunchFrame {
 public:
  explicit LaunchFrame(KernelABI abi);

  const KernelABI& abi() const { return abi_; }

  // A value parameter; the C++ type must match the parameter's scalar type.
  template <typename T>
  void set_value(int param, T value) {
    write_value(param, scalar_of<T>(), 1, &value, sizeof value);
  }
  // A vector or matrix value parameter: all components, in order.
  template <typename T>
  void set_components(int param, const std::vector<T>& values) {
    write_value(param, scalar_of<T>(), static_cast<int>(values.size()), values.data(),
                values.size() * sizeof(T));
  }
  // The pack is read at launch (nested packs bound into it are synced first).
  void set_argpack(int param, Argpack& pack);
  void set_ndarray(int param, const Ndarray& array);
  void set_texture(int param, const Texture& texture);
  // Every slot bound to the program field `name`.
  void bind_field(const std::string& name, const Field& field);
  void bind(int slot, ResourceView view);
  void set_seed(uint64_t seed) { ctx_.seed = seed; }

  // The context for the next launch; resources inside argpacks are read from the packs now,
  // the error record and the return values are cleared (a launch that reaches no `return`
  // returns zeros).
  LaunchContext& context();

  // Component `index` of the flattened return values (see return_offsets).
  template <typename T>
  T returned(size_t index) const {
    T value{};
    std::memcpy(&value, returns_.data() + return_offsets_.at(index), sizeof value);
    return value;
  }
  const LaunchError& error() const { return error_; }

 private:
  void write_value(int param, Scalar s, int components, const void* bytes, size_t size);
  const ParamDesc& param(int index, ParamKind kind) const;

  KernelABI abi_;
  std::vector<uint8_t*> params_;
  std::vector<AlignedBuffer> value_storage_;  // per value parameter
  std::vector<Argpack*> packs_;               // per argpack parameter
  std::vector<ResourceView> views_;
  std::vector<uint32_t> return_offsets_;
  AlignedBuffer returns_;
  AlignedBuffer temps_;
  LaunchError error_{};
  LaunchContext ctx_{};
};

}  // namespace loom::host
