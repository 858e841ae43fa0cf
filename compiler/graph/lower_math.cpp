#include "compiler/graph/lowerer.h"
#include "compiler/ir/work_count.h"

#include "runtime/common/error.h"

namespace loom::graph::detail {
namespace {

// Index of element (row, col) of a matrix with `rows` rows, stored column by column.
size_t column_major(int row, int col, int rows) {
  return static_cast<size_t>(col) * static_cast<size_t>(rows) + static_cast<size_t>(row);
}

}  // namespace

ValueType Lowerer::broadcast(const std::vector<Val>& args, const std::vector<std::string>& pins) {
  ValueType shape = vt(Scalar::Void);
  size_t first = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].type.is_scalar()) continue;
    if (shape.scalar == Scalar::Void) {
      shape = args[i].type;
      first = i;
      continue;
    }
    if (args[i].type.rows != shape.rows || args[i].type.cols != shape.cols)
      fail_here(pins[i], "'" + pins[first] + "' is " + tname(args[first].type) + " but '" +
                             pins[i] + "' is " + tname(args[i].type) + "; sizes must match");
  }
  return shape.scalar == Scalar::Void ? vt(Scalar::Void) : shape;
}

Val Lowerer::elementwise(const std::vector<Val>& args, const std::vector<std::string>& pins,
                         Scalar operand, Scalar result,
                         const std::function<Inst*(const std::vector<Inst*>&)>& f) {
  ValueType shape = broadcast(args, pins);
  int n = shape.scalar == Scalar::Void ? 1 : shape.components();
  std::vector<std::vector<Inst*>> cs;
  cs.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) cs.push_back(comps(args[i], operand, n, pins[i]));
  std::vector<Inst*> out;
  for (int i = 0; i < n; ++i) {
    std::vector<Inst*> ops;
    ops.reserve(cs.size());
    for (auto& c : cs) ops.push_back(c[static_cast<size_t>(i)]);
    out.push_back(f(ops));
  }
  ValueType t = shape.scalar == Scalar::Void ? vt(result) : vt(result, shape.rows, shape.cols);
  return value(t, std::move(out));
}

Scalar Lowerer::common_of(const std::vector<Val>& args) {
  Val acc = args[0];
  for (size_t i = 1; i < args.size(); ++i) {
    Scalar s = common(acc, args[i]);
    bool w = acc.weak && args[i].weak;
    acc.type.scalar = s;
    acc.weak = w;
  }
  return acc.type.scalar;
}

Scalar Lowerer::numeric(Scalar s) { return s == Scalar::Bool ? Scalar::I32 : s; }

Scalar Lowerer::floating(Scalar s) { return is_float(s) ? s : Scalar::F32; }

Val Lowerer::apply(const NodeType& t, std::vector<Val> a, const Pins& pins) {
  size_t values = a.size();
  if (values > 0 && a.back().type_name) {
    --values;
    if (!t.type_arg) fail_here(pins.back(), "'" + t.spec->name + "' takes no type argument");
  }
  for (size_t i = 0; i < values; ++i) {
    if (a[i].type_name)
      fail_here(pins[i], "the type " + tname(a[i].type) + " is no value; a type is the last " +
                             "argument of cast(x, u8) or vec2..vec4");
    expect_value(a[i], pins[i]);
  }
  if (!t.any_arity) check_arity(t, values, pins);
  return (this->*t.value)(t, a, pins);
}

// A formula call takes as many arguments as the node type has input pins.
void Lowerer::check_arity(const NodeType& t, size_t values, const Pins& pins) {
  size_t n = t.spec->inputs.size();
  if (values == n) return;
  fail_here(pins.empty() ? "" : pins[0], "'" + t.spec->name + "' takes " + std::to_string(n) +
                                             " argument" + (n == 1 ? "" : "s") +
                                             (t.type_arg ? " and a type" : "") + ", not " +
                                             std::to_string(values));
}

