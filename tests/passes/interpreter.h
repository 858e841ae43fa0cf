// A reference interpreter for kernel IR, used to check that passes keep what a kernel
// computes: run the kernel before and after a pass (or the whole pipeline) on the same
// memory and compare. Parallel tasks run their iterations in order; kernels under test
// must be race-free. Arithmetic comes from passes::evaluate_constant, so it matches folding.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/inst.h"
#include "compiler/passes/constant_fold.h"

namespace loom::passes::testing {

// Everything a launch reads and writes; scalars in the Const bit representation.
struct Memory {
  std::vector<std::vector<uint64_t>> slots;           // per resource slot, AoS/SoA as declared
  std::vector<std::array<int64_t, kMaxDims>> shapes;  // per slot (fields: the declared shape)
  std::vector<uint64_t> args;                         // per parameter (value parameters)
  std::vector<uint64_t> returns;
  std::map<int32_t, uint64_t> temps;
  int errors = 0;  // failed bounds checks and assertions
};

// Memory sized for `kernel`'s resources with ndarray shapes `ndarray_shapes` (in slot order,
// fields use their own); every scalar set from `fill(slot, index)`.
template <typename Fill>
Memory make_memory(const ir::Kernel& kernel,
                   const std::vector<std::vector<int64_t>>& ndarray_shapes, Fill&& fill) {
  Memory m;
  size_t next_ndarray = 0;
  for (size_t s = 0; s < kernel.abi.resources.size(); ++s) {
    const ResourceDesc& r = kernel.abi.resources[s];
    std::array<int64_t, kMaxDims> shape{};
    int64_t n = r.components;
    for (int d = 0; d < r.ndim; ++d) {
      shape[static_cast<size_t>(d)] = r.kind == ResourceKind::Field
                                          ? r.shape[static_cast<size_t>(d)]
                                          : ndarray_shapes[next_ndarray][static_cast<size_t>(d)];
      n *= shape[static_cast<size_t>(d)];
    }
    if (r.kind != ResourceKind::Field) ++next_ndarray;
    m.shapes.push_back(shape);
    std::vector<uint64_t> data(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) data[static_cast<size_t>(i)] = fill(static_cast<int>(s), i);
    m.slots.push_back(std::move(data));
  }
  m.args.resize(kernel.abi.params.size());
  return m;
}

class Interpreter {
 public:
  Interpreter(const ir::Kernel& kernel, Memory& memory) : kernel_(kernel), m_(memory) {}

  void run() {
    steps_ = 0;
    exec_block(*kernel_.body);
  }

 private:
  enum class Flow { Next, Break, Continue, Return, Abort };

  uint64_t value(const ir::Inst* inst) {
    auto it = values_.find(inst);
    if (it == values_.end()) {
      ADD_FAILURE() << "interpreter: value used before it was computed: " << ir::op_name(inst->op);
      return 0;
    }
    return it->second;
  }
  int64_t index(const ir::Inst* inst) { return static_cast<int64_t>(value(inst)); }

  const ResourceDesc& desc(int slot) const {
    return kernel_.abi.resources[static_cast<size_t>(slot)];
  }

  uint64_t& cell(int slot, int64_t linear, Flow* flow) {
    auto& data = m_.slots[static_cast<size_t>(slot)];
    if (linear < 0 || static_cast<size_t>(linear) >= data.size()) {
      ++m_.errors;
      *flow = Flow::Abort;
      static uint64_t sink;
      return sink;
    }
    return data[static_cast<size_t>(linear)];
  }

  // Linear scalar index of GlobalPtr(slot, component; indices), computed from first principles.
  int64_t global_ptr_index(const ir::Inst& inst, Flow* flow) {
    const ResourceDesc& r = desc(inst.resource_slot());
    const auto& shape = m_.shapes[static_cast<size_t>(inst.resource_slot())];
    int64_t element = 0, count = 1;
    for (size_t d = 0; d < inst.operands.size(); ++d) {
      int64_t i = index(inst.operands[d]);
      if (i < 0 || i >= shape[d]) *flow = Flow::Abort;  // out of bounds: the access must not happen
      element = element * shape[d] + i;
    }
    for (int d = 0; d < r.ndim; ++d) count *= shape[static_cast<size_t>(d)];
    if (r.layout == Layout::SoA) return inst.component() * count + element;
    return element * r.components + inst.component();
  }

  Flow store_to(const ir::Inst* ptr, uint64_t bits) {
    if (ptr->op == ir::Op::Alloca) {
      vars_[ptr] = bits;
      return Flow::Next;
    }
    Flow flow = Flow::Next;
    uint64_t v = value(ptr);
    if (v == kBadPointer) {
      ++m_.errors;
      return Flow::Abort;
    }
    cell(ptr->resource_slot(), static_cast<int64_t>(v), &flow) = bits;
    return flow;
  }

