#include "runtime/common/spirv_kernel.h"

#include <algorithm>

#include "runtime/common/abi_binary.h"
#include "runtime/common/byte_stream.h"

namespace loom {

namespace {

constexpr char kMagic[8] = {'L', 'O', 'O', 'M', 'S', 'P', 'V', 'K'};
constexpr uint32_t kBlobVersion = 3;

uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

}  // namespace

uint32_t max_spirv_version(uint32_t vulkan_api_version) {
  uint32_t major = (vulkan_api_version >> 22) & 0x7fu, minor = (vulkan_api_version >> 12) & 0x3ffu;
  if (major > 1 || (major == 1 && minor >= 3)) return 0x00010600;
  if (major == 1 && minor == 2) return kSpirv1_5;
  if (major == 1 && minor == 1) return kSpirv1_3;
  if (major == 1) return kSpirv1_0;
  return 0;
}

std::string spirv_version_text(uint32_t version) {
  if ((version & 0xff0000ffu) != 0 || version < 0x00010000 || version > 0x0001ff00) return "?";
  return std::to_string(version >> 16) + "." + std::to_string((version >> 8) & 0xffu);
}

std::string vulkan_version_text(uint32_t vulkan_api_version) {
  return std::to_string((vulkan_api_version >> 22) & 0x7fu) + "." +
         std::to_string((vulkan_api_version >> 12) & 0x3ffu);
}

const char* range_bound_kind_name(RangeBound::Kind k) {
  switch (k) {
    case RangeBound::Kind::Const: return "const";
    case RangeBound::Kind::Arg: return "arg";
    case RangeBound::Kind::Shape: return "shape";
  }
  return "?";
}

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
  static const char* const names[] = {"shaderInt64",
                                      "shaderFloat64",
                                      "shaderInt16",
                                      "shaderInt8",
                                      "storageBuffer8BitAccess",
                                      "storageBuffer16BitAccess",
                                      "shaderBufferInt64Atomics",
                                      "shaderBufferFloat32AtomicAdd",
                                      "shaderBufferFloat32AtomicMinMax",
                                      "shaderBufferFloat64AtomicAdd",
                                      "shaderBufferFloat64AtomicMinMax",
                                      "shaderStorageImageExtendedFormats",
                                      "subgroupArithmetic"};
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
  FieldWriter fields(w);
  visit_fields(fields, k);
  return seal_record(w);
}

SpirvKernel deserialize_spirv_kernel(const std::vector<uint8_t>& bytes, const std::string& what) {
  ByteReader rd = open_record(bytes, what, "SPIR-V kernel", kMagic, kBlobVersion);
  SpirvKernel k;
  FieldReader fields(rd);
  visit_fields(fields, k);
  if (rd.at() + 8 != bytes.size()) rd.fail("trailing bytes");
  return k;
}

}  // namespace loom
