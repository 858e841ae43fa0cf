#include "compiler/passes/porting_warnings.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "compiler/ir/inst.h"
#include "compiler/ir/work_count.h"
#include "runtime/common/scalar.h"

namespace loom::passes {

namespace {

using ir::Inst;
using ir::Op;

// ---- an integer quotient converted to a float

void integer_division_to_float(const Inst& inst, std::vector<PortingWarning>& out) {
  if (inst.op != Op::Cast || !is_float(inst.type)) return;
  const Inst* div = inst.operands[0];
  if (div->op != Op::Div || !is_int(div->type)) return;
  std::string to(scalar_name(inst.type));
  std::string where = inst.node == div->node || inst.node < 0
                          ? "then converted to " + to
                          : "converted to " + to + " by node " + std::to_string(inst.node);
  out.push_back(
      {div->node, "integer division truncates (7 / 2 is 3), and its result is " + where +
                      ": Taichi's `/` is true division. Convert an operand to a float before "
                      "dividing for that; to keep the truncation, store the quotient in an "
                      "integer variable first"});
}

// ---- a read-modify-write of one element by every thread of a parallel loop

bool inside(const Inst* v, const Inst* loop) {
  for (const ir::Block* b = v->parent; b && b->owner; b = b->owner->parent)
    if (b->owner == loop) return true;
  return false;
}

// What the values of one parallel loop's body depend on, each value looked at once per
// question (a shared operand is not walked again per path, and nothing recurses), so a long
// chain or a DAG of many paths costs its size.
class LoopValues {
 public:
  explicit LoopValues(const Inst& loop) : loop_(&loop) {}

  // The same value in every iteration: defined outside the loop, or a pure op of such values.
  // Loads and anything else inside count as changing (no warning then).
  bool invariant(const Inst* v) {
    return all_of(v, invariant_, [&](const Inst* x) -> std::optional<bool> {
      if (!inside(x, loop_) || x->op == Op::Const) return true;
      if (!ir::is_pure(x->op) || x->op == Op::LoopIndex) return false;
      return std::nullopt;  // as its operands
    });
  }

  // A load of resource `slot` among the values `v` is computed from (within the loop body).
  bool reads_slot(const Inst* v, int32_t slot) {
    // "reads no load of slot" for every operand is "reads none": all_of over the negation.
    return !all_of(v, clean_of_[slot], [&](const Inst* x) -> std::optional<bool> {
      if (!inside(x, loop_)) return true;
      if (x->op == Op::GlobalLoad && x->operands[0]->op == Op::GlobalPtr &&
          x->operands[0]->resource_slot() == slot)
        return false;
      return std::nullopt;
    });
  }

 private:
  // Whether `test` holds for `root` and, where `test` defers (nullopt), for all its operands
  // recursively. `known` remembers every answer.
  template <typename Test>
  static bool all_of(const Inst* root, std::unordered_map<const Inst*, bool>& known, Test&& test) {
    auto decided = [&](const Inst* x) -> std::optional<bool> {
      auto it = known.find(x);
      if (it != known.end()) return it->second;
      return test(x);
    };
    if (std::optional<bool> r = decided(root)) return *r;
    std::vector<std::pair<const Inst*, size_t>> stack{{root, 0}};  // value, next operand
    while (!stack.empty()) {
      const Inst* x = stack.back().first;
      size_t i = stack.back().second++;
      ir::count_work();
      if (i == x->operands.size()) {
        known[x] = true;
        stack.pop_back();
        continue;
      }
      const Inst* op = x->operands[i];
      std::optional<bool> r = decided(op);
      if (!r) {
        stack.push_back({op, 0});
        continue;
      }
      if (*r) continue;
      for (const auto& [on_stack, next] : stack) known[on_stack] = false;
      return false;
    }
    return known.at(root);
  }

  const Inst* loop_;
  std::unordered_map<const Inst*, bool> invariant_;
  std::unordered_map<int32_t, std::unordered_map<const Inst*, bool>> clean_of_;  // by slot
};

std::string resource_name(const ir::Kernel& kernel, int32_t slot) {
  if (slot < 0 || static_cast<size_t>(slot) >= kernel.abi.resources.size()) return "a resource";
  const ResourceDesc& r = kernel.abi.resources[static_cast<size_t>(slot)];
  if (!r.field.empty()) return "'" + r.field + "'";
  if (r.param >= 0 && static_cast<size_t>(r.param) < kernel.abi.params.size())
    return "'" + kernel.abi.params[static_cast<size_t>(r.param)].name + "'";
  return "a resource";
}

void racing_updates(const ir::Kernel& kernel, const Inst& loop, std::vector<PortingWarning>& out) {
  LoopValues values(loop);
  ir::walk(static_cast<const ir::Block&>(*loop.regions[0]), [&](const Inst& inst) {
    if (inst.op != Op::GlobalStore) return;
    const Inst* ptr = inst.operands[0];
    if (ptr->op != Op::GlobalPtr) return;
    for (const Inst* index : ptr->operands)
      if (!values.invariant(index)) return;
    if (!values.reads_slot(inst.operands[1], ptr->resource_slot())) return;
    const char* what = loop.op == Op::StructFor ? "struct_for" : "range_for";
    out.push_back(
        {inst.node, "every thread of the parallel " + std::string(what) + " (node " +
                        std::to_string(loop.node) + ") reads, changes and writes back the same " +
                        "element of " + resource_name(kernel, ptr->resource_slot()) +
                        ", so the threads race and updates are lost: Taichi makes `x[None] += "
                        "v` atomic, Loom does not. Use atomic_add (or atomic_min, ...) there"});
  });
}

}  // namespace

std::vector<PortingWarning> porting_warnings(const ir::Kernel& kernel) {
  std::vector<PortingWarning> found;
  const ir::Block& body = *kernel.body;
  ir::walk(body, [&](const Inst& inst) { integer_division_to_float(inst, found); });
  // Loops at the top level of the kernel are the ones that run in parallel.
  for (const auto& inst : body.insts)
    if (inst->op == Op::RangeFor || inst->op == Op::StructFor) racing_updates(kernel, *inst, found);
  // One per node and message (a vector repeats it per component), in node order.
  std::stable_sort(
      found.begin(), found.end(),
      [](const PortingWarning& a, const PortingWarning& b) { return a.node < b.node; });
  std::vector<PortingWarning> out;
  std::set<std::pair<int32_t, std::string>> said;
  for (PortingWarning& w : found)
    if (said.insert({w.node, w.message}).second) out.push_back(std::move(w));
  return out;
}

}  // namespace loom::passes
