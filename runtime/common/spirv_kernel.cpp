#include "runtime/common/spirv_kernel.h"

#include <algorithm>

#include "runtime/common/abi_serialize.h"
#include "runtime/common/byte_stream.h"

namespace loom {

namespace {

constexpr char kMagic[8] = {'L', 'O', 'O', 'M', 'S', 'P', 'V', 'K'};
constexpr uint32_t kBlobVersion = 3;

uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

}  // namespace

const char* binding_kind_name(BindingKind k) {
  switch (k) {
    case BindingKind::Args: return "args";
    case BindingKind::Temps: return "temps";
    case BindingKind::Returns: return "returns";
    case BindingKind::Error: return "error";
    case BindingKind::Argpack: return "argpack";
    case BindingKind::Buffer: return "buffer";
    case BindingKind::StorageImage: return "storage image";
    case BindingKind::SampledImage: return "sampled image";
    case BindingKind::Sampler: return "sampler";
  }
  return "?";
}

std::string describe_requirements(uint32_t bits) {
  static const char* const names[] = {
      "shaderInt64", "shaderFloat64", "shaderInt16", "shaderInt8",
      "storageBuffer8BitAccess", "storageBuffer16BitAccess", "shaderBufferInt64Atomics",
      "shaderBufferFloat32AtomicAdd", "shaderBufferFloat32AtomicMinMax",
      "shaderBufferFloat64AtomicAdd", "shaderBufferFloat64AtomicMinMax",
      "shaderStorageImageExtendedFormats"};
  std::string s;
  for (uint32_t i = 0; i < std::size(names); ++i)
    if (bits & (1u << i)) s += (s.empty() ? "" : ", ") + std::string(names[i]);
  return s;
}

ArgsLayout args_layout(const KernelABI& abi) {
  ArgsLayout l;
  uint32_t at = 8;  // the seed
  l.params.assign(abi.params.size(), -1);
  for (size_t p = 0; p < abi.params.size(); ++p) {
    const ParamDesc& d = abi.params[p];
    if (d.kind != ParamKind::Value) continue;
    at = align_up(at, std::max(4, size_of(d.type.scalar)));
    l.params[p] = static_cast<int32_t>(at);
    at += static_cast<uint32_t>(size_of(d.type.scalar) * d.type.components());
  }
  at = align_up(at, 4);
  l.shapes.assign(abi.resources.size(), -1);
  for (size_t s = 0; s < abi.resources.size(); ++s) {
    const ResourceDesc& r = abi.resources[s];
    if (r.kind == ResourceKind::Field) continue;
    l.shapes[s] = static_cast<int32_t>(at);
    at += 4 * static_cast<uint32_t>(std::max(r.ndim, 1));
  }
  l.size = align_up(at, 16);
  return l;
}

std::vector<uint8_t> serialize_spirv_kernel(const SpirvKernel& k) {
  ByteWriter w;
  begin_record(w, kMagic, kBlobVersion);
  w.u32(static_cast<uint32_t>(k.bindings.size()));
  for (const SpirvBinding& b : k.bindings) {
    w.u32(b.binding);
    w.u8(static_cast<uint8_t>(b.kind));
    w.i32(b.index);
    w.u8(b.sampled_linearly ? 1 : 0);
  }
  w.u8(k.args_in_push_constants ? 1 : 0);
  w.u32(static_cast<uint32_t>(k.tasks.size()));
  for (const SpirvTask& t : k.tasks) {
    w.u8(t.kind);
    w.u32(t.workgroup_size);
    w.u8(t.grid_dims);
    w.u8(t.host_extent ? 1 : 0);
    w.u32(static_cast<uint32_t>(t.begin.size()));
    for (size_t d = 0; d < t.begin.size(); ++d)
      for (const RangeBound* b : {&t.begin[d], &t.end[d]}) {
        w.u8(static_cast<uint8_t>(b->kind));
        w.i64(b->value);
        w.u32(b->offset);
      }
    w.u32(static_cast<uint32_t>(t.access.size()));
    w.raw(t.access.data(), t.access.size());
    w.u32(static_cast<uint32_t>(t.spirv.size()));
    w.raw(t.spirv.data(), t.spirv.size() * 4);
  }
  w.u32(static_cast<uint32_t>(k.assert_messages.size()));
  for (const std::string& m : k.assert_messages) w.str(m);
  w.u32(k.requirements);
  return seal_record(w);
}

SpirvKernel deserialize_spirv_kernel(const std::vector<uint8_t>& bytes, const std::string& what) {
  ByteReader rd = open_record(bytes, what, "SPIR-V kernel", kMagic, kBlobVersion);
  SpirvKernel k;
  k.bindings.resize(rd.count(4096));
  for (SpirvBinding& b : k.bindings) {
    b.binding = rd.u32();
    uint8_t kind = rd.u8();
    if (kind > static_cast<uint8_t>(BindingKind::Sampler)) rd.fail("bad binding kind");
    b.kind = static_cast<BindingKind>(kind);
    b.index = rd.i32();
    b.sampled_linearly = rd.u8() != 0;
  }
  k.args_in_push_constants = rd.u8() != 0;
  k.tasks.resize(rd.count(4096));
  for (SpirvTask& t : k.tasks) {
    t.kind = rd.u8();
    if (t.kind > 2) rd.fail("bad task kind");
    t.workgroup_size = rd.u32();
    if (t.workgroup_size < 1 || t.workgroup_size > 4096) rd.fail("bad workgroup size");
    t.grid_dims = rd.u8();
    if (t.grid_dims < 1 || t.grid_dims > 2) rd.fail("bad grid dimensions");
    t.host_extent = rd.u8() != 0;
    uint32_t dims = rd.count(kMaxDims);
    t.begin.resize(dims);
    t.end.resize(dims);
    for (uint32_t d = 0; d < dims; ++d)
      for (RangeBound* b : {&t.begin[d], &t.end[d]}) {
        uint8_t kind = rd.u8();
        if (kind > static_cast<uint8_t>(RangeBound::Kind::Shape)) rd.fail("bad range bound");
        b->kind = static_cast<RangeBound::Kind>(kind);
        b->value = rd.i64();
        b->offset = rd.u32();
      }
    t.access.resize(rd.count(4096));
    if (t.access.size() != k.bindings.size()) rd.fail("access list does not match the bindings");
    rd.raw(t.access.data(), t.access.size());
    t.spirv.resize(rd.count(1u << 26));
    rd.raw(t.spirv.data(), t.spirv.size() * 4);
    if (t.spirv.size() < 5 || t.spirv[0] != 0x07230203u) rd.fail("task is not a SPIR-V module");
  }
  k.assert_messages.resize(rd.count(1u << 20));
  for (std::string& m : k.assert_messages) m = rd.str();
  k.requirements = rd.u32();
  if (k.requirements & ~kAllSpirvRequirements) rd.fail("unknown requirement bits");
  if (rd.at() + 8 != bytes.size()) rd.fail("trailing bytes");
  return k;
}

}  // namespace loom
