#include "compiler/graph/lowerer.h"

#include <map>
#include <unordered_set>

#include "runtime/common/error.h"

namespace loom::graph::detail {

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

Val Lowerer::elementwise(std::vector<Val> args, const std::vector<std::string>& pins,
                         Scalar operand, Scalar result,
                         const std::function<Inst*(const std::vector<Inst*>&)>& f) {
  ValueType shape = broadcast(args, pins);
  int n = shape.scalar == Scalar::Void ? 1 : shape.components();
  std::vector<std::vector<Inst*>> cs;
  for (size_t i = 0; i < args.size(); ++i) cs.push_back(comps(args[i], operand, n, pins[i]));
  std::vector<Inst*> out;
  for (int i = 0; i < n; ++i) {
    std::vector<Inst*> ops;
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

Val Lowerer::apply(const std::string& op, std::vector<Val> a,
                   const std::vector<std::string>& pins) {
  for (size_t i = 0; i < a.size(); ++i) expect_value(a[i], pins[i]);
  auto arity = [&](size_t n) {
    if (a.size() != n)
      fail_here(pins.empty() ? "" : pins[0],
                "'" + op + "' takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s"));
  };
  static const std::map<std::string, Op> binary_ops = {
      {"add", Op::Add}, {"sub", Op::Sub}, {"mul", Op::Mul}, {"div", Op::Div},
      {"mod", Op::Mod}, {"min", Op::Min}, {"max", Op::Max}, {"pow", Op::Pow}};
  static const std::map<std::string, Op> compare_ops = {{"eq", Op::Eq}, {"ne", Op::Ne},
                                                        {"lt", Op::Lt}, {"le", Op::Le},
                                                        {"gt", Op::Gt}, {"ge", Op::Ge}};
  static const std::map<std::string, Op> float_ops = {
      {"floor", Op::Floor}, {"ceil", Op::Ceil}, {"round", Op::Round}, {"sqrt", Op::Sqrt},
      {"rsqrt", Op::Rsqrt}, {"sin", Op::Sin},   {"cos", Op::Cos},     {"tan", Op::Tan},
      {"asin", Op::Asin},   {"acos", Op::Acos}, {"atan", Op::Atan},   {"exp", Op::Exp},
      {"log", Op::Log}};
  auto bin = [&](Op o) {
    return [this, o](const std::vector<Inst*>& x) { return B().binary(o, x[0], x[1]); };
  };
  if (auto it = binary_ops.find(op); it != binary_ops.end()) {
    arity(2);
    Scalar t = numeric(common_of(a));
    return elementwise(a, pins, t, t, bin(it->second));
  }
  if (auto it = compare_ops.find(op); it != compare_ops.end()) {
    arity(2);
    Scalar t = common_of(a);
    return elementwise(a, pins, t, Scalar::Bool, bin(it->second));
  }
  if (auto it = float_ops.find(op); it != float_ops.end()) {
    arity(1);
    Scalar t = floating(a[0].type.scalar);
    Op o = it->second;
    return elementwise(a, pins, t, t,
                       [this, o](const std::vector<Inst*>& x) { return B().unary(o, x[0]); });
  }
  if (op == "atan2") {
    arity(2);
    Scalar t = floating(common_of(a));
    return elementwise(a, pins, t, t, bin(Op::Atan2));
  }
  if (op == "and" || op == "or" || op == "xor") {
    arity(2);
    Scalar t = common_of(a);
    if (is_float(t))
      fail_here(pins[0], "'" + op + "' needs bools or integers, not " + scalar_name(t).data());
    Op o = t == Scalar::Bool ? (op == "and"  ? Op::LogicAnd
                                : op == "or" ? Op::LogicOr
                                             : Op::Ne)
                             : (op == "and"  ? Op::BitAnd
                                : op == "or" ? Op::BitOr
                                             : Op::BitXor);
    return elementwise(a, pins, t, t, bin(o));
  }
  if (op == "shl" || op == "shr") {
    arity(2);
    Scalar t = common_of(a);
    if (!is_int(t)) fail_here(pins[0], "'" + op + "' needs integers");
    return elementwise(a, pins, t, t, bin(op == "shl" ? Op::Shl : Op::Shr));
  }
  if (op == "neg" && a.size() == 1 && a[0].weak) return negate_literal(a[0]);  // -2147483648
  if (op == "neg" || op == "abs" || op == "sign") {
    arity(1);
    Scalar t = numeric(a[0].type.scalar);
    Op o = op == "neg" ? Op::Neg : op == "abs" ? Op::Abs : Op::Sign;
    return elementwise(a, pins, t, t,
                       [this, o](const std::vector<Inst*>& x) { return B().unary(o, x[0]); });
  }
  if (op == "not") {
    arity(1);
    Scalar t = a[0].type.scalar;
    if (is_float(t)) fail_here(pins[0], "'not' needs a bool or an integer");
    Op o = t == Scalar::Bool ? Op::LogicNot : Op::BitNot;
    return elementwise(a, pins, t, t,
                       [this, o](const std::vector<Inst*>& x) { return B().unary(o, x[0]); });
  }
  if (op == "fract") {
    arity(1);
    Scalar t = floating(a[0].type.scalar);
    return elementwise(a, pins, t, t, [this](const std::vector<Inst*>& x) {
      return B().binary(Op::Sub, x[0], B().unary(Op::Floor, x[0]));
    });
  }
  if (op == "clamp") {
    arity(3);
    Scalar t = numeric(common_of(a));
    return elementwise(a, pins, t, t, [this](const std::vector<Inst*>& x) {
      return B().binary(Op::Min, B().binary(Op::Max, x[0], x[1]), x[2]);
    });
  }
  if (op == "mix") {
    arity(3);
    Scalar t = floating(common_of(a));
    return elementwise(a, pins, t, t, [this](const std::vector<Inst*>& x) {
      return B().binary(Op::Add, x[0], B().binary(Op::Mul, B().binary(Op::Sub, x[1], x[0]), x[2]));
    });
  }
  if (op == "fma") {
    arity(3);
    Scalar t = numeric(common_of(a));
    return elementwise(a, pins, t, t, [this, t](const std::vector<Inst*>& x) {
      return B().make(Op::Fma, t, {x[0], x[1], x[2]});
    });
  }
  if (op == "select") {
    arity(3);
    if (is_float(a[0].type.scalar)) fail_here(pins[0], "the condition of select must be a bool");
    Scalar t = common_of({a[1], a[2]});
    std::vector<Val> args = {a[0], a[1], a[2]};
    ValueType shape = broadcast(args, pins);
    int n = shape.scalar == Scalar::Void ? 1 : shape.components();
    auto c = comps(a[0], Scalar::Bool, n, pins[0]);
    auto x = comps(a[1], t, n, pins[1]);
    auto y = comps(a[2], t, n, pins[2]);
    std::vector<Inst*> out;
    for (int i = 0; i < n; ++i) out.push_back(B().select(c[i], x[i], y[i]));
    return value(shape.scalar == Scalar::Void ? vt(t) : vt(t, shape.rows, shape.cols), out);
  }
  if (op == "vec2" || op == "vec3" || op == "vec4") {
    int n = op[3] - '0';
    Scalar t = numeric(common_of(a));
    return construct(a, pins, t, n);
  }
  if (op == "dot") {
    arity(2);
    return dot(a[0], a[1], pins);
  }
  if (op == "length") {
    arity(1);
    Val d = dot(a[0], a[0], {pins[0], pins[0]});
    Scalar t = floating(d.type.scalar);
    return value(vt(t), {B().unary(Op::Sqrt, comps(d, t, -1, pins[0])[0])});
  }
  if (op == "normalize") {
    arity(1);
    Val d = dot(a[0], a[0], {pins[0], pins[0]});
    Scalar t = floating(d.type.scalar);
    Inst* len = B().unary(Op::Sqrt, comps(d, t, -1, pins[0])[0]);
    std::vector<Inst*> out;
    for (Inst* x : comps(a[0], t, -1, pins[0])) out.push_back(B().binary(Op::Div, x, len));
    return value(vt(t, a[0].type.rows), out);
  }
  if (op == "cross") {
    arity(2);
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
  if (op == "matmul") {
    arity(2);
    return matmul(a[0], a[1], pins);
  }
  if (op == "transpose") {
    arity(1);
    Val m = materialize(a[0], pins[0]);
    int r = m.type.rows, c = m.type.cols;
    std::vector<Inst*> t(static_cast<size_t>(r * c));
    for (int col = 0; col < c; ++col)
      for (int row = 0; row < r; ++row)
        t[static_cast<size_t>(row * c + col)] = m.c[static_cast<size_t>(col * r + row)];
    return value(vt(m.type.scalar, c, r), t);
  }
  if (op == "determinant" || op == "inverse") {
    arity(1);
    const Val& m = a[0];
    if (!m.type.is_matrix() || m.type.rows != m.type.cols)
      fail_here(pins[0], op + " needs a square matrix (2x2 to 4x4), got " + tname(m.type));
    Scalar t = floating(m.type.scalar);
    int n = m.type.rows;
    auto c = comps(m, t, -1, pins[0]);
    std::vector<std::vector<Inst*>> rows(static_cast<size_t>(n),
                                         std::vector<Inst*>(static_cast<size_t>(n)));
    for (int col = 0; col < n; ++col)
      for (int row = 0; row < n; ++row) rows[row][col] = c[static_cast<size_t>(col * n + row)];
    Inst* d = det(rows);
    if (op == "determinant") return value(vt(t), {d});
    Inst* inv_d = B().binary(Op::Div, B().const_float(t, 1.0), d);
    std::vector<Inst*> out(static_cast<size_t>(n * n));
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        // inverse[i][j] = cofactor(j, i) / det
        Inst* cof = det(minor(rows, j, i));
        if ((i + j) % 2) cof = B().unary(Op::Neg, cof);
        out[static_cast<size_t>(j * n + i)] = B().binary(Op::Mul, cof, inv_d);
      }
    return value(vt(t, n, n), out);
  }
  fail_here(pins.empty() ? "" : pins[0], "unknown operation '" + op + "'");
}

Val Lowerer::construct(const std::vector<Val>& a, const std::vector<std::string>& pins, Scalar t,
                       int n) {
  std::vector<Inst*> out;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].type.is_matrix()) fail_here(pins[i], "a vector is built from scalars and vectors");
    for (Inst* x : comps(a[i], t, -1, pins[i])) out.push_back(x);
  }
  if (static_cast<int>(out.size()) != n)
    fail_here(pins.empty() ? "" : pins[0], "vec" + std::to_string(n) + " needs " +
                                               std::to_string(n) + " components, got " +
                                               std::to_string(out.size()));
  return value(vt(t, n), out);
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
        Inst* p = B().binary(Op::Mul, a[static_cast<size_t>(i * r + row)],
                             b[static_cast<size_t>(col * k + i)]);
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
  if (m.size() == 2)
    return B().binary(Op::Sub, B().binary(Op::Mul, m[0][0], m[1][1]),
                      B().binary(Op::Mul, m[0][1], m[1][0]));
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

