#include "compiler/passes/offload.h"

#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/inst.h"
#include "compiler/passes/rewrite.h"
#include "runtime/common/error.h"

namespace loom::passes {

namespace {

using ir::Block;
using ir::Inst;
using ir::Op;
using ir::TaskKind;

std::unique_ptr<Inst> new_task(TaskKind kind, int32_t node) {
  auto task = new_inst(Op::Offload, Scalar::Void, {}, node);
  task->set_task_kind(kind);
  task->regions.push_back(std::make_unique<Block>(task.get()));
  return task;
}

std::unique_ptr<Inst> new_tmp_load(Scalar type, int32_t offset, int32_t node) {
  auto load = new_inst(Op::TmpLoad, type, {}, node);
  load->set_temp_offset(offset);
  return load;
}

std::unique_ptr<Inst> new_tmp_store(Inst* value, int32_t offset, int32_t node) {
  auto store = new_inst(Op::TmpStore, Scalar::Void, {value}, node);
  store->set_temp_offset(offset);
  return store;
}

class Offloader {
 public:
  explicit Offloader(ir::Kernel& k) : kernel_(k), top_(*k.body) {}

  bool run() {
    if (!split_into_tasks()) return false;
    route_cross_task_values();
    convert_shared_variables();
    guard_tasks_after_returns();
    kernel_.abi.temps_size = next_temp_;
    return true;
  }

 private:
  bool uniform_at_top(const Inst& inst) {
    if (!is_uniform_op(inst.op)) return false;
    for (const Inst* op : inst.operands)
      if (!uniform_.count(op)) return false;
    return true;
  }

  // A loop that updates a variable declared outside it (a running sum, a flag) has
  // sequential semantics; run in parallel it would race, so it stays serial.
  static bool writes_outer_variable(Inst* loop) {
    bool writes = false;
    ir::walk(*loop->regions[0], [&](Inst& inst) {
      if ((inst.op == Op::LocalStore || inst.op == Op::AtomicRMW) &&
          inst.operands[0]->op == Op::Alloca && !defined_within(inst.operands[0], loop))
        writes = true;
    });
    return writes;
  }

  // Returns false when the top level already is tasks and uniform values only.
  bool split_into_tasks() {
    bool changed = false;
    for (auto& inst : top_.insts) {
      if (inst->op == Op::Offload) continue;
      if (!uniform_at_top(*inst))
        changed = true;
      else
        uniform_.insert(inst.get());
    }
    if (!changed) return false;
    uniform_.clear();

    std::vector<std::unique_ptr<Inst>> old = std::move(top_.insts);
    top_.insts.clear();
    Inst* serial = nullptr;                  // the open serial task
    std::unordered_map<Inst*, Inst*> loops;  // offloaded loop -> its task
    for (auto& up : old) {
      Inst* inst = up.get();
      if (uniform_at_top(*inst)) {
        uniform_.insert(inst);
        // Before the open serial task, which may use it later on.
        size_t at = serial ? top_.index_of(serial) : top_.insts.size();
        top_.insert(at, std::move(up));
        continue;
      }
      bool uniform_bounds = true;
      for (const Inst* op : inst->operands)
        if (!uniform_.count(op)) uniform_bounds = false;
      bool parallel = (inst->op == Op::StructFor || (inst->op == Op::RangeFor && uniform_bounds)) &&
                      !writes_outer_variable(inst);
      if (inst->op == Op::Offload || parallel) {
        serial = nullptr;
        if (inst->op == Op::Offload) {
          top_.append(std::move(up));
          continue;
        }
        bool range = inst->op == Op::RangeFor;
        auto task = new_task(range ? TaskKind::RangeFor : TaskKind::StructFor, inst->node);
        if (range)
          task->set_dims(inst->dims());
        else
          task->set_resource_slot(inst->resource_slot());
        if (range) task->operands = inst->operands;
        task->regions[0] = std::move(inst->regions[0]);
        task->regions[0]->owner = task.get();
        loops[inst] = top_.append(std::move(task));
        kernel_.erase(std::move(up));  // keeps the address unique until repointing
        continue;
      }
      if (!serial) serial = top_.append(new_task(TaskKind::Serial, inst->node));
      serial->regions[0]->append(std::move(up));
    }
    ir::replace_uses(top_, loops);  // LoopIndex operands now name their task
    return true;
  }

