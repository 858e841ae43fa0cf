#include "runtime/common/npy.h"

#include <cstring>
#include <fstream>
#include <optional>
#include <string_view>
#include <utility>

#include "runtime/common/error.h"
#include "runtime/common/input_file.h"

namespace loom {

int64_t NpyArray::count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string npy_descr(Scalar s) {
  switch (s) {
    case Scalar::Bool: return "|b1";
    case Scalar::I8: return "|i1";
    case Scalar::U8: return "|u1";
    case Scalar::I16: return "<i2";
    case Scalar::U16: return "<u2";
    case Scalar::I32: return "<i4";
    case Scalar::U32: return "<u4";
    case Scalar::I64: return "<i8";
    case Scalar::U64: return "<u8";
    case Scalar::F32: return "<f4";
    case Scalar::F64: return "<f8";
    case Scalar::Void: break;
  }
  return "";
}

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr uint32_t kMaxHeaderBytes = 1u << 20;
// The data is read into memory whole: 16 GiB bounds what one file can make Loom allocate, far
// above the arrays simulations load (documented with .npy in docs/graph-format.md).
constexpr uint64_t kMaxNpyFileBytes = uint64_t{1} << 34;

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw Error(Place{path}, message);
}

Scalar parse_descr(const std::string& descr, const std::string& path) {
  for (Scalar s : {Scalar::Bool, Scalar::I8, Scalar::U8, Scalar::I16, Scalar::U16, Scalar::I32,
                   Scalar::U32, Scalar::I64, Scalar::U64, Scalar::F32, Scalar::F64}) {
    std::string d = npy_descr(s);
    if (descr == d) return s;
    if (d[0] == '|' && descr == "<" + d.substr(1)) return s;  // "<u1" is also seen
    if (d[0] == '|' && descr == "=" + d.substr(1)) return s;
  }
  fail(path, "unsupported .npy dtype '" + descr + "' (little-endian ints, floats, bool only)");
}

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// The header is a Python dict literal with exactly the keys 'descr' (a string),
// 'fortran_order' (True or False) and 'shape' (a tuple of non-negative integers), as NumPy
// writes it: {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }. Anything else is an
// error naming the file and what was expected where.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  NpyHeader parse() {
    NpyHeader header;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    expect('{');
    while (!next_is('}')) {
      std::string key = string_literal("a key");
      expect(':');
      if (key == "descr" && !seen_descr) {
        header.descr = string_literal("the dtype string of 'descr'");
        seen_descr = true;
      } else if (key == "fortran_order" && !seen_order) {
        header.fortran_order = boolean("'fortran_order'");
        seen_order = true;
      } else if (key == "shape" && !seen_shape) {
        header.shape = shape();
        seen_shape = true;
      } else {
        bad("the key '" + printable(key) + "'" +
            (key == "descr" || key == "fortran_order" || key == "shape" ? " appears twice"
                                                                        : " is not one of .npy's"));
      }
      if (!next_is('}')) expect(',');
    }
    expect('}');
    skip_spaces();
    if (at_ < text_.size()) bad("text follows the header's closing '}'");
    if (!seen_descr) bad("'descr' is missing");
    if (!seen_order) bad("'fortran_order' is missing");
    if (!seen_shape) bad("'shape' is missing");
    return header;
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    fail(path_, ".npy header is malformed: " + what + " (at byte " + std::to_string(at_) + " of '" +
                    printable(text_) + "')");
  }
  static std::string printable(std::string_view s) {
    std::string out;
    for (char c : s.substr(0, 120)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
    return s.size() > 120 ? out + "..." : out;
  }
  void skip_spaces() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\t'))
      ++at_;
  }
  bool next_is(char c) {
    skip_spaces();
    return at_ < text_.size() && text_[at_] == c;
  }
  void expect(char c) {
    if (!next_is(c)) bad(std::string("expected '") + c + "'");
    ++at_;
  }
  std::string string_literal(const std::string& what) {
    skip_spaces();
    char quote = at_ < text_.size() ? text_[at_] : '\0';
    if (quote != '\'' && quote != '"') bad("expected " + what + " in quotes");
    size_t end = text_.find(quote, at_ + 1);
    if (end == std::string_view::npos) bad(what + " has no closing quote");
    std::string value(text_.substr(at_ + 1, end - at_ - 1));
    at_ = end + 1;
    return value;
  }
  bool boolean(const std::string& what) {
    skip_spaces();
    for (bool value : {true, false}) {
      std::string_view word = value ? "True" : "False";
      if (text_.substr(at_).starts_with(word)) {
        at_ += word.size();
        return value;
      }
    }
    bad("expected True or False for " + what);
  }
  // "()", "(5,)", "(3, 4)", "(3, 4,)".
  std::vector<int64_t> shape() {
    std::vector<int64_t> extents;
    expect('(');
    while (!next_is(')')) {
      extents.push_back(extent());
      if (!next_is(')')) expect(',');
    }
    expect(')');
    return extents;
  }
  int64_t extent() {
    skip_spaces();
    size_t begin = at_;
    int64_t value = 0;
    while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') {
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, text_[at_] - '0', &value))
        bad("an extent of 'shape' does not fit in 64 bits");
      ++at_;
    }
    if (at_ == begin) bad("expected a non-negative integer in 'shape'");
    if (at_ < text_.size() && text_[at_] == 'L') ++at_;  // Python 2's long integers: (3L, 4L)
    return value;
  }

  std::string_view text_;
  const std::string& path_;
  size_t at_ = 0;
};

