#include "runtime/common/npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "runtime/common/error.h"

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

Scalar parse_descr(const std::string& descr, const std::string& path) {
  for (Scalar s : {Scalar::Bool, Scalar::I8, Scalar::U8, Scalar::I16, Scalar::U16, Scalar::I32,
                   Scalar::U32, Scalar::I64, Scalar::U64, Scalar::F32, Scalar::F64}) {
    std::string d = npy_descr(s);
    if (descr == d) return s;
    if (d[0] == '|' && descr == "<" + d.substr(1)) return s;  // "<u1" is also seen
    if (d[0] == '|' && descr == "=" + d.substr(1)) return s;
  }
  throw Error(Place{path}, "unsupported .npy dtype '" + descr + "' (little-endian ints, floats, bool only)");
}

// Finds 'key': VALUE in the header dict; returns VALUE text up to the matching delimiter.
std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
  auto k = header.find("'" + key + "'");
  if (k == std::string::npos) throw Error(Place{path}, ".npy header lacks '" + key + "'");
  auto colon = header.find(':', k);
  auto start = header.find_first_not_of(' ', colon + 1);
  if (colon == std::string::npos || start == std::string::npos)
    throw Error(Place{path}, ".npy header is malformed");
  if (header[start] == '(') return header.substr(start, header.find(')', start) - start + 1);
  if (header[start] == '\'') return header.substr(start + 1, header.find('\'', start + 1) - start - 1);
  auto end = header.find_first_of(",}", start);
  return header.substr(start, end - start);
}

}  // namespace

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(Place{path}, "cannot open .npy file");
  char magic[6];
  unsigned char version[2];
  if (!in.read(magic, 6) || std::memcmp(magic, kMagic, 6) != 0)
    throw Error(Place{path}, "not a .npy file (bad magic)");
  if (!in.read(reinterpret_cast<char*>(version), 2)) throw Error(Place{path}, "truncated .npy header");
  uint32_t header_len = 0;
  if (version[0] == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char*>(b), 2)) throw Error(Place{path}, "truncated .npy header");
    header_len = b[0] | (b[1] << 8u);
  } else if (version[0] == 2 || version[0] == 3) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4)) throw Error(Place{path}, "truncated .npy header");
    header_len = b[0] | (b[1] << 8u) | (b[2] << 16u) | (static_cast<uint32_t>(b[3]) << 24u);
  } else {
    throw Error(Place{path}, "unsupported .npy version " + std::to_string(version[0]));
  }
  if (header_len > (1u << 20)) throw Error(Place{path}, ".npy header is implausibly long");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) throw Error(Place{path}, "truncated .npy header");

  NpyArray a;
  a.dtype = parse_descr(dict_value(header, "descr", path), path);
  if (dict_value(header, "fortran_order", path) != "False")
    throw Error(Place{path}, "Fortran-ordered .npy arrays are not supported; save with C order");
  std::string shape = dict_value(header, "shape", path);
  std::stringstream ss(shape.substr(1, shape.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto first = item.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    try {
      a.shape.push_back(std::stoll(item.substr(first)));
    } catch (const std::exception&) {
      throw Error(Place{path}, ".npy shape '" + shape + "' is malformed");
    }
    if (a.shape.back() < 0) throw Error(Place{path}, ".npy shape has a negative extent");
  }
  auto bytes = static_cast<size_t>(a.count()) * static_cast<size_t>(size_of(a.dtype));
  a.data.resize(bytes);
  if (!in.read(reinterpret_cast<char*>(a.data.data()), static_cast<std::streamsize>(bytes)))
    throw Error(Place{path}, ".npy data is truncated: expected " + std::to_string(bytes) + " bytes");
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
  std::string header = "{'descr': '" + npy_descr(a.dtype) + "', 'fortran_order': False, 'shape': " + shape + ", }";
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
  out.write(reinterpret_cast<const char*>(a.data.data()), static_cast<std::streamsize>(a.data.size()));
  if (!out) throw Error(Place{path}, "failed writing .npy file");
}

}  // namespace loom
