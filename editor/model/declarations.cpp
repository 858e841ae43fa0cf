#include "editor/model/declarations.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>

#include "compiler/graph/document_json.h"
#include "compiler/graph/validate.h"
#include "editor/model/graph_access.h"
#include "editor/model/launch_params.h"
#include "runtime/common/error.h"

namespace loom::editor {

using graph::Document;
using graph::Literal;
using graph::Node;

namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

Literal scalar_zero(Scalar s) {
  if (s == Scalar::Bool) return Literal::boolean(false);
  if (is_int(s)) return Literal::integer(0);
  return Literal::real(0.0);  // spelled "0.0"
}

Literal zero_literal(ValueType t) {
  if (t.components() == 1) return scalar_zero(t.scalar);
  Literal column =
      Literal::list_of(std::vector<Literal>(static_cast<size_t>(t.rows), scalar_zero(t.scalar)));
  if (t.cols <= 1) return column;
  return Literal::list_of(std::vector<Literal>(static_cast<size_t>(t.cols), column));
}

// Every node of every kernel and function, mutable, with the graph it is in.
void for_each_node_mut(std::vector<Node>& nodes, const std::function<void(Node&)>& fn) {
  for (Node& n : nodes) {
    fn(n);
    for (graph::Region& r : n.regions) for_each_node_mut(r.nodes, fn);
  }
}

void for_each_graph_node(Document& doc, const std::function<void(const GraphRef&, Node&)>& fn) {
  for (graph::KernelDecl& k : doc.kernels) {
    GraphRef g{k.name, false};
    for_each_node_mut(k.nodes, [&](Node& n) { fn(g, n); });
  }
  for (graph::FunctionDecl& f : doc.functions) {
    GraphRef g{f.name, true};
    for_each_node_mut(f.nodes, [&](Node& n) { fn(g, n); });
  }
}

Literal* find_param(Node& n, const std::string& name) {
  for (auto& [key, value] : n.params)
    if (key == name) return &value;
  return nullptr;
}

bool names_string(const Literal* l, const std::string& name) {
  return l && l->kind == Literal::Kind::String && l->s == name;
}

// A launch argument naming resource `name` or its companion NAME.grad / NAME.dual (what a
// derived launch's twin binds); *suffix gets which ("" for the resource itself).
bool names_resource(const Literal& l, const std::string& name, std::string* suffix) {
  for (const char* s : {"", ".grad", ".dual"})
    if (names_string(&l, name + s)) {
      *suffix = s;
      return true;
    }
  return false;
}

std::string graph_label(const GraphRef& g) {
  return (g.function ? "function '" : "kernel '") + g.name + "'";
}

template <typename T>
T* find_named(std::vector<T>& items, const std::string& name) {
  for (T& item : items)
    if (item.name == name) return &item;
  return nullptr;
}

template <typename T>
bool move_named(std::vector<T>& items, const std::string& name, int delta) {
  auto it = std::find_if(items.begin(), items.end(), [&](const T& t) { return t.name == name; });
  if (it == items.end()) return false;
  long from = it - items.begin();
  long to = std::clamp<long>(from + delta, 0, static_cast<long>(items.size()) - 1);
  T moved = std::move(items[static_cast<size_t>(from)]);
  items.erase(items.begin() + from);
  items.insert(items.begin() + to, std::move(moved));
  return true;
}

bool is_resource(DeclKind k) {
  return k == DeclKind::Field || k == DeclKind::Ndarray || k == DeclKind::Texture ||
         k == DeclKind::Argpack;
}
bool is_graph(DeclKind k) { return k == DeclKind::Kernel || k == DeclKind::Function; }

bool exists(const Document& doc, DeclKind kind, const std::string& name) {
  switch (kind) {
    case DeclKind::Field: return doc.field(name);
    case DeclKind::Ndarray: return doc.ndarray(name);
    case DeclKind::Texture: return doc.texture(name);
    case DeclKind::Argpack: return doc.argpack(name);
    case DeclKind::ArgpackType: return doc.argpack_type(name) >= 0;
    case DeclKind::Kernel: return doc.kernel(name);
    case DeclKind::Function: return doc.function(name);
    case DeclKind::Pipeline: return doc.pipeline(name);
  }
  return false;
}

// Checks `next` as loading it would (every section's rules: names, types, shapes, argpack
// layouts and values, launch values, layout, the view) and makes it the document, one undo
// step. The checked document is the loaded one, so argpack layouts are recomputed.
EditResult commit(EditorDocument& d, Document next, const std::string& label,
                  std::string note = "") {
  // A K.grad / K.dual launch keeps only the twins K still has (a parameter or argpack member
  // retyped or gone takes its twins' arguments with it: the default binds again).
  for (graph::Pipeline& p : next.pipelines)
    for (graph::Launch& l : p.launches) {
      std::string suffix;
      if (!launched_kernel(next, l.kernel, &suffix) || suffix.empty()) continue;
      std::vector<LaunchParam> params = launch_params(next, l.kernel);
      std::erase_if(l.args, [&](const auto& a) {
        return std::none_of(params.begin(), params.end(),
                            [&](const LaunchParam& x) { return x.param.name == a.first; });
      });
    }
  std::string key;
  if (!next.view.empty() && !graph::view_problem(next, next.view, &key).empty()) {
    // The change makes the view unshowable (a field made 1-d under an image): the editor
    // chooses what to show again, rather than refusing the change.
    next.view = {};
    note += (note.empty() ? "" : "; ") +
            std::string("the view was reset: it could not show this any more");
  }
  Document checked;
  try {
    checked = graph::load_document(graph::save_document(next), d.doc().path);
  } catch (const Error& e) {
    return EditResult::fail(e.message());
  }
  checked.path = d.doc().path;
  EditResult r = replace_document(d, std::move(checked), label);
  if (r.ok && !note.empty()) r.message = note;
  return r;
}

// Who uses resource `name` (a node, a launch, an argpack value); "" when nobody.
std::string resource_user(Document& doc, DeclKind kind, const std::string& name) {
  std::string user;
  if (kind == DeclKind::Field) {
    for_each_graph_node(doc, [&](const GraphRef& g, Node& n) {
      if (!user.empty() || !names_string(find_param(n, "field"), name)) return;
      const graph::KernelDecl* k = g.function ? nullptr : doc.kernel(g.name);
      if (k && std::any_of(k->params.begin(), k->params.end(),
                           [&](const graph::KernelParam& p) { return p.name == name; }))
        return;  // the kernel's own template parameter of that name
      user = graph_label(g) + " node " + std::to_string(n.id);
    });
    if (!user.empty()) return user;
  }
  std::string suffix;
  for (const graph::Pipeline& p : doc.pipelines)
    for (const graph::Launch& l : p.launches)
      for (const auto& [param, value] : l.args)
        if (names_resource(value, name, &suffix))
          return "pipeline '" + p.name + "' (the launch of '" + l.kernel + "', argument '" + param +
                 "')";
  for (const graph::ArgpackDecl& a : doc.argpacks)
    for (const auto& [path, value] : a.values)
      if (names_string(&value, name)) return "argpack '" + a.name + "' (member '" + path + "')";
  return "";
}

void rename_resource_refs(Document& doc, DeclKind kind, const std::string& from,
                          const std::string& to) {
  if (kind == DeclKind::Field) {
    for_each_graph_node(doc, [&](const GraphRef& g, Node& n) {
      Literal* f = find_param(n, "field");
      if (!names_string(f, from)) return;
      const graph::KernelDecl* k = g.function ? nullptr : doc.kernel(g.name);
      if (k && std::any_of(k->params.begin(), k->params.end(),
                           [&](const graph::KernelParam& p) { return p.name == from; }))
        return;
      f->s = to;
    });
  }
  std::string suffix;
  for (graph::Pipeline& p : doc.pipelines)
    for (graph::Launch& l : p.launches)
      for (auto& [param, value] : l.args)
        if (names_resource(value, from, &suffix)) value.s = to + suffix;
  for (graph::ArgpackDecl& a : doc.argpacks)
    for (auto& [path, value] : a.values)
      if (names_string(&value, from)) value.s = to;
  if (doc.view.show == from) doc.view.show = to;
  if (doc.view.color_by == from) doc.view.color_by = to;
}

bool has_ndarray_param(const graph::KernelDecl& k, const std::string& name) {
  return std::any_of(k.params.begin(), k.params.end(), [&](const graph::KernelParam& p) {
    return p.kind == graph::ParamKind::Ndarray && p.name == name;
  });
}

// Field `from` renamed to `to` (or deleted, `to` empty): the kernels' block_local entries
// follow, except where the entry also names an ndarray parameter of that kernel.
void follow_field(Document& doc, const std::string& from, const std::string& to) {
  for (graph::KernelDecl& k : doc.kernels) {
    auto& list = k.block_local;
    auto it = std::find(list.begin(), list.end(), from);
    if (it == list.end() || has_ndarray_param(k, from)) continue;
    if (to.empty() || std::find(list.begin(), list.end(), to) != list.end())
      list.erase(it);
    else
      *it = to;
  }
}

// Parameter `old` of `k` became `now` (nullptr: removed): a block_local entry naming the old
// ndarray parameter follows it, and goes when it is no longer an ndarray parameter; a field
// of the old name keeps its entry.
void follow_param(const Document& doc, graph::KernelDecl& k, const graph::KernelParam& old,
                  const graph::KernelParam* now) {
  auto& list = k.block_local;
  auto it = std::find(list.begin(), list.end(), old.name);
  if (old.kind != graph::ParamKind::Ndarray || it == list.end()) return;
  long at = it - list.begin();
  if (!doc.field(old.name)) list.erase(it);
  if (now && now->kind == graph::ParamKind::Ndarray &&
      std::find(list.begin(), list.end(), now->name) == list.end())
    list.insert(list.begin() + at, now->name);
}

// Renames the uses of kernel parameter `from` inside the kernel's nodes: param and member
// nodes, and resource parameters naming it (or a member path under it).
void rename_param_uses(graph::KernelDecl& k, const std::string& from, const std::string& to) {
  for_each_node_mut(k.nodes, [&](Node& n) {
    if (n.type == "param") {
      if (Literal* l = find_param(n, "name"); names_string(l, from)) l->s = to;
      return;
    }
    if (n.type == "member") {
      if (Literal* l = find_param(n, "param"); names_string(l, from)) l->s = to;
      return;
    }
    for (const char* key : {"field", "ndarray", "texture"}) {
      Literal* l = find_param(n, key);
      if (!l || l->kind != Literal::Kind::String) continue;
      if (l->s == from)
        l->s = to;
      else if (l->s.rfind(from + ".", 0) == 0)
        l->s = to + l->s.substr(from.size());
    }
  });
}

// The first node of a kernel that uses parameter `name`; -1 when none.
int param_user(const graph::KernelDecl& k, const std::string& name) {
  int found = -1;
  for_each_node(k.nodes, [&](const Node& n, const RegionRef&) {
    if (found >= 0) return;
    const char* key = n.type == "param" ? "name" : n.type == "member" ? "param" : nullptr;
    if (key) {
      if (names_string(n.param(key), name)) found = n.id;
      return;
    }
    for (const char* k2 : {"field", "ndarray", "texture"}) {
      const Literal* l = n.param(k2);
      if (l && l->kind == Literal::Kind::String && (l->s == name || l->s.rfind(name + ".", 0) == 0))
        found = n.id;
    }
  });
  return found;
}

// Whether `name` is the companion NAME.grad / NAME.dual of an ndarray that needs one: an
// array of the program, which a derived launch's twin may be given.
bool ndarray_companion(const Document& doc, const std::string& name) {
  for (const graph::NdarrayDecl& n : doc.ndarrays)
    if ((n.needs_grad && name == n.name + ".grad") || (n.needs_dual && name == n.name + ".dual"))
      return true;
  return false;
}

// Whether a launch argument still suits parameter `p` (the kind of literal, and for
// resources a declaration of the right kind); the full check is the document load's.
bool argument_fits(const Document& doc, const graph::KernelParam& p, const Literal& arg) {
  switch (p.kind) {
    case graph::ParamKind::Value: {
      auto t = parse_value_type(p.type);
      if (!t) return false;
      if (t->components() == 1)
        return arg.kind != Literal::Kind::List && arg.kind != Literal::Kind::String;
      return arg.kind == Literal::Kind::List || arg.is_number();
    }
    case graph::ParamKind::Ndarray:
      return arg.kind == Literal::Kind::String &&
             (doc.ndarray(arg.s) || ndarray_companion(doc, arg.s));
    case graph::ParamKind::Texture: return arg.kind == Literal::Kind::String && doc.texture(arg.s);
    case graph::ParamKind::Argpack:
      return arg.kind == Literal::Kind::String && doc.argpack(arg.s) &&
             doc.argpack(arg.s)->type == p.type;
    case graph::ParamKind::Template:
      return (arg.kind == Literal::Kind::String && doc.field(arg.s)) || arg.is_number() ||
             arg.kind == Literal::Kind::Bool;
  }
  return false;
}

void remap_argpack_type_indices(Document& doc, const std::vector<int>& new_index) {
  for (ArgpackType& t : doc.argpack_types)
    for (ArgpackMember& m : t.members)
      if (m.nested >= 0 && static_cast<size_t>(m.nested) < new_index.size())
        m.nested = new_index[static_cast<size_t>(m.nested)];
}

std::string first_free(const std::function<bool(const std::string&)>& taken,
                       const std::string& base) {
  if (!taken(base)) return base;
  for (int i = 2;; ++i)
    if (!taken(base + std::to_string(i))) return base + std::to_string(i);
}

std::string kernel_param_problem(const graph::KernelDecl& k, const graph::KernelParam& p,
                                 size_t skip) {
  if (!is_identifier(p.name))
    return "'" + p.name + "' is not a name (letters, digits and _, not starting with a digit)";
  for (size_t i = 0; i < k.params.size(); ++i)
    if (i != skip && k.params[i].name == p.name)
      return "kernel '" + k.name + "' has a parameter named '" + p.name + "' already";
  if (p.kind == graph::ParamKind::Value && !parse_value_type(p.type))
    return "'" + p.type + "' is not a value type";
  return "";
}

}  // namespace

