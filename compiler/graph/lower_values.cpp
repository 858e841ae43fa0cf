#include "compiler/graph/lowerer.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>

#include "runtime/common/error.h"

namespace loom::graph::detail {

Val Lowerer::value(ValueType t, std::vector<Inst*> c) {
  Val v;
  v.type = t;
  v.c = std::move(c);
  return v;
}

Val Lowerer::weak(ValueType t, std::vector<double> lit) {
  Val v;
  v.type = t;
  v.lit = std::move(lit);
  v.weak = true;
  return v;
}

Val Lowerer::weak_int(ValueType t, std::vector<IntLit> lit) {
  std::vector<double> d;
  d.reserve(lit.size());
  for (const IntLit& x : lit) d.push_back(x.as_double());
  Val v = weak(t, std::move(d));
  v.ilit = std::move(lit);
  return v;
}

double IntLit::as_double() const {
  return above_int64 ? static_cast<double>(static_cast<uint64_t>(value))
                     : static_cast<double>(value);
}

std::string IntLit::text() const {
  return above_int64 ? std::to_string(static_cast<uint64_t>(value)) : std::to_string(value);
}

bool IntLit::fits(Scalar s) const {
  if (!is_int(s)) return true;
  int w = bit_width(s);
  if (is_unsigned_int(s)) {
    if (above_int64) return w == 64;
    return value >= 0 && (w == 64 || value < (int64_t{1} << w));
  }
  if (above_int64) return false;
  int64_t hi = w == 64 ? INT64_MAX : (int64_t{1} << (w - 1)) - 1;
  return value >= -hi - 1 && value <= hi;
}

Val Lowerer::negate_literal(const Val& v) {
  Val out = v;
  for (double& d : out.lit) d = -d;
  for (IntLit& x : out.ilit) {
    if (!x.above_int64) {
      x = x.value == INT64_MIN ? IntLit(INT64_MIN, true) : IntLit(-x.value);  // 2^63 as bits
      continue;
    }
    if (static_cast<uint64_t>(x.value) == uint64_t{1} << 63) {
      x = IntLit(INT64_MIN);
      continue;
    }
    out.ilit.clear();  // below -2^63: no integer type holds it, only a float
    out.type.scalar = Scalar::F32;
    break;
  }
  return out;
}

namespace {

// Range of an integer type, for messages.
std::string range_of(Scalar s) {
  int w = bit_width(s);
  if (is_unsigned_int(s))
    return "0 to " +
           (w == 64 ? std::string("18446744073709551615") : std::to_string((uint64_t{1} << w) - 1));
  int64_t hi = w == 64 ? INT64_MAX : (int64_t{1} << (w - 1)) - 1;
  return std::to_string(-hi - 1) + " to " + std::to_string(hi);
}

std::string float_text(double d) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, ec == std::errc() ? end : buf);
}

}  // namespace

Inst* Lowerer::literal_const(const Val& v, size_t k, Scalar s, const std::string& pin) {
  auto misfit = [&](const std::string& text, const std::string& why) -> Inst* {
    fail_here(pin, "the literal " + text + " does not fit " + std::string(scalar_name(s)) +
                       ", the type it meets here (" + why + "); use a wider type or a cast node");
  };
  if (!v.ilit.empty()) {
    const IntLit& x = v.ilit[k];
    if (s == Scalar::Bool) return B().const_bool(x.value != 0);
    if (is_float(s)) return B().const_float(s, x.as_double());  // every int64/u64 is in range
    if (!x.fits(s))
      return misfit(x.text(), scalar_name(s).data() + std::string(" holds ") + range_of(s));
    return B().const_int(s, x.value);
  }
  double d = v.lit[k];
  if (s == Scalar::Bool) return B().const_bool(d != 0);
  if (is_float(s)) {
    double rounded = s == Scalar::F32 ? static_cast<double>(static_cast<float>(d)) : d;
    if (std::isinf(rounded))
      return misfit(float_text(d), s == Scalar::F32
                                       ? "its largest magnitude is 3.4028235e38"
                                       : "its largest magnitude is 1.7976931348623157e308");
    return B().const_float(s, d);
  }
  // A float literal as an integer (typed constants only): it must be a whole number in range.
  if (d != std::trunc(d)) return misfit(float_text(d), "not a whole number");
  double lo = is_unsigned_int(s) ? 0.0 : -std::ldexp(1.0, bit_width(s) - 1);
  double hi = std::ldexp(1.0, bit_width(s) - (is_unsigned_int(s) ? 0 : 1));
  if (d < lo || d >= hi)
    return misfit(float_text(d), scalar_name(s).data() + std::string(" holds ") + range_of(s));
  if (d >= std::ldexp(1.0, 63))
    return B().const_int(s, static_cast<int64_t>(static_cast<uint64_t>(d)));
  return B().const_int(s, static_cast<int64_t>(d));
}

