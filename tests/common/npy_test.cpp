// .npy headers are parsed strictly and every size they claim is checked against the file
// before anything is allocated: a bad file is a loom::Error naming it, never bad_alloc.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/common/error.h"
#include "runtime/common/npy.h"

using namespace loom;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("loom_npy_test_" + name)).string();
}

// A version 1.0 .npy file with `header` as its dict and `data_bytes` zero bytes after it.
std::string npy_file(const std::string& name, const std::string& header, size_t data_bytes = 0) {
  std::string path = temp_path(name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write("\x93NUMPY\x01\x00", 8);
  const char length[2] = {static_cast<char>(header.size() & 0xff),
                          static_cast<char>(header.size() >> 8)};
  out.write(length, 2);
  out << header;
  out << std::string(data_bytes, '\0');
  return path;
}

// The message of the loom::Error reading `path` throws; it must name the file.
std::string read_error(const std::string& path) {
  try {
    read_npy(path);
  } catch (const Error& e) {
    EXPECT_EQ(e.place().document, path) << e.what();
    return e.message();
  }
  return "";
}

void expect_has(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "'" << message << "' lacks '" << part << "'";
}

}  // namespace

TEST(Npy, ReadsTheShapesNumPyWrites) {
  NpyArray a = read_npy(
      npy_file("scalar.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 8));
  EXPECT_TRUE(a.shape.empty());
  EXPECT_EQ(a.data.size(), 8u);
  a = read_npy(
      npy_file("one.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }\n", 20));
  EXPECT_EQ(a.shape, (std::vector<int64_t>{5}));
  a = read_npy(
      npy_file("two.npy", "{\"descr\": \"|u1\", \"shape\": (3, 4), \"fortran_order\": False}", 12));
  EXPECT_EQ(a.shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(a.dtype, Scalar::U8);
  a = read_npy(
      npy_file("python2.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 1L), }", 8));
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 1}));
  a = read_npy(
      npy_file("empty.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 7), }"));
  EXPECT_TRUE(a.data.empty());
}

// 12 GB claimed by a file of a few bytes: refused before allocating.
TEST(Npy, RefusesDataTheFileDoesNotHold) {
  std::string path = npy_file(
      "claims.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 3), }", 30);
  expect_has(
      read_error(path),
      ".npy data is truncated: its shape and dtype claim 12000000000 bytes, the file holds 30");
  path = npy_file("short.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }", 19);
  expect_has(read_error(path), "claim 20 bytes, the file holds 19");
}

TEST(Npy, RefusesAShapeWhoseSizeOverflows) {
  std::string path =
      npy_file("overflow.npy",
               "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", 16);
  expect_has(read_error(path), "its shape claims more than 2^64 bytes");
  path = npy_file("huge.npy",
                  "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }");
  expect_has(read_error(path), "does not fit in 64 bits");
}

TEST(Npy, RefusesAHeaderLongerThanTheFile) {
  std::string path = temp_path("header.npy");
  std::ofstream(path, std::ios::binary) << std::string("\x93NUMPY\x01\x00\xff\x7f{'descr'", 18);
  expect_has(read_error(path), "truncated .npy header: it claims 32767 bytes, the file holds 8");
}

TEST(Npy, RefusesMalformedHeadersNamingWhatIsWrong) {
  struct Case {
    const char* header;
    const char* error;
  };
  for (const Case& c : std::vector<Case>{
           {"{'descr': '<f4', 'fortran_order': False, 'shape': '', }", "expected '('"},
           {"{'descr': '<f4', 'fortran_order': False, 'shape': (, }",
            "expected a non-negative integer"},
           {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
            "expected a non-negative integer"},
           {"{'descr': '<f4', 'fortran_order': False, 'shape': (3 4), }", "expected ','"},
           {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,)", "expected ','"},
           {"{'descr': '<f4', 'fortran_order': False, }", "'shape' is missing"},
           {"{'descr': '<f4', 'shape': (3,)}", "'fortran_order' is missing"},
           {"{'fortran_order': False, 'shape': (3,)}", "'descr' is missing"},
           {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}",
            "the key 'descr' appears twice"},
           {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'extra': 1}",
            "the key 'extra' is not one of .npy's"},
           {"{'descr': '<f4', 'fortran_order': false, 'shape': (3,)}", "expected True or False"},
           {"{'descr': <f4, 'fortran_order': False, 'shape': (3,)}", "in quotes"},
           {"{'descr: '<f4', 'fortran_order': False, 'shape': (3,)}", "expected ':'"},
           {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x",
            "text follows the header's closing '}'"},
           {"'descr': '<f4'", "expected '{'"},
           {"", "expected '{'"},
           {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'unterminated",
            "has no closing quote"},
       }) {
    SCOPED_TRACE(c.header);
    std::string message = read_error(npy_file("malformed.npy", c.header, 64));
    expect_has(message, ".npy header is malformed: ");
    expect_has(message, c.error);
  }
  expect_has(read_error(npy_file("fortran.npy",
                                 "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}", 16)),
             "Fortran-ordered");
  expect_has(read_error(npy_file("dtype.npy",
                                 "{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}", 8)),
             "unsupported .npy dtype '>f4'");
}
