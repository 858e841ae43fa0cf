#include "compiler/graph/lowerer.h"

#include "runtime/common/error.h"

namespace loom::graph::detail {

int Lowerer::field_slot(const std::string& name, const std::string& pin) {
  std::string field = name;
  if (const KernelParam* p = kernel_param(name); p && p->kind == graph::ParamKind::Template) {
    const TemplateArg* a = targs_.find(name);
    if (!a || a->kind != TemplateArg::Kind::Field)
      fail_here(pin, "template parameter '" + name + "' is not bound to a field");
    field = a->field;
  }
  if (fields_.empty())  // indexed once: many memory nodes over many fields stay linear
    for (const FieldDesc& d : doc_.fields) fields_[d.name] = &d;  // the last of a name
  auto found = fields_.find(field);
  // NAME.grad / NAME.dual: the adjoint or tangent of a field that needs_grad / needs_dual (the
  // program holds it, with the field's type and shape; docs/autodiff.md).
  std::string twin;
  for (const char* suffix : {".grad", ".dual"}) {
    std::string_view s = suffix;
    if (found != fields_.end() || field.size() <= s.size() ||
        std::string_view(field).substr(field.size() - s.size()) != s)
      continue;
    auto base = fields_.find(field.substr(0, field.size() - s.size()));
    if (base != fields_.end() &&
        (s == ".grad" ? base->second->needs_grad : base->second->needs_dual)) {
      found = base;
      twin = suffix;
    }
  }
  if (found == fields_.end()) fail_here(pin, "unknown field '" + field + "'");
  const FieldDesc* f = found->second;
  ResourceDesc r;
  r.kind = ResourceKind::Field;
  r.dtype = f->elem.scalar;
  r.components = f->elem.components();
  r.ndim = static_cast<int>(f->shape.size());
  for (size_t i = 0; i < f->shape.size() && i < kMaxDims; ++i) r.shape[i] = f->shape[i];
  r.layout = f->layout;
  r.field = f->name + twin;
  field_types_[r.field] = f->elem;
  return add_slot("field:" + r.field, r);
}

ValueType Lowerer::slot_type(int slot) const {
  const ResourceDesc& r = kernel_->abi.resources[static_cast<size_t>(slot)];
  if (r.kind == ResourceKind::Field) return field_types_.at(r.field);
  if (r.kind == ResourceKind::Texture) return vt(Scalar::F32, 4);
  if (r.param_offset < 0) return kernel_->abi.params[static_cast<size_t>(r.param)].type;
  return member_types_.at(slot);
}

Val Lowerer::resource(const std::string& link_pin, bool texture) {
  if (find_input(*node_, link_pin)) {
    Val v = input(link_pin);
    if (v.kind == Val::Kind::Value && v.member)
      fail_here(link_pin, "argpack members are read-only inside kernels");
    bool ok = texture ? v.kind == Val::Kind::Texture : v.kind == Val::Kind::Resource;
    if (!ok)
      fail_here(link_pin, std::string("pin '") + link_pin + "' must be linked to " +
                              (texture ? "a texture" : "a field or ndarray"));
    return v;
  }
  Val v;
  v.kind = texture ? Val::Kind::Texture : Val::Kind::Resource;
  if (texture) {
    const Literal* name = param("texture");
    if (!name || name->kind != Literal::Kind::String)
      fail_here("texture", "give the parameter 'texture' or link a texture to pin 'texture'");
    resource_param(name->s, "texture", v, true);
    return v;
  }
  if (param("field")) {
    v.slot = field_slot(param_string("field"), "field");
    v.type = slot_type(v.slot);
    return v;
  }
  if (param("ndarray")) {
    resource_param(param_string("ndarray"), "ndarray", v, false);
    return v;
  }
  fail_here(
      "field",
      "say which memory to use: parameter 'field', parameter 'ndarray' or a link to pin 'array'");
}

void Lowerer::resource_param(const std::string& name, const std::string& pin, Val& v,
                             bool texture) {
  auto dot = name.find('.');
  if (dot != std::string::npos) {
    Val m = member_value(name.substr(0, dot), name.substr(dot + 1), pin);
    if (m.kind == Val::Kind::Value) fail_here(pin, "argpack members are read-only inside kernels");
    v = m;
  } else {
    const KernelParam* p = kernel_param(name);
    if (p && p->kind == graph::ParamKind::Template) {
      v.slot = field_slot(name, pin);
      v.type = slot_type(v.slot);
      v.kind = Val::Kind::Resource;
      return;
    }
    auto want = texture ? graph::ParamKind::Texture : graph::ParamKind::Ndarray;
    if (!p || p->kind != want)
      fail_here(pin, "the kernel has no " + std::string(texture ? "texture" : "ndarray") +
                         " parameter '" + name + "'");
    int index = param_index_.at(name);
    v.slot = slots_.at("param:" + std::to_string(index));
    v.type = kernel_->abi.params[static_cast<size_t>(index)].type;
  }
  bool ok = texture ? v.kind == Val::Kind::Texture : v.kind == Val::Kind::Resource;
  if (!ok) fail_here(pin, "'" + name + "' is not " + (texture ? "a texture" : "an ndarray"));
}

std::vector<Inst*> Lowerer::indices(int ndim, const std::vector<std::string>& pins, Scalar s) {
  std::vector<Inst*> out;
  for (const std::string& pin : pins) {
    auto v = opt_input(pin);
    if (!v) continue;
    expect_value(*v, pin);
    if (v->type.is_matrix()) fail_here(pin, "an index is an integer or a vector of integers");
    // u32 indices are accepted: every in-bounds u32 index is below 2^31 (extents are at most
    // 2147483647), so the cast to i32 keeps it, and a larger one stays out of bounds.
    bool u32_index = s == Scalar::I32 && !v->weak && v->type.scalar == Scalar::U32;
    if (!u32_index && !implicit_ok(*v, s)) {
      std::string from = v->weak ? "a " + tname(v->type) + " literal" : tname(v->type);
      fail_here(pin, "index '" + pin + "' is " + from + "; " +
                         (s == Scalar::I32 ? "indices are i32, u32 or narrower integers"
                                           : "coordinates are f32") +
                         " (add a cast node)");
    }
    if (u32_index) {
      for (Inst* x : comps(*v, Scalar::U32, -1, pin)) out.push_back(B().cast(Scalar::I32, x));
      continue;
    }
    for (Inst* x : comps(*v, s, -1, pin)) out.push_back(x);
  }
  if (static_cast<int>(out.size()) != ndim)
    fail_here(pins[0], "this memory has " + std::to_string(ndim) + " dimension(s) but " +
                           std::to_string(out.size()) + " index value(s) were given");
  return out;
}

// A 0-d field is one value: an index given to it is a mistake worth naming by its pin, where
// the generic count check would only say "0 dimension(s)".
void Lowerer::no_index_pins(const ResourceDesc& rd) {
  for (const char* pin : {"i0", "i1", "i2", "i3"})
    if (opt_input(pin))
      fail_here(pin, "field '" + rd.field + "' is 0-d (shape []): it holds one value and takes " +
                         "no index; remove pin '" + pin + "'");
}

Lowerer::MemoryAccess Lowerer::memory_access() {
  MemoryAccess a;
  a.memory = resource("array", false);
  const ResourceDesc& rd = kernel_->abi.resources[static_cast<size_t>(a.memory.slot)];
  if (rd.ndim == 0) no_index_pins(rd);
  a.index = indices(rd.ndim, {"i0", "i1", "i2", "i3"}, Scalar::I32);
  return a;
}

Val Lowerer::node_load() {
  MemoryAccess a = memory_access();
  ValueType et = a.memory.type;
  std::vector<Inst*> c;
  c.reserve(static_cast<size_t>(et.components()));
  for (int i = 0; i < et.components(); ++i)
    c.push_back(B().global_load(B().global_ptr(et.scalar, a.memory.slot, a.index, i)));
  return value(et, c);
}

Outs Lowerer::node_store() {
  MemoryAccess a = memory_access();
  ValueType et = a.memory.type;
  Val v = convert(input("value"), et, "value");
  for (int i = 0; i < et.components(); ++i)
    B().global_store(B().global_ptr(et.scalar, a.memory.slot, a.index, i),
                     v.c[static_cast<size_t>(i)]);
  return {};
}

Val Lowerer::node_atomic(ir::AtomicOp op) {
  MemoryAccess a = memory_access();
  ValueType et = a.memory.type;
  Val v = convert(input("value"), et, "value");
  bool bitwise = op == ir::AtomicOp::And || op == ir::AtomicOp::Or || op == ir::AtomicOp::Xor;
  if (bitwise && !is_int(et.scalar))
    fail_here("value", node_->type + " needs integer memory, this one holds " + tname(et));
  std::vector<Inst*> c;
  c.reserve(static_cast<size_t>(et.components()));
  for (int i = 0; i < et.components(); ++i)
    c.push_back(B().atomic(op, B().global_ptr(et.scalar, a.memory.slot, a.index, i),
                           v.c[static_cast<size_t>(i)]));
  return value(et, c);
}

Val Lowerer::node_shape() {
  Val r = resource("array", false);
  const ResourceDesc& rd = kernel_->abi.resources[static_cast<size_t>(r.slot)];
  if (rd.ndim == 0)
    fail_here(param("field") ? "field" : "array",
              "field '" + rd.field +
                  "' is 0-d (shape []): it has no dimension whose extent 'shape' could give");
  int dim = static_cast<int>(param_int("dim", 0));
  if (dim < 0 || dim >= rd.ndim)
    fail_here("dim", "this memory has " + std::to_string(rd.ndim) + " dimension(s)");
  if (rd.kind == ResourceKind::Field)
    return value(vt(Scalar::I32), {B().i32(rd.shape[static_cast<size_t>(dim)])});
  return value(vt(Scalar::I32), {B().make(Op::ResourceShape, Scalar::I32, {}, r.slot, dim)});
}

Lowerer::TextureAccess Lowerer::texture_access() {
  TextureAccess a;
  a.texture = resource("texture", true);
  a.dims = kernel_->abi.resources[static_cast<size_t>(a.texture.slot)].ndim;
  return a;
}

std::vector<Inst*> Lowerer::texel_coordinates(int dims) {
  return indices(
      dims,
      dims == 2 ? std::vector<std::string>{"x", "y"} : std::vector<std::string>{"x", "y", "z"},
      Scalar::I32);
}

Val Lowerer::node_tex_sample() {
  auto [r, dims] = texture_access();
  std::vector<Inst*> uv = indices(
      dims,
      dims == 2 ? std::vector<std::string>{"u", "v"} : std::vector<std::string>{"u", "v", "w"},
      Scalar::F32);
  uint64_t bits = 0;
  if (const Literal* f = param("filter")) {
    if (f->kind != Literal::Kind::String || (f->s != "linear" && f->s != "nearest"))
      fail_here("filter", "filter is \"linear\" or \"nearest\"");
    if (f->s == "linear") bits |= ir::kSampleLinear;
  }
  if (const Literal* w = param("wrap")) {
    if (w->kind != Literal::Kind::String || (w->s != "repeat" && w->s != "clamp"))
      fail_here("wrap", "wrap is \"repeat\" or \"clamp\"");
    if (w->s == "repeat") bits |= ir::kSampleRepeat;
  }
  std::vector<Inst*> c;
  for (int ch = 0; ch < 4; ++ch) {
    auto inst = std::make_unique<Inst>(Op::TexSample, Scalar::F32);
    inst->operands = uv;
    inst->set_resource_slot(r.slot);
    inst->set_channel(ch);
    inst->bits = bits;
    c.push_back(B().insert(std::move(inst)));
  }
  return value(vt(Scalar::F32, 4), c);
}

Val Lowerer::node_tex_load() {
  auto [r, dims] = texture_access();
  std::vector<Inst*> xy = texel_coordinates(dims);
  std::vector<Inst*> c;
  for (int ch = 0; ch < 4; ++ch) {
    auto inst = std::make_unique<Inst>(Op::TexLoad, Scalar::F32);
    inst->operands = xy;
    inst->set_resource_slot(r.slot);
    inst->set_channel(ch);
    c.push_back(B().insert(std::move(inst)));
  }
  return value(vt(Scalar::F32, 4), c);
}

Outs Lowerer::node_tex_store() {
  auto [r, dims] = texture_access();
  std::vector<Inst*> xy = texel_coordinates(dims);
  Val v = convert(input("value"), vt(Scalar::F32, 4), "value");
  auto inst = std::make_unique<Inst>(Op::TexStore, Scalar::Void);
  inst->operands = xy;
  for (Inst* x : v.c) inst->operands.push_back(x);
  inst->set_resource_slot(r.slot);
  inst->set_dims(dims);
  B().insert(std::move(inst));
  return {};
}

}  // namespace loom::graph::detail