const char* decl_kind_name(DeclKind kind) {
  switch (kind) {
    case DeclKind::Field: return "field";
    case DeclKind::Ndarray: return "ndarray";
    case DeclKind::Texture: return "texture";
    case DeclKind::Argpack: return "argpack";
    case DeclKind::ArgpackType: return "argpack type";
    case DeclKind::Kernel: return "kernel";
    case DeclKind::Function: return "function";
    case DeclKind::Pipeline: return "pipeline";
  }
  return "";
}

std::string name_problem(const Document& doc, DeclKind kind, const std::string& name) {
  if (name.empty()) return std::string("a ") + decl_kind_name(kind) + " needs a name";
  if (!is_identifier(name))
    return "'" + name + "' is not a name (letters, digits and _, not starting with a digit)";
  if (is_resource(kind)) {
    for (DeclKind other :
         {DeclKind::Field, DeclKind::Ndarray, DeclKind::Texture, DeclKind::Argpack})
      if (exists(doc, other, name))
        return std::string("there is a ") + decl_kind_name(other) + " named '" + name + "' already";
    return "";
  }
  if (is_graph(kind)) {
    for (DeclKind other : {DeclKind::Kernel, DeclKind::Function})
      if (exists(doc, other, name))
        return std::string("there is a ") + decl_kind_name(other) + " named '" + name + "' already";
    return "";
  }
  if (exists(doc, kind, name))
    return std::string("there is a ") + decl_kind_name(kind) + " named '" + name + "' already";
  return "";
}