Outs Lowerer::lower_operation(const NodeType& t) {
  std::vector<Val> a;
  Pins pins;
  const PinSpec* absent = nullptr;  // the first optional pin left empty
  for (const PinSpec& p : t.spec->inputs) {
    std::optional<Val> v = p.required ? std::optional<Val>(input_value(p.name)) : opt_input(p.name);
    if (!v) {
      if (!absent) absent = &p;
      continue;
    }
    if (absent) {
      std::string order;
      for (const PinSpec& q : t.spec->inputs) order += (order.empty() ? "" : ", ") + q.name;
      fail_here(absent->name, "input '" + absent->name + "' of this " + t.spec->name +
                                  " node needs a link or a value: '" + p.name +
                                  "' has one, and the inputs fill " + order + " in order");
    }
    a.push_back(*v);
    pins.push_back(p.name);
  }
  if (t.type_arg) {
    const ParamSpec* declared = t.spec->param("type");
    if (param("type") || (declared && declared->required)) {
      a.push_back(type_value(param_type("type")));
      pins.push_back("type");
    }
  }
  return one(apply(t, std::move(a), pins));
}

Lowerer::ElementOp Lowerer::binary_op(Op o) {
  return [this, o](const std::vector<Inst*>& x) { return B().binary(o, x[0], x[1]); };
}

Lowerer::ElementOp Lowerer::unary_op(Op o) {
  return [this, o](const std::vector<Inst*>& x) { return B().unary(o, x[0]); };
}

Val Lowerer::op_arithmetic(const NodeType& t, const std::vector<Val>& a, const Pins& pins) {
  Scalar s = numeric(common_of(a));
  return elementwise(a, pins, s, s, binary_op(t.op));
}

Val Lowerer::op_compare(const NodeType& t, const std::vector<Val>& a, const Pins& pins) {
  Scalar s = common_of(a);
  return elementwise(a, pins, s, Scalar::Bool, binary_op(t.op));
}

Val Lowerer::op_float_unary(const NodeType& t, const std::vector<Val>& a, const Pins& pins) {
  Scalar s = floating(a[0].type.scalar);
  return elementwise(a, pins, s, s, unary_op(t.op));
}

Val Lowerer::op_float_binary(const NodeType& t, const std::vector<Val>& a, const Pins& pins) {
  Scalar s = floating(common_of(a));
  return elementwise(a, pins, s, s, binary_op(t.op));
}

// and / or / xor: logic on bools, bitwise on integers (the table gives the bitwise op).
Val Lowerer::op_logic(const NodeType& t, const std::vector<Val>& a, const Pins& pins) {
  Scalar s = common_of(a);
  if (is_float(s))
    fail_here(pins[0],
              "'" + t.spec->name + "' needs bools or integers, not " + scalar_name(s).data());
  Op o = t.op;
  if (s == Scalar::Bool)
    o = t.op == Op::BitAnd ? Op::LogicAnd : t.op == Op::BitOr ? Op::LogicOr : Op::Ne;
  return elementwise(a, pins, s, s, binary_op(o));
}

Val Lowerer::op_shift(const NodeType& t, const std::vector<Val>& a, const Pins& pins) {
  Scalar s = common_of(a);
  if (!is_int(s)) fail_here(pins[0], "'" + t.spec->name + "' needs integers");
  return elementwise(a, pins, s, s, binary_op(t.op));
}

Val Lowerer::op_numeric_unary(const NodeType& t, const std::vector<Val>& a, const Pins& pins) {
  if (t.op == Op::Neg && a[0].weak) return negate_literal(a[0]);  // -2147483648
  Scalar s = numeric(a[0].type.scalar);
  return elementwise(a, pins, s, s, unary_op(t.op));
}

Val Lowerer::op_not(const NodeType&, const std::vector<Val>& a, const Pins& pins) {
  Scalar s = a[0].type.scalar;
  if (is_float(s)) fail_here(pins[0], "'not' needs a bool or an integer");
  return elementwise(a, pins, s, s, unary_op(s == Scalar::Bool ? Op::LogicNot : Op::BitNot));
}

