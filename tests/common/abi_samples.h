// Kernel records and SPIR-V kernels with every kind of parameter, resource, binding and
// range bound, for the tests that hold the binary and JSON forms to the bytes older builds
// wrote (tests/common/data, tests/aot/data).
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>

#include "runtime/common/abi_serialize.h"
#include "runtime/common/spirv_kernel.h"

namespace loom::test {

inline KernelABI sample_kernel_abi() {
  KernelABI abi;
  abi.name = "sample";
  abi.params.push_back({"scale", ParamKind::Value, {Scalar::F32, 3, 1}, 0, -1, 12});
  abi.params.push_back({"grid", ParamKind::Ndarray, {Scalar::I64, 1, 1}, 2, -1, 8});
  abi.params.push_back({"image", ParamKind::Texture, {}, 3, -1, 8});
  abi.params.push_back({"pack", ParamKind::Argpack, {}, 0, 1, 64});
  abi.params.push_back({"m", ParamKind::Value, {Scalar::F64, 4, 4}, 0, -1, 128});

  ResourceDesc field;
  field.kind = ResourceKind::Field;
  field.dtype = Scalar::F32;
  field.components = 2;
  field.ndim = 2;
  field.shape = {640, 480, 0, 0};
  field.layout = Layout::SoA;
  field.field = "velocity";
  abi.resources.push_back(field);
  ResourceDesc ndarray;
  ndarray.kind = ResourceKind::Ndarray;
  ndarray.dtype = Scalar::I64;
  ndarray.ndim = 2;
  ndarray.param = 1;
  abi.resources.push_back(ndarray);
  ResourceDesc texture;
  texture.kind = ResourceKind::Texture;
  texture.dtype = Scalar::U8;
  texture.components = 4;
  texture.ndim = 3;
  texture.format = TextureFormat::RGBA8;
  texture.param = 2;
  abi.resources.push_back(texture);
  ResourceDesc packed;
  packed.kind = ResourceKind::Ndarray;
  packed.dtype = Scalar::U16;
  packed.ndim = 4;
  packed.format = TextureFormat::R32F;
  packed.param = 3;
  packed.param_offset = 32;
  abi.resources.push_back(packed);

  abi.returns = {{Scalar::I32}, {Scalar::F32, 2, 1}, {Scalar::Bool}};
  abi.tasks.push_back({0, "sample_t0", "", 1});
  abi.tasks.push_back({1, "sample_t1", "sample_t1_extent", 2});
  abi.tasks.push_back({2, "sample_t2", "sample_t2_extent", 4});
  abi.temps_size = 24;
  return abi;
}

inline KernelRecord sample_kernel_record() {
  KernelRecord r;
  r.abi = sample_kernel_abi();
  r.code = {0x7f, 'E', 'L', 'F', 0, 1, 2, 3, 254, 255};
  return r;
}

inline SpirvKernel sample_spirv_kernel() {
  SpirvKernel k;
  uint32_t at = 0;
  for (BindingKind kind :
       {BindingKind::Args, BindingKind::Temps, BindingKind::Returns, BindingKind::Error,
        BindingKind::Argpack, BindingKind::Buffer, BindingKind::StorageImage,
        BindingKind::SampledImage, BindingKind::Sampler})
    k.bindings.push_back({at++, kind, kind == BindingKind::Args ? -1 : static_cast<int32_t>(at % 3),
                          kind == BindingKind::SampledImage});
  k.args_in_push_constants = false;

  SpirvTask serial;
  serial.spirv = {0x07230203u, 0x00010300u, 0, 7, 0};
  serial.access.assign(k.bindings.size(), 0);
  serial.access[1] = kAccessWrite;
  k.tasks.push_back(serial);

  SpirvTask range;
  range.kind = 1;
  range.spirv = {0x07230203u, 0x00010500u, 0x12345678u, 42, 0, 0xffffffffu};
  range.workgroup_size = 128;
  range.grid_dims = 2;
  range.host_extent = true;
  range.begin = {{RangeBound::Kind::Const, 0, 0}, {RangeBound::Kind::Const, -5, 0}};
  range.end = {{RangeBound::Kind::Arg, 0, 4}, {RangeBound::Kind::Shape, 1, 1}};
  range.access.assign(k.bindings.size(), kAccessRead);
  range.access[5] = kAccessRead | kAccessWrite;
  k.tasks.push_back(range);

  SpirvTask strided;
  strided.kind = 2;
  strided.spirv = {0x07230203u, 0x00010000u, 1, 2, 3};
  strided.workgroup_size = 64;
  strided.begin = {{RangeBound::Kind::Const, INT64_MIN, 0}};
  strided.end = {{RangeBound::Kind::Const, INT64_MAX, 0}};
  strided.access.assign(k.bindings.size(), 0);
  k.tasks.push_back(strided);

  k.assert_messages = {"x must be positive", "", "quote \" and newline \n"};
  k.requirements = kNeedInt64 | kNeedFloat64 | kNeedStorageImageExtendedFormats;
  return k;
}

// Random values that every reader accepts: property tests round-trip them through both forms.
class RandomAbi {
 public:
  explicit RandomAbi(uint64_t seed) : rng_(seed) {}