Val Lowerer::node_matrix(int n) {
  std::vector<Val> cols;
  std::vector<std::string> pins;
  for (int i = 0; i < n; ++i) {
    pins.push_back("c" + std::to_string(i));
    cols.push_back(input_value(pins.back()));
    if (!cols.back().type.is_vector() || cols.back().type.rows != cols[0].type.rows)
      fail_here(pins.back(), "mat" + std::to_string(n) + " takes " + std::to_string(n) +
                                 " column vectors of one size; '" + pins.back() + "' is " +
                                 tname(cols.back().type));
  }
  Scalar t = numeric(common_of(cols));
  std::vector<Inst*> c;
  for (size_t i = 0; i < cols.size(); ++i)
    for (Inst* x : comps(cols[i], t, -1, pins[i])) c.push_back(x);
  return value(vt(t, cols[0].type.rows, n), c);
}

Outs Lowerer::node_split() {
  Val v = materialize(input_value("v"), "v");
  Outs outs;
  static const char* const names[] = {"x", "y", "z", "w"};
  if (v.type.is_matrix()) {
    for (int c = 0; c < v.type.cols; ++c) {
      std::vector<Inst*> col(v.c.begin() + c * v.type.rows, v.c.begin() + (c + 1) * v.type.rows);
      outs.emplace_back("c" + std::to_string(c), value(vt(v.type.scalar, v.type.rows), col));
    }
    return outs;
  }
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
    fail_here("expr", "formula '" + formula_excerpt(text) + "': " + err.message());
  }
  return eval(*e, text);
}