Val Lowerer::op_fract(const NodeType&, const std::vector<Val>& a, const Pins& pins) {
  Scalar s = floating(a[0].type.scalar);
  return elementwise(a, pins, s, s, [this](const std::vector<Inst*>& x) {
    return B().binary(Op::Sub, x[0], B().unary(Op::Floor, x[0]));
  });
}

Val Lowerer::op_clamp(const NodeType&, const std::vector<Val>& a, const Pins& pins) {
  Scalar s = numeric(common_of(a));
  return elementwise(a, pins, s, s, [this](const std::vector<Inst*>& x) {
    return B().binary(Op::Min, B().binary(Op::Max, x[0], x[1]), x[2]);
  });
}

Val Lowerer::op_mix(const NodeType&, const std::vector<Val>& a, const Pins& pins) {
  Scalar s = floating(common_of(a));
  return elementwise(a, pins, s, s, [this](const std::vector<Inst*>& x) {
    return B().binary(Op::Add, x[0], B().binary(Op::Mul, B().binary(Op::Sub, x[1], x[0]), x[2]));
  });
}

Val Lowerer::op_fma(const NodeType&, const std::vector<Val>& a, const Pins& pins) {
  Scalar s = numeric(common_of(a));
  return elementwise(a, pins, s, s, [this, s](const std::vector<Inst*>& x) {
    return B().make(Op::Fma, s, {x[0], x[1], x[2]});
  });
}

Val Lowerer::op_select(const NodeType&, const std::vector<Val>& a, const Pins& pins) {
  if (is_float(a[0].type.scalar)) fail_here(pins[0], "the condition of select must be a bool");
  Scalar t = common_of({a[1], a[2]});
  ValueType shape = broadcast(a, pins);
  int n = shape.scalar == Scalar::Void ? 1 : shape.components();
  auto c = comps(a[0], Scalar::Bool, n, pins[0]);
  auto x = comps(a[1], t, n, pins[1]);
  auto y = comps(a[2], t, n, pins[2]);
  std::vector<Inst*> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back(B().select(c[i], x[i], y[i]));
  return value(shape.scalar == Scalar::Void ? vt(t) : vt(t, shape.rows, shape.cols), out);
}

// a // b, the floor of the quotient (Python's and Taichi's //). Integers: the truncating
// quotient moves down by one when the division is inexact (a nonzero remainder) and the
// operands' signs differ, so -7 // 2 is -4; x // 0 is 0 and MIN // -1 wraps, as with div.
// Floats: floor(a / b).
Val Lowerer::op_floordiv(const NodeType&, const std::vector<Val>& a, const Pins& pins) {
  Scalar s = numeric(common_of(a));
  if (is_float(s))
    return elementwise(a, pins, s, s, [this](const std::vector<Inst*>& x) {
      return B().unary(Op::Floor, B().binary(Op::Div, x[0], x[1]));
    });
  if (is_unsigned_int(s)) return elementwise(a, pins, s, s, binary_op(Op::Div));
  return elementwise(a, pins, s, s, [this, s](const std::vector<Inst*>& x) {
    Inst* quotient = B().binary(Op::Div, x[0], x[1]);
    Inst* zero = B().const_int(s, 0);
    Inst* inexact = B().binary(Op::Ne, B().binary(Op::Mod, x[0], x[1]), zero);
    // One statement each, so the IR's order does not depend on argument evaluation order.
    Inst* a_negative = B().binary(Op::Lt, x[0], zero);
    Inst* b_negative = B().binary(Op::Lt, x[1], zero);
    Inst* signs_differ = B().binary(Op::Ne, a_negative, b_negative);
    Inst* down = B().binary(Op::LogicAnd, inexact, signs_differ);
    return B().select(down, B().binary(Op::Sub, quotient, B().const_int(s, 1)), quotient);
  });
}

