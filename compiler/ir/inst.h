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
#include <utility>
#include <vector>

#include "compiler/ir/op.h"
#include "compiler/ir/work_count.h"
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
  uint64_t bits = 0;  // Const payload: integers as int64 (two's complement), floats as double bits
  std::string text;   // Assert message
  std::vector<std::unique_ptr<Block>> regions;
  Block* parent = nullptr;
  mutable uint32_t id = 0;  // printing name (%id), assigned by Kernel::renumber
  int32_t node = -1;        // graph node this came from, for diagnostics

  Inst* operand(size_t i) const { return operands[i]; }
  Block* region(size_t i) const { return regions[i].get(); }

  // Const accessors.
  int64_t int_value() const { return static_cast<int64_t>(bits); }
  double float_value() const;
  bool is_const() const { return op == Op::Const; }

  // Attributes, by meaning (ops.def's attr0/attr1 columns say which op has which). Each
  // throws loom::InternalError when the op has no such attribute.
  int32_t param_index() const { return attr(Attr::ParamIndex); }  // ArgLoad
  int32_t byte_offset() const { return attr(Attr::ByteOffset); }  // ArgLoad: inside the parameter
  int32_t dimension() const {
    return attr(Attr::Dimension);
  }  // LoopIndex, ResourceShape, BoundsCheck
  // ResourceShape, GlobalPtr, ElementPtr, Tex*, BoundsCheck, StructFor, struct_for Offload
  int32_t resource_slot() const { return attr(Attr::ResourceSlot); }
  int32_t component() const { return attr(Attr::Component); }  // GlobalPtr, Array*
  int32_t channel() const { return attr(Attr::Channel); }      // TexLoad, TexSample
  int32_t dims() const {
    return attr(Attr::Dims);
  }  // TexStore, RangeFor, StructFor, range_for Offload
  ir::AtomicOp atomic_op() const { return static_cast<ir::AtomicOp>(attr(Attr::AtomicOp)); }
  int32_t temp_offset() const { return attr(Attr::TempOffset); }  // TmpLoad, TmpStore: bytes
  ir::Op combine_op() const { return static_cast<ir::Op>(attr(Attr::CombineOp)); }  // Reduce
  int32_t length() const { return attr(Attr::Length); }           // LocalArray: elements
  int32_t width() const { return attr(Attr::Width); }             // LocalArray: scalars per element
  int32_t assert_node() const { return attr(Attr::AssertNode); }  // Assert: the checking node
  const std::string& message() const;                             // Assert
  ir::TaskKind task_kind() const {
    return static_cast<ir::TaskKind>(attr(Attr::TaskKind));
  }  // Offload

  void set_param_index(int32_t v) { set_attr(Attr::ParamIndex, v); }
  void set_byte_offset(int32_t v) { set_attr(Attr::ByteOffset, v); }
  void set_dimension(int32_t v) { set_attr(Attr::Dimension, v); }
  void set_resource_slot(int32_t v) { set_attr(Attr::ResourceSlot, v); }
  void set_component(int32_t v) { set_attr(Attr::Component, v); }
  void set_channel(int32_t v) { set_attr(Attr::Channel, v); }
  void set_dims(int32_t v) { set_attr(Attr::Dims, v); }
  void set_atomic_op(ir::AtomicOp v) { set_attr(Attr::AtomicOp, static_cast<int32_t>(v)); }
  void set_temp_offset(int32_t v) { set_attr(Attr::TempOffset, v); }
  void set_combine_op(ir::Op v) { set_attr(Attr::CombineOp, static_cast<int32_t>(v)); }
  void set_length(int32_t v) { set_attr(Attr::Length, v); }
  void set_width(int32_t v) { set_attr(Attr::Width, v); }
  void set_assert_node(int32_t v) { set_attr(Attr::AssertNode, v); }
  // Offload: set first, it decides whether dims() or resource_slot() is the task's space.
  void set_task_kind(ir::TaskKind v) { set_attr(Attr::TaskKind, static_cast<int32_t>(v)); }

  // Turns this instruction into `to` in place: attributes with the same meaning in both ops
  // are kept, the others cleared (GlobalPtr -> ElementPtr keeps the slot, drops the component).
  void morph(Op to);
  // Raw attribute values in slot order, for code that handles every op alike (printing
  // a hash, copying); never for reading one attribute's meaning.
  std::pair<int32_t, int32_t> raw_attributes() const { return {attr0_, attr1_}; }
  void copy_attributes_from(const Inst& other);

  bool same_attributes(const Inst& other) const;
  // Erased by a pass (Kernel::erase); kept alive so that a dangling use can be reported.
  bool erased() const { return erased_; }

 private:
  friend class Builder;
  friend class Kernel;

  int32_t attr(Attr meaning) const;
  void set_attr(Attr meaning, int32_t value);
  int32_t* attr_slot(Attr meaning);

  int32_t attr0_ = 0;  // op-specific, see ops.def
  int32_t attr1_ = 0;
  bool erased_ = false;
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