std::string free_name(const Document& doc, DeclKind kind, const std::string& base) {
  return first_free([&](const std::string& n) { return !name_problem(doc, kind, n).empty(); },
                    base);
}

bool parse_shape(const std::string& text, std::vector<int64_t>* shape, std::string* why) {
  // Nothing, "()" or "[]" is the empty shape: a 0-d field (Taichi's `shape=()`); whether the
  // declaration may be 0-d is its setter's check.
  std::string bare;
  for (char c : text)
    if (c != ' ') bare += c;
  if (bare.empty() || bare == "()" || bare == "[]") {
    shape->clear();
    return true;
  }
  std::vector<int64_t> out;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == ' ' || c == 'x' || c == 'X' || c == ',' || c == '*') {
      ++i;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      *why = "a shape is extents separated by 'x' (128x128), not '" + text + "'";
      return false;
    }
    int64_t v = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (v > (int64_t{1} << 40)) {
        *why = "extent too large in '" + text + "'";
        return false;
      }
      v = v * 10 + (text[i++] - '0');
    }
    out.push_back(v);
  }
  if (out.empty()) {
    *why = "a shape is extents separated by 'x' (128x128), or () for one value, not '" + text + "'";
    return false;
  }
  *shape = std::move(out);
  return true;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  if (shape.empty()) return "()";  // 0-d: one value, spelled as Taichi's shape=()
  std::string s;
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? "x" : "") + std::to_string(shape[d]);
  return s;
}

graph::Literal default_argument(const Document& doc, const graph::KernelParam& p) {
  switch (p.kind) {
    case graph::ParamKind::Value:
      if (auto t = parse_value_type(p.type)) return zero_literal(*t);
      return Literal{};
    case graph::ParamKind::Ndarray:
      for (const graph::NdarrayDecl& n : doc.ndarrays)
        if ((p.type.empty() || value_type_name(n.elem) == p.type) &&
            (p.ndim == 0 || p.ndim == static_cast<int>(n.shape.size())))
          return Literal::text(n.name);
      return Literal{};
    case graph::ParamKind::Texture:
      for (const graph::TextureDecl& t : doc.textures)
        if ((p.type.empty() || p.type == texture_format_name(t.format)) &&
            (p.ndim == 0 || p.ndim == static_cast<int>(t.size.size())))
          return Literal::text(t.name);
      return Literal{};
    case graph::ParamKind::Argpack:
      for (const graph::ArgpackDecl& a : doc.argpacks)
        if (a.type == p.type) return Literal::text(a.name);
      return Literal{};
    case graph::ParamKind::Template:
      if (p.type.empty() || p.type == "field")
        return doc.fields.empty() ? Literal{} : Literal::text(doc.fields.front().name);
      if (auto t = parse_value_type(p.type)) return zero_literal(*t);
      return Literal{};
  }
  return Literal{};
}

// ------------------------------------------------------------------ any kind

EditResult add_declaration(EditorDocument& d, DeclKind kind, const std::string& name,
                           std::string* made) {
  static const char* bases[] = {"field",  "array",  "texture",  "pack",
                                "Params", "kernel", "function", "pipeline"};
  std::string n = name.empty() ? free_name(d.doc(), kind, bases[static_cast<int>(kind)]) : name;
  if (std::string why = name_problem(d.doc(), kind, n); !why.empty()) return EditResult::fail(why);
  if (made) *made = n;
  if (kind == DeclKind::Function) return create_function(d, n, {{"x", "f32"}}, {{"y", "f32"}});
  Document next = d.doc();
  switch (kind) {
    case DeclKind::Field:
      next.fields.push_back(FieldDesc{n, ValueType{Scalar::F32}, {128, 128}, Layout::AoS});
      break;
    case DeclKind::Ndarray:
      next.ndarrays.push_back(graph::NdarrayDecl{n, ValueType{Scalar::F32}, {1024}});
      break;
    case DeclKind::Texture:
      next.textures.push_back(graph::TextureDecl{n, {256, 256}, TextureFormat::RGBA32F});
      break;
    case DeclKind::ArgpackType: {
      ArgpackType t;
      t.name = n;
      ArgpackMember m;
      m.name = "value";
      m.type = ValueType{Scalar::F32};
      t.members.push_back(m);
      next.argpack_types.push_back(std::move(t));
      break;
    }
    case DeclKind::Argpack: {
      std::string type;
      for (const ArgpackType& t : next.argpack_types)
        if (t.is_pack && type.empty()) type = t.name;
      if (type.empty())
        return EditResult::fail("declare an argpack type first: an argpack is an instance of one");
      next.argpacks.push_back(graph::ArgpackDecl{n, type, {}});
      break;
    }
    case DeclKind::Kernel: {
      graph::KernelDecl k;
      k.name = n;
      next.kernels.push_back(std::move(k));
      break;
    }
    case DeclKind::Pipeline: next.pipelines.push_back(graph::Pipeline{n, {}}); break;
    case DeclKind::Function: break;
  }
  return commit(d, std::move(next), std::string("Add ") + decl_kind_name(kind) + " " + n);
}