// cast: the last argument is the type (the node's param, a formula's cast(x, u8)).
Val Lowerer::op_cast(const NodeType&, const std::vector<Val>& a, const Pins& pins) {
  if (a.size() != 2 || !a[1].type_name)
    fail_here(pins.empty() ? "" : pins[0], "cast needs the type to convert to: cast(x, u8)");
  return explicit_cast(a[0], a[1].type, pins[0]);
}

// vec2..vec4: the components of scalars and vectors, concatenated, or one scalar for every
// component (vec3(0.5)); an optional last type argument sets the component type.
Val Lowerer::op_vector(const NodeType& t, const std::vector<Val>& a, const Pins& pins) {
  std::vector<Val> parts(a.begin(), a.end());
  std::optional<Scalar> s;
  if (!parts.empty() && parts.back().type_name) {
    s = parts.back().type.scalar;
    parts.pop_back();
  }
  if (parts.empty()) fail_here(pins.empty() ? "" : pins[0], t.spec->name + " needs components");
  Scalar scalar = s ? *s : numeric(common_of(parts));
  int n = static_cast<int>(t.spec->inputs.size());
  if (parts.size() == 1 && parts[0].type.is_scalar())
    return value(vt(scalar, n), comps(parts[0], scalar, n, pins[0]));
  return construct(t, parts, pins, scalar);
}

Val Lowerer::op_dot(const NodeType&, const std::vector<Val>& a, const Pins& pins) {
  return dot(a[0], a[1], pins);
}

Val Lowerer::op_cross(const NodeType&, const std::vector<Val>& a, const Pins& pins) {
  if (a[0].type != vt(a[0].type.scalar, 3) || a[1].type != vt(a[1].type.scalar, 3))
    fail_here(pins[0],
              "cross needs two 3-vectors, got " + tname(a[0].type) + " and " + tname(a[1].type));
  Scalar t = numeric(common_of(a));
  auto x = comps(a[0], t, -1, pins[0]), y = comps(a[1], t, -1, pins[1]);
  auto term = [&](int i, int j) {
    return B().binary(Op::Sub, B().binary(Op::Mul, x[i], y[j]), B().binary(Op::Mul, x[j], y[i]));
  };
  return value(vt(t, 3), {term(1, 2), term(2, 0), term(0, 1)});
}

Val Lowerer::op_matmul(const NodeType&, const std::vector<Val>& a, const Pins& pins) {
  return matmul(a[0], a[1], pins);
}

Val Lowerer::op_length(const NodeType&, const std::vector<Val>& a, const Pins& pins) {
  Val d = dot(a[0], a[0], {pins[0], pins[0]});
  Scalar t = floating(d.type.scalar);
  return value(vt(t), {B().unary(Op::Sqrt, comps(d, t, -1, pins[0])[0])});
}

Val Lowerer::op_normalize(const NodeType&, const std::vector<Val>& a, const Pins& pins) {
  Val d = dot(a[0], a[0], {pins[0], pins[0]});
  Scalar t = floating(d.type.scalar);
  Inst* len = B().unary(Op::Sqrt, comps(d, t, -1, pins[0])[0]);
  std::vector<Inst*> out;
  for (Inst* x : comps(a[0], t, -1, pins[0])) out.push_back(B().binary(Op::Div, x, len));
  return value(vt(t, a[0].type.rows), out);
}

Val Lowerer::op_transpose(const NodeType&, const std::vector<Val>& a, const Pins& pins) {
  Val m = materialize(a[0], pins[0]);
  int r = m.type.rows, c = m.type.cols;
  std::vector<Inst*> t(static_cast<size_t>(r * c));
  for (int col = 0; col < c; ++col)
    for (int row = 0; row < r; ++row) t[column_major(col, row, c)] = m.c[column_major(row, col, r)];
  return value(vt(m.type.scalar, c, r), t);
}

