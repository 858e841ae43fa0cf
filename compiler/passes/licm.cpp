#include "compiler/passes/licm.h"

#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/inst.h"
#include "compiler/ir/work_count.h"
#include "compiler/passes/rewrite.h"

namespace loom::passes {

namespace {

using ir::Block;
using ir::Inst;
using ir::Op;

bool may_trap(const Inst& inst) {
  if ((inst.op != Op::Div && inst.op != Op::Mod) || !is_int(inst.type)) return false;
  const Inst* d = inst.operands[1];
  if (!d->is_const() || d->bits == 0) return true;
  return is_signed_int(inst.type) && is_const_int(d, -1);  // INT_MIN / -1
}

// The resource slot a pointer instruction addresses, or -1.
int slot_of(const Inst* ptr) {
  if (ptr->op == Op::GlobalPtr || ptr->op == Op::ElementPtr) return ptr->resource_slot();
  return -1;
}

class Hoister {
 public:
  explicit Hoister(ir::Kernel& k) : kernel_(k) {}

  bool run() {
    visit_block(*kernel_.body);
    return progress_;
  }

 private:
  // Rebuilds the block in order: what a loop hoists is appended just before the loop, so
  // hoisting out of many loops stays linear in the block size.
  void visit_block(Block& block) {
    std::vector<std::unique_ptr<Inst>> old = std::move(block.insts);
    block.insts.clear();
    block.insts.reserve(old.size());
    for (auto& up : old) {
      Inst* inst = up.get();
      ir::count_work();
      for (auto& region : inst->regions) visit_block(*region);  // inner loops first
      if (is_loop(*inst))
        for (auto& hoisted : hoist_from(inst)) block.append(std::move(hoisted));
      block.append(std::move(up));
    }
  }

  bool outside(const Inst* value, const Inst* loop) { return !defined_within(value, loop); }

  bool invariant(const Inst& inst, const Inst* loop) {
    for (const Inst* op : inst.operands)
      if (!outside(op, loop) && !hoisted_.count(op)) return false;
    return true;
  }

  // Slots written anywhere in the loop.
  std::unordered_set<int> written_slots(Inst* loop) {
    std::unordered_set<int> slots;
    for (auto& region : loop->regions) {
      ir::walk(*region, [&](Inst& inst) {
        if (inst.op == Op::GlobalStore || inst.op == Op::AtomicRMW)
          slots.insert(slot_of(inst.operands[0]));
        if (inst.op == Op::TexStore) slots.insert(inst.resource_slot());
      });
    }
    return slots;
  }

  // The body surely runs at least once each time the loop instruction runs.
  static bool runs_once(const Inst* loop) {
    if (loop->op == Op::While) return true;
    if (loop->op != Op::RangeFor) return false;
    for (size_t d = 0; d + 1 < loop->operands.size(); d += 2) {
      const Inst *b = loop->operands[d], *e = loop->operands[d + 1];
      if (!b->is_const() || !e->is_const() || !is_int(b->type)) return false;
      if (static_cast<int64_t>(b->bits) >= static_cast<int64_t>(e->bits)) return false;
    }
    return true;
  }

  // Takes the hoistable instructions out of the loop (one compaction per block they leave),
  // in program order, for the caller to place before it.
  std::vector<std::unique_ptr<Inst>> hoist_from(Inst* loop) {
    bool to_top_level = loop->op == Op::Offload;
    std::unordered_set<int> written;
    bool loads_ok = !to_top_level && runs_once(loop);
    if (loads_ok) written = written_slots(loop);
    std::vector<Inst*> moved;
    reset_table(hoisted_);  // this loop's hoisted values count as outside it
    for (auto& region : loop->regions)
      collect(*region, loop, to_top_level, loads_ok, written, true, moved);
    if (moved.empty()) return {};
    progress_ = true;
    std::unordered_map<const Inst*, std::unique_ptr<Inst>> taken;
    std::unordered_set<Block*> sources;
    for (Inst* inst : moved) sources.insert(inst->parent);
    for (Block* from : sources) {
      size_t kept = 0;
      for (auto& up : from->insts) {
        ir::count_work();
        if (hoisted_.count(up.get()))
          taken.emplace(up.get(), std::move(up));
        else
          from->insts[kept++] = std::move(up);
      }
      from->insts.resize(kept);
    }
    std::vector<std::unique_ptr<Inst>> out;
    out.reserve(moved.size());
    for (Inst* inst : moved) out.push_back(std::move(taken.at(inst)));
    return out;
  }

  // Marks hoistable instructions in program order; `always` is false inside If regions and
  // after anything that may leave the iteration early.
  void collect(Block& block, Inst* loop, bool to_top_level, bool loads_ok,
               const std::unordered_set<int>& written, bool always, std::vector<Inst*>& moved) {
    for (auto& up : block.insts) {
      Inst& inst = *up;
      ir::count_work();
      if (is_loop(inst)) {  // already hoisted what it could; its body stays put
        always = false;
        continue;
      }
      if (!inst.regions.empty()) {
        for (auto& region : inst.regions)
          collect(*region, loop, to_top_level, loads_ok, written, false, moved);
        always = false;  // a nested Break/Continue may skip the rest
        continue;
      }
      if (inst.op == Op::Break || inst.op == Op::Continue || inst.op == Op::Return ||
          inst.op == Op::BoundsCheck || inst.op == Op::Assert) {
        always = false;
        continue;
      }
      if (!invariant(inst, loop)) continue;
      bool pure_ok =
          ir::is_pure(inst.op) && !may_trap(inst) && (!to_top_level || is_uniform_op(inst.op));
      bool load_ok = inst.op == Op::GlobalLoad && loads_ok && always &&
                     !written.count(slot_of(inst.operands[0]));
      if (!pure_ok && !load_ok) continue;
      moved.push_back(&inst);
      hoisted_.insert(&inst);
    }
  }

  ir::Kernel& kernel_;
  std::unordered_set<const Inst*> hoisted_;
  bool progress_ = false;
};

}  // namespace

bool licm(ir::Kernel& kernel) { return Hoister(kernel).run(); }

}  // namespace loom::passes