// Post-order over the formula tree with an explicit stack: long operator chains make deep
// trees, and recursion here would overflow small thread stacks.
Val Lowerer::eval(const Expr& root, const std::string& text) {
  static const std::unordered_set<std::string> known = {
      "add",       "sub",    "mul",       "div",         "mod",    "pow",   "min",   "max",
      "atan2",     "eq",     "ne",        "lt",          "le",     "gt",    "ge",    "and",
      "or",        "xor",    "shl",       "shr",         "neg",    "not",   "abs",   "sign",
      "floor",     "ceil",   "round",     "fract",       "sqrt",   "rsqrt", "sin",   "cos",
      "tan",       "asin",   "acos",      "atan",        "exp",    "log",   "clamp", "mix",
      "select",    "fma",    "vec2",      "vec3",        "vec4",   "dot",   "cross", "length",
      "normalize", "matmul", "transpose", "determinant", "inverse"};
  const std::string shown = formula_excerpt(text);
  struct Frame {
    const Expr* e;
    std::vector<Val> args;
  };
  std::vector<Frame> stack;
  auto push = [&](const Expr* e) {
    if (e->kind == Expr::Kind::Op && e->name != "swizzle") {
      if (!known.count(e->name))
        fail_here("expr", "formula '" + shown + "': unknown function '" + e->name +
                              "' at column " + std::to_string(e->column));
      if (e->args.empty())
        fail_here("expr", "formula '" + shown + "': '" + e->name + "' needs arguments");
    }
    stack.push_back({e, {}});
  };
  push(&root);
  for (;;) {
    Frame& f = stack.back();
    if (f.args.size() < f.e->args.size()) {
      push(f.e->args[f.args.size()].get());  // `f` may dangle now
      continue;
    }
    Val v = eval_one(*f.e, std::move(f.args), shown);
    stack.pop_back();
    if (stack.empty()) return v;
    stack.back().args.push_back(std::move(v));
  }
}