Lowerer::Rows Lowerer::square_rows(const NodeType& t, const Val& m, Scalar element,
                                   const std::string& pin) {
  if (!m.type.is_matrix() || m.type.rows != m.type.cols)
    fail_here(pin, t.spec->name + " needs a square matrix (2x2 to 4x4), got " + tname(m.type));
  int n = m.type.rows;
  auto c = comps(m, element, -1, pin);
  Rows rows(static_cast<size_t>(n), std::vector<Inst*>(static_cast<size_t>(n)));
  for (int col = 0; col < n; ++col)
    for (int row = 0; row < n; ++row) rows[row][col] = c[column_major(row, col, n)];
  return rows;
}

Val Lowerer::op_determinant(const NodeType& t, const std::vector<Val>& a, const Pins& pins) {
  Scalar s = floating(a[0].type.scalar);
  Rows rows = square_rows(t, a[0], s, pins[0]);
  return value(vt(s), {det(rows)});
}

Val Lowerer::op_inverse(const NodeType& t, const std::vector<Val>& a, const Pins& pins) {
  Scalar s = floating(a[0].type.scalar);
  Rows rows = square_rows(t, a[0], s, pins[0]);
  int n = static_cast<int>(rows.size());
  Inst* d = det(rows);
  Inst* inv_d = B().binary(Op::Div, B().const_float(s, 1.0), d);
  std::vector<Inst*> out(static_cast<size_t>(n * n));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      // inverse[i][j] = cofactor(j, i) / det
      Inst* cof = det(minor(rows, j, i));
      if ((i + j) % 2) cof = B().unary(Op::Neg, cof);
      out[column_major(i, j, n)] = B().binary(Op::Mul, cof, inv_d);
    }
  return value(vt(s, n, n), out);
}

// outer(a, b)[i][j] = a[i] * b[j]: an n x m matrix (rows from a, columns from b), stored
// column-major, so column j is b[j] * a.
Val Lowerer::op_outer(const NodeType&, const std::vector<Val>& a, const Pins& pins) {
  if (!a[0].type.is_vector() || !a[1].type.is_vector())
    fail_here(pins[0], "outer needs two vectors (2 to 4 components each), got " + tname(a[0].type) +
                           " and " + tname(a[1].type));
  Scalar s = numeric(common(a[0], a[1]));
  auto x = comps(a[0], s, -1, pins[0]), y = comps(a[1], s, -1, pins[1]);
  int n = a[0].type.rows, m = a[1].type.rows;
  std::vector<Inst*> out(static_cast<size_t>(n * m));
  for (int col = 0; col < m; ++col)
    for (int row = 0; row < n; ++row)
      out[column_major(row, col, n)] = B().binary(Op::Mul, x[row], y[col]);
  return value(vt(s, n, m), out);
}

Val Lowerer::op_trace(const NodeType& t, const std::vector<Val>& a, const Pins& pins) {
  Scalar s = numeric(a[0].type.scalar);
  Rows rows = square_rows(t, a[0], s, pins[0]);
  Inst* sum = rows[0][0];
  for (size_t i = 1; i < rows.size(); ++i) sum = B().binary(Op::Add, sum, rows[i][i]);
  return value(vt(s), {sum});
}

Val Lowerer::construct(const NodeType& t, const std::vector<Val>& a, const Pins& pins, Scalar s) {
  int n = static_cast<int>(t.spec->inputs.size());
  std::vector<Inst*> out;
  std::string given;  // "x is f32, y is f32x3"
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].type.is_matrix())
      fail_here(pins[i], t.spec->name + " is built from scalars and vectors; '" + pins[i] +
                             "' is the matrix " + tname(a[i].type) +
                             " (a column is m.c0 in a formula, or an output of split)");
    for (Inst* x : comps(a[i], s, -1, pins[i])) out.push_back(x);
    given += (given.empty() ? "" : ", ") + pins[i] + " is " + tname(a[i].type);
    if (static_cast<int>(out.size()) > n)
      fail_here(pins[i], t.spec->name + " takes " + std::to_string(n) + " components, but " +
                             given + ": " + std::to_string(out.size()) + " so far");
  }
  if (static_cast<int>(out.size()) < n) {
    // A node misses the next pin; a formula names its argument list.
    std::string missing = a.size() < t.spec->inputs.size() ? t.spec->inputs[a.size()].name : "";
    fail_here(missing.empty() ? pins.back() : missing,
              t.spec->name + " needs " + std::to_string(n) + " components, but " + given + ": " +
                  std::to_string(out.size()) + " in all");
  }
  return value(vt(s, n), out);
}