  KernelABI kernel_abi() {
    KernelABI abi;
    abi.name = text();
    for (int i = number(0, 6); i > 0; --i) abi.params.push_back(param());
    for (int i = number(0, 6); i > 0; --i) abi.resources.push_back(resource(abi.params.size()));
    for (int i = number(0, 4); i > 0; --i) abi.returns.push_back(value_type());
    for (int i = number(0, 4); i > 0; --i)
      abi.tasks.push_back({static_cast<uint8_t>(number(0, 2)), text(), text(),
                           static_cast<uint8_t>(number(1, kMaxDims))});
    abi.temps_size = static_cast<uint32_t>(number(0, INT32_MAX));
    abi.resource_access_known = number(0, 1) == 1;
    for (size_t slot = 0; abi.resource_access_known && slot < abi.resources.size(); ++slot)
      if (number(0, 1) == 1)
        abi.resource_access.push_back({static_cast<int32_t>(slot), text(),
                                       static_cast<uint8_t>(number(1, kAllResourceAccess))});
    abi.extent_assumptions_known = number(0, 1) == 1;
    for (int64_t i = abi.extent_assumptions_known && !abi.resources.empty() ? number(0, 3) : 0;
         i > 0; --i)
      abi.extent_assumptions.push_back(extent_assumption(abi));
    return abi;
  }

  SpirvKernel spirv_kernel(size_t task_count) {
    SpirvKernel k;
    for (int i = number(0, 9); i > 0; --i)
      k.bindings.push_back({static_cast<uint32_t>(number(0, 4095)),
                            static_cast<BindingKind>(number(0, 8)),
                            static_cast<int32_t>(number(-1, INT32_MAX)), number(0, 1) == 1});
    k.args_in_push_constants = number(0, 1) == 1;
    for (size_t t = 0; t < task_count; ++t) k.tasks.push_back(spirv_task(k.bindings.size()));
    for (int i = number(0, 3); i > 0; --i) k.assert_messages.push_back(text());
    k.requirements = static_cast<uint32_t>(number(0, kAllSpirvRequirements));
    return k;
  }