Val Lowerer::eval_one(const Expr& e, std::vector<Val> args, const std::string& shown) {
  switch (e.kind) {
    case Expr::Kind::Number:
      if (e.integer) return weak_int(vt(Scalar::I32), {IntLit{e.integer_value, e.above_int64}});
      return weak(vt(Scalar::F32), {e.number});
    case Expr::Kind::Bool:
      return value(vt(Scalar::Bool), {B().const_bool(e.number != 0)});
    case Expr::Kind::Var: {
      if (!find_input(*node_, e.name))
        fail_here("expr", "formula '" + shown + "' uses '" + e.name +
                              "' but the node has no input '" + e.name + "'");
      return input_value(e.name);
    }
    case Expr::Kind::Op:
      break;
  }
  if (e.name == "swizzle") {
    Val v = materialize(args[0], "expr");
    if (!v.type.is_vector())
      fail_here("expr", "formula '" + shown + "': '." + e.swizzle + "' at column " +
                            std::to_string(e.column) + " needs a vector, not " + tname(v.type));
    std::vector<Inst*> c;
    for (char letter : e.swizzle) {
      size_t k =
          std::string(letter == 'r' || letter == 'g' || letter == 'b' || letter == 'a' ? "rgba"
                                                                                       : "xyzw")
              .find(letter);
      if (static_cast<int>(k) >= v.type.rows)
        fail_here("expr", "formula '" + shown + "': " + tname(v.type) + " has no component '" +
                              letter + "'");
      c.push_back(v.c[k]);
    }
    return value(vt(v.type.scalar, static_cast<int>(c.size())), c);
  }
  std::vector<std::string> pins(args.size(), "expr");
  return apply(e.name, std::move(args), pins);
}

}  // namespace loom::graph::detail