Val Lowerer::literal(const Literal& l, const std::string& pin) {
  switch (l.kind) {
    case Literal::Kind::Int: return weak_int(vt(Scalar::I32), {IntLit(l.i, l.above_int64)});
    case Literal::Kind::Float: return weak(vt(Scalar::F32), {l.f});
    case Literal::Kind::Bool: return value(vt(Scalar::Bool), {B().const_bool(l.b)});
    case Literal::Kind::List: {
      bool nested = !l.list.empty() && l.list[0].kind == Literal::Kind::List;
      std::vector<double> lit;
      std::vector<IntLit> ilit;
      bool is_float = false;
      auto take = [&](const Literal& x) {
        if (!x.is_number()) fail_here(pin, "a vector value holds numbers only");
        is_float |= x.kind == Literal::Kind::Float;
        lit.push_back(x.as_double());
        ilit.push_back(IntLit(x.i, x.above_int64));
      };
      int rows = static_cast<int>(l.list.size()), cols = 1;
      if (nested) {
        cols = rows;
        rows = static_cast<int>(l.list[0].list.size());
        for (const Literal& col : l.list) {
          if (col.kind != Literal::Kind::List || static_cast<int>(col.list.size()) != rows)
            fail_here(pin, "the columns of this matrix value differ in length");
          for (const Literal& x : col.list) take(x);
        }
      } else {
        for (const Literal& x : l.list) take(x);
      }
      if (rows < 2 || rows > 4 || cols > 4)
        fail_here(pin, "a vector value has 2 to 4 numbers (a matrix 2 to 4 columns)");
      if (!is_float) return weak_int(vt(Scalar::I32, rows, cols), std::move(ilit));
      return weak(vt(Scalar::F32, rows, cols), std::move(lit));
    }
    default: break;
  }
  fail_here(pin, "input '" + pin + "' needs a number, a bool, a list of numbers or a link");
}

std::optional<Val> Lowerer::opt_input(const std::string& pin) {
  const Node& n = *node_;
  if (const Input* in = find_input(n, pin)) {
    if (in->linked) return resolve(in->from_node, in->from_pin.empty() ? "out" : in->from_pin, pin);
    return literal(in->literal, pin);
  }
  const NodeSpec* spec = spec_of(n);
  if (const PinSpec* p = spec->input(pin); p && p->default_value.kind != Literal::Kind::None)
    return literal(p->default_value, pin);
  return std::nullopt;
}

Val Lowerer::input(const std::string& pin) {
  auto v = opt_input(pin);
  if (v) return *v;
  std::string message =
      "input '" + pin + "' of this " + node_->type + " node needs a link or a value";
  if (!(record_ && recording_here())) fail_here(pin, message);
  // Tolerant mode: an unfinished node still types its outputs (a missing end0 still lowers
  // the loop body), with the problem noted.
  note_problem(node_->id, pin, message);
  return weak_int(vt(Scalar::I32), {IntLit(0)});
}

Val Lowerer::input_value(const std::string& pin) {
  Val v = input(pin);
  expect_value(v, pin);
  return v;
}

void Lowerer::expect_value(const Val& v, const std::string& pin) {
  if (v.kind == Val::Kind::Value) return;
  const char* what = v.kind == Val::Kind::Ref       ? "a variable reference (use a get node)"
                     : v.kind == Val::Kind::Texture ? "a texture"
                                                    : "an array";
  fail_here(pin, std::string("input '") + pin + "' needs a value but is linked to " + what);
}

const Literal* Lowerer::param(const std::string& name) const { return find_param(*node_, name); }