// How one offloaded task runs, for `loom check` and the editor's loop nodes: the node of its
// loop (or of its first statement) and a line such as "range_for over 2 dims, parallel;
// reduction: the variable of node 3 (+, f32)" or "serial: node 7 reads ...".
struct TaskNote {
  int32_t node = -1;
  bool parallel = false;  // a range_for or struct_for run by many threads
  std::string text;
};

// The value a reduction's partial starts from, which `combine` leaves any value unchanged
// with (0 for + | ^, 1 for *, all ones for &, the type's largest value for min, smallest for
// max; floats: -0.0, 1.0, +inf, -inf), as a Const's bits.
uint64_t combine_identity_bits(Op combine, Scalar type);

// One instantiated kernel: its launch contract and its body.
class Kernel {
 public:
  Kernel();
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  KernelABI abi;  // parameters, resource slots, returns (tasks filled by codegen)
  std::unique_ptr<Block> body;
  bool debug = false;     // bounds checks and assertions compiled in
  bool fast_math = true;  // codegen may reassociate float math
  // Width of lowered element offsets: 64 on the CPU; 32 for GPU targets, whose storage
  // buffers are smaller than 4 GiB and whose 64-bit integer math is slow or missing.
  int index_bits = 64;
  int workgroup_size = 0;  // GPU targets: invocations per workgroup; 0: the target's default
  // No two ndarray slots are bound to the same ndarray (the JIT knows it from the launch):
  // GPU code need not declare their buffers as possibly overlapping (SPIR-V Aliased).
  bool distinct_ndarrays = false;
  // Resource slots the kernel asks GPU targets to stage in workgroup memory (the document's
  // `block_local`, Taichi's ti.block_local): a 2-d task reading one at small constant offsets
  // of its indices loads a tile and its halo once per workgroup (codegen_spirv/README.md);
  // other targets ignore it.
  std::vector<int32_t> block_local_slots;
  std::vector<TaskNote> task_notes;  // one per task, in task order (filled by offload)
  // Variables lowered from a function's `var` node. Inlined code carries the call node, so
  // this says which function and node a variable came from (offload's notes name it).
  struct VarOrigin {
    const Inst* var = nullptr;  // an Alloca
    std::string function;
    int32_t node = -1;  // the var node, in the function
  };
  std::vector<VarOrigin> var_origins;  // dropped with their variable (free_erased)
  const VarOrigin* origin_of(const Inst* var) const;

  void renumber() const;  // ids in print order, starting at 0 (ids are printing names)
  std::unique_ptr<Kernel> clone() const;

  // Takes an instruction a pass removed from its block: it and everything in its regions
  // are marked erased and kept until free_erased(), so a use a pass forgot to redirect is
  // reported by the verifier instead of reading freed memory.
  void erase(std::unique_ptr<Inst> inst);
  // Frees the erased instructions; the pipeline calls it once a step has been verified.
  void free_erased();
  size_t erased_count() const { return erased_.size(); }

 private:
  static void mark_erased(Inst& inst);

  std::vector<std::unique_ptr<Inst>> erased_;
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
    count_work();
    visit(*inst);
    for (auto& region : inst->regions) walk(*region, visit);
  }
}
template <typename F>
void walk(const Block& block, F&& visit) {
  for (const auto& inst : block.insts) {
    count_work();
    visit(static_cast<const Inst&>(*inst));
    for (const auto& region : inst->regions) walk(static_cast<const Block&>(*region), visit);
  }
}

// Rewrites every operand that appears as a key of `map` (values may chain).
void replace_uses(Block& root, const std::unordered_map<Inst*, Inst*>& map);
// Number of uses of each instruction anywhere under `root`.
std::unordered_map<const Inst*, int> count_uses(Block& root);

// True when `inst` is (transitively) inside the block `ancestor`.
bool is_inside(const Inst* inst, const Block* ancestor);

}  // namespace loom::ir
