#include "compiler/passes/store_forward.h"

#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/block_worklist.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/work_count.h"
#include "compiler/passes/constant_fold.h"
#include "compiler/passes/rewrite.h"

namespace loom::passes {

namespace {

using ir::Block;
using ir::Inst;
using ir::Op;

using VarSet = std::unordered_set<const Inst*>;
// Variable -> the value it holds now. A region's walk changes it and then undoes its changes
// (mark / undo_to) instead of working on a copy, so a block of many ifs over many known
// variables costs the changes made, not a copy of every variable per branch.
class Known {
 public:
  Inst* find(const Inst* var) const {
    auto it = values_.find(var);
    return it == values_.end() ? nullptr : it->second;
  }
  void set(const Inst* var, Inst* value) {
    auto [it, added] = values_.try_emplace(var, value);
    log_.push_back({var, added ? nullptr : it->second});
    it->second = value;
  }
  void erase(const Inst* var) {
    auto it = values_.find(var);
    if (it == values_.end()) return;
    log_.push_back({var, it->second});
    values_.erase(it);
  }
  size_t mark() const { return log_.size(); }
  void undo_to(size_t mark) {
    for (; log_.size() > mark; log_.pop_back()) {
      const Change& c = log_.back();
      if (c.before)
        values_[c.var] = c.before;
      else
        values_.erase(c.var);
    }
  }

 private:
  struct Change {
    const Inst* var;
    Inst* before;  // null: had no value
  };
  std::unordered_map<const Inst*, Inst*> values_;
  std::vector<Change> log_;
};

bool is_jump(Op op) { return op == Op::Break || op == Op::Continue || op == Op::Return; }

bool writes_global_memory(Op op) {
  return op == Op::GlobalStore || op == Op::AtomicRMW || op == Op::TexStore;
}

// What a region instruction does to variables and memory, anywhere inside it.
struct RegionEffects {
  VarSet stored;       // variables stored or atomically updated
  VarSet read;         // variables loaded or atomically updated
  bool jumps = false;  // holds a Break/Continue/Return
  bool writes_memory = false;
};

class Forwarder {
 public:
  explicit Forwarder(ir::Kernel& k) : kernel_(k) {}

  bool run() {
    promote_variables();
    Known known;
    forward_block(*kernel_.body, known);
    forward_globals(*kernel_.body);
    if (replaced_.empty() && dead_.empty()) return progress_;
    for (auto& [from, to] : replaced_) dead_.insert(from);
    replace_and_erase(kernel_, replaced_, dead_);
    return true;
  }

 private:
  Inst* resolve(Inst* v) {
    for (auto it = replaced_.find(v); it != replaced_.end(); it = replaced_.find(v)) v = it->second;
    return v;
  }

  const RegionEffects& effects(Inst* region) {
    auto it = effects_.find(region);
    if (it != effects_.end()) return it->second;
    RegionEffects e;
    for (auto& block : region->regions) {
      ir::walk(*block, [&](Inst& inst) {
        if (is_jump(inst.op)) e.jumps = true;
        if (writes_global_memory(inst.op) &&
            !(inst.op == Op::AtomicRMW && inst.operands[0]->op == Op::Alloca))
          e.writes_memory = true;
        if (inst.op == Op::LocalStore) e.stored.insert(inst.operands[0]);
        if (inst.op == Op::LocalLoad) e.read.insert(inst.operands[0]);
        if (inst.op == Op::AtomicRMW && inst.operands[0]->op == Op::Alloca) {
          e.stored.insert(inst.operands[0]);
          e.read.insert(inst.operands[0]);
        }
      });
    }
    return effects_.emplace(region, std::move(e)).first->second;
  }

  // ---- promotion of variables with one dominating store (or none)

  // Index in `level` of the instruction that is, or encloses, `inst`; -1 if outside.
  long position_in(const Block* level, const Inst* inst) {
    while (inst && inst->parent != level) inst = inst->parent ? inst->parent->owner : nullptr;
    if (!inst) return -1;
    if (!positioned_) {  // every instruction's index in its block, found once
      index_blocks(*kernel_.body);
      positioned_ = true;
    }
    return static_cast<long>(position_.at(inst));
  }

  void index_blocks(const Block& block) {
    for (size_t i = 0; i < block.insts.size(); ++i) {
      ir::count_work();
      position_[block.insts[i].get()] = i;
      for (const auto& region : block.insts[i]->regions) index_blocks(*region);
    }
  }

