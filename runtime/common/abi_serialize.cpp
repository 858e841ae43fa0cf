#include "runtime/common/abi_serialize.h"

#include <cstdio>

#include "runtime/common/abi_binary.h"
#include "runtime/common/byte_stream.h"
#include "runtime/common/error.h"

namespace loom {

namespace {

constexpr char kMagic[8] = {'L', 'O', 'O', 'M', 'K', 'R', 'N', 'L'};
// 3: task extent functions report work per row; 4: the kernel's resource access; 5: the
// extents its code assumes; 6: range bounds plus a constant; 7: tiled tasks.
constexpr uint32_t kRecordVersion = 7;

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
  FieldWriter fields(w);
  visit_fields(fields, r);
  return seal_record(w);
}

KernelRecord deserialize_kernel_record(const std::vector<uint8_t>& bytes, const std::string& what) {
  ByteReader rd = open_record(bytes, what, "compiled kernel record", kMagic, kRecordVersion);
  KernelRecord r;
  FieldReader fields(rd);
  visit_fields(fields, r);
  if (rd.at() + 8 != bytes.size()) rd.fail("trailing bytes");
  return r;
}

}  // namespace loom
