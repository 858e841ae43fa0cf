#include "compiler/ir/element_index.h"

#include <cstdlib>
#include <utility>

namespace loom::ir {

namespace {

// Offsets past this are not worth a check (and would not fit the ABI's i32 range).
constexpr int64_t kMaxOffset = int64_t{1} << 30;

// Integer casts that keep every value (lowering widens i32 indices to the index type).
const Inst* strip_widening(const Inst* v) {
  while (v->op == Op::Cast && is_int(v->type) && is_int(v->operand(0)->type)) {
    Scalar from = v->operand(0)->type;
    Scalar to = v->type;
    bool keeps = is_signed_int(from) == is_signed_int(to)
                     ? bit_width(to) >= bit_width(from)
                     : is_unsigned_int(from) && bit_width(to) > bit_width(from);
    if (!keeps) break;
    v = v->operand(0);
  }
  return v;
}

bool small_const(const Inst* v, int64_t* out) {
  v = strip_widening(v);
  if (v->op != Op::Const || !is_int(v->type)) return false;
  if (is_unsigned_int(v->type) && v->int_value() < 0) return false;  // a huge unsigned value
  if (std::llabs(v->int_value()) >= kMaxOffset) return false;
  *out = v->int_value();
  return true;
}

bool is_extent(const Inst* e, const ResourceDesc& r, int32_t slot, int dim) {
  e = strip_widening(e);
  if (r.kind == ResourceKind::Field)
    return e->op == Op::Const && is_int(e->type) &&
           e->int_value() == r.shape[static_cast<size_t>(dim)];
  return e->op == Op::ResourceShape && e->resource_slot() == slot && e->dimension() == dim;
}

// When `v` multiplies something by `factor` (a Mul, or a Shl by its log2 when `factor` is a
// constant power of two), that something; else null. `is_factor` tests an operand.
template <typename IsFactor>
const Inst* unscale(const Inst* v, IsFactor&& is_factor, int64_t constant_factor) {
  v = strip_widening(v);
  if (v->op == Op::Mul) {
    bool left = is_factor(v->operand(0)), right = is_factor(v->operand(1));
    if (left != right) return left ? v->operand(1) : v->operand(0);
    return nullptr;
  }
  int64_t k = 0;
  if (v->op == Op::Shl && constant_factor > 1 && small_const(v->operand(1), &k) && k > 0 &&
      k < 62 && (int64_t{1} << k) == constant_factor)
    return v->operand(0);
  return nullptr;
}

}  // namespace

// null: the constant 0 (lowering folded that index away).
bool affine(const Inst* v, Affine* out) {
  if (!v) {
    *out = {};
    return true;
  }
  v = strip_widening(v);
  int64_t k = 0;
  if (small_const(v, &k)) {
    *out = {nullptr, 0, k};
    return true;
  }
  if (v->op == Op::LoopIndex) {
    *out = {v->operand(0), v->dimension(), 0};
    return true;
  }
  if (v->op != Op::Add && v->op != Op::Sub) return false;
  const Inst* a = v->operand(0);
  const Inst* b = v->operand(1);
  if (v->op == Op::Add && !small_const(b, &k)) std::swap(a, b);
  if (!small_const(b, &k)) return false;
  Affine inner;
  if (!affine(a, &inner) || !inner.loop) return false;
  inner.c += v->op == Op::Add ? k : -k;
  if (std::llabs(inner.c) >= kMaxOffset) return false;
  *out = inner;
  return true;
}

// The N-d index of an element offset as lower_access builds it: ((i0 * e1 + i1) * e2 + i2)
// ..., times the components plus the component for AoS vectors. False when the offset has
// another shape (or two readings): its dimensions are then unchecked.
bool delinearize(const Inst* linear, int32_t slot, const ResourceDesc& r,
                 std::vector<const Inst*>* index) {
  const Inst* l = strip_widening(linear);
  if (r.components > 1) {
    // SoA offsets add the component times the element count, which for fields is a constant
    // an index offset could be mistaken for.
    if (r.layout != Layout::AoS) return false;
    int64_t k = 0;
    if (l->op == Op::Add && small_const(l->operand(1), &k) && k >= 0 && k < r.components)
      l = strip_widening(l->operand(0));
    auto is_components = [&](const Inst* f) {
      int64_t c = 0;
      return small_const(f, &c) && c == r.components;
    };
    l = unscale(l, is_components, r.components);
    if (!l) return false;
  }
  index->assign(static_cast<size_t>(r.ndim), nullptr);
  for (int d = r.ndim - 1; d >= 1; --d) {
    auto is_e = [&](const Inst* f) { return is_extent(f, r, slot, d); };
    int64_t constant_e = r.kind == ResourceKind::Field ? r.shape[static_cast<size_t>(d)] : 0;
    l = strip_widening(l);
    const Inst* rest = nullptr;
    if (l->op == Op::Add) {
      const Inst* a = unscale(l->operand(0), is_e, constant_e);
      const Inst* b = unscale(l->operand(1), is_e, constant_e);
      if ((a == nullptr) == (b == nullptr)) return false;  // none, or two readings
      (*index)[static_cast<size_t>(d)] = a ? l->operand(1) : l->operand(0);
      rest = a ? a : b;
    } else {
      rest = unscale(l, is_e, constant_e);  // index d was 0, folded away
      if (!rest) return false;
    }
    l = rest;
  }
  if (r.ndim >= 1) (*index)[0] = l;
  return true;
}

}  // namespace loom::ir