  void promote_variables() {
    struct Uses {
      std::vector<Inst*> loads, stores;
      bool other = false;  // atomics or anything unexpected
    };
    std::unordered_map<Inst*, Uses> vars;
    std::vector<Inst*> order;
    ir::walk(*kernel_.body, [&](Inst& inst) {
      if (inst.op == Op::Alloca) {
        vars[&inst];
        order.push_back(&inst);
      }
      for (size_t i = 0; i < inst.operands.size(); ++i) {
        Inst* v = inst.operands[i];
        if (v->op != Op::Alloca) continue;
        Uses& u = vars[v];
        if (inst.op == Op::LocalLoad)
          u.loads.push_back(&inst);
        else if (inst.op == Op::LocalStore && i == 0)
          u.stores.push_back(&inst);
        else
          u.other = true;
      }
    });
    Insertions inserted;  // the blocks keep their positions until every variable is looked at
    for (Inst* var : order) {
      Uses& u = vars[var];
      if (u.other || u.loads.empty() || u.stores.size() > 1) continue;
      Inst* value = nullptr;
      if (u.stores.empty()) {  // never stored: reads see the zero it starts with
        value = inserted.after(var, new_const_bits(var->type, 0, var->node));
      } else {
        Inst* store = u.stores[0];
        if (store->parent != var->parent) continue;
        long at = position_in(var->parent, store);
        bool all_after = true;
        for (Inst* load : u.loads)
          if (position_in(var->parent, load) <= at) all_after = false;
        if (!all_after) continue;
        value = store->operands[1];
        dead_.insert(store);
      }
      for (Inst* load : u.loads) replaced_[load] = value;
      dead_.insert(var);
      progress_ = true;
    }
    // Apply now so the forwarding walk sees a consistent kernel (insertions first: they sit
    // next to variables about to be erased).
    inserted.apply();
    for (auto& [from, to] : replaced_) dead_.insert(from);
    replace_and_erase(kernel_, replaced_, dead_);
    replaced_.clear();
    dead_.clear();
  }

  // ---- forwarding through the block structure

  static void forget(Known& known, const VarSet& vars) {
    for (const Inst* v : vars) known.erase(v);
  }

  // The value `v` is known to have, when every operand of the pure computation behind it
  // is a constant or itself known (values met so far in this walk, in program order).
  std::optional<uint64_t> constant_of(const Inst* v) const {
    if (v->is_const()) return v->bits;
    auto it = consts_.find(v);
    if (it == consts_.end()) return std::nullopt;
    return it->second;
  }

  void evaluate(const Inst& inst) {
    if (!ir::is_value_op(inst.op) || inst.type == Scalar::Void) return;
    std::vector<ConstValue> operands;
    for (const Inst* op : inst.operands) {
      std::optional<uint64_t> bits = constant_of(op);
      if (!bits) return;
      operands.push_back({op->type, *bits});
    }
    if (std::optional<uint64_t> bits = evaluate_constant(inst.op, inst.type, operands))
      consts_[&inst] = *bits;
  }

  // Replaces the `if`, whose condition is known, by its taken branch, visited next.
  void splice_if(std::unique_ptr<Inst> branch, bool taken,
                 std::vector<std::unique_ptr<Inst>>& todo) {
    Block& body = *branch->regions[taken ? 0 : 1];
    ir::push_in_visit_order(body, todo);
    kernel_.erase(std::move(branch));  // keeps addresses unique until the pipeline step ends
    progress_ = true;
  }