Val Lowerer::dot(const Val& x, const Val& y, const std::vector<std::string>& pins) {
  if (!x.type.is_vector() || !y.type.is_vector() || x.type.rows != y.type.rows)
    fail_here(pins[0],
              "dot needs two vectors of one size, got " + tname(x.type) + " and " + tname(y.type));
  Scalar t = numeric(common(x, y));
  auto a = comps(x, t, -1, pins[0]), b = comps(y, t, -1, pins[1]);
  Inst* sum = B().binary(Op::Mul, a[0], b[0]);
  for (size_t i = 1; i < a.size(); ++i)
    sum = B().binary(Op::Add, sum, B().binary(Op::Mul, a[i], b[i]));
  return value(vt(t), {sum});
}

Val Lowerer::matmul(const Val& x, const Val& y, const std::vector<std::string>& pins) {
  if (!x.type.is_matrix() || y.type.is_scalar() || x.type.cols != y.type.rows)
    fail_here(pins[0], "matmul needs a matrix and a matrix or vector of matching size, got " +
                           tname(x.type) + " and " + tname(y.type));
  Scalar t = numeric(common(x, y));
  auto a = comps(x, t, -1, pins[0]), b = comps(y, t, -1, pins[1]);
  int r = x.type.rows, k = x.type.cols, c = y.type.cols;
  std::vector<Inst*> out;
  for (int col = 0; col < c; ++col)
    for (int row = 0; row < r; ++row) {
      Inst* sum = nullptr;
      for (int i = 0; i < k; ++i) {
        Inst* p = B().binary(Op::Mul, a[column_major(row, i, r)], b[column_major(i, col, k)]);
        sum = sum ? B().binary(Op::Add, sum, p) : p;
      }
      out.push_back(sum);
    }
  return value(vt(t, r, c), out);
}

Lowerer::Rows Lowerer::minor(const Rows& m, int skip_row, int skip_col) {
  Rows out;
  for (size_t r = 0; r < m.size(); ++r) {
    if (static_cast<int>(r) == skip_row) continue;
    std::vector<Inst*> row;
    for (size_t c = 0; c < m.size(); ++c)
      if (static_cast<int>(c) != skip_col) row.push_back(m[r][c]);
    out.push_back(row);
  }
  return out;
}

Inst* Lowerer::det(const Rows& m) {
  if (m.size() == 1) return m[0][0];
  if (m.size() == 2) {
    // One statement each, so the IR's order does not depend on the order a compiler
    // evaluates call arguments in (the golden IR has the off-diagonal product first).
    Inst* off_diagonal = B().binary(Op::Mul, m[0][1], m[1][0]);
    Inst* diagonal = B().binary(Op::Mul, m[0][0], m[1][1]);
    return B().binary(Op::Sub, diagonal, off_diagonal);
  }
  Inst* sum = nullptr;
  for (size_t c = 0; c < m.size(); ++c) {
    Inst* term = B().binary(Op::Mul, m[0][c], det(minor(m, 0, static_cast<int>(c))));
    if (!sum)
      sum = term;
    else
      sum = B().binary(c % 2 ? Op::Sub : Op::Add, sum, term);
  }
  return sum;
}

