// Builds offloaded, lowered IR by hand, compiles it with the LLVM backend, loads it into the
// CPU runtime and launches it.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen_llvm/cpu_codegen.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/cpu/cpu_module.h"
#include "runtime/host/launch_frame.h"

namespace loom::test {

using ir::Builder;
using ir::Inst;
using ir::Op;

inline cpu::CpuModule& test_module() {
  static cpu::CpuModule module;
  return module;
}

inline cpu::CpuDevice& test_device() {
  static cpu::CpuDevice device(4);
  return device;
}

inline Inst* offload(Builder& b, ir::TaskKind kind, std::vector<Inst*> begin_end = {},
                     int slot = 0) {
  auto inst = std::make_unique<Inst>(Op::Offload, Scalar::Void);
  inst->set_task_kind(kind);
  if (kind == ir::TaskKind::RangeFor) inst->set_dims(static_cast<int32_t>(begin_end.size() / 2));
  if (kind == ir::TaskKind::StructFor) inst->set_resource_slot(slot);
  inst->operands = std::move(begin_end);
  Inst* raw = b.insert(std::move(inst));
  raw->regions.push_back(std::make_unique<ir::Block>(raw));
  return raw;
}

inline Inst* serial(Builder& b) { return offload(b, ir::TaskKind::Serial); }
inline Inst* range(Builder& b, std::vector<Inst*> begin_end) {
  return offload(b, ir::TaskKind::RangeFor, std::move(begin_end));
}

// element_ptr $slot (i64 index)
inline Inst* elem(Builder& b, Scalar type, int slot, Inst* index) {
  if (index->type != Scalar::I64) index = b.cast(Scalar::I64, index);
  return b.make(Op::ElementPtr, type, {index}, slot);
}
inline Inst* load(Builder& b, Scalar type, int slot, Inst* index) {
  return b.global_load(elem(b, type, slot, index));
}
inline void store(Builder& b, int slot, Inst* index, Inst* value) {
  b.global_store(elem(b, value->type, slot, index), value);
}
inline Inst* shape(Builder& b, int slot, int dim) {
  return b.make(Op::ResourceShape, Scalar::I32, {}, slot, dim);
}

inline ParamDesc value_param(const std::string& name, ValueType type) {
  ParamDesc p;
  p.name = name;
  p.kind = ParamKind::Value;
  p.type = type;
  p.size = static_cast<uint32_t>(size_of(type.scalar) * type.components());
  return p;
}

inline ParamDesc ndarray_param(const std::string& name, Scalar dtype, int ndim = 1) {
  ParamDesc p;
  p.name = name;
  p.kind = ParamKind::Ndarray;
  p.type = {dtype};
  p.ndim = ndim;
  return p;
}

// Adds an ndarray parameter and the resource slot it feeds; returns the slot.
inline int add_ndarray(ir::Kernel& k, const std::string& name, Scalar dtype, int ndim = 1) {
  k.abi.params.push_back(ndarray_param(name, dtype, ndim));
  ResourceDesc r;
  r.kind = ResourceKind::Ndarray;
  r.dtype = dtype;
  r.ndim = ndim;
  r.param = static_cast<int>(k.abi.params.size()) - 1;
  k.abi.resources.push_back(r);
  return static_cast<int>(k.abi.resources.size()) - 1;
}

inline int add_field(ir::Kernel& k, const std::string& name, Scalar dtype,
                     std::vector<int64_t> shape) {
  ResourceDesc r;
  r.kind = ResourceKind::Field;
  r.dtype = dtype;
  r.ndim = static_cast<int>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) r.shape[d] = shape[d];
  r.field = name;
  k.abi.resources.push_back(r);
  return static_cast<int>(k.abi.resources.size()) - 1;
}

inline std::shared_ptr<cpu::LoadedCpuKernel> compile_and_load(
    ir::Kernel& k, const codegen::CpuCodegenOptions& options = {}) {
  std::string problem = ir::verify(k, {.offloaded = true, .lowered = true});
  EXPECT_EQ(problem, "") << ir::print_kernel(k);
  codegen::CompiledCpuKernel compiled = codegen::compile_kernel_to_object(k, options);
  EXPECT_FALSE(compiled.object.empty());
  return test_module().load(compiled.abi, compiled.object);
}

}  // namespace loom::test
