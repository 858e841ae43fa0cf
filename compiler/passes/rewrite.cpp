#include "compiler/passes/rewrite.h"

#include <algorithm>

#include "compiler/ir/work_count.h"
#include "runtime/common/error.h"

namespace loom::passes {

using ir::Block;
using ir::Inst;
using ir::Op;

std::unique_ptr<Inst> new_inst(Op op, Scalar type, std::vector<Inst*> operands, int32_t node) {
  auto inst = std::make_unique<Inst>(op, type);
  inst->operands = std::move(operands);
  inst->node = node;
  return inst;
}

Inst* insert_before(Inst* before, std::unique_ptr<Inst> inst) {
  Block* block = before->parent;
  return block->insert(block->index_of(before), std::move(inst));
}

Inst* insert_after(Inst* after, std::unique_ptr<Inst> inst) {
  Block* block = after->parent;
  return block->insert(block->index_of(after) + 1, std::move(inst));
}

Inst* Insertions::before(Inst* anchor, std::unique_ptr<Inst> inst) {
  inst->parent = anchor->parent;
  Inst* raw = inst.get();
  placed_.insert(raw);
  pending_[anchor].before.push_back(std::move(inst));
  return raw;
}

Inst* Insertions::after(Inst* anchor, std::unique_ptr<Inst> inst) {
  inst->parent = anchor->parent;
  Inst* raw = inst.get();
  placed_.insert(raw);
  pending_[anchor].after.push_back(std::move(inst));
  return raw;
}

Inst* Insertions::at_start(Block* block, std::unique_ptr<Inst> inst) {
  inst->parent = block;
  Inst* raw = inst.get();
  placed_.insert(raw);
  starts_[block].push_back(std::move(inst));
  return raw;
}

// Appends `root` to `out` with everything placed around it, and around those, in order.
// Iterative: a pass may chain anchors (demote_atomics places a store after the operation it
// placed after the load).
void Insertions::emit(std::unique_ptr<Inst> root, Block& out) {
  struct Item {
    std::unique_ptr<Inst> inst;
    bool expanded;
  };
  std::vector<Item> todo;
  todo.push_back({std::move(root), false});
  while (!todo.empty()) {
    Item item = std::move(todo.back());
    todo.pop_back();
    ir::count_work();
    auto it = item.expanded ? pending_.end() : pending_.find(item.inst.get());
    if (it == pending_.end()) {
      placed_.erase(item.inst.get());
      out.append(std::move(item.inst));
      continue;
    }
    Around around = std::move(it->second);
    pending_.erase(it);
    // Popped in reverse: before[0..], the anchor, then after[] nearest (last placed) first.
    for (auto& a : around.after) todo.push_back({std::move(a), false});
    todo.push_back({std::move(item.inst), true});
    for (auto b = around.before.rbegin(); b != around.before.rend(); ++b)
      todo.push_back({std::move(*b), false});
  }
}

void Insertions::apply() {
  std::unordered_set<Block*> blocks;
  for (auto& [anchor, around] : pending_)
    if (!placed_.count(anchor) && anchor->parent) blocks.insert(anchor->parent);
  for (auto& [block, insts] : starts_) blocks.insert(block);
  for (Block* block : blocks) {
    std::vector<std::unique_ptr<Inst>> old = std::move(block->insts);
    block->insts.clear();
    block->insts.reserve(old.size());
    auto start = starts_.find(block);
    if (start != starts_.end()) {
      for (auto& inst : start->second) emit(std::move(inst), *block);
      starts_.erase(start);
    }
    for (auto& inst : old) emit(std::move(inst), *block);
  }
  if (!pending_.empty() || !placed_.empty())
    throw InternalError(
        "Insertions::apply: an anchor left its block before the insertions "
        "next to it were placed");
}

void erase_all(ir::Kernel& kernel, const std::unordered_set<Inst*>& dead) {
  replace_and_erase(kernel, {}, dead);
}

std::unique_ptr<Inst> new_const_bits(Scalar type, uint64_t bits, int32_t node) {
  auto c = std::make_unique<Inst>(Op::Const, type);
  c->bits = bits;
  c->node = node;
  return c;
}

uint64_t normalize_bits(Scalar type, uint64_t bits) { return ir::normalize_const_bits(type, bits); }

bool is_const_int(const Inst* inst, int64_t value) {
  return inst->is_const() && (is_int(inst->type) || inst->type == Scalar::Bool) &&
         inst->bits == normalize_bits(inst->type, static_cast<uint64_t>(value));
}

bool is_const_float(const Inst* inst, double value) {
  return inst->is_const() && is_float(inst->type) && inst->bits == ir::float_bits(value);
}

bool is_const_value(const Inst* inst, int64_t value) {
  return is_float(inst->type) ? is_const_float(inst, static_cast<double>(value))
                              : is_const_int(inst, value);
}

bool is_all_ones(const Inst* inst) {
  return inst->is_const() && is_int(inst->type) &&
         inst->bits == normalize_bits(inst->type, ~uint64_t{0});
}

int power_of_two(const Inst* inst) {
  if (!inst->is_const() || !is_int(inst->type)) return -1;
  uint64_t v = inst->bits;
  if (is_signed_int(inst->type) && static_cast<int64_t>(v) <= 0) return -1;
  if (is_unsigned_int(inst->type))
    v &= bit_width(inst->type) >= 64 ? ~uint64_t{0} : (uint64_t{1} << bit_width(inst->type)) - 1;
  if (v == 0 || (v & (v - 1)) != 0) return -1;
  int k = 0;
  while ((v >> k) != 1) ++k;
  return k;
}

bool is_uniform_op(Op op) {
  return op == Op::Const || op == Op::ArgLoad || op == Op::ResourceShape || ir::is_value_op(op);
}

void erase_from(ir::Kernel& kernel, Block& block, size_t pos) {
  while (block.insts.size() > pos) kernel.erase(block.remove(block.insts.size() - 1));
}

bool defined_within(const Inst* value, const Inst* region) {
  if (value == region) return true;
  for (const Block* b = value->parent; b && b->owner; b = b->owner->parent)
    if (b->owner == region) return true;
  return false;
}

void replace_and_erase(ir::Kernel& kernel, const std::unordered_map<Inst*, Inst*>& replace,
                       const std::unordered_set<Inst*>& dead) {
  ir::replace_uses(*kernel.body, replace);
  if (dead.empty()) return;
  // One compaction per block keeps this linear in the block size.
  std::unordered_set<Block*> blocks;
  for (Inst* inst : dead) {
    bool nested_in_dead = false;  // erased together with its dead region owner
    for (Block* b = inst->parent; b && b->owner; b = b->owner->parent) {
      ir::count_work();
      if (dead.count(b->owner)) nested_in_dead = true;
    }
    if (!nested_in_dead) blocks.insert(inst->parent);
  }
  for (Block* block : blocks) {
    auto& insts = block->insts;
    ir::count_work(insts.size());
    auto kept = std::stable_partition(
        insts.begin(), insts.end(),
        [&](const std::unique_ptr<Inst>& i) { return dead.count(i.get()) == 0; });
    for (auto it = kept; it != insts.end(); ++it) kernel.erase(std::move(*it));
    insts.erase(kept, insts.end());
  }
}

bool is_loop(const Inst& inst) {
  if (inst.op == Op::RangeFor || inst.op == Op::StructFor || inst.op == Op::While) return true;
  return inst.op == Op::Offload && inst.task_kind() != ir::TaskKind::Serial;
}

}  // namespace loom::passes
