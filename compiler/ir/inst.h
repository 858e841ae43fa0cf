// The kernel IR: typed, scalar SSA in nested blocks (Taichi's CHI shape, re-thought).
//
// An Inst is one operation. Its result (if any) is the Inst itself; `type` is the result
// type (Void for none). Pointer-producing ops (GlobalPtr, ElementPtr, Alloca) carry the
// pointee type. Regions (If, RangeFor, StructFor, While, Offload) own Blocks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/op.h"
#include "runtime/common/kernel_abi.h"
#include "runtime/common/scalar.h"

namespace loom::ir {

class Block;

class Inst {
 public:
  Inst(Op op, Scalar type) : op(op), type(type) {}

  Op op;
  Scalar type;
  std::vector<Inst*> operands;
  uint64_t bits = 0;   // Const payload: integers as int64 (two's complement), floats as double bits
  int32_t attr0 = 0;   // op-specific, see ops.def
  int32_t attr1 = 0;
  std::string text;    // Assert message
  std::vector<std::unique_ptr<Block>> regions;
  Block* parent = nullptr;
  uint32_t id = 0;     // printing name (%id), assigned by Kernel::renumber
  int32_t node = -1;   // graph node this came from, for diagnostics

  Inst* operand(size_t i) const { return operands[i]; }
  Block* region(size_t i) const { return regions[i].get(); }

  // Const accessors.
  int64_t int_value() const { return static_cast<int64_t>(bits); }
  double float_value() const;
  bool is_const() const { return op == Op::Const; }

  bool same_attributes(const Inst& other) const;
};

class Block {
 public:
  explicit Block(Inst* owner = nullptr) : owner(owner) {}

  Inst* owner;  // the region instruction, or null for the kernel body
  std::vector<std::unique_ptr<Inst>> insts;

  // Appends or inserts, taking ownership and setting parent.
  Inst* append(std::unique_ptr<Inst> inst);
  Inst* insert(size_t pos, std::unique_ptr<Inst> inst);
  size_t index_of(const Inst* inst) const;
  std::unique_ptr<Inst> remove(size_t pos);
};

// One instantiated kernel: its launch contract and its body.
class Kernel {
 public:
  Kernel();
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  KernelABI abi;              // parameters, resource slots, returns (tasks filled by codegen)
  std::unique_ptr<Block> body;
  bool debug = false;         // bounds checks and assertions compiled in
  bool fast_math = true;      // codegen may reassociate float math
  // Width of lowered element offsets: 64 on the CPU; 32 for GPU targets, whose storage
  // buffers are smaller than 4 GiB and whose 64-bit integer math is slow or missing.
  int index_bits = 64;
  int workgroup_size = 0;     // GPU targets: invocations per workgroup; 0: the target's default

  void renumber();            // ids in print order, starting at 0
  std::unique_ptr<Kernel> clone() const;
};

// Constants. Their bits are always in normal form: integers sign- or zero-extended from
// their width (an u8 300 is 44), bools 0/1, f32 values exactly representable as float.
std::unique_ptr<Inst> make_const(Scalar type, double value);
std::unique_ptr<Inst> make_const_int(Scalar type, int64_t value);
uint64_t float_bits(double value);
// The normal form of integer/bool bits of `type` (floats unchanged).
uint64_t normalize_const_bits(Scalar type, uint64_t bits);
// True when a Const's bits are in normal form (the verifier checks every constant).
bool const_is_normalized(const Inst& c);

// Walks every instruction, parents before children, in program order.
template <typename F>
void walk(Block& block, F&& visit) {
  for (auto& inst : block.insts) {
    visit(*inst);
    for (auto& region : inst->regions) walk(*region, visit);
  }
}

// Rewrites every operand that appears as a key of `map` (values may chain).
void replace_uses(Block& root, const std::unordered_map<Inst*, Inst*>& map);
// Number of uses of each instruction anywhere under `root`.
std::unordered_map<const Inst*, int> count_uses(Block& root);

// True when `inst` is (transitively) inside the block `ancestor`.
bool is_inside(const Inst* inst, const Block* ancestor);

}  // namespace loom::ir
