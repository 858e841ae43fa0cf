#include "compiler/codegen_spirv/spirv_loops.h"

#include "compiler/ir/inst.h"
#include "compiler/ir/range_bound.h"

namespace loom::codegen {

namespace {

using ir::Inst;
using ir::Op;

bool holds(const ir::Block& block, bool (*pred)(const Inst&)) {
  bool found = false;
  ir::walk(block, [&](const Inst& in) { found = found || pred(in); });
  return found;
}

bool is_loop(const Inst& in) {
  return in.op == Op::While || in.op == Op::RangeFor || in.op == Op::StructFor;
}

// The bounds the host reads to size a dispatch exactly (the emitter's `bound_of`).
bool host_evaluable(const ir::Kernel& kernel, const Inst* v) {
  return ir::host_range_bound(kernel.abi, v).has_value();
}

}  // namespace

uint32_t loop_iteration_limit(uint32_t vendor_id, const std::string& device_name) {
  // llvmpipe counts every loop's iterations of an invocation in one counter that starts at
  // Mesa's LP_MAX_TGSI_LOOP_ITERATIONS (65535) and leaves any loop when it runs out, without
  // a word. Nesting does not help: the counter is shared by all the loops of the shader.
  constexpr uint32_t kMesaVendor = 0x10005;
  if (vendor_id == kMesaVendor && device_name.rfind("llvmpipe", 0) == 0) return 65535;
  return 0;
}

bool task_needs_loop_guard(const ir::Kernel& kernel, const Inst& offload,
                           const SpirvTarget& target) {
  if (target.loop_iteration_limit == 0) return false;
  const ir::Block& body = *offload.region(0);
  if (holds(body, is_loop)) return true;
  if (offload.task_kind() == ir::TaskKind::Serial) return false;
  if (target.workgroup_size < 2) return true;
  // A 64-bit reduction without 64-bit atomics runs on one workgroup (emit_spirv.cpp,
  // one_workgroup_), whose invocations walk the whole range. Other reductions get a grid the
  // runtime keeps under kMaxGridStrideTrips per invocation (spirv_kernel.h), as below.
  bool one_workgroup = false;
  ir::walk(body, [&](const Inst& in) {
    one_workgroup = one_workgroup || (in.op == Op::Reduce && bit_width(in.operand(0)->type) == 64 &&
                                      !(target.features & kNeedInt64Atomics));
  });
  if (one_workgroup) return true;
  if (offload.task_kind() == ir::TaskKind::StructFor) return false;
  for (size_t i = 0; i < offload.operands.size(); ++i)
    if (!host_evaluable(kernel, offload.operand(i))) return true;
  return false;
}

}  // namespace loom::codegen