  static Inst* task_of(Inst* inst) {
    while (inst->parent && inst->parent->owner) inst = inst->parent->owner;
    return inst;
  }

  // `value` (defined in another task) as seen inside `task`.
  Inst* materialize(Inst* value, Inst* task) {
    if (value->parent == &top_) return value;  // uniform
    auto key = std::make_pair(value, task);
    auto it = imported_.find(key);
    if (it != imported_.end()) return it->second;
    Block& body = *task->regions[0];
    size_t& at = prologue_[task];
    Inst* result;
    if (value->op == Op::GlobalPtr || value->op == Op::ElementPtr) {
      // Pointers do not fit temporaries: recompute them from their (imported) indices.
      std::vector<Inst*> indices;
      for (Inst* op : value->operands) indices.push_back(materialize(op, task));
      auto copy = new_inst(value->op, value->type, indices, value->node);
      copy->copy_attributes_from(*value);
      result = body.insert(at++, std::move(copy));
    } else {
      uint32_t offset = temp_of(value);
      result =
          body.insert(at++, new_tmp_load(value->type, static_cast<int32_t>(offset), value->node));
    }
    imported_[key] = result;
    return result;
  }

  uint32_t allocate_temp() {
    uint32_t offset = (next_temp_ + 7) / 8 * 8;
    next_temp_ = offset + 8;
    return offset;
  }

  // The temporary holding `value`, stored right after the producing instruction.
  uint32_t temp_of(Inst* value) {
    auto it = temps_.find(value);
    if (it != temps_.end()) return it->second;
    uint32_t offset = allocate_temp();
    temps_[value] = offset;
    insert_after(value, new_tmp_store(value, static_cast<int32_t>(offset), value->node));
    return offset;
  }

  void route_cross_task_values() {
    next_temp_ = (kernel_.abi.temps_size + 7) / 8 * 8;
    std::vector<Inst*> tasks;
    for (auto& inst : top_.insts)
      if (inst->op == Op::Offload) tasks.push_back(inst.get());
    for (Inst* task : tasks) {
      std::vector<Inst*> users;
      ir::walk(*task->regions[0], [&](Inst& inst) { users.push_back(&inst); });
      for (Inst* user : users) {
        if (user->op == Op::TmpLoad) continue;  // our own imports
        for (auto& op : user->operands) {
          if (op->parent == &top_) continue;
          Inst* owner = task_of(op);
          if (owner == task || op == task) continue;
          if (op->op == Op::Alloca) {
            shared_.insert(op);
            continue;
          }
          op = materialize(op, task);
        }
      }
    }
  }

  [[noreturn]] void fail(const Inst& inst, const std::string& message) {
    throw Error(Place{"", kernel_.abi.name, inst.node, ""}, message);
  }

  // Variables that live across tasks become kernel temporaries.
  void convert_shared_variables() {
    if (shared_.empty()) return;
    std::unordered_map<const Inst*, uint32_t> offset_of;
    for (const Inst* var : shared_) offset_of[var] = 0;
    // Allocate in program order so offsets do not depend on pointer values.
    ir::walk(top_, [&](Inst& inst) {
      if (inst.op == Op::Alloca && shared_.count(&inst)) offset_of[&inst] = allocate_temp();
    });
    std::vector<Inst*> uses;
    ir::walk(top_, [&](Inst& inst) {
      if (!inst.operands.empty() && inst.operands[0]->op == Op::Alloca &&
          shared_.count(inst.operands[0]))
        uses.push_back(&inst);
    });
    for (Inst* use : uses) {
      Inst* var = use->operands[0];
      auto offset = static_cast<int32_t>(offset_of[var]);
      if (use->op == Op::LocalLoad) {
        use->morph(Op::TmpLoad);
        use->operands.clear();
        use->set_temp_offset(offset);
      } else if (use->op == Op::LocalStore) {
        use->morph(Op::TmpStore);
        use->operands = {use->operands[1]};
        use->set_temp_offset(offset);
      } else if (use->op == Op::AtomicRMW) {
        Inst* task = task_of(use);
        if (task->task_kind() != TaskKind::Serial)
          fail(*use, "atomic update of a variable shared between tasks inside a parallel loop");
        Inst* value = use->operands[1];
        Op binary = ir::atomic_binary_op(use->atomic_op());
        use->morph(Op::TmpLoad);  // the old value is the result
        use->operands.clear();
        use->set_temp_offset(offset);
        Inst* updated = insert_after(use, new_inst(binary, use->type, {use, value}, use->node));
        insert_after(updated, new_tmp_store(updated, offset, use->node));
      } else {
        fail(*use, "unsupported use of a variable shared between tasks");
      }
    }
    // The variable itself: its zero start value, unless a store right after it overwrites it.
    for (Inst* var : shared_) {
      auto offset = static_cast<int32_t>(offset_of[var]);
      if (!stored_before_read(var, offset)) {
        Inst* zero = insert_before(var, new_const_bits(var->type, 0, var->node));
        insert_before(var, new_tmp_store(zero, offset, var->node));
      }
      kernel_.erase(var->parent->remove(var->parent->index_of(var)));
    }
  }

