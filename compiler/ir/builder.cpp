#include "compiler/ir/builder.h"

namespace loom::ir {

Inst* Builder::insert(std::unique_ptr<Inst> inst) {
  if (inst->node < 0) inst->node = node_;
  Inst* raw = block_->insert(pos_, std::move(inst));
  ++pos_;
  return raw;
}

Inst* Builder::make(Op op, Scalar type, std::initializer_list<Inst*> operands, int32_t attr0,
                    int32_t attr1) {
  auto inst = std::make_unique<Inst>(op, type);
  inst->operands.assign(operands.begin(), operands.end());
  inst->attr0_ = attr0;
  inst->attr1_ = attr1;
  return insert(std::move(inst));
}

Inst* Builder::const_int(Scalar type, int64_t value) { return insert(make_const_int(type, value)); }
Inst* Builder::const_float(Scalar type, double value) { return insert(make_const(type, value)); }
Inst* Builder::const_bool(bool value) { return const_int(Scalar::Bool, value); }

Inst* Builder::arg(Scalar type, int param, int offset) {
  return make(Op::ArgLoad, type, {}, param, offset);
}

Inst* Builder::unary(Op op, Inst* a) {
  return make(op, op == Op::LogicNot ? Scalar::Bool : a->type, {a});
}

Inst* Builder::binary(Op op, Inst* a, Inst* b) {
  bool boolean = is_comparison(op) || op == Op::LogicAnd || op == Op::LogicOr;
  return make(op, boolean ? Scalar::Bool : a->type, {a, b});
}

Inst* Builder::cast(Scalar to, Inst* a) { return make(Op::Cast, to, {a}); }
Inst* Builder::select(Inst* c, Inst* a, Inst* b) { return make(Op::Select, a->type, {c, a, b}); }

Inst* Builder::alloca_(Scalar type) { return make(Op::Alloca, type); }
Inst* Builder::local_load(Inst* var) { return make(Op::LocalLoad, var->type, {var}); }
Inst* Builder::local_store(Inst* var, Inst* value) {
  return make(Op::LocalStore, Scalar::Void, {var, value});
}

Inst* Builder::global_ptr(Scalar type, int slot, std::initializer_list<Inst*> indices,
                          int component) {
  return global_ptr(type, slot, std::vector<Inst*>(indices), component);
}

Inst* Builder::global_ptr(Scalar type, int slot, const std::vector<Inst*>& indices, int component) {
  auto inst = std::make_unique<Inst>(Op::GlobalPtr, type);
  inst->operands = indices;
  inst->set_resource_slot(slot);
  inst->set_component(component);
  return insert(std::move(inst));
}

Inst* Builder::global_load(Inst* ptr) { return make(Op::GlobalLoad, ptr->type, {ptr}); }
Inst* Builder::global_store(Inst* ptr, Inst* value) {
  return make(Op::GlobalStore, Scalar::Void, {ptr, value});
}
Inst* Builder::atomic(AtomicOp op, Inst* ptr, Inst* value) {
  return make(Op::AtomicRMW, ptr->type, {ptr, value}, static_cast<int32_t>(op));
}

Inst* Builder::add_regions(Inst* inst, int count) {
  for (int i = 0; i < count; ++i) inst->regions.push_back(std::make_unique<Block>(inst));
  return inst;
}

Inst* Builder::if_(Inst* cond) { return add_regions(make(Op::If, Scalar::Void, {cond}), 2); }

Inst* Builder::range_for(const std::vector<Inst*>& begin_end) {
  auto inst = std::make_unique<Inst>(Op::RangeFor, Scalar::Void);
  inst->operands = begin_end;
  inst->set_dims(static_cast<int32_t>(begin_end.size() / 2));
  return add_regions(insert(std::move(inst)), 1);
}

Inst* Builder::struct_for(int slot, int ndim) {
  return add_regions(make(Op::StructFor, Scalar::Void, {}, slot, ndim), 1);
}

Inst* Builder::while_() { return add_regions(make(Op::While, Scalar::Void), 1); }

Inst* Builder::loop_index(Inst* loop, int dim) {
  return make(Op::LoopIndex, Scalar::I32, {loop}, dim);
}

}  // namespace loom::ir
