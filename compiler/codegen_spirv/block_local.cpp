#include "compiler/codegen_spirv/block_local.h"

#include <algorithm>
#include <cstdlib>

#include "compiler/ir/element_index.h"
#include "compiler/ir/inst.h"

namespace loom::codegen {

using ir::Inst;
using ir::Op;

TileShape tile_shape(uint32_t workgroup_size) {
  if (workgroup_size >= 32 && workgroup_size % 16 == 0) return {16, workgroup_size / 16};
  return {std::max<uint32_t>(workgroup_size, 1), 1};  // one row: the halo still shared along it
}

namespace {

std::string resource_name(const KernelABI& abi, int32_t slot) {
  const ResourceDesc& r = abi.resources.at(static_cast<size_t>(slot));
  if (r.kind == ResourceKind::Field) return r.field;
  if (r.param >= 0 && static_cast<size_t>(r.param) < abi.params.size())
    return abi.params[static_cast<size_t>(r.param)].name;
  return "slot " + std::to_string(slot);
}

bool is_slot_pointer(const Inst* p, int32_t slot) {
  return p->op == Op::ElementPtr && p->resource_slot() == slot;
}

// Why `slot` cannot be staged for `offload` whatever its loads; empty when it may be.
std::string refusal(const ir::Kernel& kernel, const Inst& offload, int32_t slot) {
  const ResourceDesc& r = kernel.abi.resources.at(static_cast<size_t>(slot));
  if (r.kind != ResourceKind::Field && r.kind != ResourceKind::Ndarray)
    return "only fields and ndarrays are staged";
  if (r.ndim != 2) return "it has " + std::to_string(r.ndim) + " dimensions, not 2";
  if (r.components != 1) return "its elements are vectors; scalar elements are staged";
  if (r.dtype != Scalar::F32 && r.dtype != Scalar::I32 && r.dtype != Scalar::U32)
    return "its elements are " + std::string(scalar_name(r.dtype)) + "; 32-bit ones are staged";
  std::string why;
  ir::walk(*offload.region(0), [&](const Inst& in) {
    if (!why.empty()) return;
    bool writes = (in.op == Op::GlobalStore || in.op == Op::AtomicRMW) &&
                  is_slot_pointer(in.operand(0), slot);
    if (writes) why = "the task writes it (node " + std::to_string(in.node) + ")";
    // Another ndarray written by the task may be the same buffer unless the launch binds
    // distinct ones; a tile would then miss the task's own writes.
    bool other_ndarray_written =
        r.kind == ResourceKind::Ndarray && !kernel.distinct_ndarrays &&
        (in.op == Op::GlobalStore || in.op == Op::AtomicRMW) &&
        in.operand(0)->op == Op::ElementPtr &&
        kernel.abi.resources.at(static_cast<size_t>(in.operand(0)->resource_slot())).kind ==
            ResourceKind::Ndarray;
    if (other_ndarray_written)
      why = "the task writes an ndarray that may be the same one (node " + std::to_string(in.node) +
            "); bind distinct ndarrays";
  });
  return why;
}

}  // namespace

std::vector<StagedResource> plan_block_local(const ir::Kernel& kernel, const Inst& offload,
                                             TileShape shape, std::vector<std::string>* notes) {
  std::vector<StagedResource> staged;
  if (kernel.block_local_slots.empty()) return staged;
  auto note = [&](int32_t slot, const std::string& why) {
    notes->push_back("'" + resource_name(kernel.abi, slot) +
                     "' stays out of workgroup memory (block_local): " + why);
  };
  // Debug kernels check the bounds of every read where it happens, naming the node.
  if (kernel.debug) {
    for (int32_t slot : kernel.block_local_slots) note(slot, "debug kernels read in place");
    return staged;
  }
  uint32_t bytes = 0;
  for (int32_t slot : kernel.block_local_slots) {
    if (slot < 0 || static_cast<size_t>(slot) >= kernel.abi.resources.size()) continue;
    std::string why = refusal(kernel, offload, slot);
    if (!why.empty()) {
      note(slot, why);
      continue;
    }
    const ResourceDesc& r = kernel.abi.resources[static_cast<size_t>(slot)];
    StagedResource s;
    s.slot = slot;
    bool any = false, elsewhere = false;
    ir::walk(*offload.region(0), [&](const Inst& in) {
      if (in.op != Op::GlobalLoad || !is_slot_pointer(in.operand(0), slot)) return;
      std::vector<const Inst*> index;
      ir::Affine row, col;
      bool stencil = ir::delinearize(in.operand(0)->operand(0), slot, r, &index) &&
                     index.size() == 2 && ir::affine(index[0], &row) &&
                     ir::affine(index[1], &col) && row.loop == &offload && row.dim == 0 &&
                     col.loop == &offload && col.dim == 1 && std::llabs(row.c) <= kMaxHalo &&
                     std::llabs(col.c) <= kMaxHalo;
      if (!stencil) {
        elsewhere = true;  // read in place, as before: correct, only not from the tile
        return;
      }
      auto dr = static_cast<int32_t>(row.c), dc = static_cast<int32_t>(col.c);
      if (!any) s.row_lo = s.row_hi = dr, s.col_lo = s.col_hi = dc;
      any = true;
      s.row_lo = std::min(s.row_lo, dr), s.row_hi = std::max(s.row_hi, dr);
      s.col_lo = std::min(s.col_lo, dc), s.col_hi = std::max(s.col_hi, dc);
      s.loads[&in] = {dr, dc};
    });
    if (!any) {
      note(slot, elsewhere ? "the task reads it at no constant offset from its indices"
                           : "the task does not read it");
      continue;
    }
    uint32_t elements = s.width(shape) * s.height(shape);
    uint32_t trips = (elements + shape.cols * shape.rows - 1) / (shape.cols * shape.rows);
    if (trips > kMaxFillTrips) {
      note(slot, "its halo is too wide for the workgroup (" + std::to_string(trips) +
                     " loads per invocation)");
      continue;
    }
    if (bytes + elements * 4 > kMaxTileBytes) {
      note(slot, "the task's tiles would pass " + std::to_string(kMaxTileBytes) +
                     " bytes of workgroup memory");
      continue;
    }
    bytes += elements * 4;
    staged.push_back(std::move(s));
  }
  return staged;
}

}  // namespace loom::codegen