std::string Lowerer::param_string(const std::string& name) {
  const Literal* l = param(name);
  if (!l) fail_here(name, "this " + node_->type + " node needs the parameter '" + name + "'");
  if (l->kind != Literal::Kind::String) fail_here(name, "parameter '" + name + "' must be text");
  return l->s;
}

int64_t Lowerer::param_int(const std::string& name, int64_t fallback) {
  const Literal* l = param(name);
  if (!l) return fallback;
  if (l->kind != Literal::Kind::Int)
    fail_here(name, "parameter '" + name + "' must be a whole number");
  return l->i;
}

ValueType Lowerer::param_type(const std::string& name) {
  std::string s = param_string(name);
  auto t = parse_value_type(s);
  if (!t) fail_here(name, "unknown type '" + s + "' (use f32, i32, f32x3, f32x3x3, ...)");
  return *t;
}

Inst* Lowerer::scalar_const(Scalar s, double v) {
  if (is_float(s)) return B().const_float(s, v);
  if (s == Scalar::Bool) return B().const_bool(v != 0);
  return B().const_int(s, static_cast<int64_t>(v));
}

Inst* Lowerer::convert_scalar(Inst* x, Scalar to) {
  if (x->type == to) return x;
  if (to == Scalar::Bool) return B().binary(Op::Ne, x, scalar_const(x->type, 0));
  return B().cast(to, x);
}

std::vector<Inst*> Lowerer::comps(const Val& v, Scalar s, int n, const std::string& pin) {
  int have = v.type.components();
  if (n < 0) n = have;
  std::vector<Inst*> out;
  for (int i = 0; i < n; ++i) {
    size_t k = static_cast<size_t>(have == 1 ? 0 : i);
    if (v.weak)
      out.push_back(literal_const(v, k, s, pin));
    else
      out.push_back(convert_scalar(v.c[k], s));
  }
  return out;
}

int Lowerer::rank(Scalar s) { return bit_width(s); }

Scalar Lowerer::promote(Scalar a, Scalar b) {
  if (a == b) return a;
  if (is_float(a) || is_float(b)) {
    if (is_float(a) && is_float(b)) return rank(a) >= rank(b) ? a : b;
    return is_float(a) ? a : b;
  }
  if (a == Scalar::Bool) return b;
  if (b == Scalar::Bool) return a;
  if (rank(a) != rank(b)) return rank(a) > rank(b) ? a : b;
  return is_unsigned_int(a) ? a : b;
}

Scalar Lowerer::common(const Val& a, const Val& b) {
  if (a.weak && !b.weak) {
    if (is_float(a.type.scalar) && !is_float(b.type.scalar)) return Scalar::F32;
    if (b.type.scalar == Scalar::Bool) return a.type.scalar;
    return b.type.scalar;
  }
  if (b.weak && !a.weak) return common(b, a);
  return promote(a.type.scalar, b.type.scalar);
}

bool Lowerer::implicit_ok(const Val& v, Scalar to) {
  Scalar from = v.type.scalar;
  if (from == to) return true;
  if (v.weak) return is_float(from) ? is_float(to) : (is_numeric(to) || to == Scalar::Bool);
  if (from == Scalar::Bool) return is_numeric(to);
  if (is_float(from)) return is_float(to) && rank(to) >= rank(from);
  if (is_float(to)) return true;
  if (!is_int(to)) return false;
  if (is_signed_int(from) == is_signed_int(to)) return rank(to) >= rank(from);
  return is_unsigned_int(from) && rank(to) > rank(from);
}

Val Lowerer::convert(const Val& v, ValueType to, const std::string& pin) {
  expect_value(v, pin);
  bool shape_ok = v.type.is_scalar() || (v.type.rows == to.rows && v.type.cols == to.cols);
  if (!shape_ok || !implicit_ok(v, to.scalar)) {
    std::string from = v.weak ? "a " + tname(v.type) + " literal" : tname(v.type);
    fail_here(pin, "input '" + pin + "' is " + from + " but " + tname(to) +
                       " is needed; add a cast node to convert explicitly");
  }
  if (!v.weak && v.type == to) return v;
  return value(to, comps(v, to.scalar, to.components(), pin));
}

