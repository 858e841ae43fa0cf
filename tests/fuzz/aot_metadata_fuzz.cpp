// The metadata.json of an AOT module (a module folder holds it as text): every section is
// checked and names its key path. What reads must write back and read to the same text.
#include <string>

#include "runtime/aot/module.h"
#include "runtime/common/error.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace loom;
  std::string text(reinterpret_cast<const char*>(data), size);
  aot::ModuleMetadata meta;
  try {
    meta = aot::metadata_from_json(text, "fuzz/metadata.json");
  } catch (const Error&) {
    return 0;
  }
  std::string json = aot::metadata_to_json(meta);
  fuzz::require(aot::metadata_to_json(aot::metadata_from_json(json, "<written>")) == json,
                "metadata does not read back as written");
  return 0;
}