Val Lowerer::op_matrix(const NodeType& t, const std::vector<Val>& cols, const Pins& pins) {
  int n = static_cast<int>(cols.size());
  for (int i = 0; i < n; ++i)
    if (!cols[i].type.is_vector() || cols[i].type.rows != cols[0].type.rows)
      fail_here(pins[i], t.spec->name + " takes " + std::to_string(n) +
                             " column vectors of one size; '" + pins[i] + "' is " +
                             tname(cols[i].type) +
                             (i > 0 ? " and '" + pins[0] + "' " + tname(cols[0].type) : ""));
  Scalar s = numeric(common_of(cols));
  std::vector<Inst*> c;
  for (int i = 0; i < n; ++i)
    for (Inst* x : comps(cols[i], s, -1, pins[i])) c.push_back(x);
  return value(vt(s, cols[0].type.rows, n), c);
}

Val Lowerer::op_split(const NodeType&, const std::vector<Val>& a, const Pins& pins) {
  return materialize(a[0], pins[0]);
}

Val Lowerer::column_of(const Val& m, int c, const std::string& pin) {
  if (!m.type.is_matrix())
    fail_here(pin, "'.c" + std::to_string(c) + "' picks a matrix column, and " + tname(m.type) +
                       " is no matrix (components are .x .y .z .w)");
  if (c >= m.type.cols)
    fail_here(pin, tname(m.type) + " has no column c" + std::to_string(c) + " (it has " +
                       std::to_string(m.type.cols) + ")");
  auto first = m.c.begin() + static_cast<std::ptrdiff_t>(c) * m.type.rows;
  return value(vt(m.type.scalar, m.type.rows), std::vector<Inst*>(first, first + m.type.rows));
}

Outs Lowerer::lower_split(const NodeType& t) {
  Val v = apply(t, {input_value("v")}, {"v"});
  Outs outs;
  if (v.type.is_matrix()) {
    for (int c = 0; c < v.type.cols; ++c)
      outs.emplace_back("c" + std::to_string(c), column_of(v, c, "v"));
    return outs;
  }
  static const char* const names[] = {"x", "y", "z", "w"};
  for (int i = 0; i < v.type.rows; ++i)
    outs.emplace_back(names[i], value(vt(v.type.scalar), {v.c[static_cast<size_t>(i)]}));
  return outs;
}

Val Lowerer::node_expr() {
  std::string text = param_string("expr");
  std::unique_ptr<Expr> e;
  try {
    e = parse_expression(text);
  } catch (const Error& err) {
    // The parser's messages start with "column N: "; every formula error reads
    // "formula '...', column N: ...".
    fail_here("expr", "formula '" + formula_excerpt(text) + "', " + err.message());
  }
  return eval(*e, text);
}

// Post-order over the formula tree with an explicit stack: long operator chains make deep
// trees, and recursion here would overflow small thread stacks.
Val Lowerer::eval(const Expr& root, const std::string& text) {
  const std::string shown = formula_excerpt(text);
  auto at = [&](const Expr& e) {
    return "formula '" + shown + "', column " + std::to_string(e.column) + ": ";
  };
  struct Frame {
    const Expr* e;
    const NodeType* type;  // calls: the node type called
    std::vector<Val> args;
  };
  std::vector<Frame> stack;
  auto push = [&](const Expr* e) {
    const Frame* parent = stack.empty() ? nullptr : &stack.back();
    const NodeType* type = nullptr;
    if (e->kind == Expr::Kind::Type) {
      bool last_of_typed_call =
          parent && parent->type && parent->type->type_arg && parent->e->args.back().get() == e;
      if (!last_of_typed_call)
        fail_here("expr", at(*e) + "'" + e->name +
                              "' is a type, not a value: types are the last argument of " +
                              "cast(x, " + e->name + ") or vec2..vec4");
    }
    if (e->kind == Expr::Kind::Op && e->name != kSelectOp) {
      type = find_node_type(e->name);
      if (!type || !type->value)  // the node table says which functions formulas may call
        fail_here(
            "expr",
            at(*e) + "unknown function '" + e->name + "'" +
                (parse_value_type(e->name) ? " (a conversion is cast(x, " + e->name + "))" : ""));
      if (e->args.empty()) fail_here("expr", at(*e) + "'" + e->name + "' needs arguments");
      // split has several outputs: a formula picks one, as a link names the pin.
      if (type->spec->outputs.size() > 1 && !(parent && parent->e->name == kSelectOp)) {
        std::string outs;
        for (const std::string& o : type->spec->outputs) outs += (outs.empty() ? "" : ", ") + o;
        fail_here("expr", at(*e) + "'" + e->name + "' gives several values (" + outs +
                              "): pick one, like split(v).y or split(m).c1");
      }
    }
    stack.push_back({e, type, {}});
  };
  push(&root);
  for (;;) {
    ir::count_work();
    Frame& f = stack.back();
    if (f.args.size() < f.e->args.size()) {
      push(f.e->args[f.args.size()].get());  // `f` may dangle now
      continue;
    }
    Val v = eval_one(*f.e, f.type, std::move(f.args), shown);
    stack.pop_back();
    if (stack.empty()) return v;
    stack.back().args.push_back(std::move(v));
  }
}

