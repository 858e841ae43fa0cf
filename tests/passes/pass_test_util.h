// Shared helpers for the pass golden tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/ir/builder.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"

namespace loom::passes::testing {

inline std::unique_ptr<ir::Kernel> new_kernel(const std::string& name) {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = name;
  return k;
}

inline void add_value_param(ir::Kernel& k, const std::string& name, Scalar type) {
  k.abi.params.push_back(
      {name, ParamKind::Value, {type}, 0, -1, static_cast<uint32_t>(size_of(type))});
}

// An ndarray parameter and the resource slot bound to it; returns the slot.
inline int add_ndarray(ir::Kernel& k, const std::string& name, Scalar type, int ndim,
                       int components = 1, Layout layout = Layout::AoS) {
  k.abi.params.push_back(
      {name, ParamKind::Ndarray, {type, static_cast<uint8_t>(components), 1}, ndim, -1, 0});
  ResourceDesc r;
  r.kind = ResourceKind::Ndarray;
  r.dtype = type;
  r.components = components;
  r.ndim = ndim;
  r.layout = layout;
  r.param = static_cast<int>(k.abi.params.size()) - 1;
  k.abi.resources.push_back(r);
  return static_cast<int>(k.abi.resources.size()) - 1;
}

inline int add_field(ir::Kernel& k, const std::string& name, Scalar type,
                     std::initializer_list<int64_t> shape, int components = 1,
                     Layout layout = Layout::AoS) {
  ResourceDesc r;
  r.kind = ResourceKind::Field;
  r.dtype = type;
  r.components = components;
  r.ndim = static_cast<int>(shape.size());
  int d = 0;
  for (int64_t s : shape) r.shape[static_cast<size_t>(d++)] = s;
  r.layout = layout;
  r.field = name;
  k.abi.resources.push_back(r);
  return static_cast<int>(k.abi.resources.size()) - 1;
}

// Compares the printed kernel with a golden and checks it verifies.
inline void expect_ir(ir::Kernel& k, const std::string& golden, ir::VerifyOptions options = {}) {
  std::string actual = ir::print_kernel(k);
  EXPECT_EQ(actual, golden) << "@@ACTUAL\n" << actual << "@@END";
  EXPECT_EQ(ir::verify(k, options), "");
}

// Keeps values alive and visible: `return v0, v1, ...` with matching kernel returns.
inline void keep(ir::Builder& b, ir::Kernel& k, std::initializer_list<ir::Inst*> values) {
  auto r = std::make_unique<ir::Inst>(ir::Op::Return, Scalar::Void);
  for (ir::Inst* v : values) {
    r->operands.push_back(v);
    k.abi.returns.push_back({v->type});
  }
  b.insert(std::move(r));
}

// `op(x, y)` with its operands built in order: a braced list is evaluated left to right,
// function arguments are not (goldens must not depend on the compiler).
inline ir::Inst* op2(ir::Builder& b, ir::Op op, std::initializer_list<ir::Inst*> xy) {
  return b.binary(op, xy.begin()[0], xy.begin()[1]);
}

}  // namespace loom::passes::testing
