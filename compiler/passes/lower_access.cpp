#include "compiler/passes/lower_access.h"

#include <map>
#include <tuple>
#include <vector>

#include "compiler/ir/inst.h"
#include "compiler/passes/rewrite.h"

namespace loom::passes {

namespace {

using ir::Inst;
using ir::Op;

class AccessLowering {
 public:
  explicit AccessLowering(ir::Kernel& k)
      : kernel_(k), index_(k.index_bits == 32 ? Scalar::I32 : Scalar::I64) {}

  bool run() {
    std::vector<Inst*> pointers;
    std::map<Inst*, std::vector<Inst*>> accesses;  // pointer -> loads/stores/atomics
    ir::walk(*kernel_.body, [&](Inst& inst) {
      if (inst.op == Op::GlobalPtr) pointers.push_back(&inst);
      bool access =
          inst.op == Op::GlobalLoad || inst.op == Op::GlobalStore || inst.op == Op::AtomicRMW;
      if (access && inst.operands[0]->op == Op::GlobalPtr)
        accesses[inst.operands[0]].push_back(&inst);
    });
    for (Inst* ptr : pointers) {
      if (kernel_.debug)
        for (Inst* access : accesses[ptr]) check_bounds(ptr, access);
      lower(ptr);
    }
    inserted_.apply();
    return !pointers.empty();
  }

 private:
  // A uniform value at the top of the kernel, created once per key.
  Inst* top_level(std::unique_ptr<Inst> inst) {
    return inserted_.at_start(kernel_.body.get(), std::move(inst));
  }

  Inst* top_const(Scalar type, int64_t value) {
    auto key = std::make_pair(static_cast<int>(type), value);
    auto it = consts_.find(key);
    if (it != consts_.end()) return it->second;
    return consts_[key] = top_level(
               new_const_bits(type, normalize_bits(type, static_cast<uint64_t>(value)), -1));
  }

  const ResourceDesc& desc(int slot) const {
    return kernel_.abi.resources[static_cast<size_t>(slot)];
  }

  // Extent of dimension `dim` as i32 (for bounds checks) or the index type (for addressing).
  Inst* extent(int slot, int dim, bool wide) {
    const ResourceDesc& r = desc(slot);
    if (r.kind == ResourceKind::Field)
      return top_const(wide ? index_ : Scalar::I32, r.shape[static_cast<size_t>(dim)]);
    auto key = std::make_tuple(slot, dim, wide);
    auto it = extents_.find(key);
    if (it != extents_.end()) return it->second;
    Inst* e = extents_[std::make_tuple(slot, dim, false)];
    if (!e) {
      auto shape = new_inst(Op::ResourceShape, Scalar::I32, {}, -1);
      shape->set_resource_slot(slot);
      shape->set_dimension(dim);
      e = top_level(std::move(shape));
      extents_[std::make_tuple(slot, dim, false)] = e;
    }
    if (wide && index_ != Scalar::I32) {
      e = top_level(new_inst(Op::Cast, index_, {e}, -1));
      extents_[key] = e;
    }
    return e;
  }

  // Number of elements of a resource (SoA component stride), of the index type.
  Inst* element_count(int slot) {
    auto it = counts_.find(slot);
    if (it != counts_.end()) return it->second;
    const ResourceDesc& r = desc(slot);
    Inst* count = nullptr;
    if (r.kind == ResourceKind::Field) {
      int64_t n = 1;
      for (int d = 0; d < r.ndim; ++d) n *= r.shape[static_cast<size_t>(d)];
      count = top_const(index_, n);
    } else {
      for (int d = 0; d < r.ndim; ++d) {
        Inst* e = extent(slot, d, true);
        count = count ? top_level(new_inst(Op::Mul, index_, {count, e}, -1)) : e;
      }
      if (!count) count = top_const(index_, 1);
    }
    return counts_[slot] = count;
  }

  void check_bounds(Inst* ptr, Inst* access) {
    for (size_t d = 0; d < ptr->operands.size(); ++d) {
      Inst* e = extent(ptr->resource_slot(), static_cast<int>(d), false);
      auto check = new_inst(Op::BoundsCheck, Scalar::Void, {ptr->operands[d], e}, access->node);
      check->set_resource_slot(ptr->resource_slot());
      check->set_dimension(static_cast<int32_t>(d));
      inserted_.before(access, std::move(check));
    }
  }

  void lower(Inst* ptr) {
    int slot = ptr->resource_slot();
    int component = ptr->component();
    const ResourceDesc& r = desc(slot);
    auto here = [&](Op op, std::vector<Inst*> ops) {
      return inserted_.before(ptr, new_inst(op, index_, std::move(ops), ptr->node));
    };
    auto wide = [&](Inst* index) {
      return index->type == index_ ? index : here(Op::Cast, {index});
    };
    Inst* linear = nullptr;
    for (size_t d = 0; d < ptr->operands.size(); ++d) {
      Inst* index = wide(ptr->operands[d]);
      if (!linear) {
        linear = index;
        continue;
      }
      linear = here(Op::Mul, {linear, extent(slot, static_cast<int>(d), true)});
      linear = here(Op::Add, {linear, index});
    }
    if (!linear) linear = top_const(index_, 0);
    if (r.components > 1) {
      if (r.layout == Layout::SoA) {
        Inst* base = here(Op::Mul, {top_const(index_, component), element_count(slot)});
        linear = here(Op::Add, {base, linear});
      } else {
        linear = here(Op::Mul, {linear, top_const(index_, r.components)});
        linear = here(Op::Add, {linear, top_const(index_, component)});
      }
    }
    ptr->morph(Op::ElementPtr);  // keeps the slot
    ptr->operands = {linear};
  }

  ir::Kernel& kernel_;
  Scalar index_;
  Insertions inserted_;  // placed at the end: one rebuild per block, not one shift per value
  std::map<std::pair<int, int64_t>, Inst*> consts_;
  std::map<std::tuple<int, int, bool>, Inst*> extents_;
  std::map<int, Inst*> counts_;
};

}  // namespace

bool lower_access(ir::Kernel& kernel) { return AccessLowering(kernel).run(); }

}  // namespace loom::passes
