#include "runtime/common/abi_serialize.h"

#include <cstdio>
#include <cstring>

#include "runtime/common/byte_stream.h"
#include "runtime/common/error.h"

namespace loom {

namespace {

constexpr char kMagic[8] = {'L', 'O', 'O', 'M', 'K', 'R', 'N', 'L'};
constexpr uint32_t kRecordVersion = 3;  // 3: task extent functions report work per row

}  // namespace

uint64_t fnv1a64(const uint8_t* data, size_t size, uint64_t seed) {
  uint64_t h = seed;
  for (size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string hash128_hex(const std::string& text) {
  auto data = reinterpret_cast<const uint8_t*>(text.data());
  uint64_t a = fnv1a64(data, text.size());
  uint64_t b = fnv1a64(data, text.size(), 0x84222325cbf29ce4ull ^ a);
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return buf;
}

std::vector<uint8_t> serialize_kernel_record(const KernelRecord& r) {
  ByteWriter w;
  begin_record(w, kMagic, kRecordVersion);
  const KernelABI& abi = r.abi;
  w.str(abi.name);
  w.u32(static_cast<uint32_t>(abi.params.size()));
  for (const ParamDesc& p : abi.params) {
    w.str(p.name);
    w.u8(static_cast<uint8_t>(p.kind));
    w.type(p.type);
    w.i32(p.ndim);
    w.i32(p.argpack_type);
    w.u32(p.size);
  }
  w.u32(static_cast<uint32_t>(abi.resources.size()));
  for (const ResourceDesc& res : abi.resources) {
    w.u8(static_cast<uint8_t>(res.kind));
    w.u8(static_cast<uint8_t>(res.dtype));
    w.i32(res.components);
    w.i32(res.ndim);
    for (int64_t s : res.shape) w.i64(s);
    w.u8(static_cast<uint8_t>(res.layout));
    w.u8(static_cast<uint8_t>(res.format));
    w.str(res.field);
    w.i32(res.param);
    w.i32(res.param_offset);
  }
  w.u32(static_cast<uint32_t>(abi.returns.size()));
  for (ValueType t : abi.returns) w.type(t);
  w.u32(static_cast<uint32_t>(abi.tasks.size()));
  for (const TaskDesc& t : abi.tasks) {
    w.u8(t.kind);
    w.str(t.symbol);
    w.str(t.extent_symbol);
    w.u8(t.dims);
  }
  w.u32(abi.temps_size);
  w.u64(r.code.size());
  w.raw(r.code.data(), r.code.size());
  return seal_record(w);
}

KernelRecord deserialize_kernel_record(const std::vector<uint8_t>& bytes, const std::string& what) {
  ByteReader rd = open_record(bytes, what, "compiled kernel record", kMagic, kRecordVersion);
  KernelRecord r;
  KernelABI& abi = r.abi;
  abi.name = rd.str();
  abi.params.resize(rd.count(4096));
  for (ParamDesc& p : abi.params) {
    p.name = rd.str();
    uint8_t kind = rd.u8();
    if (kind > static_cast<uint8_t>(ParamKind::Argpack)) rd.fail("bad parameter kind");
    p.kind = static_cast<ParamKind>(kind);
    p.type = rd.type();
    p.ndim = rd.i32();
    p.argpack_type = rd.i32();
    p.size = rd.u32();
  }
  abi.resources.resize(rd.count(4096));
  for (ResourceDesc& res : abi.resources) {
    uint8_t kind = rd.u8();
    if (kind > static_cast<uint8_t>(ResourceKind::Texture)) rd.fail("bad resource kind");
    res.kind = static_cast<ResourceKind>(kind);
    uint8_t dtype = rd.u8();
    if (dtype > static_cast<uint8_t>(Scalar::F64)) rd.fail("bad dtype");
    res.dtype = static_cast<Scalar>(dtype);
    res.components = rd.i32();
    res.ndim = rd.i32();
    if (res.ndim < 0 || res.ndim > kMaxDims) rd.fail("bad resource dimensions");
    for (int64_t& s : res.shape) s = rd.i64();
    uint8_t layout = rd.u8(), format = rd.u8();
    if (layout > 1 || format > static_cast<uint8_t>(TextureFormat::RGBA8)) rd.fail("bad layout/format");
    res.layout = static_cast<Layout>(layout);
    res.format = static_cast<TextureFormat>(format);
    res.field = rd.str();
    res.param = rd.i32();
    res.param_offset = rd.i32();
  }
  abi.returns.resize(rd.count(64));
  for (ValueType& t : abi.returns) t = rd.type();
  abi.tasks.resize(rd.count(4096));
  for (TaskDesc& t : abi.tasks) {
    t.kind = rd.u8();
    if (t.kind > 2) rd.fail("bad task kind");
    t.symbol = rd.str();
    t.extent_symbol = rd.str();
    t.dims = rd.u8();
    if (t.dims < 1 || t.dims > kMaxDims) rd.fail("bad task dimensions");
  }
  abi.temps_size = rd.u32();
  uint64_t code_size = rd.u64();
  if (code_size > bytes.size()) rd.fail("code size exceeds the record");
  r.code.resize(code_size);
  rd.raw(r.code.data(), code_size);
  if (rd.at() + 8 != bytes.size()) rd.fail("trailing bytes");
  return r;
}

}  // namespace loom