// The bytes the array's data takes, or nullopt when that does not fit in 64 bits.
std::optional<uint64_t> data_bytes(const std::vector<int64_t>& shape, Scalar dtype) {
  auto bytes = static_cast<uint64_t>(size_of(dtype));
  for (int64_t extent : shape)
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(extent), &bytes)) return std::nullopt;
  return bytes;
}

template <size_t N>
uint32_t little_endian(const unsigned char (&b)[N]) {
  uint32_t v = 0;
  for (size_t i = N; i-- > 0;) v = (v << 8u) | b[i];
  return v;
}

}  // namespace

NpyArray read_npy(const std::string& path) {
  // A regular file (a FIFO would block, /dev/zero never end) of at most kMaxNpyFileBytes.
  InputFile in(path, ".npy file", kMaxNpyFileBytes);
  // The file's size bounds every length the file claims, before anything is allocated.
  const auto file_bytes = static_cast<int64_t>(in.size());

  char magic[6];
  unsigned char version[2];
  if (!in.read(magic, 6) || std::memcmp(magic, kMagic, 6) != 0)
    fail(path, "not a .npy file (bad magic)");
  if (!in.read(reinterpret_cast<char*>(version), 2)) fail(path, "truncated .npy header");
  uint32_t header_len = 0;
  if (version[0] == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char*>(b), 2)) fail(path, "truncated .npy header");
    header_len = little_endian(b);
  } else if (version[0] == 2 || version[0] == 3) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4)) fail(path, "truncated .npy header");
    header_len = little_endian(b);
  } else {
    fail(path, "unsupported .npy version " + std::to_string(version[0]));
  }
  const int64_t header_begin = version[0] == 1 ? 10 : 12;
  if (header_len > kMaxHeaderBytes) fail(path, ".npy header is implausibly long");
  if (header_len > file_bytes - header_begin)
    fail(path, "truncated .npy header: it claims " + std::to_string(header_len) +
                   " bytes, the file holds " + std::to_string(file_bytes - header_begin) +
                   " after the preamble");
  std::string text(header_len, '\0');
  if (!in.read(text.data(), header_len)) fail(path, "truncated .npy header");

  NpyHeader header = HeaderParser(text, path).parse();
  NpyArray a;
  a.dtype = parse_descr(header.descr, path);
  if (header.fortran_order)
    fail(path, "Fortran-ordered .npy arrays are not supported; save with C order");
  a.shape = std::move(header.shape);
  const std::optional<uint64_t> bytes = data_bytes(a.shape, a.dtype);
  const auto available = static_cast<uint64_t>(file_bytes - (header_begin + header_len));
  if (!bytes)
    fail(path, ".npy data is truncated: its shape claims more than 2^64 bytes, the file holds " +
                   std::to_string(available));
  if (*bytes > available)
    fail(path, ".npy data is truncated: its shape and dtype claim " + std::to_string(*bytes) +
                   " bytes, the file holds " + std::to_string(available));
  a.data.resize(*bytes);
  if (!in.read(a.data.data(), static_cast<size_t>(*bytes)))
    fail(path, ".npy data is truncated: expected " + std::to_string(*bytes) + " bytes");
  return a;
}

void write_npy(const std::string& path, const NpyArray& a) {
  std::string shape = "(";
  for (size_t i = 0; i < a.shape.size(); ++i) {
    shape += std::to_string(a.shape[i]);
    if (a.shape.size() == 1 || i + 1 < a.shape.size()) shape += ",";
    if (i + 1 < a.shape.size()) shape += " ";
  }
  shape += ")";
  std::string header =
      "{'descr': '" + npy_descr(a.dtype) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(Place{path}, "cannot write .npy file");
  out.write(kMagic, 6);
  const char version[2] = {1, 0};
  out.write(version, 2);
  const unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff),
                                static_cast<unsigned char>(header.size() >> 8)};
  out.write(reinterpret_cast<const char*>(len), 2);
  out << header;
  out.write(reinterpret_cast<const char*>(a.data.data()),
            static_cast<std::streamsize>(a.data.size()));
  if (!out) throw Error(Place{path}, "failed writing .npy file");
}

}  // namespace loom
