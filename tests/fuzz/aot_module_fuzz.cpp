// AOT module archives (.loommod), what an engine loads: read from bytes (framing, hashes,
// metadata). A module that reads must write back to the same metadata.
#include <string>
#include <vector>

#include "runtime/aot/module.h"
#include "runtime/aot/module_files.h"
#include "runtime/common/error.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace loom;
  std::vector<uint8_t> bytes(data, data + size);
  aot::Module module;
  try {
    module = aot::read_module_bytes(bytes, "fuzz.loommod");
  } catch (const Error&) {
    return 0;
  }
  std::string json = aot::metadata_to_json(module.meta);
  fuzz::require(aot::metadata_to_json(aot::metadata_from_json(json, "<written>")) == json,
                "a module's metadata does not read back as written");
  return 0;
}
