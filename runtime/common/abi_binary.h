// The binary form of the field lists in abi_fields.h: each field little-endian at the width
// of its C++ type, enums and bools as one byte, a list as a u32 count and its items.
// FieldWriter appends to a ByteWriter; FieldReader reads a ByteReader and checks every field
// as its list declares, naming the field's path, so corrupt input is an Error, never a crash.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/common/abi_fields.h"
#include "runtime/common/byte_stream.h"

namespace loom {

class FieldWriter {
 public:
  static constexpr FieldForm kForm = FieldForm::Binary;
  explicit FieldWriter(ByteWriter& out) : out_(out) {}

  void text(const char*, const std::string& s) { out_.str(s); }
  template <typename I>
  void integer(const char*, const I& i, int64_t, int64_t) {
    out_.raw(&i, sizeof i);
  }
  // The binary form always holds these (the record's version says which fields it has).
  void optional_flag(const char* key, bool b) { flag(key, b); }
  template <typename I>
  void optional_integer(const char* key, const I& i, int64_t lo, int64_t hi, I) {
    integer(key, i, lo, hi);
  }
  void flag(const char*, bool b) { out_.u8(b ? 1 : 0); }
  template <typename E, typename NameOf>
  void choice(const char*, E e, E, NameOf) {
    out_.u8(static_cast<uint8_t>(e));
  }
  void type(const char*, ValueType t, bool) { out_.type(t); }
  void extents(const char*, const std::array<int64_t, kMaxDims>& shape) {
    for (int64_t e : shape) out_.i64(e);
  }
  template <typename T, typename Each>
  void list(const char*, const std::vector<T>& items, uint32_t, Each&& each) {
    count(items.size());
    for (const T& item : items) each(*this, item);
  }
  template <typename T>
  void list(const char* key, const std::vector<T>& items, uint32_t max) {
    list(key, items, max, [](FieldWriter& v, const T& item) { visit_fields(v, item); });
  }
  void types(const char*, const std::vector<ValueType>& items, uint32_t, bool) {
    count(items.size());
    for (ValueType t : items) out_.type(t);
  }
  void byte_list(const char*, const std::vector<uint8_t>& items, uint32_t, int, int) {
    count(items.size());
    out_.raw(items.data(), items.size());
  }
  void texts(const char*, const std::vector<std::string>& items, uint32_t) {
    count(items.size());
    for (const std::string& s : items) out_.str(s);
  }
  // One count, then each dimension's begin and end bound side by side.
  void bound_pairs(const char*, const std::vector<RangeBound>& begin, const char*,
                   const std::vector<RangeBound>& end, uint32_t) {
    count(begin.size());
    for (size_t d = 0; d < begin.size(); ++d) {
      visit_fields(*this, begin[d]);
      visit_fields(*this, end[d]);
    }
  }
  void spirv_code(const char*, const std::vector<uint32_t>& words) {
    count(words.size());
    out_.raw(words.data(), words.size() * 4);
  }
  void object_code(const char*, const std::vector<uint8_t>& bytes) {
    out_.u64(bytes.size());
    out_.raw(bytes.data(), bytes.size());
  }
  template <typename T, typename Each>
  void optional_list(const char* key, bool present, const std::vector<T>& items, uint32_t max,
                     Each&& each) {
    flag(key, present);
    if (present) list(key, items, max, std::forward<Each>(each));
  }
  void require(bool, const char*) {}

 private:
  void count(size_t n) { out_.u32(static_cast<uint32_t>(n)); }
  ByteWriter& out_;
};

class FieldReader {
 public:
  static constexpr FieldForm kForm = FieldForm::Binary;
  explicit FieldReader(ByteReader& in) : in_(in) {}

