#include "compiler/passes/offload.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/inst.h"
#include "compiler/ir/work_count.h"
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
    kernel_.task_notes = std::move(notes_);
    return true;
  }

 private:
  bool uniform_at_top(const Inst& inst) {
    if (!is_uniform_op(inst.op)) return false;
    for (const Inst* op : inst.operands)
      if (!uniform_.count(op)) return false;
    return true;
  }

  static bool outer_variable(const Inst* var, const Inst* loop) {
    return var->op == Op::Alloca && !defined_within(var, loop);
  }

  // One accumulation `v = v OP e` (or an atomic update of v whose old value is unused) into
  // a variable declared outside a parallel loop. A chain of one operation whose one leaf is
  // the running value (`v + x + 1`, `x + v - 1`) counts too: it is reassociated into
  // `v OP (the other leaves)`, which a reduction reorders anyway.
  struct Update {
    Inst* store = nullptr;      // the LocalStore, or the AtomicRMW
    Inst* load = nullptr;       // LocalLoad of v read by the chain (none for an atomic)
    std::vector<Inst*> chain;   // the chain's operations, replaced by the reduce
    std::vector<Inst*> leaves;  // the chain's other leaves: e is their combination
    std::vector<bool> negated;  // per leaf: subtracted (Add only)
    Op op = Op::Add;            // Add, Mul, Min, Max, BitAnd, BitOr, BitXor
  };

  // What a loop that writes variables declared outside it can be: a parallel reduction of
  // each (their updates), or serial, and why.
  struct OuterWrites {
    std::vector<Inst*> vars;  // in program order of their first update
    std::vector<Update> updates;
    std::string serial_reason;  // empty: every outer write is a reduction
  };

  static bool reducible(Op op, Op* combine, bool* negate) {
    *negate = false;
    switch (op) {
      case Op::Sub:
        *negate = true;
        *combine = Op::Add;
        return true;
      case Op::Add:
      case Op::Mul:
      case Op::Min:
      case Op::Max:
      case Op::BitAnd:
      case Op::BitOr:
      case Op::BitXor: *combine = op; return true;
      default: return false;
    }
  }

  // Inlined code carries the call node: a function's variable is named by its own node.
  std::string var_name(const Inst* var) {
    if (origins_.empty() && !kernel_.var_origins.empty())
      for (const ir::Kernel::VarOrigin& o : kernel_.var_origins) origins_.emplace(o.var, &o);
    auto found = origins_.find(var);
    if (const ir::Kernel::VarOrigin* o = found == origins_.end() ? nullptr : found->second)
      return "the variable of node " + std::to_string(o->node) + " in function '" + o->function +
             "' (called by node " + std::to_string(var->node) + ")";
    return "the variable of node " + std::to_string(var->node);
  }

  // Where each instruction of a block is, and at which positions each value is operand 0 of
  // an instruction (nested ones counted at the position of the region holding them).
  struct BlockIndex {
    std::unordered_map<const Inst*, size_t> position;
    std::unordered_map<const Inst*, std::vector<size_t>> first_operand_at;  // ascending
  };

  // Built once per block while a loop is examined (nothing moves until make_reductions).
  const BlockIndex& block_index(const Block& block) {
    auto found = block_indexes_.find(&block);
    if (found != block_indexes_.end()) return found->second;
    BlockIndex& index = block_indexes_[&block];
    for (size_t i = 0; i < block.insts.size(); ++i) {
      const Inst& inst = *block.insts[i];
      ir::count_work();
      index.position.emplace(&inst, i);
      auto note = [&](const Inst& user) {
        if (user.operands.empty()) return;
        std::vector<size_t>& at = index.first_operand_at[user.operands[0]];
        if (at.empty() || at.back() != i) at.push_back(i);
      };
      note(inst);
      for (const auto& region : inst.regions) ir::walk(*region, note);
    }
    return index;
  }

  // Whether positions of `block` strictly between those of `from` and `to` touch `var` (use
  // it as operand 0), nested regions included.
  bool touches(const Block& block, const Inst* from, const Inst* to, const Inst* var) {
    const BlockIndex& index = block_index(block);
    auto at = index.first_operand_at.find(var);
    if (at == index.first_operand_at.end()) return false;
    size_t a = index.position.at(from), b = index.position.at(to);
    auto next = std::upper_bound(at->second.begin(), at->second.end(), a);
    return next != at->second.end() && *next < b;
  }

  // "the loop combines the variable of node 1 with both + (node 8) and * (node 9)".
  std::string mixed_text(const Inst* var, Op a, const Inst& at_a, Op b, const Inst& at_b) {
    std::string both = at_a.node == at_b.node
                           ? combine_symbol(a) + " and " + combine_symbol(b) + " (node " +
                                 std::to_string(at_a.node) + ")"
                           : combine_symbol(a) + " (node " + std::to_string(at_a.node) + ") and " +
                                 combine_symbol(b) + " (node " + std::to_string(at_b.node) + ")";
    return "the loop combines " + var_name(var) + " with both " + both +
           ": a reduction takes one operation, so the loop runs in order";
  }

  // Whether `root`'s operands (recursively, within `block`) read `var`. Iterative, and each
  // value is looked at once per variable (`clean` keeps those that do not read it), so long
  // chains and shared operands cost their size, not their depth or their number of paths.
  static bool reads_var(const Inst* root, const Inst* var, const Block* block,
                        std::unordered_set<const Inst*>& clean) {
    std::vector<const Inst*> todo{root};
    std::vector<const Inst*> seen;
    bool found = false;
    while (!todo.empty() && !found) {
      const Inst* x = todo.back();
      todo.pop_back();
      ir::count_work();
      if (x->op == Op::LocalLoad && x->operands[0] == var) found = true;
      if (found || x->parent != block || !clean.insert(x).second) continue;
      seen.push_back(x);
      for (const Inst* op : x->operands) todo.push_back(op);
    }
    if (found)  // what was marked on the way may lead to the load
      for (const Inst* x : seen) clean.erase(x);
    return found;
  }

  // Why `store` (LocalStore of var) is not `v = v OP e`, with the node to blame.
  struct Mismatch {
    const Inst* at = nullptr;
    std::string why;
  };

  // `store` as `v = v OP e`, possibly through a chain of OP; or why not.
  bool match_store(Inst* store, const Inst* var, Block& loop_body,
                   const std::unordered_map<const Inst*, int>& uses,
                   std::unordered_set<const Inst*>& clean, Update* u, Mismatch* m) {
    Inst* root = store->operands[1];
    Block* block = store->parent;
    auto is_load = [&](const Inst* x) { return x->op == Op::LocalLoad && x->operands[0] == var; };
    auto generic = [&] {
      *m = {store, "writes " + var_name(var) +
                       ", declared outside the loop, with a value that is not `v = v OP e` (OP "
                       "one of + - * min max & | ^, e not reading v), so the loop runs in order"};
      return false;
    };
    // Another reader of the running value, before or after an update, sees a partial one.
    auto read_elsewhere = [&](const Inst* value, const Inst* expected_user) {
      const Inst* reader = nullptr;
      ir::walk(loop_body, [&](Inst& inst) {
        if (reader || &inst == expected_user) return;
        for (const Inst* op : inst.operands)
          if (op == value) reader = &inst;
      });
      if (!reader) return generic();
      *m = {reader, "reads the running value of " + var_name(var) +
                        " inside the loop: only `v = v OP e` may read it, so the loop runs in "
                        "order"};
      return false;
    };
    Op cls;
    bool negate;
    if (root->parent != block || !reducible(root->op, &cls, &negate)) return generic();
    if (uses.at(root) != 1) return read_elsewhere(root, store);
    // Expand the chain of `cls` from the root: interior operations are used once, here.
    std::vector<Inst*> chain, leaves;
    std::vector<bool> negated;
    std::vector<const Inst*> parent_of;
    std::vector<std::tuple<Inst*, bool, const Inst*>> stack = {{root, false, store}};
    while (!stack.empty()) {
      auto [x, neg, parent] = stack.back();
      stack.pop_back();
      Op c;
      bool sub;
      bool interior = x->parent == block && reducible(x->op, &c, &sub) && c == cls &&
                      (x == root || uses.at(x) == 1);
      if (!interior) {
        leaves.push_back(x);
        negated.push_back(neg);
        parent_of.push_back(parent);
        continue;
      }
      chain.push_back(x);
      // Pushed right first so leaves come out left to right.
      stack.emplace_back(x->operands[1], sub ? !neg : neg, x);
      stack.emplace_back(x->operands[0], neg, x);
    }
    Inst* load = nullptr;
    size_t at = 0;
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (is_load(leaves[i])) {
        if (load) return generic();  // v = v + v
        load = leaves[i];
        at = i;
        continue;
      }
      if (!reads_var(leaves[i], var, block, clean)) continue;
      Op other;
      bool unused;
      if (leaves[i]->parent == block && reducible(leaves[i]->op, &other, &unused) && other != cls) {
        *m = {nullptr, mixed_text(var, other, *leaves[i], cls, *root)};
        return false;
      }
      if (uses.at(leaves[i]) != 1) return read_elsewhere(leaves[i], parent_of[i]);
      return generic();
    }
    if (!load || negated[at] || load->parent != block) return generic();  // v = e - v
    if (uses.at(load) != 1) return read_elsewhere(load, parent_of[at]);
    // Another access between the read and the write would see or lose a partial update.
    if (touches(*block, load, store, var)) return generic();
    leaves.erase(leaves.begin() + static_cast<std::ptrdiff_t>(at));
    negated.erase(negated.begin() + static_cast<std::ptrdiff_t>(at));
    *u = {store, load, std::move(chain), std::move(leaves), std::move(negated), cls};
    return true;
  }

  static bool reducible_type(Scalar t) {
    return t == Scalar::I32 || t == Scalar::U32 || t == Scalar::I64 || t == Scalar::U64 ||
           t == Scalar::F32 || t == Scalar::F64;
  }

  // A loop that updates a variable declared outside it has sequential semantics; run in
  // parallel it would race. The exception is a reduction: every access to the variable in
  // the loop is `v = v OP e` with one associative OP (+ - * min max & | ^), e not reading
  // v; each thread then accumulates a partial result and combines it at its end.
  OuterWrites outer_writes(Inst* loop) {
    OuterWrites w;
    // Local arrays are per-thread memory that cannot move into kernel temporaries: a loop
    // using one declared outside it keeps the one array by running in order.
    const Inst* array_use = nullptr;
    ir::walk(*loop->regions[0], [&](Inst& inst) {
      if (!array_use && (inst.op == Op::ArrayLoad || inst.op == Op::ArrayStore) &&
          !defined_within(inst.operands[0], loop))
        array_use = &inst;
    });
    if (array_use) {
      w.serial_reason = "node " + std::to_string(array_use->node) +
                        " uses the local array of node " +
                        std::to_string(array_use->operands[0]->node) +
                        ", declared outside the loop, so the loop runs in order (declared in "
                        "the loop body, it would be one array per thread)";
      return w;
    }
    std::vector<Inst*> written;
    std::unordered_set<const Inst*> seen;
    ir::walk(*loop->regions[0], [&](Inst& inst) {
      if ((inst.op == Op::LocalStore || inst.op == Op::AtomicRMW) &&
          outer_variable(inst.operands[0], loop) && seen.insert(inst.operands[0]).second)
        written.push_back(inst.operands[0]);
    });
    if (written.empty()) return w;
    auto uses = ir::count_uses(*loop->regions[0]);
    block_indexes_.clear();
    // Every access of each written variable, in program order, from one walk.
    std::unordered_map<const Inst*, std::vector<Inst*>> accesses_of;
    for (Inst* var : written) accesses_of[var];
    ir::walk(*loop->regions[0], [&](Inst& inst) {
      if (inst.operands.empty()) return;
      auto it = accesses_of.find(inst.operands[0]);
      if (it != accesses_of.end()) it->second.push_back(&inst);
    });
    auto serial_text = [&](const std::string& reason) {
      w.serial_reason = reason;
      w.vars.clear();
      w.updates.clear();
      return w;
    };
    auto serial = [&](const Inst& at, const std::string& why) {
      return serial_text("node " + std::to_string(at.node) + " " + why);
    };
    auto mixed = [&](const Inst* var, Op a, const Inst& at_a, Op b, const Inst& at_b) {
      return serial_text(mixed_text(var, a, at_a, b, at_b));
    };
    for (Inst* var : written) {
      const std::vector<Inst*>& accesses = accesses_of[var];
      std::unordered_set<const Inst*> clean;  // values known not to read var
      std::unordered_set<const Inst*> consumed;
      std::vector<Update> mine;
      for (Inst* a : accesses) {
        Update u;
        if (a->op == Op::LocalStore) {
          Mismatch m;
          if (!match_store(a, var, *loop->regions[0], uses, clean, &u, &m))
            return m.at ? serial(*m.at, m.why) : serial_text(m.why);
          consumed.insert(u.load);
        } else if (a->op == Op::AtomicRMW) {
          auto count = uses.find(a);
          if (count != uses.end() && count->second > 0)
            return serial(*a, "uses the old value of an atomic update of " + var_name(var) +
                                  ", declared outside the loop, so the loop runs in order");
          Op binary = ir::atomic_binary_op(a->atomic_op());
          u.store = a;
          bool negate;
          reducible(binary, &u.op, &negate);
          u.leaves = {a->operands[1]};
          u.negated = {negate};
        } else {
          continue;  // loads: checked below, once every update has claimed its own
        }
        if (!mine.empty() && mine.front().op != u.op)
          return mixed(var, mine.front().op, *mine.front().store, u.op, *a);
        mine.push_back(u);
      }
      for (Inst* a : accesses)
        if (a->op == Op::LocalLoad && !consumed.count(a))
          return serial(*a, "reads the running value of " + var_name(var) +
                                " inside the loop: only `v = v OP e` may read it, so the loop "
                                "runs in order");
      bool bitwise = mine.front().op == Op::BitAnd || mine.front().op == Op::BitOr ||
                     mine.front().op == Op::BitXor;
      if (!reducible_type(var->type) || (bitwise && is_float(var->type)))
        return serial(*mine.front().store,
                      "accumulates into " + var_name(var) + " of type " +
                          std::string(scalar_name(var->type)) + " with `" +
                          combine_symbol(mine.front().op) +
                          "`: parallel reductions take i32, u32, i64, u64 (any operation) and "
                          "f32, f64 (+ - * min max), so the loop runs in order");
      w.vars.push_back(var);
      w.updates.insert(w.updates.end(), mine.begin(), mine.end());
    }
    return w;
  }

  static std::string combine_symbol(Op op) {
    switch (op) {
      case Op::Add: return "+";
      case Op::Mul: return "*";
      case Op::BitAnd: return "&";
      case Op::BitOr: return "|";
      case Op::BitXor: return "^";
      default: return std::string(ir::op_name(op));
    }
  }

  // Replaces each update by a `reduce` into the task's partial of its variable (whose
  // temporary offset convert_shared_variables fills in).
  void make_reductions(const OuterWrites& w) {
    Insertions inserted;
    std::unordered_set<Inst*> dead;
    for (const Update& u : w.updates) {
      Inst* var = u.store->operands[0];
      // e: the chain's other leaves, combined in their order.
      Inst* value = nullptr;
      for (size_t i = 0; i < u.leaves.size(); ++i) {
        Inst* leaf = u.leaves[i];
        if (!value && u.negated[i])
          value = inserted.before(u.store, new_inst(Op::Neg, leaf->type, {leaf}, u.store->node));
        else if (!value)
          value = leaf;
        else
          value = inserted.before(u.store, new_inst(u.negated[i] ? Op::Sub : u.op, value->type,
                                                    {value, leaf}, u.store->node));
      }
      auto reduce = new_inst(Op::Reduce, Scalar::Void, {value}, u.store->node);
      reduce->set_combine_op(u.op);
      reduce->set_temp_offset(0);
      reductions_.emplace_back(inserted.before(u.store, std::move(reduce)), var);
      dead.insert(u.store);
      dead.insert(u.chain.begin(), u.chain.end());
      if (u.load) dead.insert(u.load);
    }
    inserted.apply();  // before the stores they sit next to leave
    erase_all(kernel_, dead);
    for (Inst* var : w.vars) shared_.insert(var);
  }

  std::string parallel_note(const Inst& loop, const OuterWrites& w) {
    std::string note;
    if (loop.op == Op::RangeFor) {
      int dims = loop.dims();
      note = "range_for over " + std::to_string(dims) + (dims == 1 ? " dim" : " dims");
    } else {
      const ResourceDesc& r = kernel_.abi.resources.at(static_cast<size_t>(loop.resource_slot()));
      std::string name = !r.field.empty() ? "field " + r.field
                         : r.param >= 0   ? kernel_.abi.params.at(static_cast<size_t>(r.param)).name
                                          : "slot " + std::to_string(loop.resource_slot());
      note = "struct_for over " + name + " (" + std::to_string(r.ndim) +
             (r.ndim == 1 ? " dim)" : " dims)");
    }
    note += ", parallel";
    std::unordered_map<const Inst*, Op> ops;
    for (const Update& u : w.updates) ops.emplace(u.store->operands[0], u.op);
    auto op_of = [&](const Inst* var) {
      auto it = ops.find(var);
      return it == ops.end() ? Op::Add : it->second;
    };
    // A vector variable lowers to one variable per component, all from its node: said once.
    for (size_t i = 0; i < w.vars.size();) {
      const Inst* var = w.vars[i];
      size_t n = 1;
      while (i + n < w.vars.size() && var_name(w.vars[i + n]) == var_name(var) &&
             w.vars[i + n]->type == var->type && op_of(w.vars[i + n]) == op_of(var))
        ++n;
      note += "; reduction: " + var_name(var) + " (" + combine_symbol(op_of(var)) + ", " +
              std::string(scalar_name(var->type)) + (n > 1 ? "x" + std::to_string(n) : "") + ")";
      i += n;
    }
    return note;
  }

  // A break leaving the loop stops it at one iteration, an order a parallel task does not
  // have. Lowering refuses a break in a top-level loop, but simplification can bring a loop
  // that breaks to the top level (an `if` on a constant replaced by its branch).
  static bool breaks_own_loop(const Block& body) {
    for (const auto& inst : body.insts) {
      ir::count_work();
      if (inst->op == Op::Break) return true;
      if (inst->op == Op::While || inst->op == Op::RangeFor || inst->op == Op::StructFor) continue;
      for (const auto& region : inst->regions)
        if (breaks_own_loop(*region)) return true;
    }
    return false;
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
    // The open serial task goes in once it closes, so uniform values met meanwhile (which it
    // may use) land before it by being appended.
    std::unique_ptr<Inst> open_serial;
    Inst* serial = nullptr;  // the open serial task
    size_t serial_note = 0;  // its entry in notes_
    auto close_serial = [&] {
      if (open_serial) top_.append(std::move(open_serial));
      serial = nullptr;
    };
    std::unordered_map<Inst*, Inst*> loops;  // offloaded loop -> its task
    notes_.clear();
    for (auto& up : old) {
      Inst* inst = up.get();
      ir::count_work();
      if (uniform_at_top(*inst)) {
        uniform_.insert(inst);
        top_.append(std::move(up));
        continue;
      }
      bool uniform_bounds = true;
      for (const Inst* op : inst->operands)
        if (!uniform_.count(op)) uniform_bounds = false;
      bool candidate = inst->op == Op::StructFor || (inst->op == Op::RangeFor && uniform_bounds);
      bool breaks = candidate && breaks_own_loop(*inst->regions[0]);
      candidate = candidate && !breaks;
      OuterWrites writes;
      if (candidate) writes = outer_writes(inst);
      bool parallel = candidate && writes.serial_reason.empty();
      std::string serial_reason;
      if (inst->op == Op::RangeFor && !uniform_bounds)
        serial_reason = "node " + std::to_string(inst->node) +
                        " (range_for) has bounds computed by earlier statements";
      else if (candidate && !parallel)
        serial_reason = writes.serial_reason;
      if (breaks)
        serial_reason = "node " + std::to_string(inst->node) + " (" +
                        std::string(ir::op_name(inst->op)) + ") has a break, so it runs in order";
      if (inst->op == Op::Offload || parallel) {
        close_serial();
        if (inst->op == Op::Offload) {
          notes_.push_back({inst->node, inst->task_kind() != TaskKind::Serial,
                            std::string(ir::task_kind_name(inst->task_kind())) +
                                " (offloaded before this pass)"});
          top_.append(std::move(up));
          continue;
        }
        notes_.push_back({inst->node, true, parallel_note(*inst, writes)});
        make_reductions(writes);
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
      if (!serial) {
        open_serial = new_task(TaskKind::Serial, inst->node);
        open_serial->parent = &top_;
        serial = open_serial.get();
        serial_note = notes_.size();
        notes_.push_back({inst->node, false, "serial"});
      }
      if (!serial_reason.empty()) {
        ir::TaskNote& note = notes_[serial_note];
        // The note belongs on the (first) loop that runs in order, which the editor marks,
        // not on the statement the serial task happens to start with.
        if (note.text == "serial") note.node = inst->node;
        note.text += (note.text == "serial" ? ": " : "; ") + serial_reason;
      }
      serial->regions[0]->append(std::move(up));
    }
    close_serial();
    for (ir::TaskNote& note : notes_)
      if (note.text == "serial") note.text = "serial: statements outside any parallel loop";
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
    Block* body = task->regions[0].get();
    Inst* result;
    if (value->op == Op::GlobalPtr || value->op == Op::ElementPtr) {
      // Pointers do not fit temporaries: recompute them from their (imported) indices.
      std::vector<Inst*> indices;
      for (Inst* op : value->operands) indices.push_back(materialize(op, task));
      auto copy = new_inst(value->op, value->type, indices, value->node);
      copy->copy_attributes_from(*value);
      result = inserted_.at_start(body, std::move(copy));
    } else {
      uint32_t offset = temp_of(value);
      result = inserted_.at_start(
          body, new_tmp_load(value->type, static_cast<int32_t>(offset), value->node));
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
    inserted_.after(value, new_tmp_store(value, static_cast<int32_t>(offset), value->node));
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
          // A local array is per-thread memory (up to 16 KiB): it cannot live in kernel
          // temporaries, and one shared by a parallel loop's threads would race.
          if (op->op == Op::LocalArray)
            fail(*op, "local array declared outside the loop or task that uses it (node " +
                          std::to_string(user->node) +
                          "): each thread has its own local arrays, so declare it inside the "
                          "parallel loop's body, next to its uses");
          if (op->op == Op::Alloca) {
            shared_.insert(op);
            continue;
          }
          op = materialize(op, task);
        }
      }
    }
    inserted_.apply();
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
    for (auto& [reduce, var] : reductions_)
      reduce->set_temp_offset(static_cast<int32_t>(offset_of[var]));
    Insertions inserted;
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
        Inst* updated = inserted.after(use, new_inst(binary, use->type, {use, value}, use->node));
        inserted.after(updated, new_tmp_store(updated, offset, use->node));
      } else {
        fail(*use, "unsupported use of a variable shared between tasks");
      }
    }
    // The variable itself: its zero start value, unless a store right after it overwrites it.
    std::unordered_set<Block*> blocks;
    for (Inst* var : shared_) blocks.insert(var->parent);
    std::unordered_map<const Inst*, bool> stored_first;
    for (Block* block : blocks) stored_before_read(*block, offset_of, stored_first);
    std::unordered_set<Inst*> vars;
    for (Inst* var : shared_) {
      auto offset = static_cast<int32_t>(offset_of[var]);
      if (!stored_first.at(var)) {
        Inst* zero = inserted.before(var, new_const_bits(var->type, 0, var->node));
        inserted.before(var, new_tmp_store(zero, offset, var->node));
      }
      vars.insert(var);
    }
    inserted.apply();  // before the variables they sit next to leave
    erase_all(kernel_, vars);
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
    Insertions inserted;
    for (size_t t = first; t + 1 < tasks.size(); ++t) {
      std::vector<Inst*> returns;
      ir::walk(*tasks[t]->regions[0], [&](Inst& inst) {
        if (inst.op == Op::Return) returns.push_back(&inst);
      });
      for (Inst* r : returns) inserted.before(r, new_tmp_store(yes, flag, r->node));
    }
    inserted.apply();
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

  // For each shared variable of `block`: true when, in the block, its temporary is stored
  // before anything could read it (a region or a jump could, so they end the search). One
  // backward sweep: the next access of each temporary, and the next region or jump.
  void stored_before_read(Block& block, const std::unordered_map<const Inst*, uint32_t>& offset_of,
                          std::unordered_map<const Inst*, bool>& out) {
    struct Next {
      size_t at;
      bool store;
    };
    std::unordered_map<int32_t, Next> next;  // temporary offset -> its next access
    size_t barrier = block.insts.size();     // the next region or jump
    for (size_t i = block.insts.size(); i-- > 0;) {
      Inst& inst = *block.insts[i];
      ir::count_work();
      if (inst.op == Op::Alloca && shared_.count(&inst)) {
        auto it = next.find(static_cast<int32_t>(offset_of.at(&inst)));
        out[&inst] = it != next.end() && it->second.at < barrier && it->second.store;
      }
      if (inst.op == Op::TmpStore || inst.op == Op::TmpLoad)
        next[inst.temp_offset()] = {i, inst.op == Op::TmpStore};
      else if (!inst.regions.empty() || inst.op == Op::Break || inst.op == Op::Continue ||
               inst.op == Op::Return)
        barrier = i;
    }
  }

  ir::Kernel& kernel_;
  Block& top_;
  std::unordered_set<const Inst*> uniform_;
  std::map<std::pair<Inst*, Inst*>, Inst*> imported_;
  Insertions inserted_;  // imports at the start of tasks, stores of exported values
  std::unordered_map<const Inst*, const ir::Kernel::VarOrigin*> origins_;  // var_name's
  std::unordered_map<const Block*, BlockIndex> block_indexes_;             // touches(), per loop
  std::unordered_map<Inst*, uint32_t> temps_;
  std::unordered_set<Inst*> shared_;
  std::vector<std::pair<Inst*, Inst*>> reductions_;  // reduce -> its variable
  std::vector<ir::TaskNote> notes_;
  uint32_t next_temp_ = 0;
};

}  // namespace

bool offload(ir::Kernel& kernel) { return Offloader(kernel).run(); }

}  // namespace loom::passes
