#include "compiler/passes/extent_assumptions.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "compiler/ir/element_index.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/range_bound.h"
#include "compiler/ir/work_count.h"

namespace loom::passes {

namespace {

using ir::Block;
using ir::Inst;
using ir::Op;

// Loop ranges one entry may carry, and entries one kernel may list (the ABI's caps).
constexpr size_t kMaxRanges = 64;
constexpr size_t kMaxEntries = 4096;

using ir::Affine;
using ir::affine;
using ir::delinearize;

// A break, continue or return (or only `which`) anywhere inside `region`.
bool has_jump(const Inst& region, Op which = Op::Const) {
  bool found = false;
  for (const auto& block : region.regions)
    ir::walk(static_cast<const Block&>(*block), [&](const Inst& inst) {
      bool jump = inst.op == Op::Break || inst.op == Op::Continue || inst.op == Op::Return;
      found = found || (jump && (which == Op::Const || inst.op == which));
    });
  return found;
}

// A jump that may cut an iteration of the loop owning `body` short: a return anywhere, or a
// break or continue of that loop itself. A nested loop's own break or continue ends only
// the nested loop's iteration, which its own range handles.
bool cuts_iterations(const Block& body) {
  for (const auto& inst : body.insts) {
    if (inst->op == Op::Break || inst->op == Op::Continue || inst->op == Op::Return) return true;
    bool loop = inst->op == Op::While || inst->op == Op::RangeFor || inst->op == Op::StructFor;
    if (loop ? has_jump(*inst, Op::Return)
             : std::any_of(inst->regions.begin(), inst->regions.end(),
                           [](const auto& r) { return cuts_iterations(*r); }))
      return true;
  }
  return false;
}

// The loops around an instruction, as the launch evaluates their ranges.
struct Scope {
  std::vector<RangeBound> begin, end;
  std::vector<std::pair<const Inst*, int32_t>> vars;  // per range: its loop and dimension
  std::vector<std::string> end_names;
  bool provable = true;  // false: under a condition, a jump, or a range the launch cannot read
};

class Recorder {
 public:
  explicit Recorder(ir::Kernel& k) : kernel_(k), abi_(k.abi) {
    for (const ResourceAccess& a : abi_.resource_access) lowered_names_[a.slot] = a.name;
  }

  void run() {
    visit(*kernel_.body, Scope{});
    std::stable_sort(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) {
      return std::make_pair(a.slot, a.dim) < std::make_pair(b.slot, b.dim);
    });
    // More than the stored forms list (kMaxListed, abi_fields.h): not recorded, so nothing
    // is checked rather than a module no reader accepts.
    if (entries_.size() > kMaxEntries) return;
    abi_.extent_assumptions = std::move(entries_);
    abi_.extent_assumptions_known = true;
  }

 private:
  void visit(const Block& block, const Scope& outer) {
    for (const auto& owned : block.insts) {
      const Inst& inst = *owned;
      ir::count_work();
      // A `return` ends the whole launch: what follows the task holding one may never run.
      Scope cut;
      if (after_return_) {
        cut = outer;
        cut.provable = false;
      }
      const Scope& scope = after_return_ ? cut : outer;
      if (inst.op == Op::GlobalLoad || inst.op == Op::GlobalStore || inst.op == Op::AtomicRMW)
        note(*inst.operand(0), scope);
      if (inst.regions.empty()) continue;
      Scope inner = scope;
      switch (inst.op) {
        case Op::Offload:
          if (cuts_iterations(*inst.regions[0])) inner.provable = false;
          if (inst.task_kind() == ir::TaskKind::RangeFor) add_ranges(inst, &inner);
          // A struct_for runs over the active cells of its space, not a range.
          if (inst.task_kind() == ir::TaskKind::StructFor) inner.provable = false;
          break;
        case Op::RangeFor:
          if (cuts_iterations(*inst.regions[0])) inner.provable = false;
          add_ranges(inst, &inner);
          break;
        default: inner.provable = false;  // if, while, struct_for: not every iteration
      }
      for (const auto& region : inst.regions) visit(*region, inner);
      after_return_ = after_return_ || has_jump(inst, Op::Return);
    }
  }

  // The bound as the launch reads it (ir::host_range_bound, as the SPIR-V host extent).
  bool bound_of(const Inst* v, RangeBound* out, std::string* name) const {
    std::optional<RangeBound> b = ir::host_range_bound(abi_, v);
    if (!b) return false;
    *out = *b;
    if (b->kind == RangeBound::Kind::Arg) *name = abi_.params[static_cast<size_t>(b->value)].name;
    if (b->kind == RangeBound::Kind::Shape) *name = slot_name(static_cast<int32_t>(b->value));
    return true;
  }