  void text(const char* key, std::string& s) {
    uint32_t n = read<uint32_t>(key);
    room(key, n);
    s.resize(n);
    in_.raw(s.data(), n);
  }
  template <typename I>
  void integer(const char* key, I& i, int64_t lo, int64_t hi) {
    static_assert(std::is_integral_v<I> && (sizeof(I) < 8 || std::is_signed_v<I>),
                  "compared as int64_t");
    i = read<I>(key);
    if (static_cast<int64_t>(i) < lo || static_cast<int64_t>(i) > hi)
      fail(key, "is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  template <typename I>
  void optional_integer(const char* key, I& i, int64_t lo, int64_t hi, I) {
    integer(key, i, lo, hi);
  }
  void optional_flag(const char* key, bool& b) { flag(key, b); }
  void flag(const char* key, bool& b) { b = read<uint8_t>(key) != 0; }
  template <typename E, typename NameOf>
  void choice(const char* key, E& e, E last, NameOf) {
    uint8_t raw = read<uint8_t>(key);
    if (raw > static_cast<uint8_t>(last)) fail(key, "has an unknown value " + std::to_string(raw));
    e = static_cast<E>(raw);
  }
  void type(const char* key, ValueType& t, bool void_ok) {
    uint8_t scalar = read<uint8_t>(key);
    t.rows = read<uint8_t>(key);
    t.cols = read<uint8_t>(key);
    bool known = scalar <= static_cast<uint8_t>(Scalar::F64) &&
                 (void_ok || scalar != static_cast<uint8_t>(Scalar::Void));
    if (!known || t.rows < 1 || t.rows > 4 || t.cols < 1 || t.cols > 4)
      fail(key, "is not a value type");
    t.scalar = static_cast<Scalar>(scalar);
  }
  void extents(const char* key, std::array<int64_t, kMaxDims>& shape) {
    for (int64_t& e : shape) integer(key, e, 0, kMaxI32);
  }
  template <typename T, typename Each>
  void list(const char* key, std::vector<T>& items, uint32_t max, Each&& each) {
    items.resize(count(key, max));
    for (size_t i = 0; i < items.size(); ++i) {
      path_.emplace_back(key, i);
      each(*this, items[i]);
      path_.pop_back();
    }
  }
  template <typename T>
  void list(const char* key, std::vector<T>& items, uint32_t max) {
    list(key, items, max, [](FieldReader& v, T& item) { visit_fields(v, item); });
  }
  void types(const char* key, std::vector<ValueType>& items, uint32_t max, bool void_ok) {
    items.resize(count(key, max, 3));
    for (ValueType& t : items) type(key, t, void_ok);
  }
  void byte_list(const char* key, std::vector<uint8_t>& items, uint32_t max, int lo, int hi) {
    items.resize(count(key, max));
    for (uint8_t& b : items) integer(key, b, lo, hi);
  }
  void texts(const char* key, std::vector<std::string>& items, uint32_t max) {
    items.resize(count(key, max, 4));
    for (std::string& s : items) text(key, s);
  }
  void bound_pairs(const char* begin_key, std::vector<RangeBound>& begin, const char* end_key,
                   std::vector<RangeBound>& end, uint32_t max) {
    uint32_t dims = count(begin_key, max, size_t{2} * 13);
    begin.resize(dims);
    end.resize(dims);
    for (uint32_t d = 0; d < dims; ++d) {
      for (auto [key, bound] : {std::pair{begin_key, &begin[d]}, std::pair{end_key, &end[d]}}) {
        path_.emplace_back(key, d);
        visit_fields(*this, *bound);
        path_.pop_back();
      }
    }
  }
  void spirv_code(const char* key, std::vector<uint32_t>& words) {
    words.resize(count(key, kMaxSpirvWords, 4));
    room(key, words.size() * 4);
    in_.raw(words.data(), words.size() * 4);
    if (words.size() < 5 || words[0] != 0x07230203u) fail(key, "is not a SPIR-V module");
  }
  void object_code(const char* key, std::vector<uint8_t>& bytes) {
    uint64_t size = read<uint64_t>(key);
    room(key, size);
    bytes.resize(size);
    in_.raw(bytes.data(), size);
  }
  template <typename T, typename Each>
  void optional_list(const char* key, bool& present, std::vector<T>& items, uint32_t max,
                     Each&& each) {
    uint8_t raw = read<uint8_t>(key);
    if (raw > 1) fail(key, "has a presence flag " + std::to_string(raw) + ", not 0 or 1");
    present = raw == 1;
    items.clear();
    if (present) list(key, items, max, std::forward<Each>(each));
  }
  void require(bool ok, const char* why) {
    if (!ok) in_.fail(path() + " " + why);
  }

 private:
  template <typename I>
  I read(const char* key) {
    room(key, sizeof(I));
    I v;
    in_.raw(&v, sizeof v);
    return v;
  }
  // A list length, checked before the caller allocates: at most `max`, and items of at
  // least `min_item_bytes` each must fit in what is left.
  uint32_t count(const char* key, uint32_t max, size_t min_item_bytes = 1) {
    uint32_t n = read<uint32_t>(key);
    if (n > max) fail(key, "has an implausible count " + std::to_string(n));
    size_t left = in_.end() - in_.at();
    if (n > left / min_item_bytes)
      fail(key, "has a count of " + std::to_string(n) + " that does not fit in the " +
                    std::to_string(left) + " bytes left");
    return n;
  }
  void room(const char* key, uint64_t bytes) {
    if (bytes > in_.end() - in_.at()) fail(key, "is truncated");
  }
  // "resources[2]": where the reader is now.
  std::string path() const {
    std::string p;
    for (const auto& [key, index] : path_)
      p += (p.empty() ? "" : ".") + std::string(key) + "[" + std::to_string(index) + "]";
    return p.empty() ? "the record" : p;
  }
  [[noreturn]] void fail(const char* key, const std::string& why) const {
    in_.fail((path_.empty() ? std::string(key) : path() + "." + key) + " " + why);
  }

  ByteReader& in_;
  std::vector<std::pair<const char*, size_t>> path_;
};

}  // namespace loom
