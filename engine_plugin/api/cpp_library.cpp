// libloom_cpp.so's own translation unit: the library is loom_api linked whole
// (engine_plugin/api/CMakeLists.txt), and a shared library target needs one source.
#include <loom/aot_module.h>
#include <loom/program.h>