EditResult rename_declaration(EditorDocument& d, DeclKind kind, const std::string& from,
                              const std::string& to) {
  if (!exists(d.doc(), kind, from))
    return EditResult::fail(std::string("there is no ") + decl_kind_name(kind) + " '" + from + "'");
  if (from == to) return EditResult{true, "unchanged", {}};
  if (std::string why = name_problem(d.doc(), kind, to); !why.empty()) return EditResult::fail(why);
  if (kind == DeclKind::Function) return rename_function(d, from, to);
  Document next = d.doc();
  std::string label = std::string("Rename ") + decl_kind_name(kind) + " " + from + " to " + to;
  switch (kind) {
    case DeclKind::Field: find_named(next.fields, from)->name = to; break;
    case DeclKind::Ndarray: find_named(next.ndarrays, from)->name = to; break;
    case DeclKind::Texture: find_named(next.textures, from)->name = to; break;
    case DeclKind::Argpack: find_named(next.argpacks, from)->name = to; break;
    case DeclKind::ArgpackType:
      find_named(next.argpack_types, from)->name = to;
      for (graph::ArgpackDecl& a : next.argpacks)
        if (a.type == from) a.type = to;
      for (graph::KernelDecl& k : next.kernels) {
        for (graph::KernelParam& p : k.params)
          if (p.kind == graph::ParamKind::Argpack && p.type == from) p.type = to;
        for (std::string& r : k.returns)
          if (r == from) r = to;
      }
      break;
    case DeclKind::Kernel:
      find_named(next.kernels, from)->name = to;
      for (graph::Pipeline& p : next.pipelines)
        for (graph::Launch& l : p.launches)
          if (launches_kernel(l.kernel, from)) l.kernel = to + l.kernel.substr(from.size());
      for (graph::GraphLayout& l : next.layout)
        if (l.graph == from) l.graph = to;
      break;
    case DeclKind::Pipeline: find_named(next.pipelines, from)->name = to; break;
    case DeclKind::Function: break;
  }
  if (is_resource(kind)) rename_resource_refs(next, kind, from, to);
  if (kind == DeclKind::Field) follow_field(next, from, to);
  EditResult r = commit(d, std::move(next), label);
  if (r.ok && kind == DeclKind::Kernel && d.selection().graph == GraphRef{from, false}) {
    Selection s = d.selection();
    s.graph.name = to;
    d.set_selection(s);
  }
  return r;
}

EditResult delete_declaration(EditorDocument& d, DeclKind kind, const std::string& name) {
  if (!exists(d.doc(), kind, name))
    return EditResult::fail(std::string("there is no ") + decl_kind_name(kind) + " '" + name + "'");
  if (kind == DeclKind::Function) return delete_function(d, name);
  Document next = d.doc();
  std::string note;
  if (is_resource(kind)) {
    std::string user = resource_user(next, kind, name);
    if (!user.empty())
      return EditResult::fail(std::string(decl_kind_name(kind)) + " '" + name + "' is used by " +
                              user);
    if (next.view.show == name || next.view.color_by == name) {
      next.view = {};
      note = "the view showed it: the editor chooses what to show";
    }
  }
  auto erase_named = [&](auto& items) {
    items.erase(
        std::remove_if(items.begin(), items.end(), [&](const auto& t) { return t.name == name; }),
        items.end());
  };
  switch (kind) {
    case DeclKind::Field:
      erase_named(next.fields);
      follow_field(next, name, "");
      break;
    case DeclKind::Ndarray: erase_named(next.ndarrays); break;
    case DeclKind::Texture: erase_named(next.textures); break;
    case DeclKind::Argpack: erase_named(next.argpacks); break;
    case DeclKind::ArgpackType: {
      int index = next.argpack_type(name);
      for (const graph::ArgpackDecl& a : next.argpacks)
        if (a.type == name)
          return EditResult::fail("argpack type '" + name + "' is used by argpack '" + a.name +
                                  "'");
      for (const graph::KernelDecl& k : next.kernels) {
        for (const graph::KernelParam& p : k.params)
          if (p.kind == graph::ParamKind::Argpack && p.type == name)
            return EditResult::fail("argpack type '" + name + "' is used by parameter '" + p.name +
                                    "' of kernel '" + k.name + "'");
        for (const std::string& r : k.returns)
          if (r == name)
            return EditResult::fail("argpack type '" + name + "' is returned by kernel '" + k.name +
                                    "'");
      }
      for (const ArgpackType& t : next.argpack_types)
        for (const ArgpackMember& m : t.members)
          if (m.nested == index)
            return EditResult::fail("argpack type '" + name + "' is member '" + m.name + "' of '" +
                                    t.name + "'");
      std::vector<int> new_index(next.argpack_types.size());
      for (size_t i = 0; i < new_index.size(); ++i)
        new_index[i] = static_cast<int>(i) - (static_cast<int>(i) > index ? 1 : 0);
      remap_argpack_type_indices(next, new_index);
      next.argpack_types.erase(next.argpack_types.begin() + index);
      break;
    }
    case DeclKind::Kernel: {
      int launches = 0;
      for (graph::Pipeline& p : next.pipelines) {
        auto& l = p.launches;
        auto end = std::remove_if(l.begin(), l.end(), [&](const graph::Launch& x) {
          return launches_kernel(x.kernel, name);
        });
        launches += static_cast<int>(l.end() - end);
        l.erase(end, l.end());
      }
      erase_named(next.kernels);
      next.layout.erase(
          std::remove_if(next.layout.begin(), next.layout.end(),
                         [&](const graph::GraphLayout& g) { return g.graph == name; }),
          next.layout.end());
      if (launches)
        note = "its " + std::to_string(launches) + " launch" + (launches > 1 ? "es were" : " was") +
               " removed from the pipelines";
      break;
    }
    case DeclKind::Pipeline: erase_named(next.pipelines); break;
    case DeclKind::Function: break;
  }
  return commit(d, std::move(next), std::string("Delete ") + decl_kind_name(kind) + " " + name,
                note);
}

