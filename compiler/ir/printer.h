// Deterministic text form of the IR, used by `loom ir` and golden tests.
#pragma once

#include <string>

namespace loom::ir {

class Kernel;
class Block;
class Inst;

// Renumbers the kernel (ids are printing names), then prints its contract and body.
std::string print_kernel(const Kernel& kernel);
// One instruction (with its regions), indented by `indent` levels; ids must be assigned.
std::string print_inst(const Inst& inst, int indent = 0);

}  // namespace loom::ir
