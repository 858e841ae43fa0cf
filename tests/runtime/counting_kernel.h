// A small compiled-kernel fixture for the CPU runtime's tests: counter[0] += 1 per
// iteration of a range task over [0, n), then a serial task returning n.
#pragma once

#include <memory>

#include "compiler/ir/builder.h"
#include "compiler/ir/inst.h"

namespace loom::test {

inline std::unique_ptr<ir::Kernel> counting_kernel() {
  using ir::Builder;
  using ir::Inst;
  using ir::Op;
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "count";
  ParamDesc nd;
  nd.name = "counter";
  nd.kind = ParamKind::Ndarray;
  nd.type = {Scalar::I32};
  nd.ndim = 1;
  k->abi.params.push_back(nd);
  ParamDesc n;
  n.name = "n";
  n.type = {Scalar::I32};
  n.size = 4;
  k->abi.params.push_back(n);
  ResourceDesc r;
  r.kind = ResourceKind::Ndarray;
  r.dtype = Scalar::I32;
  r.param = 0;
  k->abi.resources.push_back(r);
  k->abi.returns = {{Scalar::I32}};
  Builder b(k->body.get());
  Inst* count = b.arg(Scalar::I32, 1);
  auto task = std::make_unique<Inst>(Op::Offload, Scalar::Void);
  task->set_task_kind(ir::TaskKind::RangeFor);
  task->set_dims(1);
  task->operands = {b.i32(0), count};
  Inst* t = b.insert(std::move(task));
  t->regions.push_back(std::make_unique<ir::Block>(t));
  b.set_insert_end(t->region(0));
  b.atomic(ir::AtomicOp::Add, b.make(Op::ElementPtr, Scalar::I32, {b.const_int(Scalar::I64, 0)}, 0),
           b.i32(1));
  b.set_insert_end(k->body.get());
  auto s = std::make_unique<Inst>(Op::Offload, Scalar::Void);
  s->set_task_kind(ir::TaskKind::Serial);
  Inst* st = b.insert(std::move(s));
  st->regions.push_back(std::make_unique<ir::Block>(st));
  b.set_insert_end(st->region(0));
  b.make(Op::Return, Scalar::Void, {count});
  return k;
}

}  // namespace loom::test
