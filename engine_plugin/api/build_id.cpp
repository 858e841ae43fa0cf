#include "engine_plugin/api/build_id.h"

#include "loom_build_id.h"  // generated into the build folder

namespace loom {

const char* build_id() { return LOOM_BUILD_ID; }

}  // namespace loom
