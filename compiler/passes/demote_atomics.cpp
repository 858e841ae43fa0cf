#include "compiler/passes/demote_atomics.h"

#include <vector>

#include "compiler/ir/inst.h"
#include "compiler/passes/rewrite.h"

namespace loom::passes {

namespace {

using ir::Inst;
using ir::Op;

bool in_serial_task(const Inst& inst) {
  const Inst* top = &inst;
  while (top->parent && top->parent->owner) top = top->parent->owner;
  return top->op == Op::Offload && top->task_kind() == ir::TaskKind::Serial;
}

}  // namespace

bool demote_atomics(ir::Kernel& kernel) {
  std::vector<Inst*> atomics;
  ir::walk(*kernel.body, [&](Inst& inst) {
    if (inst.op != Op::AtomicRMW) return;
    if (inst.operands[0]->op == Op::Alloca || in_serial_task(inst)) atomics.push_back(&inst);
  });
  Insertions inserted;
  for (Inst* atomic : atomics) {
    Inst* ptr = atomic->operands[0];
    Inst* value = atomic->operands[1];
    bool local = ptr->op == Op::Alloca;
    Op binary = ir::atomic_binary_op(atomic->atomic_op());
    // The atomic becomes the load in place, so its users keep reading the old value.
    atomic->morph(local ? Op::LocalLoad : Op::GlobalLoad);
    atomic->operands = {ptr};
    Inst* updated =
        inserted.after(atomic, new_inst(binary, atomic->type, {atomic, value}, atomic->node));
    inserted.after(updated, new_inst(local ? Op::LocalStore : Op::GlobalStore, Scalar::Void,
                                     {ptr, updated}, atomic->node));
  }
  inserted.apply();
  return !atomics.empty();
}

}  // namespace loom::passes