Val Lowerer::eval_one(const Expr& e, const NodeType* t, std::vector<Val> args,
                      const std::string& shown) {
  // Built only for a message: a formula of millions of terms evaluates this per term.
  auto at = [&] { return "formula '" + shown + "', column " + std::to_string(e.column) + ": "; };
  switch (e.kind) {
    case Expr::Kind::Number:
      if (e.integer) return weak_int(vt(Scalar::I32), {IntLit{e.integer_value, e.above_int64}});
      return weak(vt(Scalar::F32), {e.number});
    case Expr::Kind::Bool: return value(vt(Scalar::Bool), {B().const_bool(e.number != 0)});
    case Expr::Kind::Type: return type_value(*parse_value_type(e.name));
    case Expr::Kind::Var: {
      if (!find_input(*node_, e.name))
        fail_here("expr", at() + "uses '" + e.name + "' but the node has no input '" + e.name +
                              "'" + formula_word_hint(e.name));
      return input_value(e.name);
    }
    case Expr::Kind::Op: break;
  }
  if (e.name == kSelectOp) {
    Val v = materialize(args[0], "expr");
    if (e.swizzle[0] == 'c') {  // a matrix column: c0..c3
      if (!v.type.is_matrix())
        fail_here("expr", at() + "'." + e.swizzle + "' picks a matrix column, and " +
                              tname(v.type) + " is no matrix (components are .x .y .z .w)");
      if (e.swizzle[1] - '0' >= v.type.cols)
        fail_here("expr", at() + tname(v.type) + " has no column " + e.swizzle);
      return column_of(v, e.swizzle[1] - '0', "expr");
    }
    if (!v.type.is_vector())
      fail_here("expr", at() + "'." + e.swizzle + "' needs a vector, not " + tname(v.type) +
                            (v.type.is_matrix() ? " (a matrix column is .c0 to .c3)" : ""));
    std::vector<Inst*> c;
    for (char letter : e.swizzle) {
      size_t k =
          std::string(letter == 'r' || letter == 'g' || letter == 'b' || letter == 'a' ? "rgba"
                                                                                       : "xyzw")
              .find(letter);
      if (static_cast<int>(k) >= v.type.rows)
        fail_here("expr",
                  at() + tname(v.type) + " has no component '" + std::string(1, letter) + "'");
      c.push_back(v.c[k]);
    }
    return value(vt(v.type.scalar, static_cast<int>(c.size())), c);
  }
  // Arguments carry the names of the node's pins in messages ("'a' is f32x3 but 'b' is
  // f32x2"); the error then names the formula's pin and the call's column.
  Pins pins;
  for (size_t i = 0; i < args.size(); ++i)
    pins.push_back(args[i].type_name            ? std::string("type")
                   : i < t->spec->inputs.size() ? t->spec->inputs[i].name
                                                : "argument " + std::to_string(i + 1));
  try {
    return apply(*t, std::move(args), pins);
  } catch (const InternalError&) {
    throw;
  } catch (const Error& err) {
    fail_here("expr", at() + "'" + e.name + "': " + err.message());
  }
}

}  // namespace loom::graph::detail
