#include "compiler/passes/privatize_scatter.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/inst.h"
#include "compiler/ir/private_copies.h"

namespace loom::passes {

namespace {

using ir::Inst;
using ir::Op;

// Copies are sized by the field's declared shape, never by a loop's trip count or an
// argument; these caps bound them, and a field they leave fewer than two copies (one on a
// single thread) keeps its atomics.
constexpr uint64_t kFieldBudget = uint64_t{16} << 20;   // bytes of copies per field
constexpr uint64_t kKernelBudget = uint64_t{64} << 20;  // bytes of copies per kernel

// a * b, saturating.
uint64_t times(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a)
    return std::numeric_limits<uint64_t>::max();
  return a * b;
}

// What a task does to one resource slot.
struct SlotUse {
  std::vector<Inst*> pointers;  // its element_ptrs
  int updates = 0;              // atomic adds/subs through them (each counted once)
  bool only_updates = true;     // nothing else: no load, store, other atomic, used old value
};

// The task's iterations when its bounds are constants, or none.
std::optional<uint64_t> constant_trip_count(const ir::Kernel& kernel, const Inst& task) {
  if (task.task_kind() == ir::TaskKind::StructFor)
    return ir::fixed_scalars([&] {
      ResourceDesc r = kernel.abi.resources.at(static_cast<size_t>(task.resource_slot()));
      r.components = 1;
      return r;
    }());
  uint64_t trips = 1;
  for (size_t i = 0; i + 1 < task.operands.size(); i += 2) {
    const Inst* lo = task.operand(i);
    const Inst* hi = task.operand(i + 1);
    if (!lo->is_const() || !hi->is_const()) return std::nullopt;
    trips = times(trips,
                  static_cast<uint64_t>(std::max<int64_t>(0, hi->int_value() - lo->int_value())));
  }
  return trips;
}

class Privatizer {
 public:
  explicit Privatizer(ir::Kernel& kernel) : k_(kernel), uses_(ir::count_uses(*kernel.body)) {}

  bool run() {
    size_t index = 0;
    bool changed = false;
    for (auto& inst : k_.body->insts) {
      if (inst->op != Op::Offload) continue;
      size_t task = index++;
      if (inst->task_kind() != ir::TaskKind::Serial) changed |= privatize_task(*inst, task);
    }
    return changed;
  }

 private:
  bool privatize_task(Inst& task, size_t index) {
    std::map<int, SlotUse> slots;
    ir::walk(*task.region(0), [&](Inst& in) {
      if (in.op == Op::ElementPtr) slots[in.resource_slot()].pointers.push_back(&in);
      for (size_t i = 0; i < in.operands.size(); ++i) {
        Inst* p = in.operands[i];
        if (p->op != Op::ElementPtr) continue;
        SlotUse& use = slots[p->resource_slot()];
        bool adds = in.op == Op::AtomicRMW && i == 0 &&
                    (in.atomic_op() == ir::AtomicOp::Add || in.atomic_op() == ir::AtomicOp::Sub) &&
                    uses_[&in] == 0;
        if (adds)
          ++use.updates;
        else
          use.only_updates = false;
      }
    });
    std::optional<uint64_t> trips = constant_trip_count(k_, task);
    // Fields by name, with how many of the task's slots are bound to each.
    std::map<std::string, int> fields;
    for (const auto& [slot, use] : slots) {
      const ResourceDesc& r = k_.abi.resources.at(static_cast<size_t>(slot));
      if (r.kind == ResourceKind::Field) ++fields[r.field];
    }
    std::string privatized;
    for (auto& [slot, use] : slots) {
      std::optional<ir::PrivateCopies> layout = plan(slot, use, fields, trips);
      if (!layout) continue;
      for (Inst* p : use.pointers) {
        p->bits = static_cast<uint64_t>(layout->copies);
        p->set_temp_offset(static_cast<int32_t>(layout->offset));
      }
      const ResourceDesc& r = k_.abi.resources[static_cast<size_t>(slot)];
      privatized += (privatized.empty() ? "" : ", ") + r.field;
    }
    if (privatized.empty()) return false;
    if (index < k_.task_notes.size())
      k_.task_notes[index].text +=
          "; atomic adds into " + privatized +
          " go through per-thread copies, added into the field after the task";
    return true;
  }

  // The copies of `slot` for this task, or none when its updates must stay atomics.
  std::optional<ir::PrivateCopies> plan(int slot, const SlotUse& use,
                                        const std::map<std::string, int>& fields,
                                        std::optional<uint64_t> trips) {
    if (!use.only_updates || use.updates == 0) return std::nullopt;
    const ResourceDesc& r = k_.abi.resources.at(static_cast<size_t>(slot));
    if (r.kind != ResourceKind::Field || r.dtype == Scalar::Bool) return std::nullopt;
    for (const Inst* p : use.pointers)
      if (p->type != r.dtype) return std::nullopt;
    if (is_float(r.dtype) && !k_.fast_math) return std::nullopt;  // would regroup float sums
    // Another slot bound to the same field (a template parameter, say) reads or writes the
    // memory the copies stand for.
    if (fields.at(r.field) > 1) return std::nullopt;
    std::optional<uint64_t> scalars = ir::fixed_scalars(r);
    if (!scalars || *scalars == 0) return std::nullopt;
    if (trips && times(*trips, static_cast<uint64_t>(use.updates)) < *scalars) return std::nullopt;

    auto found = regions_.find(slot);
    if (found != regions_.end()) return found->second;
    uint64_t stride = (*scalars * static_cast<uint64_t>(size_of(r.dtype)) + 63) / 64 * 64;
    uint64_t wanted = static_cast<uint64_t>(std::min(k_.private_copies, ir::kMaxPrivateCopies));
    uint64_t copies =
        std::min({wanted, kFieldBudget / stride, (kKernelBudget - copy_bytes_) / stride});
    if (copies < std::min<uint64_t>(2, wanted)) return std::nullopt;
    uint32_t offset = (k_.abi.temps_size + 63) / 64 * 64;
    std::optional<ir::PrivateCopies> layout =
        ir::private_copies_layout(r, static_cast<int>(copies), offset);
    if (!layout) return std::nullopt;
    k_.abi.temps_size = static_cast<uint32_t>(layout->end());
    copy_bytes_ += uint64_t{layout->stride} * copies;
    regions_[slot] = *layout;
    return layout;
  }

  ir::Kernel& k_;
  std::unordered_map<const Inst*, int> uses_;
  std::map<int, ir::PrivateCopies> regions_;  // one region per slot, shared by its tasks
  uint64_t copy_bytes_ = 0;                   // of every region so far
};

}  // namespace

bool privatize_scatter(ir::Kernel& kernel) {
  if (kernel.private_copies < 1) return false;
  return Privatizer(kernel).run();
}

}  // namespace loom::passes