  // Rebuilds the block in order, so replacing ifs by their branches stays linear.
  void forward_block(Block& block, Known& known) {
    std::unordered_map<const Inst*, Inst*> pending;  // variable -> store not yet read
    std::vector<std::unique_ptr<Inst>> todo;         // the next instruction last
    ir::push_in_visit_order(block, todo);
    while (!todo.empty()) {
      std::unique_ptr<Inst> up = std::move(todo.back());
      todo.pop_back();
      Inst* inst = up.get();
      ir::count_work();
      for (auto& op : inst->operands) op = resolve(op);
      evaluate(*inst);
      // An if whose condition forwarding made known: keep its taken branch and go on
      // through it, so a chain of such ifs resolves in one sweep.
      if (inst->op == Op::If) {
        if (std::optional<uint64_t> cond = constant_of(inst->operands[0])) {
          splice_if(std::move(up), *cond != 0, todo);
          continue;
        }
      }
      block.append(std::move(up));
      switch (inst->op) {
        case Op::LocalStore: {
          Inst* var = inst->operands[0];
          auto p = pending.find(var);
          if (p != pending.end()) dead_.insert(p->second);  // overwritten before any read
          pending[var] = inst;
          known.set(var, inst->operands[1]);
          continue;
        }
        case Op::LocalLoad: {
          Inst* var = inst->operands[0];
          if (Inst* k = known.find(var)) {
            replaced_[inst] = k;
            if (std::optional<uint64_t> bits = constant_of(k)) consts_[inst] = *bits;
            continue;
          }
          pending.erase(var);
          known.set(var, inst);
          continue;
        }
        case Op::AtomicRMW:
          if (inst->operands[0]->op == Op::Alloca) {
            known.erase(inst->operands[0]);
            pending.erase(inst->operands[0]);
          }
          continue;
        case Op::Break:
        case Op::Continue:
        case Op::Return:
          // The rest of the block never runs (and its stores must not kill earlier ones).
          while (!todo.empty()) {
            block.append(std::move(todo.back()));
            todo.pop_back();
          }
          return;
        // Values.
        case Op::Neg:
        case Op::BitNot:
        case Op::LogicNot:
        case Op::Abs:
        case Op::Sign:
        case Op::Floor:
        case Op::Ceil:
        case Op::Round:
        case Op::Sqrt:
        case Op::Rsqrt:
        case Op::Sin:
        case Op::Cos:
        case Op::Tan:
        case Op::Asin:
        case Op::Acos:
        case Op::Atan:
        case Op::Exp:
        case Op::Log:
        case Op::Cast:
        case Op::Bitcast:
        case Op::Add:
        case Op::Sub:
        case Op::Mul:
        case Op::Div:
        case Op::Mod:
        case Op::Min:
        case Op::Max:
        case Op::Pow:
        case Op::Atan2:
        case Op::BitAnd:
        case Op::BitOr:
        case Op::BitXor:
        case Op::Shl:
        case Op::Shr:
        case Op::Eq:
        case Op::Ne:
        case Op::Lt:
        case Op::Le:
        case Op::Gt:
        case Op::Ge:
        case Op::LogicAnd:
        case Op::LogicOr:
        case Op::Select:
        case Op::Fma: break;
        // Memory other than local variables, and regions (handled below).
        case Op::Const:
        case Op::ArgLoad:
        case Op::LoopIndex:
        case Op::ResourceShape:
        case Op::Rand:
        case Op::Alloca:
        case Op::LocalArray:  // arrays are never forwarded: their loads and stores stay
        case Op::ArrayLoad:
        case Op::ArrayStore:
        case Op::GlobalPtr:
        case Op::ElementPtr:
        case Op::GlobalLoad:
        case Op::GlobalStore:
        case Op::TmpLoad:
        case Op::TmpStore:
        case Op::Reduce:
        case Op::BoundsCheck:
        case Op::TexLoad:
        case Op::TexSample:
        case Op::TexStore:
        case Op::If:
        case Op::RangeFor:
        case Op::StructFor:
        case Op::While:
        case Op::Assert:
        case Op::Offload: break;
      }
      if (inst->regions.empty()) continue;
      const RegionEffects& e = effects(inst);
      if (e.jumps) reset_table(pending);
      for (const Inst* v : e.read) pending.erase(v);
      // A loop's body sees its own stores from the previous iteration.
      size_t before = known.mark();
      if (is_loop(*inst)) forget(known, e.stored);
      size_t inner = known.mark();
      for (auto& region : inst->regions) {
        forward_block(*region, known);
        known.undo_to(inner);  // each branch starts from what holds before it
      }
      known.undo_to(before);
      forget(known, e.stored);
    }
  }

  // ---- global memory, one block at a time

  void forward_globals(Block& block) {
    std::unordered_map<const Inst*, Inst*> memory;  // pointer -> value it holds
    for (auto& up : block.insts) {
      Inst* inst = up.get();
      ir::count_work();
      for (auto& op : inst->operands) op = resolve(op);
      for (auto& region : inst->regions) forward_globals(*region);
      if (inst->op == Op::GlobalLoad) {
        auto m = memory.find(inst->operands[0]);
        if (m != memory.end()) {
          replaced_[inst] = m->second;
          progress_ = true;
        } else {
          memory[inst->operands[0]] = inst;
        }
        continue;
      }
      if (inst->op == Op::GlobalStore) {
        reset_table(memory);  // another pointer may name the same element
        memory[inst->operands[0]] = inst->operands[1];
        continue;
      }
      bool local_atomic = inst->op == Op::AtomicRMW && inst->operands[0]->op == Op::Alloca;
      if ((writes_global_memory(inst->op) && !local_atomic) ||
          (!inst->regions.empty() && effects(inst).writes_memory))
        reset_table(memory);
    }
  }

  ir::Kernel& kernel_;
  std::unordered_map<const Inst*, RegionEffects> effects_;
  std::unordered_map<Inst*, Inst*> replaced_;
  std::unordered_set<Inst*> dead_;
  std::unordered_map<const Inst*, uint64_t> consts_;  // values found constant while forwarding
  std::unordered_map<const Inst*, size_t> position_;  // promotion: index in its block
  bool positioned_ = false;
  bool progress_ = false;
};

}  // namespace

bool store_forward(ir::Kernel& kernel) { return Forwarder(kernel).run(); }

}  // namespace loom::passes