  void add_ranges(const Inst& loop, Scope* scope) const {
    for (int32_t d = 0; d < loop.dims() && scope->provable; ++d) {
      RangeBound begin, end;
      std::string ignored, end_name;
      if (scope->end.size() >= kMaxRanges ||
          !bound_of(loop.operand(2 * static_cast<size_t>(d)), &begin, &ignored) ||
          !bound_of(loop.operand(2 * static_cast<size_t>(d) + 1), &end, &end_name)) {
        scope->provable = false;
        return;
      }
      scope->begin.push_back(begin);
      scope->end.push_back(end);
      scope->vars.emplace_back(&loop, d);
      scope->end_names.push_back(end_name);
    }
  }

  void note(const Inst& pointer, const Scope& scope) {
    if (pointer.op != Op::GlobalPtr && pointer.op != Op::ElementPtr) return;  // a local
    int32_t slot = pointer.resource_slot();
    const ResourceDesc& r = abi_.resources.at(static_cast<size_t>(slot));
    std::vector<const Inst*> index;
    bool known = scope.provable;
    if (known && pointer.op == Op::GlobalPtr)
      index.assign(pointer.operands.begin(), pointer.operands.end());
    else if (known)
      known = delinearize(pointer.operand(0), slot, r, &index);
    for (int32_t d = 0; d < r.ndim; ++d) {
      Affine a;
      int32_t loop = -1;
      bool checked = known && affine(index[static_cast<size_t>(d)], &a);
      for (size_t k = 0; checked && a.loop && k < scope.vars.size(); ++k)
        if (scope.vars[k] == std::make_pair(a.loop, a.dim)) loop = static_cast<int32_t>(k);
      if (checked && a.loop && loop < 0) checked = false;  // a loop we cannot bound
      if (checked)
        add_checked(slot, d, scope, loop, a.c);
      else
        add_unchecked(slot, d);
    }
  }

  // Entries merge by slot, dimension, loop and bounds: found through this key, not by a scan
  // of every entry (a kernel storing into many fields makes as many entries as accesses).
  using EntryKey = std::tuple<int32_t, int32_t, int32_t,
                              std::vector<std::tuple<int, int64_t, uint32_t, int32_t>>>;

  static void add_bounds(const std::vector<RangeBound>& bounds,
                         std::vector<std::tuple<int, int64_t, uint32_t, int32_t>>& out) {
    for (const RangeBound& b : bounds)
      out.emplace_back(static_cast<int>(b.kind), b.value, b.offset, b.plus);
    out.emplace_back(-1, 0, 0, 0);  // begin and end apart
  }

  void add_checked(int32_t slot, int32_t dim, const Scope& scope, int32_t loop, int64_t c) {
    ir::count_work();
    EntryKey key{slot, dim, loop, {}};
    add_bounds(scope.begin, std::get<3>(key));
    add_bounds(scope.end, std::get<3>(key));
    auto [it, added] = checked_.try_emplace(std::move(key), entries_.size());
    if (!added) {
      ExtentAssumption& e = entries_[it->second];
      e.low = std::min(e.low, c);
      e.high = std::max(e.high, c);
      return;
    }
    ExtentAssumption e;
    e.slot = slot;
    e.dim = dim;
    e.name = slot_name(slot);
    e.begin = scope.begin;
    e.end = scope.end;
    e.loop = loop;
    e.low = e.high = c;
    if (loop >= 0) e.bound_name = scope.end_names[static_cast<size_t>(loop)];
    entries_.push_back(std::move(e));
  }

  void add_unchecked(int32_t slot, int32_t dim) {
    ir::count_work();
    if (!unchecked_.emplace(slot, dim).second) return;
    ExtentAssumption e;
    e.slot = slot;
    e.dim = dim;
    e.name = slot_name(slot);
    e.checked = false;
    entries_.push_back(std::move(e));
  }

  // As record_resource_access names slots (resource_access.cpp).
  std::string slot_name(int32_t slot) const {
    const ResourceDesc& r = abi_.resources.at(static_cast<size_t>(slot));
    if (r.kind == ResourceKind::Field) return r.field;
    const std::string& param = abi_.params.at(static_cast<size_t>(r.param)).name;
    if (r.param_offset < 0) return param;
    auto named = lowered_names_.find(slot);
    if (named != lowered_names_.end()) return named->second;
    return param + "@" + std::to_string(r.param_offset);
  }

  ir::Kernel& kernel_;
  KernelABI& abi_;
  std::map<int32_t, std::string> lowered_names_;
  std::vector<ExtentAssumption> entries_;
  std::map<EntryKey, size_t> checked_;               // checked entries: where in entries_
  std::set<std::pair<int32_t, int32_t>> unchecked_;  // slot, dimension of unchecked entries
  bool after_return_ = false;
};

}  // namespace

bool record_extent_assumptions(ir::Kernel& kernel) {
  kernel.abi.extent_assumptions.clear();
  kernel.abi.extent_assumptions_known = false;
  // Debug kernels bounds-check every access in their code, naming the node.
  if (kernel.debug) return false;
  Recorder(kernel).run();
  return false;
}

}  // namespace loom::passes