Val Lowerer::explicit_cast(const Val& v, ValueType to, const std::string& pin) {
  expect_value(v, pin);
  if (to.is_scalar() && !v.type.is_scalar()) to = vt(to.scalar, v.type.rows, v.type.cols);
  if (!v.type.is_scalar() && (v.type.rows != to.rows || v.type.cols != to.cols))
    fail_here(pin, "cannot cast " + tname(v.type) + " to " + tname(to));
  return value(to, comps(materialize(v, pin), to.scalar, to.components(), pin));
}

Val Lowerer::typed_literal(const Val& v, ValueType to, const std::string& pin) {
  if (!v.weak) return explicit_cast(v, to, pin);  // bools
  if (to.is_scalar() && !v.type.is_scalar()) to = vt(to.scalar, v.type.rows, v.type.cols);
  if (!v.type.is_scalar() && (v.type.rows != to.rows || v.type.cols != to.cols))
    fail_here(pin, "a " + tname(v.type) + " value cannot have the type " + tname(to));
  return value(to, comps(v, to.scalar, to.components(), pin));
}

Val Lowerer::materialize(const Val& v, const std::string& pin) {
  if (!v.weak) return v;
  return value(v.type, comps(v, v.type.scalar, -1, pin));
}

Inst* Lowerer::loop_bound(const Val& v, const std::string& pin) {
  bool u32 = !v.weak && v.type.scalar == Scalar::U32;
  if (!v.type.is_scalar() || is_float(v.type.scalar) || (!u32 && !implicit_ok(v, Scalar::I32)))
    fail_here(pin, "loop bound '" + pin + "' must be an i32, u32 or narrower integer, not " +
                       (v.weak ? "a " + tname(v.type) + " literal" : tname(v.type)) +
                       " (add a cast node)");
  if (!u32) return comps(v, Scalar::I32, -1, pin)[0];
  Inst* clamped = B().binary(Op::Min, v.c[0], B().const_int(Scalar::U32, INT32_MAX));
  return B().cast(Scalar::I32, clamped);
}

namespace {

int64_t count_nodes(const std::vector<Node>& nodes) {
  int64_t n = 0;
  for (const Node& node : nodes) {
    ++n;
    for (const Region& r : node.regions) n += count_nodes(r.nodes);
  }
  return n;
}

}  // namespace

void Lowerer::check_unrolled_size(int64_t count, const Region* body) {
  int64_t nodes = body ? count_nodes(body->nodes) : 0;
  // unroll_copies_ * count * nodes, without overflow (each factor is at most a few million)
  double total =
      static_cast<double>(unroll_copies_) * static_cast<double>(count) * static_cast<double>(nodes);
  if (total <= static_cast<double>(kMaxUnrolledNodes)) return;
  fail_here("count", "unrolling would instantiate " + std::to_string(static_cast<int64_t>(total)) +
                         " nodes (" + std::to_string(unroll_copies_ * count) +
                         " copies of a body of " + std::to_string(nodes) +
                         " nodes, counting enclosing unrolls), more than the limit of " +
                         std::to_string(kMaxUnrolledNodes) +
                         "; use a range_for (or smaller counts)");
}

Val Lowerer::node_const() {
  const Literal* v = param("value");
  Val lit = literal(*v, "value");
  if (!param("type")) return lit;
  return typed_literal(lit, param_type("type"), "value");
}

