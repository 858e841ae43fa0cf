// The bounds-checked ByteReader: counts are checked against the bytes left before a caller
// allocates for them, and a reader never starts past its end.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/common/byte_stream.h"
#include "runtime/common/error.h"

using namespace loom;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.place().document, "record.bin") << e.what();
    return e.message();
  }
  return "";
}

}  // namespace

TEST(ByteReader, RefusesACountItsItemsCannotFillBeforeAllocating) {
  ByteWriter w;
  w.u32(1000);  // a thousand items of 8 bytes each, in 16 bytes
  w.u64(1);
  w.u64(2);
  ByteReader r(w.out, "record.bin", "test record");
  std::string message = error_of([&] { r.count(1u << 20, 8); });
  EXPECT_NE(message.find("corrupt test record: count 1000 does not fit in the 16 bytes left"),
            std::string::npos)
      << message;

  ByteReader fits(w.out, "record.bin", "test record");
  EXPECT_EQ(error_of([&] { fits.count(1u << 20, 0); }), "");  // no minimum: the limit alone
  ByteWriter two;
  two.u32(2);
  two.u64(1);
  two.u64(2);
  ByteReader exact(two.out, "record.bin", "test record");
  EXPECT_EQ(exact.count(10, 8), 2u);
  EXPECT_EQ(exact.remaining(), 16u);
}

TEST(ByteReader, NeverStartsPastItsEnd) {
  std::vector<uint8_t> bytes(4, 0xab);
  ByteReader r(bytes, "record.bin", "test record", /*begin=*/8, /*end=*/2);
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_NE(error_of([&] { r.u8(); }).find("truncated"), std::string::npos);
  ByteReader past(bytes, "record.bin", "test record", /*begin=*/100);
  EXPECT_NE(error_of([&] { past.u32(); }).find("truncated"), std::string::npos);
}