 private:
  int64_t number(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  std::string text() {
    static const char kChars[] = "abcXYZ_019 .\"\\\n\t{}[]";
    std::string s;
    for (int64_t i = number(0, 12); i > 0; --i) s += kChars[number(0, sizeof kChars - 2)];
    return s;
  }
  // Scalars, vectors and matrices: every type the JSON form can spell.
  ValueType value_type() {
    ValueType t{static_cast<Scalar>(number(1, static_cast<int>(Scalar::F64))), 1, 1};
    int shape = static_cast<int>(number(0, 2));
    if (shape > 0) t.rows = static_cast<uint8_t>(number(2, 4));
    if (shape > 1) t.cols = static_cast<uint8_t>(number(2, 4));
    return t;
  }
  ParamDesc param() {
    ParamDesc p;
    p.name = text();
    p.kind = static_cast<ParamKind>(number(0, 3));
    p.type = p.kind == ParamKind::Value || number(0, 1) ? value_type() : ValueType{};
    p.ndim = static_cast<int>(number(0, kMaxDims));
    p.argpack_type = p.kind == ParamKind::Argpack ? static_cast<int>(number(0, 1)) : -1;
    p.size = static_cast<uint32_t>(number(0, INT32_MAX));
    return p;
  }
  ResourceDesc resource(size_t param_count) {
    ResourceDesc r;
    r.kind = param_count == 0 ? ResourceKind::Field : static_cast<ResourceKind>(number(0, 2));
    r.dtype = static_cast<Scalar>(number(0, static_cast<int>(Scalar::F64)));
    r.components = static_cast<int>(number(1, 16));
    r.ndim = static_cast<int>(number(0, kMaxDims));
    for (int64_t& e : r.shape) e = number(0, INT32_MAX);
    r.layout = static_cast<Layout>(number(0, 1));
    r.format = static_cast<TextureFormat>(number(0, 3));
    r.field = text();
    r.param = static_cast<int>(
        number(r.kind == ResourceKind::Field ? -1 : 0, static_cast<int64_t>(param_count) - 1));
    r.param_offset = static_cast<int32_t>(number(-1, INT32_MAX));
    return r;
  }
  // A bound the readers accept for `abi`: a value parameter's bytes or one of its slots.
  RangeBound launch_bound(const KernelABI& abi) {
    auto kind = static_cast<RangeBound::Kind>(number(0, 2));
    std::vector<int64_t> values;
    for (size_t p = 0; p < abi.params.size(); ++p)
      if (abi.params[p].kind == ParamKind::Value) values.push_back(static_cast<int64_t>(p));
    auto plus = [&] {
      return static_cast<int32_t>(number(0, 1) ? number(INT32_MIN, INT32_MAX) : 0);
    };
    if (kind == RangeBound::Kind::Arg && !values.empty()) {
      int64_t p = values[static_cast<size_t>(number(0, static_cast<int64_t>(values.size()) - 1))];
      uint32_t room = std::max<uint32_t>(abi.params[static_cast<size_t>(p)].size, 8) - 4;
      return {kind, p, static_cast<uint32_t>(number(0, room)), plus()};
    }
    if (kind == RangeBound::Kind::Shape)
      return {kind, number(0, static_cast<int64_t>(abi.resources.size()) - 1),
              static_cast<uint32_t>(number(0, kMaxDims - 1)), plus()};
    return {RangeBound::Kind::Const, number(INT64_MIN, INT64_MAX), 0};
  }
  ExtentAssumption extent_assumption(const KernelABI& abi) {
    ExtentAssumption e;
    e.slot = static_cast<int32_t>(number(0, static_cast<int64_t>(abi.resources.size()) - 1));
    e.dim = static_cast<int32_t>(number(0, kMaxDims - 1));
    e.name = text();
    e.checked = number(0, 1) == 1;
    if (!e.checked) return e;
    for (int64_t k = number(0, 3); k > 0; --k) {
      e.begin.push_back(launch_bound(abi));
      e.end.push_back(launch_bound(abi));
    }
    e.loop = static_cast<int32_t>(number(-1, static_cast<int64_t>(e.end.size()) - 1));
    e.low = number(INT32_MIN, INT32_MAX);
    e.high = number(e.low, INT32_MAX);
    e.bound_name = text();
    return e;
  }
  RangeBound bound() {
    auto kind = static_cast<RangeBound::Kind>(number(0, 2));
    int32_t plus = kind == RangeBound::Kind::Const || number(0, 1) == 0
                       ? 0
                       : static_cast<int32_t>(number(INT32_MIN, INT32_MAX));
    return {kind, number(INT64_MIN, INT64_MAX), static_cast<uint32_t>(number(0, INT32_MAX)), plus};
  }
  SpirvTask spirv_task(size_t binding_count) {
    SpirvTask t;
    t.kind = static_cast<uint8_t>(number(0, 2));
    t.spirv = {0x07230203u};
    for (int64_t i = number(4, 9); i > 0; --i)
      t.spirv.push_back(static_cast<uint32_t>(number(0, UINT32_MAX)));
    t.workgroup_size = static_cast<uint32_t>(number(1, 4096));
    t.grid_dims = static_cast<uint8_t>(number(1, 2));
    t.host_extent = number(0, 1) == 1;
    t.direct = t.host_extent && t.kind != 0 && number(0, 1) == 1;
    for (int64_t d = number(0, kMaxDims); d > 0; --d) {
      t.begin.push_back(bound());
      t.end.push_back(bound());
    }
    for (size_t b = 0; b < binding_count; ++b)
      t.access.push_back(static_cast<uint8_t>(number(0, 3)));
    return t;
  }

  std::mt19937_64 rng_;
};

}  // namespace loom::test
