#include "compiler/ir/range_bound.h"

#include <cstdint>

namespace loom::ir {

namespace {

// A constant the code adds (or subtracts) in 32 bits; none when it does not fit.
std::optional<int32_t> addend(const Inst* c, bool negate) {
  if (c->op != Op::Const || !is_int(c->type) || bit_width(c->type) != 32) return std::nullopt;
  int64_t v = negate ? -c->int_value() : c->int_value();
  if (v < INT32_MIN || v > INT32_MAX) return std::nullopt;
  return static_cast<int32_t>(v);
}

std::optional<RangeBound> base_bound(const KernelABI& abi, const Inst* v) {
  if (v->op == Op::Const && is_int(v->type))
    return RangeBound{RangeBound::Kind::Const, v->int_value(), 0, 0};
  if (v->op == Op::ArgLoad && (v->type == Scalar::I32 || v->type == Scalar::U32) &&
      abi.params.at(static_cast<size_t>(v->param_index())).kind == ParamKind::Value)
    return RangeBound{RangeBound::Kind::Arg, v->param_index(),
                      static_cast<uint32_t>(v->byte_offset()), 0};
  if (v->op == Op::ResourceShape) {
    const ResourceDesc& r = abi.resources.at(static_cast<size_t>(v->resource_slot()));
    if (r.kind == ResourceKind::Field)
      return RangeBound{RangeBound::Kind::Const, r.shape[static_cast<size_t>(v->dimension())], 0,
                        0};
    return RangeBound{RangeBound::Kind::Shape, v->resource_slot(),
                      static_cast<uint32_t>(v->dimension()), 0};
  }
  return std::nullopt;
}

}  // namespace

std::optional<RangeBound> host_range_bound(const KernelABI& abi, const Inst* v) {
  // Constants added to a bound (at most a few: `shape - 1 + 1` after simplification is rare).
  uint32_t plus = 0;
  for (int depth = 0; depth < 4 && (v->op == Op::Add || v->op == Op::Sub) &&
                      (v->type == Scalar::I32 || v->type == Scalar::U32);
       ++depth) {
    std::optional<int32_t> c = addend(v->operand(1), v->op == Op::Sub);
    const Inst* rest = v->operand(0);
    if (!c && v->op == Op::Add) {
      c = addend(v->operand(0), false);
      rest = v->operand(1);
    }
    if (!c) break;
    plus += static_cast<uint32_t>(*c);  // wraps as the code's 32-bit arithmetic does
    v = rest;
  }
  std::optional<RangeBound> b = base_bound(abi, v);
  if (!b || plus == 0) return b;
  if (b->kind == RangeBound::Kind::Const) {
    // The code computes it in 32 bits: so does the host.
    b->value = static_cast<int32_t>(static_cast<uint32_t>(b->value) + plus);
    return b;
  }
  b->plus = static_cast<int32_t>(plus);
  return b;
}

}  // namespace loom::ir