  static bool contains_return(Inst* task) {
    bool found = false;
    ir::walk(*task->regions[0], [&](Inst& inst) { found |= inst.op == Op::Return; });
    return found;
  }

  static std::unique_ptr<Inst> new_if(Inst* cond, int32_t node) {
    auto inst = new_inst(Op::If, Scalar::Void, {cond}, node);
    inst->regions.push_back(std::make_unique<Block>(inst.get()));
    inst->regions.push_back(std::make_unique<Block>(inst.get()));
    return inst;
  }

  // A return ends the launch, not just its own task. A task that may return clears a
  // "returned" temporary on entry and sets it before each return that later tasks follow;
  // every later task tests it first (one value for all iterations: a uniform branch) and
  // returns (serial) or skips its iterations (parallel).
  void guard_tasks_after_returns() {
    std::vector<Inst*> tasks;
    for (auto& inst : top_.insts)
      if (inst->op == Op::Offload) tasks.push_back(inst.get());
    size_t first = tasks.size();
    for (size_t t = 0; t + 1 < tasks.size() && first == tasks.size(); ++t)
      if (contains_return(tasks[t])) first = t;
    if (first == tasks.size()) return;
    auto flag = static_cast<int32_t>(allocate_temp());
    Inst* no = insert_before(tasks[first], new_const_bits(Scalar::Bool, 0, tasks[first]->node));
    Inst* yes = insert_before(tasks[first], new_const_bits(Scalar::Bool, 1, tasks[first]->node));
    tasks[first]->regions[0]->insert(0, new_tmp_store(no, flag, tasks[first]->node));
    for (size_t t = first; t + 1 < tasks.size(); ++t) {
      std::vector<Inst*> returns;
      ir::walk(*tasks[t]->regions[0], [&](Inst& inst) {
        if (inst.op == Op::Return) returns.push_back(&inst);
      });
      for (Inst* r : returns) insert_before(r, new_tmp_store(yes, flag, r->node));
    }
    for (size_t t = first + 1; t < tasks.size(); ++t) {
      Inst* task = tasks[t];
      Block& body = *task->regions[0];
      Inst* returned = body.insert(0, new_tmp_load(Scalar::Bool, flag, task->node));
      Inst* guard = body.insert(1, new_if(returned, task->node));
      bool serial = task->task_kind() == TaskKind::Serial;
      guard->regions[0]->append(
          new_inst(serial ? Op::Return : Op::Continue, Scalar::Void, {}, task->node));
    }
  }

  // True when, in the variable's own block, its temporary is stored before anything could
  // read it (a region or a jump could, so they end the search).
  static bool stored_before_read(Inst* var, int32_t offset) {
    Block& block = *var->parent;
    for (size_t i = block.index_of(var) + 1; i < block.insts.size(); ++i) {
      const Inst& inst = *block.insts[i];
      if (inst.op == Op::TmpStore && inst.temp_offset() == offset) return true;
      if (inst.op == Op::TmpLoad && inst.temp_offset() == offset) return false;
      if (!inst.regions.empty() || inst.op == Op::Break || inst.op == Op::Continue ||
          inst.op == Op::Return)
        return false;
    }
    return false;
  }

  ir::Kernel& kernel_;
  Block& top_;
  std::unordered_set<const Inst*> uniform_;
  std::map<std::pair<Inst*, Inst*>, Inst*> imported_;
  std::unordered_map<Inst*, size_t> prologue_;
  std::unordered_map<Inst*, uint32_t> temps_;
  std::unordered_set<Inst*> shared_;
  uint32_t next_temp_ = 0;
};

}  // namespace

bool offload(ir::Kernel& kernel) { return Offloader(kernel).run(); }

}  // namespace loom::passes
