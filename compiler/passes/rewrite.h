// Small IR-editing helpers shared by the passes in this folder (not a public API).
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/inst.h"

namespace loom::passes {

// A fresh instruction (not yet in a block) carrying `node` for diagnostics; set its
// attributes through their named setters (set_resource_slot, ...).
std::unique_ptr<ir::Inst> new_inst(ir::Op op, Scalar type, std::vector<ir::Inst*> operands,
                                   int32_t node);
// Inserts `inst` into the block of `before` / `after`, next to it. Each call finds the
// position and moves the rest of the block: for one or a few insertions. A pass that inserts
// next to many instructions uses Insertions, which stays linear in the block size.
ir::Inst* insert_before(ir::Inst* before, std::unique_ptr<ir::Inst> inst);
ir::Inst* insert_after(ir::Inst* after, std::unique_ptr<ir::Inst> inst);

// Instructions to place next to others, all placed by one rebuild of each block they touch
// (apply). Until then a new instruction already has its parent block (so is_inside, the
// enclosing task and the like work) but no position in it; an anchor may itself be one of
// them. The result is what the same calls of insert_before / insert_after / inserting at a
// block's start would give, in the same order.
class Insertions {
 public:
  Insertions() = default;
  Insertions(const Insertions&) = delete;
  Insertions& operator=(const Insertions&) = delete;

  // Just before `anchor`, after what was placed before it earlier.
  ir::Inst* before(ir::Inst* anchor, std::unique_ptr<ir::Inst> inst);
  // Just after `anchor`, before what was placed after it earlier (as insert_after does).
  ir::Inst* after(ir::Inst* anchor, std::unique_ptr<ir::Inst> inst);
  // At the start of `block`, after what was placed there earlier.
  ir::Inst* at_start(ir::Block* block, std::unique_ptr<ir::Inst> inst);

  bool empty() const { return pending_.empty() && starts_.empty(); }
  // Places everything; throws InternalError if an anchor is no longer in a block.
  void apply();

 private:
  struct Around {
    std::vector<std::unique_ptr<ir::Inst>> before, after;  // `after` nearest last
  };
  void emit(std::unique_ptr<ir::Inst> inst, ir::Block& out);

  std::unordered_map<const ir::Inst*, Around> pending_;  // by anchor
  std::unordered_set<const ir::Inst*> placed_;           // made here, not yet in a block
  std::unordered_map<ir::Block*, std::vector<std::unique_ptr<ir::Inst>>> starts_;
};

// Erases every instruction in `dead` from its block (Kernel::erase), one compaction per
// block: replace_and_erase without replacements.
void erase_all(ir::Kernel& kernel, const std::unordered_set<ir::Inst*>& dead);
// A constant with the given raw bits (already normalised, see normalize_bits).
std::unique_ptr<ir::Inst> new_const_bits(Scalar type, uint64_t bits, int32_t node);

// Integers sign- or zero-extended from their width into 64 bits; bools 0/1 (inst.h's form).
uint64_t normalize_bits(Scalar type, uint64_t bits);

bool is_const_int(const ir::Inst* inst, int64_t value);    // integer or bool constant
bool is_const_float(const ir::Inst* inst, double value);   // float constant, bitwise +0/-0 aware
bool is_const_value(const ir::Inst* inst, int64_t value);  // integer, bool or float equal to value
bool is_all_ones(const ir::Inst* inst);                    // integer constant with every bit set
// log2 of a positive power-of-two integer constant, or -1.
int power_of_two(const ir::Inst* inst);

// Ops the verifier accepts at the top level of an offloaded kernel (given uniform operands):
// constants, arguments, shapes and value ops (ops.def).
bool is_uniform_op(ir::Op op);

// Removes the instruction at `pos` and everything after it in `block` (to the kernel's
// erased instructions, see Kernel::erase).
void erase_from(ir::Kernel& kernel, ir::Block& block, size_t pos);

// True when `value` is the region instruction `region` or lies inside one of its regions.
bool defined_within(const ir::Inst* value, const ir::Inst* region);

// Applies a batch of replacements (values may chain) to the whole kernel and then erases
// every instruction in `dead` from its block (Kernel::erase). Callers must make sure nothing else
// still uses the dead ones.
void replace_and_erase(ir::Kernel& kernel, const std::unordered_map<ir::Inst*, ir::Inst*>& replace,
                       const std::unordered_set<ir::Inst*>& dead);

// Empties a hash table in time proportional to what it holds: clear() also zeroes every bucket
// the table ever grew to, so clearing a once-big table again and again is quadratic.
template <typename Table>
void reset_table(Table& table) {
  Table().swap(table);
}

// Loops that may run their body more than once (RangeFor, StructFor, While, parallel Offload).
bool is_loop(const ir::Inst& inst);

}  // namespace loom::passes
