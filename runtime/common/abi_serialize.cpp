#include "runtime/common/abi_serialize.h"

#include <cstdio>
#include <cstring>

#include "runtime/common/error.h"

namespace loom {

namespace {

constexpr char kMagic[8] = {'L', 'O', 'O', 'M', 'K', 'R', 'N', 'L'};
constexpr uint32_t kRecordVersion = 2;

class Writer {
 public:
  void u8(uint8_t v) { out.push_back(v); }
  void u32(uint32_t v) { raw(&v, 4); }
  void i32(int32_t v) { raw(&v, 4); }
  void i64(int64_t v) { raw(&v, 8); }
  void u64(uint64_t v) { raw(&v, 8); }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    raw(s.data(), s.size());
  }
  void type(ValueType t) {
    u8(static_cast<uint8_t>(t.scalar));
    u8(t.rows);
    u8(t.cols);
  }
  void raw(const void* p, size_t n) {
    auto b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  }
  std::vector<uint8_t> out;
};

class Reader {
 public:
  Reader(const std::vector<uint8_t>& in, const std::string& what) : in_(in), what_(what) {}
  uint8_t u8() { uint8_t v; raw(&v, 1); return v; }
  uint32_t u32() { uint32_t v; raw(&v, 4); return v; }
  int32_t i32() { int32_t v; raw(&v, 4); return v; }
  int64_t i64() { int64_t v; raw(&v, 8); return v; }
  uint64_t u64() { uint64_t v; raw(&v, 8); return v; }
  std::string str() {
    uint32_t n = u32();
    need(n);
    std::string s(reinterpret_cast<const char*>(in_.data() + at_), n);
    at_ += n;
    return s;
  }
  ValueType type() {
    ValueType t;
    uint8_t s = u8();
    if (s > static_cast<uint8_t>(Scalar::F64)) fail("bad scalar type");
    t.scalar = static_cast<Scalar>(s);
    t.rows = u8();
    t.cols = u8();
    if (t.rows < 1 || t.rows > 4 || t.cols < 1 || t.cols > 4) fail("bad value type");
    return t;
  }
  uint32_t count(uint32_t max) {
    uint32_t n = u32();
    if (n > max) fail("implausible count " + std::to_string(n));
    return n;
  }
  void raw(void* p, size_t n) {
    need(n);
    std::memcpy(p, in_.data() + at_, n);
    at_ += n;
  }
  size_t at() const { return at_; }
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(Place{what_}, "corrupt compiled kernel record: " + why);
  }

 private:
  void need(size_t n) const {
    if (at_ + n > in_.size()) fail("truncated");
  }
  const std::vector<uint8_t>& in_;
  std::string what_;
  size_t at_ = 0;
};

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
  Writer w;
  w.raw(kMagic, sizeof kMagic);
  w.u32(kRecordVersion);
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
  w.u64(fnv1a64(w.out.data(), w.out.size()));
  return std::move(w.out);
}

KernelRecord deserialize_kernel_record(const std::vector<uint8_t>& bytes, const std::string& what) {
  Reader rd(bytes, what);
  if (bytes.size() < sizeof kMagic + 12 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    rd.fail("bad magic");
  uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  if (fnv1a64(bytes.data(), bytes.size() - 8) != stored) rd.fail("checksum mismatch");
  char magic[sizeof kMagic];
  rd.raw(magic, sizeof magic);
  if (rd.u32() != kRecordVersion) rd.fail("record version differs");
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