  Flow load_from(const ir::Inst* ptr, uint64_t* bits) {
    if (ptr->op == ir::Op::Alloca) {
      *bits = vars_[ptr];
      return Flow::Next;
    }
    Flow flow = Flow::Next;
    uint64_t v = value(ptr);
    if (v == kBadPointer) {
      ++m_.errors;
      return Flow::Abort;
    }
    *bits = cell(ptr->resource_slot(), static_cast<int64_t>(v), &flow);
    return flow;
  }

  Flow exec_block(const ir::Block& block) {
    for (const auto& inst : block.insts) {
      Flow f = exec(*inst);
      if (f != Flow::Next) return f;
    }
    return Flow::Next;
  }

  // Runs `body` over the row-major iteration space [begin, end) of every dimension.
  Flow iterate(const ir::Inst& loop, const std::vector<std::pair<int64_t, int64_t>>& space,
               const ir::Block& body) {
    std::array<int64_t, kMaxDims> idx{};
    for (size_t d = 0; d < space.size(); ++d) {
      if (space[d].first >= space[d].second) return Flow::Next;
      idx[d] = space[d].first;
    }
    while (true) {
      loop_index_[&loop] = idx;
      Flow f = exec_block(body);
      if (f == Flow::Break) return Flow::Next;  // a break leaves the innermost loop only
      if (f == Flow::Return || f == Flow::Abort) return f;
      size_t d = space.size();
      while (d-- > 0) {
        if (++idx[d] < space[d].second) break;
        idx[d] = space[d].first;
        if (d == 0) return Flow::Next;
      }
    }
  }

  std::vector<std::pair<int64_t, int64_t>> struct_space(int slot) {
    std::vector<std::pair<int64_t, int64_t>> space;
    for (int d = 0; d < desc(slot).ndim; ++d)
      space.push_back({0, m_.shapes[static_cast<size_t>(slot)][static_cast<size_t>(d)]});
    return space;
  }

  std::vector<std::pair<int64_t, int64_t>> range_space(const ir::Inst& inst) {
    std::vector<std::pair<int64_t, int64_t>> space;
    for (size_t d = 0; d + 1 < inst.operands.size(); d += 2)
      space.push_back({index(inst.operands[d]), index(inst.operands[d + 1])});
    return space;
  }