Val Lowerer::node_param() {
  std::string name = param_string("name");
  if (graph_->is_function)
    fail_here("name", "functions see only their own inputs: use an input node (and pass '" + name +
                          "' to the call)");
  const KernelParam* p = kernel_param(name);
  if (!p) fail_here("name", "the kernel has no parameter '" + name + "'");
  if (p->kind == graph::ParamKind::Template) {
    const TemplateArg* a = targs_.find(name);
    // A declared value type ("f32") makes the constant typed; otherwise it is a weak literal.
    auto typed = [&](const Val& v) {
      return parse_value_type(p->type) ? typed_literal(v, *parse_value_type(p->type), "name") : v;
    };
    switch (a->kind) {
      case TemplateArg::Kind::Int: return typed(weak_int(vt(Scalar::I32), {a->i}));
      case TemplateArg::Kind::Float: return typed(weak(vt(Scalar::F32), {a->f}));
      case TemplateArg::Kind::Bool: return typed(value(vt(Scalar::Bool), {B().const_bool(a->b)}));
      case TemplateArg::Kind::Ndarray:
        break;  // binds ndarray parameters, never template parameters
      case TemplateArg::Kind::Field: {
        Val v;
        v.kind = Val::Kind::Resource;
        v.slot = field_slot(name, "name");
        v.type = slot_type(v.slot);
        return v;
      }
    }
  }
  int index = param_index_.at(name);
  const ParamDesc& d = kernel_->abi.params[static_cast<size_t>(index)];
  if (d.kind == loom::ParamKind::Argpack)
    fail_here("name", "'" + name + "' is an argpack; read its values with member nodes");
  if (d.kind != loom::ParamKind::Value) {
    Val v;
    v.kind = d.kind == loom::ParamKind::Ndarray ? Val::Kind::Resource : Val::Kind::Texture;
    v.slot = slots_.at("param:" + std::to_string(index));
    v.type = d.type;
    return v;
  }
  std::vector<Inst*> c;
  c.reserve(static_cast<size_t>(d.type.components()));
  for (int i = 0; i < d.type.components(); ++i)
    c.push_back(B().arg(d.type.scalar, index, i * size_of(d.type.scalar)));
  return value(d.type, c);
}

Val Lowerer::node_member() {
  std::string pname = param_string("param");
  if (graph_->is_function)
    fail_here("param",
              "functions see only their own inputs: read the member in the kernel and pass it to "
              "the call");
  std::string path = param_string("path");
  return member_value(pname, path, "path");
}

Val Lowerer::member_value(const std::string& pname, const std::string& path,
                          const std::string& pin) {
  const KernelParam* p = kernel_param(pname);
  if (!p || p->kind != graph::ParamKind::Argpack)
    fail_here("param", "the kernel has no argpack parameter '" + pname + "'");
  int index = param_index_.at(pname);
  int root = kernel_->abi.params[static_cast<size_t>(index)].argpack_type;
  uint32_t offset = 0;
  const ArgpackMember* m = find_member(types_, root, path, &offset);
  if (!m) fail_here(pin, "argpack type '" + p->type + "' has no member '" + path + "'");
  switch (m->kind) {
    case MemberKind::Struct:
    case MemberKind::Pack:
      fail_here(pin, "'" + path + "' is a " + (m->kind == MemberKind::Pack ? "pack" : "struct") +
                         "; pick one of its members, e.g. '" + path + "." +
                         (types_[static_cast<size_t>(m->nested)].members.empty()
                              ? std::string("x")
                              : types_[static_cast<size_t>(m->nested)].members[0].name) +
                         "'");
    case MemberKind::Ndarray:
    case MemberKind::Texture: {
      ResourceDesc r;
      r.kind = m->kind == MemberKind::Ndarray ? ResourceKind::Ndarray : ResourceKind::Texture;
      r.dtype = m->kind == MemberKind::Ndarray ? m->type.scalar : Scalar::F32;
      r.components = m->kind == MemberKind::Ndarray ? m->type.components() : 4;
      r.ndim = m->ndim;
      r.param = index;
      r.param_offset = static_cast<int32_t>(offset);
      if (m->kind == MemberKind::Texture) r.format = m->format;
      Val v;
      v.kind = m->kind == MemberKind::Ndarray ? Val::Kind::Resource : Val::Kind::Texture;
      v.slot = add_slot("param:" + std::to_string(index) + "@" + std::to_string(offset), r);
      // The member's path is known only here: record_resource_access (after the passes) names
      // the slot with it when the code touches it.
      std::vector<ResourceAccess>& named = kernel_->abi.resource_access;
      if (std::none_of(named.begin(), named.end(),
                       [&](const ResourceAccess& a) { return a.slot == v.slot; }))
        named.push_back({v.slot, pname + "." + path, 0});
      v.type = m->kind == MemberKind::Ndarray ? m->type : vt(Scalar::F32, 4);
      member_types_[v.slot] = v.type;
      v.member = true;
      return v;
    }
    case MemberKind::Value: break;
  }
  std::vector<Inst*> c;
  for (int col = 0; col < m->type.cols; ++col)
    for (int row = 0; row < m->type.rows; ++row) {
      int at = static_cast<int>(offset + std140_component_offset(m->type, row, col));
      if (m->type.scalar == Scalar::Bool) {
        Inst* word = B().arg(Scalar::I32, index, at);
        c.push_back(B().binary(Op::Ne, word, B().i32(0)));
      } else {
        c.push_back(B().arg(m->type.scalar, index, at));
      }
    }
  Val v = value(m->type, c);
  v.member = true;
  return v;
}

