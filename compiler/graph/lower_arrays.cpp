// Local arrays (a var node with a `length`) and indexing of vector and matrix components at
// run time (the element node): Taichi's dynamic indexing of ti.Vector / ti.Matrix and Warp's
// fixed-size local arrays.
#include <string>
#include <vector>

#include "compiler/graph/lowerer.h"

namespace loom::graph::detail {

namespace {

// A thread keeps its locals in registers or, once they are indexed at run time, on its stack
// (CPU) or in scratch memory (GPU), both small: the caps keep a kernel inside what every
// device gives one thread, and say so at the node instead of failing at launch.
constexpr int64_t kMaxArrayLength = 1024;
constexpr int64_t kMaxLocalArrayBytes = int64_t{16} * 1024;

int64_t scalar_bytes(Scalar s) { return s == Scalar::Bool ? 1 : bit_width(s) / 8; }

}  // namespace

Val Lowerer::node_array() {
  if (find_input(*node_, "init"))
    fail_here("init",
              "a var with a length is an array and starts zeroed; set its elements "
              "with set nodes instead of 'init'");
  if (!param("type")) fail_here("type", "an array (a var with a length) needs a 'type' parameter");
  ValueType t = param_type("type");
  int64_t length = param_int("length", 0);
  if (length < 1 || length > kMaxArrayLength)
    fail_here("length", "an array's length is 1 to " + std::to_string(kMaxArrayLength) + ", not " +
                            std::to_string(length));
  int64_t bytes = length * t.components() * scalar_bytes(t.scalar);
  local_array_bytes_ += bytes;
  if (local_array_bytes_ > kMaxLocalArrayBytes)
    fail_here("length", "local arrays take at most 16 KiB per thread; this array of " +
                            std::to_string(length) + " " + tname(t) + " (" + std::to_string(bytes) +
                            " bytes) brings the kernel's to " + std::to_string(local_array_bytes_) +
                            " bytes");
  Val ref;
  ref.kind = Val::Kind::Ref;
  ref.type = t;
  ref.length = static_cast<int>(length);
  ref.c.push_back(
      B().make(Op::LocalArray, t.scalar, {}, static_cast<int32_t>(length), t.components()));
  return ref;
}

Inst* Lowerer::local_index(const Val& v, const std::string& pin, int extent, int dim) {
  expect_value(v, pin);
  // u32 indices are accepted as they are for fields: one too large for i32 turns negative,
  // which the debug check reports and the clamp sends to element 0.
  bool u32_index = !v.weak && v.type.scalar == Scalar::U32;
  if (!v.type.is_scalar() || is_float(v.type.scalar) ||
      (!u32_index && !implicit_ok(v, Scalar::I32)))
    fail_here(pin, "index '" + pin + "' is " +
                       (v.weak ? "a " + tname(v.type) + " literal" : tname(v.type)) +
                       "; indices are i32, u32 or narrower integers (add a cast node)");
  if (v.weak) {
    // A constant index is checked now, in every build.
    if (v.ilit.empty()) fail_here(pin, "index '" + pin + "' must be a whole number");
    const IntLit& k = v.ilit[0];
    if (k.above_int64 || k.value < 0 || k.value >= extent)
      fail_here(pin, "index " + k.text() + " is outside [0, " + std::to_string(extent) + ")");
    return B().i32(k.value);
  }
  Inst* i = u32_index ? B().cast(Scalar::I32, v.c[0]) : comps(v, Scalar::I32, -1, pin)[0];
  // Debug kernels report an index out of range; drop_asserts removes the check otherwise,
  // and the access clamps the index into range.
  B().make(Op::BoundsCheck, Scalar::Void, {i, B().i32(extent)}, -1, dim);
  return i;
}

Val Lowerer::array_get(const Val& ref) {
  auto index = opt_input("index");
  if (!index)
    fail_here("index", "pin 'var' is linked to an array (a var with a length): give 'index'");
  Inst* i = local_index(*index, "index", ref.length, 0);
  std::vector<Inst*> c;
  c.reserve(static_cast<size_t>(ref.type.components()));
  for (int k = 0; k < ref.type.components(); ++k)
    c.push_back(B().make(Op::ArrayLoad, ref.type.scalar, {ref.c[0], i}, k));
  return value(ref.type, c);
}

void Lowerer::array_set(const Val& ref, const Val& v) {
  auto index = opt_input("index");
  if (!index)
    fail_here("index", "pin 'var' is linked to an array (a var with a length): give 'index'");
  Inst* i = local_index(*index, "index", ref.length, 0);
  Val x = convert(v, ref.type, "value");
  for (int k = 0; k < ref.type.components(); ++k)
    B().make(Op::ArrayStore, Scalar::Void, {ref.c[0], i, x.c[static_cast<size_t>(k)]}, k);
}

Outs Lowerer::lower_element(const NodeType& t) {
  std::vector<Val> a = {input_value("v"), input_value("i")};
  Pins pins = {"v", "i"};
  if (auto j = opt_input("j")) {
    expect_value(*j, "j");
    a.push_back(*j);
    pins.emplace_back("j");
  }
  return one(apply(t, std::move(a), pins));
}

// A chain of selects rather than a trip through memory: at most 16 components, so at most
// 15 compares and selects that stay in registers on both backends, where an array indexed at
// run time goes to the stack (CPU) or to scratch memory (GPU). `index <= k` picks component k
// from the lowest k up, which also clamps: a negative index gives component 0, one past the
// end the last component, like a local array's index.
Val Lowerer::op_element(const NodeType&, const std::vector<Val>& a, const Pins& pins) {
  if (a.size() < 2 || a.size() > 3)
    fail_here(pins.empty() ? "" : pins[0],
              "'element' takes 2 arguments (vector, i) or 3 (matrix, i, j)");
  const ValueType vt_in = a[0].type;
  bool matrix = vt_in.is_matrix();
  if (!matrix && !vt_in.is_vector())
    fail_here(pins[0], "element indexes a vector or a matrix, not " + tname(vt_in));
  if (matrix && a.size() == 2)
    fail_here(pins[1], "a matrix takes two indices, row i and column j (as Taichi's M[i, j])");
  if (!matrix && a.size() == 3) fail_here(pins[2], "a vector takes one index, i");
  int rows = vt_in.rows, cols = vt_in.cols;
  Val m = materialize(a[0], pins[0]);
  Inst* i = local_index(a[1], pins[1], rows, 0);
  Inst* j = matrix ? local_index(a[2], pins[2], cols, 1) : nullptr;
  auto pick = [&](const std::vector<Inst*>& xs, Inst* index) {
    Inst* acc = xs.back();
    for (int k = static_cast<int>(xs.size()) - 2; k >= 0; --k)
      acc = B().select(B().binary(Op::Le, index, B().i32(k)), xs[static_cast<size_t>(k)], acc);
    return acc;
  };
  std::vector<Inst*> in_column;  // row i of each column (components are column-major)
  for (int col = 0; col < cols; ++col) {
    auto first = m.c.begin() + static_cast<std::ptrdiff_t>(col) * rows;
    in_column.push_back(pick(std::vector<Inst*>(first, first + rows), i));
  }
  return value(vt(vt_in.scalar), {matrix ? pick(in_column, j) : in_column[0]});
}

}  // namespace loom::graph::detail