  Flow exec(const ir::Inst& inst) {
    using ir::Op;
    if (++steps_ > 10'000'000) {
      ADD_FAILURE() << "interpreter: step limit";
      return Flow::Abort;
    }
    switch (inst.op) {
      case Op::Const: values_[&inst] = inst.bits; return Flow::Next;
      case Op::ArgLoad:
        values_[&inst] = m_.args[static_cast<size_t>(inst.param_index())];
        return Flow::Next;
      case Op::LoopIndex:
        values_[&inst] = static_cast<uint64_t>(
            loop_index_[inst.operands[0]][static_cast<size_t>(inst.dimension())]);
        return Flow::Next;
      case Op::ResourceShape:
        values_[&inst] = static_cast<uint64_t>(m_.shapes[static_cast<size_t>(inst.resource_slot())]
                                                        [static_cast<size_t>(inst.dimension())]);
        return Flow::Next;
      case Op::Alloca: vars_[&inst] = 0; return Flow::Next;
      case Op::LocalLoad: values_[&inst] = vars_[inst.operands[0]]; return Flow::Next;
      case Op::LocalStore: vars_[inst.operands[0]] = value(inst.operands[1]); return Flow::Next;
      case Op::LocalArray:
        arrays_[&inst].assign(static_cast<size_t>(inst.length() * inst.width()), 0);
        return Flow::Next;
      case Op::ArrayLoad: values_[&inst] = array_cell(inst); return Flow::Next;
      case Op::ArrayStore: array_cell(inst) = value(inst.operands[2]); return Flow::Next;
      case Op::GlobalPtr: {
        Flow f = Flow::Next;
        int64_t linear = global_ptr_index(inst, &f);
        values_[&inst] = f == Flow::Abort ? kBadPointer : static_cast<uint64_t>(linear);
        return Flow::Next;
      }
      case Op::ElementPtr: values_[&inst] = value(inst.operands[0]); return Flow::Next;
      case Op::GlobalLoad: return load_from(inst.operands[0], &values_[&inst]);
      case Op::GlobalStore: return store_to(inst.operands[0], value(inst.operands[1]));
      case Op::AtomicRMW: {
        uint64_t old = 0;
        Flow f = load_from(inst.operands[0], &old);
        if (f != Flow::Next) return f;
        constexpr Op kOps[] = {Op::Add,    Op::Sub,   Op::Min,   Op::Max,
                               Op::BitAnd, Op::BitOr, Op::BitXor};
        auto updated = evaluate_constant(kOps[static_cast<int>(inst.atomic_op())], inst.type,
                                         {{inst.type, old}, {inst.type, value(inst.operands[1])}});
        if (!updated) {
          ADD_FAILURE() << "interpreter: atomic on undefined values";
          return Flow::Abort;
        }
        values_[&inst] = old;
        return store_to(inst.operands[0], *updated);
      }
      case Op::TmpLoad: values_[&inst] = m_.temps[inst.temp_offset()]; return Flow::Next;
      case Op::TmpStore: m_.temps[inst.temp_offset()] = value(inst.operands[0]); return Flow::Next;
      case Op::Reduce: {  // one thread: combining in order is what every split sums to
        Scalar t = inst.operands[0]->type;
        auto combined =
            evaluate_constant(inst.combine_op(), t,
                              {{t, m_.temps[inst.temp_offset()]}, {t, value(inst.operands[0])}});
        if (!combined) {
          ADD_FAILURE() << "interpreter: reduce of undefined values";
          return Flow::Abort;
        }
        m_.temps[inst.temp_offset()] = *combined;
        return Flow::Next;
      }
      case Op::BoundsCheck: {
        int64_t i = index(inst.operands[0]), e = index(inst.operands[1]);
        if (i >= 0 && i < e) return Flow::Next;
        ++m_.errors;
        return Flow::Abort;
      }
      case Op::Assert:
        if (value(inst.operands[0])) return Flow::Next;
        ++m_.errors;
        return Flow::Abort;
      case Op::If: return exec_block(*inst.regions[value(inst.operands[0]) ? 0 : 1]);
      case Op::RangeFor: return iterate(inst, range_space(inst), *inst.regions[0]);
      case Op::StructFor:
        return iterate(inst, struct_space(inst.resource_slot()), *inst.regions[0]);
      case Op::While:
        while (true) {
          Flow f = exec_block(*inst.regions[0]);
          if (f == Flow::Break) return Flow::Next;
          if (f == Flow::Return || f == Flow::Abort) return f;
        }
      case Op::Offload: {
        Flow f = Flow::Next;
        ir::TaskKind kind = inst.task_kind();
        if (kind == ir::TaskKind::Serial) f = exec_block(*inst.regions[0]);
        if (kind == ir::TaskKind::RangeFor) f = iterate(inst, range_space(inst), *inst.regions[0]);
        if (kind == ir::TaskKind::StructFor)
          f = iterate(inst, struct_space(inst.resource_slot()), *inst.regions[0]);
        return f == Flow::Return ? Flow::Return : Flow::Next;  // an aborted task ends alone
      }
      case Op::Break: return Flow::Break;
      case Op::Continue: return Flow::Continue;
      case Op::Return:
        for (const ir::Inst* v : inst.operands) m_.returns.push_back(value(v));
        return Flow::Return;
      default: break;
    }
    std::vector<ConstValue> operands;
    for (const ir::Inst* op : inst.operands) operands.push_back({op->type, value(op)});
    auto result = evaluate_constant(inst.op, inst.type, operands);
    if (!result) {
      ADD_FAILURE() << "interpreter: cannot evaluate " << ir::op_name(inst.op);
      return Flow::Abort;
    }
    values_[&inst] = *result;
    return Flow::Next;
  }

  static constexpr uint64_t kBadPointer = ~uint64_t{0} >> 1;

  const ir::Kernel& kernel_;
  Memory& m_;
  std::unordered_map<const ir::Inst*, uint64_t> values_;
  std::unordered_map<const ir::Inst*, uint64_t> vars_;
  std::unordered_map<const ir::Inst*, std::vector<uint64_t>> arrays_;

  // The array cell ArrayLoad/ArrayStore `inst` addresses, its index clamped as the backends do.
  uint64_t& array_cell(const ir::Inst& inst) {
    const ir::Inst* array = inst.operands[0];
    int64_t i =
        std::clamp<int64_t>(static_cast<int32_t>(value(inst.operands[1])), 0, array->length() - 1);
    return arrays_[array][static_cast<size_t>(i * array->width() + inst.component())];
  }
  std::unordered_map<const ir::Inst*, std::array<int64_t, kMaxDims>> loop_index_;
  long steps_ = 0;
};

}  // namespace loom::passes::testing
