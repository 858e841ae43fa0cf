# The C++ API's public headers (docs/installing.md): each installed name under include/loom/
# and its source. program.h and aot_module.h include each other and the runtime's vocabulary
# headers only as <loom/NAME>; error.h and scalar.h include the standard library alone, and
# kernel_abi.h's one include of scalar.h is renamed when it is installed
# (LoomInstallCppHeader.cmake). engine_plugin/api/CMakeLists.txt makes the same names links to
# the sources for this tree's own build, so every type keeps one declaration.
set(LOOM_CPP_HEADERS
  program.h engine_plugin/include/loom/program.h
  tape.h engine_plugin/include/loom/tape.h
  aot_module.h engine_plugin/include/loom/aot_module.h
  error.h runtime/common/error.h
  scalar.h runtime/common/scalar.h
  kernel_abi.h runtime/common/kernel_abi.h)
