// Compiled as part of loom_ir: its own headers and those of runtime/common, which it links,
// are on its include path (test include_path_allows_linked).
#include "compiler/ir/inst.h"
#include "runtime/common/scalar.h"