EditResult move_declaration(EditorDocument& d, DeclKind kind, const std::string& name, int delta) {
  Document next = d.doc();
  bool found = false;
  switch (kind) {
    case DeclKind::Field: found = move_named(next.fields, name, delta); break;
    case DeclKind::Ndarray: found = move_named(next.ndarrays, name, delta); break;
    case DeclKind::Texture: found = move_named(next.textures, name, delta); break;
    case DeclKind::Argpack: found = move_named(next.argpacks, name, delta); break;
    case DeclKind::Kernel: found = move_named(next.kernels, name, delta); break;
    case DeclKind::Function: found = move_named(next.functions, name, delta); break;
    case DeclKind::Pipeline: found = move_named(next.pipelines, name, delta); break;
    case DeclKind::ArgpackType: {
      int from = next.argpack_type(name);
      if (from < 0) break;
      found = true;
      int n = static_cast<int>(next.argpack_types.size());
      int to = std::clamp(from + delta, 0, n - 1);
      std::vector<int> order(static_cast<size_t>(n));  // new position -> old index
      for (int i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
      order.erase(order.begin() + from);
      order.insert(order.begin() + to, from);
      std::vector<int> new_index(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) new_index[static_cast<size_t>(order[static_cast<size_t>(i)])] = i;
      remap_argpack_type_indices(next, new_index);
      std::vector<ArgpackType> moved;
      moved.reserve(order.size());
      for (int old : order) moved.push_back(next.argpack_types[static_cast<size_t>(old)]);
      next.argpack_types = std::move(moved);
      break;
    }
  }
  if (!found)
    return EditResult::fail(std::string("there is no ") + decl_kind_name(kind) + " '" + name + "'");
  return commit(d, std::move(next), std::string("Move ") + decl_kind_name(kind) + " " + name);
}

// ------------------------------------------------------------------ resources

namespace {

template <typename T>
EditResult set_named(EditorDocument& d, std::vector<T> Document::*list, const T& value,
                     DeclKind kind, const std::function<std::string(const T&)>& problem) {
  Document next = d.doc();
  T* slot = find_named(next.*list, value.name);
  if (!slot)
    return EditResult::fail(std::string("there is no ") + decl_kind_name(kind) + " '" + value.name +
                            "'");
  if (std::string why = problem(value); !why.empty()) return EditResult::fail(why);
  *slot = value;
  return commit(d, std::move(next), std::string("Edit ") + decl_kind_name(kind) + " " + value.name);
}

std::string array_problem(const char* kind, const std::string& name,
                          const std::vector<int64_t>& shape, ValueType elem, size_t min_dims,
                          size_t max_dims) {
  if (shape.size() < min_dims || shape.size() > max_dims)
    return std::string(kind) + " '" + name + "' needs " + std::to_string(min_dims) + " to " +
           std::to_string(max_dims) + " dimensions" + (min_dims == 0 ? " (() is one value)" : "");
  std::string why =
      graph::shape_problem(shape, static_cast<int64_t>(size_of(elem.scalar)) * elem.components());
  return why.empty() ? "" : std::string(kind) + " '" + name + "': " + why;
}

// What is wrong with `value` for member `path` of argpack type `type` ("" when it fits in
// kind; numeric ranges are the document load's).
std::string member_value_problem(const Document& doc, int type, const std::string& path,
                                 const Literal& value) {
  std::string rest = path;
  for (int depth = 0;
       depth < 16 && type >= 0 && static_cast<size_t>(type) < doc.argpack_types.size(); ++depth) {
    size_t dot = rest.find('.');
    std::string head = rest.substr(0, dot);
    const ArgpackMember* m = nullptr;
    for (const ArgpackMember& x : doc.argpack_types[static_cast<size_t>(type)].members)
      if (x.name == head) m = &x;
    if (!m) return "the type has no member '" + head + "'";
    bool last = dot == std::string::npos;
    if (!last) {
      if (m->kind != MemberKind::Struct && m->kind != MemberKind::Pack)
        return "'" + head + "' has no members";
      type = m->nested;
      rest = rest.substr(dot + 1);
      continue;
    }
    bool is_name = value.kind == Literal::Kind::String;
    switch (m->kind) {
      case MemberKind::Value:
        return is_name ? "a " + value_type_name(m->type) + " value, not a name" : "";
      case MemberKind::Ndarray:
        return is_name && doc.ndarray(value.s) ? "" : "the name of an ndarray of the program";
      case MemberKind::Texture:
        return is_name && doc.texture(value.s) ? "" : "the name of a texture of the program";
      case MemberKind::Pack:
        return is_name && doc.argpack(value.s) ? "" : "the name of an argpack of the program";
      case MemberKind::Struct: return "set its members one by one ('" + path + ".x')";
    }
  }
  return "the type has no member '" + path + "'";
}

}  // namespace

namespace {

// Gradients (needs_grad, needs_dual: docs/autodiff.md) are for float resources only.
std::string derivative_problem(const char* kind, const std::string& name, ValueType elem,
                               bool needs_grad, bool needs_dual) {
  if ((needs_grad || needs_dual) && !is_float(elem.scalar))
    return std::string(kind) + " '" + name + "' holds " + value_type_name(elem) +
           ": only float resources have gradients (clear needs_grad and needs_dual first)";
  return "";
}

}  // namespace

EditResult set_field(EditorDocument& d, const FieldDesc& field) {
  return set_named<FieldDesc>(d, &Document::fields, field, DeclKind::Field, [](const FieldDesc& f) {
    std::string why = array_problem("field", f.name, f.shape, f.elem, 0, 4);  // 0-d: one value
    if (why.empty()) why = derivative_problem("field", f.name, f.elem, f.needs_grad, f.needs_dual);
    return why;
  });
}

EditResult set_ndarray(EditorDocument& d, const graph::NdarrayDecl& ndarray) {
  return set_named<graph::NdarrayDecl>(
      d, &Document::ndarrays, ndarray, DeclKind::Ndarray, [](const graph::NdarrayDecl& n) {
        std::string why = array_problem("ndarray", n.name, n.shape, n.elem, 1, 4);
        if (why.empty())
          why = derivative_problem("ndarray", n.name, n.elem, n.needs_grad, n.needs_dual);
        return why;
      });
}

EditResult set_texture(EditorDocument& d, const graph::TextureDecl& texture) {
  return set_named<graph::TextureDecl>(
      d, &Document::textures, texture, DeclKind::Texture, [](const graph::TextureDecl& t) {
        if (t.size.size() != 2 && t.size.size() != 3)
          return "texture '" + t.name + "' needs 2 or 3 extents (width x height [x depth])";
        std::string why = graph::shape_problem(t.size, 16);
        return why.empty() ? why : "texture '" + t.name + "': " + why;
      });
}

EditResult set_argpack_type(EditorDocument& d, const ArgpackType& type) {
  return set_named<ArgpackType>(
      d, &Document::argpack_types, type, DeclKind::ArgpackType, [&](const ArgpackType& t) {
        std::vector<std::string> seen;
        for (const ArgpackMember& m : t.members) {
          if (!is_identifier(m.name))
            return "member '" + m.name + "' of '" + t.name + "' is not a name";
          if (std::find(seen.begin(), seen.end(), m.name) != seen.end())
            return "'" + t.name + "' has two members named '" + m.name + "'";
          seen.push_back(m.name);
          if ((m.kind == MemberKind::Struct || m.kind == MemberKind::Pack) &&
              (m.nested < 0 || static_cast<size_t>(m.nested) >= d.doc().argpack_types.size()))
            return "member '" + m.name + "' of '" + t.name + "' names no argpack type";
        }
        return std::string();
      });
}

EditResult set_argpack(EditorDocument& d, const graph::ArgpackDecl& pack) {
  return set_named<graph::ArgpackDecl>(
      d, &Document::argpacks, pack, DeclKind::Argpack, [&](const graph::ArgpackDecl& a) {
        int t = d.doc().argpack_type(a.type);
        if (t < 0 || !d.doc().argpack_types[static_cast<size_t>(t)].is_pack)
          return "'" + a.type + "' is not an argpack type of the program";
        for (const auto& [path, value] : a.values)
          if (std::string why = member_value_problem(d.doc(), t, path, value); !why.empty())
            return "argpack '" + a.name + "', member '" + path + "': " + why;
        return std::string();
      });
}

// ------------------------------------------------------------------ kernels

namespace {

EditResult edit_kernel(EditorDocument& d, const std::string& kernel, const std::string& label,
                       const std::function<std::string(Document&, graph::KernelDecl&)>& change) {
  Document next = d.doc();
  graph::KernelDecl* k = find_named(next.kernels, kernel);
  if (!k) return EditResult::fail("there is no kernel '" + kernel + "'");
  if (std::string why = change(next, *k); !why.empty()) return EditResult::fail(why);
  return commit(d, std::move(next), label);
}

// Each launch of `kernel`, or of its adjoint or tangent kernel.
void for_each_launch(Document& doc, const std::string& kernel,
                     const std::function<void(graph::Launch&)>& fn) {
  for (graph::Pipeline& p : doc.pipelines)
    for (graph::Launch& l : p.launches)
      if (launches_kernel(l.kernel, kernel)) fn(l);
}

// Whether launch argument `arg` is parameter `param`'s or, in a derived launch, one of its
// twins (PARAM.grad, PARAM.dual, PARAM.PATH.grad).
bool argument_of(const std::string& arg, const std::string& param) {
  return arg == param || arg.starts_with(param + ".");
}

}  // namespace

EditResult add_kernel_param(EditorDocument& d, const std::string& kernel, graph::KernelParam p) {
  return edit_kernel(
      d, kernel, "Add parameter " + p.name + " to " + kernel,
      [&](Document& doc, graph::KernelDecl& k) {
        if (std::string why = kernel_param_problem(k, p, k.params.size()); !why.empty()) return why;
        k.params.push_back(p);
        Literal arg = default_argument(doc, p);
        if (arg.kind != Literal::Kind::None)
          for_each_launch(doc, kernel, [&](graph::Launch& l) { l.args.emplace_back(p.name, arg); });
        return std::string();
      });
}

EditResult set_kernel_param(EditorDocument& d, const std::string& kernel, size_t index,
                            graph::KernelParam p) {
  return edit_kernel(d, kernel, "Edit parameter " + p.name + " of " + kernel,
                     [&](Document& doc, graph::KernelDecl& k) {
                       if (index >= k.params.size())
                         return "kernel '" + kernel + "' has no parameter " + std::to_string(index);
                       if (std::string why = kernel_param_problem(k, p, index); !why.empty())
                         return why;
                       graph::KernelParam before = k.params[index];
                       std::string old = before.name;
                       k.params[index] = p;
                       if (old != p.name) rename_param_uses(k, old, p.name);
                       follow_param(doc, k, before, &p);
                       Literal fallback = default_argument(doc, p);
                       for_each_launch(doc, kernel, [&](graph::Launch& l) {
                         // A derived launch's twins follow the parameter: renamed with it,
                         // and dropped (back to their defaults) when its kind changes.
                         std::erase_if(l.args, [&](const auto& a) {
                           return a.first != old && argument_of(a.first, old) &&
                                  before.kind != p.kind;
                         });
                         for (auto& a : l.args)
                           if (a.first != old && argument_of(a.first, old))
                             a.first = p.name + a.first.substr(old.size());
                         for (auto it = l.args.begin(); it != l.args.end(); ++it) {
                           if (it->first != old) continue;
                           it->first = p.name;
                           if (!argument_fits(doc, p, it->second)) {
                             if (fallback.kind == Literal::Kind::None)
                               l.args.erase(it);
                             else
                               it->second = fallback;
                           }
                           return;
                         }
                       });
                       return std::string();
                     });
}

EditResult remove_kernel_param(EditorDocument& d, const std::string& kernel, size_t index) {
  return edit_kernel(
      d, kernel, "Remove a parameter of " + kernel, [&](Document& doc, graph::KernelDecl& k) {
        if (index >= k.params.size())
          return "kernel '" + kernel + "' has no parameter " + std::to_string(index);
        std::string name = k.params[index].name;
        if (int user = param_user(k, name); user >= 0)
          return "parameter '" + name + "' is used by node " + std::to_string(user) +
                 " of kernel '" + kernel + "'";
        follow_param(doc, k, k.params[index], nullptr);
        k.params.erase(k.params.begin() + static_cast<long>(index));
        for_each_launch(doc, kernel, [&](graph::Launch& l) {
          std::erase_if(l.args, [&](const auto& a) { return argument_of(a.first, name); });
        });
        return std::string();
      });
}

EditResult move_kernel_param(EditorDocument& d, const std::string& kernel, size_t index,
                             int delta) {
  return edit_kernel(
      d, kernel, "Reorder the parameters of " + kernel, [&](Document&, graph::KernelDecl& k) {
        if (index >= k.params.size())
          return "kernel '" + kernel + "' has no parameter " + std::to_string(index);
        return move_named(k.params, k.params[index].name, delta) ? std::string()
                                                                 : std::string("no such parameter");
      });
}

EditResult set_kernel_returns(EditorDocument& d, const std::string& kernel,
                              std::vector<std::string> returns) {
  return edit_kernel(
      d, kernel, "Edit the returns of " + kernel, [&](Document& doc, graph::KernelDecl& k) {
        for (const std::string& r : returns) {
          int t = doc.argpack_type(r);
          bool is_struct = t >= 0 && !doc.argpack_types[static_cast<size_t>(t)].is_pack;
          if (!parse_value_type(r) && !is_struct)
            return "'" + r + "' is neither a value type nor a struct type";
        }
        k.returns = returns;
        return std::string();
      });
}

EditResult set_kernel_workgroup(EditorDocument& d, const std::string& kernel, int size) {
  return edit_kernel(
      d, kernel, "Set the workgroup size of " + kernel, [&](Document&, graph::KernelDecl& k) {
        if (size < 0 || size > 1024)
          return std::string("a workgroup size is 1 to 1024 (0: the program's default)");
        k.workgroup_size = size;
        return std::string();
      });
}

EditResult set_kernel_block_local(EditorDocument& d, const std::string& kernel,
                                  std::vector<std::string> names) {
  return edit_kernel(d, kernel, "Set the block local list of " + kernel,
                     [&](Document& doc, graph::KernelDecl& k) {
                       k.block_local = std::move(names);
                       std::string why = graph::block_local_problem(doc, k);
                       return why.empty() ? why : "kernel '" + kernel + "': " + why;
                     });
}

// ------------------------------------------------------------------ functions' ports

namespace {

std::string port_problem(const graph::FunctionDecl& f, bool output, const graph::FunctionPort& port,
                         size_t skip) {
  if (!is_identifier(port.name)) return "'" + port.name + "' is not a name";
  const auto& ports = output ? f.outputs : f.inputs;
  for (size_t i = 0; i < ports.size(); ++i)
    if (i != skip && ports[i].name == port.name)
      return "function '" + f.name + "' has an " + (output ? "output" : "input") + " named '" +
             port.name + "' already";
  if (!parse_value_type(port.type)) return "'" + port.type + "' is not a value type";
  return "";
}

// Renames port `from` of function `fn`: its input or output nodes, the pins of its calls and
// the links out of them.
void rename_port_uses(Document& doc, const std::string& fn, bool output, const std::string& from,
                      const std::string& to) {
  for (graph::FunctionDecl& f : doc.functions) {
    if (f.name != fn) continue;
    for_each_node_mut(f.nodes, [&](Node& n) {
      if (!output && n.type == "input") {
        if (Literal* l = find_param(n, "name"); names_string(l, from)) l->s = to;
      }
      if (output && n.type == "output")
        for (graph::Input& in : n.inputs)
          if (in.pin == from) in.pin = to;
    });
  }
  auto retarget = [&](std::vector<Node>& nodes) {
    std::vector<int> calls;
    for_each_node_mut(nodes, [&](Node& n) {
      if (n.type != "call" || !names_string(find_param(n, "function"), fn)) return;
      calls.push_back(n.id);
      if (!output)
        for (graph::Input& in : n.inputs)
          if (in.pin == from) in.pin = to;
    });
    if (!output) return;
    for_each_node_mut(nodes, [&](Node& n) {
      for (graph::Input& in : n.inputs)
        if (in.linked && in.from_pin == from &&
            std::find(calls.begin(), calls.end(), in.from_node) != calls.end())
          in.from_pin = to;
    });
  };
  for (graph::KernelDecl& k : doc.kernels) retarget(k.nodes);
  for (graph::FunctionDecl& f : doc.functions) retarget(f.nodes);
}

EditResult edit_function(
    EditorDocument& d, const std::string& function, const std::string& label,
    const std::function<std::string(Document&, graph::FunctionDecl&)>& change) {
  Document next = d.doc();
  graph::FunctionDecl* f = find_named(next.functions, function);
  if (!f) return EditResult::fail("there is no function '" + function + "'");
  if (std::string why = change(next, *f); !why.empty()) return EditResult::fail(why);
  return commit(d, std::move(next), label);
}

}  // namespace

EditResult add_function_port(EditorDocument& d, const std::string& function, bool output,
                             graph::FunctionPort port) {
  return edit_function(
      d, function,
      std::string("Add ") + (output ? "output " : "input ") + port.name + " to " + function,
      [&](Document&, graph::FunctionDecl& f) {
        auto& ports = output ? f.outputs : f.inputs;
        if (std::string why = port_problem(f, output, port, ports.size()); !why.empty()) return why;
        ports.push_back(port);
        return std::string();
      });
}

EditResult set_function_port(EditorDocument& d, const std::string& function, bool output,
                             size_t index, graph::FunctionPort port) {
  return edit_function(
      d, function,
      std::string("Edit ") + (output ? "output " : "input ") + port.name + " of " + function,
      [&](Document& doc, graph::FunctionDecl& f) {
        auto& ports = output ? f.outputs : f.inputs;
        if (index >= ports.size()) return "function '" + function + "' has no such port";
        if (std::string why = port_problem(f, output, port, index); !why.empty()) return why;
        std::string old = ports[index].name;
        ports[index] = port;
        if (old != port.name) rename_port_uses(doc, function, output, old, port.name);
        return std::string();
      });
}

EditResult remove_function_port(EditorDocument& d, const std::string& function, bool output,
                                size_t index) {
  return edit_function(d, function, std::string("Remove a port of ") + function,
                       [&](Document&, graph::FunctionDecl& f) {
                         auto& ports = output ? f.outputs : f.inputs;
                         if (index >= ports.size())
                           return "function '" + function + "' has no such port";
                         ports.erase(ports.begin() + static_cast<long>(index));
                         return std::string();
                       });
}

// ------------------------------------------------------------------ pipelines

namespace {

EditResult edit_pipeline(EditorDocument& d, const std::string& pipeline, const std::string& label,
                         const std::function<std::string(Document&, graph::Pipeline&)>& change) {
  Document next = d.doc();
  graph::Pipeline* p = find_named(next.pipelines, pipeline);
  if (!p) return EditResult::fail("there is no pipeline '" + pipeline + "'");
  if (std::string why = change(next, *p); !why.empty()) return EditResult::fail(why);
  return commit(d, std::move(next), label);
}

}  // namespace

EditResult add_launch(EditorDocument& d, const std::string& pipeline, const std::string& kernel) {
  return edit_pipeline(d, pipeline, "Launch " + kernel + " in " + pipeline,
                       [&](Document& doc, graph::Pipeline& p) {
                         const graph::KernelDecl* k = launched_kernel(doc, kernel);
                         if (!k) return "there is no kernel '" + kernel + "'";
                         graph::Launch l{kernel, {}};
                         for (const graph::KernelParam& param : k->params) {
                           Literal arg = default_argument(doc, param);
                           if (arg.kind != Literal::Kind::None)
                             l.args.emplace_back(param.name, arg);
                         }
                         p.launches.push_back(std::move(l));
                         return std::string();
                       });
}

EditResult remove_launch(EditorDocument& d, const std::string& pipeline, size_t index) {
  return edit_pipeline(
      d, pipeline, "Remove a launch from " + pipeline, [&](Document&, graph::Pipeline& p) {
        if (index >= p.launches.size())
          return "pipeline '" + pipeline + "' has no launch " + std::to_string(index);
        p.launches.erase(p.launches.begin() + static_cast<long>(index));
        return std::string();
      });
}

EditResult move_launch(EditorDocument& d, const std::string& pipeline, size_t index, int delta) {
  return edit_pipeline(
      d, pipeline, "Reorder the launches of " + pipeline, [&](Document&, graph::Pipeline& p) {
        if (index >= p.launches.size())
          return "pipeline '" + pipeline + "' has no launch " + std::to_string(index);
        long to = std::clamp<long>(static_cast<long>(index) + delta, 0,
                                   static_cast<long>(p.launches.size()) - 1);
        graph::Launch l = std::move(p.launches[index]);
        p.launches.erase(p.launches.begin() + static_cast<long>(index));
        p.launches.insert(p.launches.begin() + to, std::move(l));
        return std::string();
      });
}

EditResult set_launch_arg(EditorDocument& d, const std::string& pipeline, size_t index,
                          const std::string& param, const graph::Literal& value) {
  return edit_pipeline(
      d, pipeline, "Set " + param + " in " + pipeline, [&](Document& doc, graph::Pipeline& p) {
        if (index >= p.launches.size())
          return "pipeline '" + pipeline + "' has no launch " + std::to_string(index);
        graph::Launch& l = p.launches[index];
        std::vector<LaunchParam> params = launch_params(doc, l.kernel);
        const graph::KernelParam* kp = nullptr;
        for (const LaunchParam& x : params)
          if (x.param.name == param) kp = &x.param;
        if (!kp) return "kernel '" + l.kernel + "' has no parameter '" + param + "'";
        if (!argument_fits(doc, *kp, value))
          return "'" + param + "' of kernel '" + l.kernel + "' takes " +
                 (kp->kind == graph::ParamKind::Value
                      ? "a " + kp->type + " value"
                      : std::string("the name of a resource of the program"));
        for (auto& [name, v] : l.args)
          if (name == param) {
            v = value;
            return std::string();
          }
        l.args.emplace_back(param, value);
        return std::string();
      });
}

EditResult clear_launch_arg(EditorDocument& d, const std::string& pipeline, size_t index,
                            const std::string& param) {
  return edit_pipeline(
      d, pipeline, "Bind " + param + " by default in " + pipeline,
      [&](Document& doc, graph::Pipeline& p) {
        if (index >= p.launches.size())
          return "pipeline '" + pipeline + "' has no launch " + std::to_string(index);
        graph::Launch& l = p.launches[index];
        for (const LaunchParam& x : launch_params(doc, l.kernel)) {
          if (x.param.name != param) continue;
          if (!x.twin)
            return "'" + param + "' of '" + l.kernel +
                   "' needs an argument; only the twins of a K.grad or K.dual launch bind a "
                   "default";
          std::erase_if(l.args, [&](const auto& a) { return a.first == param; });
          return std::string();
        }
        return "kernel '" + l.kernel + "' has no parameter '" + param + "'";
      });
}

EditResult set_view(EditorDocument& d, const graph::ViewSettings& view) {
  std::string key;
  if (!view.empty())
    if (std::string why = graph::view_problem(d.doc(), view, &key); !why.empty())
      return EditResult::fail("view." + key + ": " + why);
  Document next = d.doc();
  next.view = view;
  return commit(d, std::move(next), "Set the view");
}

// ------------------------------------------------------------------ dropped on a graph

std::vector<std::string> declaration_node_types(DeclKind kind) {
  switch (kind) {
    case DeclKind::Field:
    case DeclKind::Ndarray: return {"load", "store", "atomic_add"};
    case DeclKind::Texture: return {"tex_load", "tex_sample", "tex_store"};
    case DeclKind::Function: return {"call"};
    default: return {};
  }
}

EditResult add_declaration_node(EditorDocument& d, const GraphRef& g, const RegionRef& region,
                                Vec2 at, DeclKind kind, const std::string& name,
                                const std::string& type) {
  std::vector<std::string> types = declaration_node_types(kind);
  if (std::find(types.begin(), types.end(), type) == types.end())
    return EditResult::fail(std::string("a ") + decl_kind_name(kind) + " makes no '" + type +
                            "' node");
  if (!exists(d.doc(), kind, name))
    return EditResult::fail(std::string("there is no ") + decl_kind_name(kind) + " '" + name + "'");
  if (!graph_nodes(d.doc(), g)) return EditResult::fail("there is no graph '" + g.name + "'");
  if (kind == DeclKind::Function)
    return add_node(d, g, region, "call", at, {{"function", Literal::text(name)}});
  if (kind == DeclKind::Field)
    return add_node(d, g, region, type, at, {{"field", Literal::text(name)}});
  // Ndarrays and textures: through a kernel parameter bound to them.
  bool texture = kind == DeclKind::Texture;
  if (g.function)
    return EditResult::fail(std::string("functions reach ") + (texture ? "textures" : "ndarrays") +
                            " through the kernels that call them: drop it on a kernel");
  const graph::KernelDecl& k = *d.doc().kernel(g.name);
  graph::ParamKind want = texture ? graph::ParamKind::Texture : graph::ParamKind::Ndarray;
  std::vector<const graph::Launch*> launches;
  for (const graph::Pipeline& p : d.doc().pipelines)
    for (const graph::Launch& l : p.launches)
      if (launches_kernel(l.kernel, k.name)) launches.push_back(&l);
  std::string param;
  for (const graph::KernelParam& p : k.params) {
    if (p.kind != want || !param.empty()) continue;
    bool bound = std::all_of(launches.begin(), launches.end(), [&](const graph::Launch* l) {
      return std::any_of(l->args.begin(), l->args.end(), [&](const auto& a) {
        return a.first == p.name && names_string(&a.second, name);
      });
    });
    if (bound) param = p.name;
  }
  // One undo step; a failure part-way takes back what was done.
  uint64_t before = d.revision();
  d.begin_group(std::string("Add ") + type + " " + name);
  if (param.empty()) {
    param = first_free(
        [&](const std::string& n) {
          return std::any_of(k.params.begin(), k.params.end(),
                             [&](const graph::KernelParam& p) { return p.name == n; });
        },
        name);
    graph::KernelParam p{param, want, "", 0};
    if (texture) {
      const graph::TextureDecl* t = d.doc().texture(name);
      p.type = texture_format_name(t->format);
      p.ndim = static_cast<int>(t->size.size());
    } else {
      const graph::NdarrayDecl* n = d.doc().ndarray(name);
      p.type = value_type_name(n->elem);
      p.ndim = static_cast<int>(n->shape.size());
    }
    std::string kernel = k.name;
    EditResult r = add_kernel_param(d, kernel, p);
    for (size_t pi = 0; r.ok && pi < d.doc().pipelines.size(); ++pi)
      for (size_t li = 0; r.ok && li < d.doc().pipelines[pi].launches.size(); ++li)
        if (launches_kernel(d.doc().pipelines[pi].launches[li].kernel, kernel))
          r = set_launch_arg(d, d.doc().pipelines[pi].name, li, param, Literal::text(name));
    if (!r.ok) {
      d.end_group();
      if (d.revision() != before) d.undo();
      return r;
    }
  }
  EditResult r =
      add_node(d, g, region, type, at, {{texture ? "texture" : "ndarray", Literal::text(param)}});
  d.end_group();
  if (!r.ok && d.revision() != before) d.undo();
  return r;
}

}  // namespace loom::editor