Scope* Lowerer::enclosing_loop(Scope* s) {
  for (; s; s = s->parent)
    if (s->loop) return s;
  return nullptr;
}

Val Lowerer::node_index() {
  int dim = static_cast<int>(param_int("dim", 0));
  Scope* s = enclosing_loop(cur_);
  if (!s) fail_here("", "an index node must be inside the body of a range_for or struct_for");
  if (dim < 0 || dim >= s->loop_dims)
    fail_here("dim", "the enclosing loop has " + std::to_string(s->loop_dims) +
                         " dimension(s); dim " + std::to_string(dim) + " does not exist");
  return resolve(s->owner->id, "i" + std::to_string(dim), "");
}

Val Lowerer::node_function_input() {
  std::string name = param_string("name");
  if (!graph_->is_function)
    fail_here("name", "input nodes belong in functions; kernels use param nodes");
  for (auto& [n, v] : graph_->inputs)
    if (n == name) return v;
  fail_here("name", "function '" + graph_->name + "' has no input '" + name + "'");
}

Val Lowerer::node_var() {
  if (param("length")) return node_array();
  auto init = opt_input("init");
  ValueType t;
  if (param("type"))
    t = param_type("type");
  else if (init)
    t = init->type;
  else
    fail_here("type", "a var node needs a 'type' parameter or an 'init' input");
  if (init) expect_value(*init, "init");
  Val ref;
  ref.kind = Val::Kind::Ref;
  ref.type = t;
  Val v = init ? convert(*init, t, "init") : Val{};
  for (int i = 0; i < t.components(); ++i) {
    Inst* a = B().alloca_(t.scalar);
    ref.c.push_back(a);
    if (graph_->is_function) kernel_->var_origins.push_back({a, graph_->name, node_->id});
    if (init) B().local_store(a, v.c[static_cast<size_t>(i)]);
  }
  return ref;
}

Outs Lowerer::lower_var(const NodeType&) { return Outs{{"ref", node_var()}}; }

Outs Lowerer::lower_get(const NodeType&) {
  Val r = input("var");
  if (r.kind != Val::Kind::Ref)
    fail_here("var", "pin 'var' must be linked to the 'ref' output of a var node");
  if (r.length > 0) return one(array_get(r));
  if (find_input(*node_, "index"))
    fail_here("index", "'index' is for arrays (a var with a length); this var holds one value");
  std::vector<Inst*> c;
  for (Inst* a : r.c) c.push_back(B().local_load(a));
  return one(value(r.type, c));
}

Outs Lowerer::lower_set(const NodeType&) {
  Val r = input("var");
  if (r.member) fail_here("var", "argpack members are read-only inside kernels");
  if (r.kind != Val::Kind::Ref)
    fail_here("var", "pin 'var' must be linked to the 'ref' output of a var node");
  if (r.length > 0) {
    array_set(r, input("value"));
    return {};
  }
  if (find_input(*node_, "index"))
    fail_here("index", "'index' is for arrays (a var with a length); this var holds one value");
  Val v = convert(input("value"), r.type, "value");
  for (size_t i = 0; i < r.c.size(); ++i) B().local_store(r.c[i], v.c[i]);
  return {};
}

Outs Lowerer::lower_random(const NodeType&) {
  ValueType ty = param("type") ? param_type("type") : vt(Scalar::F32);
  if (!is_numeric(ty.scalar))
    fail_here("type", "random numbers are integers or floats, not " + tname(ty));
  std::vector<Inst*> c;
  c.reserve(static_cast<size_t>(ty.components()));
  for (int i = 0; i < ty.components(); ++i) c.push_back(B().make(Op::Rand, ty.scalar));
  return one(value(ty, c));
}

Val Lowerer::type_value(ValueType t) {
  Val v;
  v.type = t;
  v.type_name = true;
  return v;
}

}  // namespace loom::graph::detail
