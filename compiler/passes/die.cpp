#include "compiler/passes/die.h"

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

bool ends_block(Op op) { return op == Op::Break || op == Op::Continue || op == Op::Return; }

bool is_removable_when_unused(const Inst& inst) {
  if (inst.op == Op::LocalLoad || inst.op == Op::ArrayLoad || inst.op == Op::GlobalLoad ||
      inst.op == Op::TmpLoad)
    return true;
  return ir::is_pure(inst.op) && !ir::has_regions(inst.op);
}

bool is_empty_region(const Inst& inst) {
  if (inst.op != Op::If && inst.op != Op::RangeFor && inst.op != Op::StructFor &&
      inst.op != Op::Offload)
    return false;
  for (const auto& region : inst.regions)
    if (!region->insts.empty()) return false;
  return true;
}

class DeadCode {
 public:
  explicit DeadCode(ir::Kernel& k) : kernel_(k) {}

  bool run() {
    truncate_after_jumps(*kernel_.body);
    // Sweep backwards so the operands of a removed instruction become dead in the same sweep;
    // removing a variable's stores may free the values they stored, hence the loop.
    do {
      uses_ = ir::count_uses(*kernel_.body);
      sweep(*kernel_.body);
    } while (remove_write_only_variables());
    return progress_;
  }

 private:
  void truncate_after_jumps(Block& block) {
    for (size_t i = 0; i < block.insts.size(); ++i) {
      Inst& inst = *block.insts[i];
      ir::count_work();
      for (auto& region : inst.regions) truncate_after_jumps(*region);
      if (ends_block(inst.op) && i + 1 < block.insts.size()) {
        erase_from(kernel_, block, i + 1);
        progress_ = true;
      }
    }
  }

  // Variables and local arrays used only as a store destination are never observed.
  bool remove_write_only_variables() {
    std::unordered_map<Inst*, bool> read;  // alloca -> something reads it
    std::unordered_map<Inst*, std::vector<Inst*>> stores;
    ir::walk(*kernel_.body, [&](Inst& inst) {
      if (inst.op == Op::Alloca || inst.op == Op::LocalArray) read.emplace(&inst, false);
      for (size_t i = 0; i < inst.operands.size(); ++i) {
        Inst* op = inst.operands[i];
        if (op->op != Op::Alloca && op->op != Op::LocalArray) continue;
        if ((inst.op == Op::LocalStore || inst.op == Op::ArrayStore) && i == 0)
          stores[op].push_back(&inst);
        else
          read[op] = true;
      }
    });
    std::unordered_set<Inst*> dead;
    for (auto& [var, is_read] : read) {
      if (is_read) continue;
      dead.insert(var);
      for (Inst* s : stores[var]) dead.insert(s);
    }
    if (dead.empty()) return false;
    progress_ = true;
    replace_and_erase(kernel_, {}, dead);
    return true;
  }

  void release_operands(const Inst& inst) {
    ir::count_work();
    for (const Inst* op : inst.operands) --uses_[op];
    for (const auto& region : inst.regions)
      for (const auto& child : region->insts) release_operands(*child);
  }

  void sweep(Block& block) {
    std::vector<bool> dead(block.insts.size(), false);
    bool any = false;
    for (size_t i = block.insts.size(); i-- > 0;) {
      Inst& inst = *block.insts[i];
      ir::count_work();
      for (auto& region : inst.regions) sweep(*region);
      if (!(is_removable_when_unused(inst) && uses_[&inst] == 0) && !is_empty_region(inst))
        continue;
      release_operands(inst);
      dead[i] = any = true;
    }
    if (!any) return;
    progress_ = true;
    size_t kept = 0;
    for (size_t i = 0; i < block.insts.size(); ++i)
      if (!dead[i]) block.insts[kept++] = std::move(block.insts[i]);
    block.insts.resize(kept);
  }

  ir::Kernel& kernel_;
  std::unordered_map<const Inst*, int> uses_;
  bool progress_ = false;
};

}  // namespace

bool die(ir::Kernel& kernel) { return DeadCode(kernel).run(); }

}  // namespace loom::passes
