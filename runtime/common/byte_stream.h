// Little-endian byte writer and bounds-checked reader for the binary records (compiled
// kernels, SPIR-V kernel blobs). A reader never reads past its input: a short or corrupt
// record is a loom::Error naming its source.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "runtime/common/abi_serialize.h"
#include "runtime/common/error.h"
#include "runtime/common/scalar.h"

namespace loom {

class ByteWriter {
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

class ByteReader {
 public:
  // `what` names the source; `kind` what it holds ("compiled kernel record").
  ByteReader(const std::vector<uint8_t>& in, std::string what, std::string kind, size_t begin = 0,
             size_t end = SIZE_MAX)
      : in_(in),
        what_(std::move(what)),
        kind_(std::move(kind)),
        end_(end < in.size() ? end : in.size()),
        at_(begin < end_ ? begin : end_) {}
  uint8_t u8() {
    uint8_t v;
    raw(&v, 1);
    return v;
  }
  uint32_t u32() {
    uint32_t v;
    raw(&v, 4);
    return v;
  }
  int32_t i32() {
    int32_t v;
    raw(&v, 4);
    return v;
  }
  int64_t i64() {
    int64_t v;
    raw(&v, 8);
    return v;
  }
  uint64_t u64() {
    uint64_t v;
    raw(&v, 8);
    return v;
  }
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
  // A count of items that must not exceed `max` and whose items, of at least
  // `min_item_bytes` each, must fit in what is left: checked before the caller allocates.
  uint32_t count(uint32_t max, size_t min_item_bytes = 1) {
    uint32_t n = u32();
    if (n > max) fail("implausible count " + std::to_string(n));
    if (min_item_bytes > 0 && n > remaining() / min_item_bytes)
      fail("count " + std::to_string(n) + " does not fit in the " + std::to_string(remaining()) +
           " bytes left");
    return n;
  }
  void raw(void* p, size_t n) {
    need(n);
    std::memcpy(p, in_.data() + at_, n);
    at_ += n;
  }
  size_t at() const { return at_; }
  size_t end() const { return end_; }
  size_t remaining() const { return end_ - at_; }
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(Place{what_}, "corrupt " + kind_ + ": " + why);
  }

 private:
  void need(size_t n) const {
    if (n > end_ - at_) fail("truncated");
  }
  const std::vector<uint8_t>& in_;
  std::string what_;
  std::string kind_;
  size_t end_ = 0;  // declared before at_, which the constructor clamps to it
  size_t at_ = 0;
};

// The envelope of every binary record: 8 magic bytes and a u32 version first, a 64-bit
// FNV-1a checksum of everything before it last.
inline void begin_record(ByteWriter& w, const char (&magic)[8], uint32_t version) {
  w.raw(magic, 8);
  w.u32(version);
}
inline std::vector<uint8_t> seal_record(ByteWriter& w) {
  w.u64(fnv1a64(w.out.data(), w.out.size()));
  return std::move(w.out);
}
// Checks magic, checksum and version and returns a reader placed after them; the record's
// last 8 bytes (the checksum) are left for the caller's trailing-bytes check.
inline ByteReader open_record(const std::vector<uint8_t>& bytes, const std::string& what,
                              const std::string& kind, const char (&magic)[8], uint32_t version) {
  ByteReader rd(bytes, what, kind);
  if (bytes.size() < 8 + 12 || std::memcmp(bytes.data(), magic, 8) != 0) rd.fail("bad magic");
  uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  if (fnv1a64(bytes.data(), bytes.size() - 8) != stored) rd.fail("checksum mismatch");
  char seen[8];
  rd.raw(seen, 8);
  if (rd.u32() != version) rd.fail("version differs");
  return rd;
}

}  // namespace loom
