// Kernel records, the offline cache's files on disk (a cache may be stale or damaged):
// deserialize; what reads must serialize back to the same bytes.
#include <vector>

#include "runtime/common/abi_serialize.h"
#include "runtime/common/error.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace loom;
  std::vector<uint8_t> bytes(data, data + size);
  KernelRecord record;
  try {
    record = deserialize_kernel_record(bytes, "fuzz.cache");
  } catch (const Error&) {
    return 0;
  }
  std::vector<uint8_t> written = serialize_kernel_record(record);
  fuzz::require(serialize_kernel_record(deserialize_kernel_record(written, "<written>")) == written,
                "a kernel record does not read back as written");
  return 0;
}
