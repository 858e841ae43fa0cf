#include "compiler/graph/document_json.h"

#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_set>

#include "compiler/graph/json_value.h"
#include "compiler/graph/migrate.h"
#include "runtime/common/abi_serialize.h"
#include "runtime/common/error.h"
#include "runtime/common/input_file.h"

namespace loom::graph {

namespace {

using Kind = JsonValue::Kind;

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Null: return "null";
    case Kind::Bool: return "a bool";
    case Kind::Number: return "a number";
    case Kind::String: return "a string";
    case Kind::Array: return "a list";
    case Kind::Object: return "an object";
  }
  return "?";
}

// ---------------------------------------------------------------- reading

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  Document read(const JsonValue& root) {
    Document doc;
    doc.path = path_;
    object(root, "document");
    keys(root, "document",
         {"format", "version", "name", "fields", "ndarrays", "textures", "argpack_types",
          "argpacks", "functions", "kernels", "pipelines", "layout", "view"});
    const JsonValue* format = root.find("format");
    if (!format || format->kind != Kind::String || format->text != "loom-graph")
      fail(format ? *format : root, "format",
           "expected \"format\": \"loom-graph\" (is this a Loom graph document?)");
    const JsonValue* version = root.find("version");
    if (!version) fail(root, "version", "missing \"version\"");
    doc.version = small_integer(*version, "version");
    if (const JsonValue* name = root.find("name")) doc.name = string(*name, "name");
    each(root, "fields",
         [&](const JsonValue& v, const std::string& at) { doc.fields.push_back(field(v, at)); });
    each(root, "ndarrays", [&](const JsonValue& v, const std::string& at) {
      doc.ndarrays.push_back(ndarray(v, at));
    });
    each(root, "textures", [&](const JsonValue& v, const std::string& at) {
      doc.textures.push_back(texture(v, at));
    });
    read_argpack_types(root, doc);
    each(root, "argpacks", [&](const JsonValue& v, const std::string& at) {
      doc.argpacks.push_back(argpack(v, at));
    });
    each(root, "functions", [&](const JsonValue& v, const std::string& at) {
      doc.functions.push_back(function(v, at));
    });
    each(root, "kernels",
         [&](const JsonValue& v, const std::string& at) { doc.kernels.push_back(kernel(v, at)); });
    each(root, "pipelines", [&](const JsonValue& v, const std::string& at) {
      doc.pipelines.push_back(pipeline(v, at));
    });
    each(root, "layout", [&](const JsonValue& v, const std::string& at) {
      doc.layout.push_back(layout(v, at, doc));
    });
    if (const JsonValue* v = root.find("view")) doc.view = view(*v, doc);
    unique_names(doc);
    return doc;
  }

 private:
  [[noreturn]] void fail(const JsonValue& at, const std::string& key_path,
                         const std::string& why) const {
    Place p{path_, kernel_, node_, pin_, in_function_};
    throw Error(p, "line " + std::to_string(at.line) + ", column " + std::to_string(at.column) +
                       ": " + key_path + ": " + why);
  }

  void object(const JsonValue& v, const std::string& at) const {
    if (v.kind != Kind::Object)
      fail(v, at, std::string("expected an object, found ") + kind_name(v.kind));
  }

  void keys(const JsonValue& v, const std::string& at,
            std::initializer_list<const char*> allowed) const {
    for (const auto& [key, value] : v.members) {
      bool ok = false;
      for (const char* a : allowed) ok |= key == a;
      if (ok) continue;
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail(value, at + "." + key, "unknown key \"" + key + "\" (expected one of " + list + ")");
    }
  }

  template <typename F>
  void each(const JsonValue& parent, const char* key, F&& fn) {
    const JsonValue* list = parent.find(key);
    if (!list) return;
    if (list->kind != Kind::Array)
      fail(*list, key, std::string("expected a list, found ") + kind_name(list->kind));
    for (size_t i = 0; i < list->items.size(); ++i)
      fn(list->items[i], std::string(key) + "[" + std::to_string(i) + "]");
  }

  const JsonValue& required(const JsonValue& v, const std::string& at, const char* key) const {
    const JsonValue* m = v.find(key);
    if (!m) fail(v, at, std::string("missing \"") + key + "\"");
    return *m;
  }

  std::string string(const JsonValue& v, const std::string& at) const {
    if (v.kind != Kind::String)
      fail(v, at, std::string("expected a string, found ") + kind_name(v.kind));
    return v.text;
  }

  int64_t integer(const JsonValue& v, const std::string& at, const std::string& range = "") const {
    if (!v.is_integer())
      fail(v, at,
           std::string("expected a whole number, found ") +
               (v.kind == Kind::Number ? v.text : kind_name(v.kind)));
    int64_t out = 0;
    auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), out);
    if (ec != std::errc() || end != v.text.data() + v.text.size())
      fail(v, at, "number out of range: " + v.text + (range.empty() ? "" : " (" + range + ")"));
    return out;
  }

  // A whole number that must fit an int (ids, versions, dimensions).
  int small_integer(const JsonValue& v, const std::string& at, int lo = INT32_MIN) const {
    int64_t x = integer(v, at);
    if (x < lo || x > INT32_MAX)
      fail(v, at,
           "number out of range: " + v.text + " (expected " + std::to_string(lo) + " to " +
               std::to_string(INT32_MAX) + ")");
    return static_cast<int>(x);
  }

  double number(const JsonValue& v, const std::string& at) const {
    if (v.kind != Kind::Number)
      fail(v, at, std::string("expected a number, found ") + kind_name(v.kind));
    return std::strtod(v.text.c_str(), nullptr);
  }

  // Layout coordinates are floats; one that overflows a float could not be saved again.
  float coordinate(const JsonValue& v, const std::string& at) const {
    float f = static_cast<float>(number(v, at));
    if (!std::isfinite(f)) fail(v, at, "coordinate " + v.text + " is out of range");
    return f;
  }

  std::vector<int64_t> extents(const JsonValue& v, const std::string& at, size_t lo,
                               size_t hi) const {
    if (v.kind != Kind::Array || v.items.size() < lo || v.items.size() > hi)
      fail(v, at,
           "expected a list of " + std::to_string(lo) + " to " + std::to_string(hi) + " extents");
    std::vector<int64_t> out;
    for (size_t i = 0; i < v.items.size(); ++i) {
      int64_t e = integer(v.items[i], at + "[" + std::to_string(i) + "]");
      if (e <= 0) fail(v.items[i], at + "[" + std::to_string(i) + "]", "extents must be positive");
      out.push_back(e);
    }
    return out;
  }

  ValueType value_type(const JsonValue& v, const std::string& at) const {
    std::string text = string(v, at);
    auto t = parse_value_type(text);
    if (!t)
      fail(v, at,
           "unknown type '" + text +
               "' (scalars: bool i8 i16 i32 i64 u8 u16 u32 u64 f32 f64; vectors f32x3; matrices "
               "f32x3x3)");
    return *t;
  }

  Literal literal(const JsonValue& v, const std::string& at) const {
    Literal l;
    switch (v.kind) {
      case Kind::Bool:
        l.kind = Literal::Kind::Bool;
        l.b = v.b;
        break;
      case Kind::Number: {
        std::optional<Literal> number = number_literal(v.text, v.is_integer());
        if (!number)
          fail(v, at,
               "number out of range: " + v.text +
                   " (whole numbers run from -9223372036854775808 to 18446744073709551615)");
        l = std::move(*number);
        break;
      }
      case Kind::String:
        l.kind = Literal::Kind::String;
        l.s = v.text;
        break;
      case Kind::Array:
        l.kind = Literal::Kind::List;
        for (size_t i = 0; i < v.items.size(); ++i)
          l.list.push_back(literal(v.items[i], at + "[" + std::to_string(i) + "]"));
        break;
      case Kind::Null: fail(v, at, "null is not a value");
      case Kind::Object: fail(v, at, "expected a number, bool, string or list, found an object");
    }
    return l;
  }

  std::vector<std::pair<std::string, Literal>> literal_map(const JsonValue& v,
                                                           const std::string& at) const {
    object(v, at);
    std::vector<std::pair<std::string, Literal>> out;
    for (const auto& [key, value] : v.members)
      out.emplace_back(key, literal(value, at + "." + key));
    return out;
  }

  FieldDesc field(const JsonValue& v, const std::string& at) {
    object(v, at);
    keys(v, at, {"name", "type", "shape", "layout", "needs_grad", "needs_dual"});
    FieldDesc f;
    f.name = string(required(v, at, "name"), at + ".name");
    f.elem = value_type(required(v, at, "type"), at + ".type");
    const JsonValue& shape = required(v, at, "shape");
    // An empty shape is a 0-d field: one element, Taichi's `shape=()`.
    f.shape = extents(shape, at + ".shape", 0, kMaxDims);
    std::string problem =
        shape_problem(f.shape, int64_t{size_of(f.elem.scalar)} * f.elem.components());
    if (!problem.empty()) fail(shape, at + ".shape", "field '" + f.name + "': " + problem);
    if (const JsonValue* layout = v.find("layout")) {
      std::string l = string(*layout, at + ".layout");
      if (l == "soa")
        f.layout = Layout::SoA;
      else if (l != "aos")
        fail(*layout, at + ".layout", "expected \"aos\" or \"soa\", found '" + l + "'");
    }
    f.needs_grad = flag(v, at, "needs_grad", "field '" + f.name + "'", f.elem);
    f.needs_dual = flag(v, at, "needs_dual", "field '" + f.name + "'", f.elem);
    return f;
  }

  NdarrayDecl ndarray(const JsonValue& v, const std::string& at) {
    object(v, at);
    keys(v, at, {"name", "type", "shape", "needs_grad", "needs_dual"});
    NdarrayDecl n;
    n.name = string(required(v, at, "name"), at + ".name");
    n.elem = value_type(required(v, at, "type"), at + ".type");
    const JsonValue& shape = required(v, at, "shape");
    // Kernel parameters use ndim 0 for "take it from the bound ndarray", so a 0-d ndarray
    // would be ambiguous; a 0-d field is the one-value global.
    if (shape.kind == Kind::Array && shape.items.empty())
      fail(shape, at + ".shape",
           "ndarray '" + n.name +
               "': ndarrays have 1 to 4 extents; for one value use a 0-d field " +
               "(\"shape\": []) or shape [1]");
    n.shape = extents(shape, at + ".shape", 1, kMaxDims);
    std::string problem =
        shape_problem(n.shape, int64_t{size_of(n.elem.scalar)} * n.elem.components());
    if (!problem.empty()) fail(shape, at + ".shape", "ndarray '" + n.name + "': " + problem);
    n.needs_grad = flag(v, at, "needs_grad", "ndarray '" + n.name + "'", n.elem);
    n.needs_dual = flag(v, at, "needs_dual", "ndarray '" + n.name + "'", n.elem);
    return n;
  }

  // The optional "needs_grad" / "needs_dual": true | false of a float field or ndarray.
  bool flag(const JsonValue& v, const std::string& at, const char* key, const std::string& what,
            ValueType elem) {
    const JsonValue* g = v.find(key);
    if (!g) return false;
    if (g->kind != Kind::Bool) fail(*g, at + "." + key, "expected true or false");
    if (g->b && !is_float(elem.scalar))
      fail(*g, at + "." + key, what + ": only float resources have gradients");
    return g->b;
  }

  TextureDecl texture(const JsonValue& v, const std::string& at) {
    object(v, at);
    keys(v, at, {"name", "size", "format"});
    TextureDecl t;
    t.name = string(required(v, at, "name"), at + ".name");
    const JsonValue& size = required(v, at, "size");
    t.size = extents(size, at + ".size", 2, 3);
    std::string problem = shape_problem(t.size, 16);  // the widest texel, rgba32f
    if (!problem.empty()) fail(size, at + ".size", "texture '" + t.name + "': " + problem);
    const JsonValue& fv = required(v, at, "format");
    std::string f = string(fv, at + ".format");
    if (!parse_texture_format(f, &t.format))
      fail(fv, at + ".format", "unknown texture format '" + f + "' (r32f, rg32f, rgba32f, rgba8)");
    return t;
  }

  void read_argpack_types(const JsonValue& root, Document& doc) {
    std::vector<std::vector<std::pair<const JsonValue*, std::string>>> nested_names;
    each(root, "argpack_types", [&](const JsonValue& v, const std::string& at) {
      object(v, at);
      keys(v, at, {"name", "kind", "members"});
      ArgpackType t;
      t.name = string(required(v, at, "name"), at + ".name");
      if (const JsonValue* kind = v.find("kind")) {
        std::string k = string(*kind, at + ".kind");
        if (k == "struct")
          t.is_pack = false;
        else if (k != "pack")
          fail(*kind, at + ".kind", "expected \"pack\" or \"struct\", found '" + k + "'");
      }
      nested_names.emplace_back();
      const JsonValue& members = required(v, at, "members");
      if (members.kind != Kind::Array) fail(members, at + ".members", "expected a list");
      for (size_t i = 0; i < members.items.size(); ++i) {
        const JsonValue& m = members.items[i];
        std::string mat = at + ".members[" + std::to_string(i) + "]";
        object(m, mat);
        keys(m, mat, {"name", "type", "pack", "struct", "ndarray", "ndim", "texture", "format"});
        ArgpackMember member;
        member.name = string(required(m, mat, "name"), mat + ".name");
        if (const JsonValue* type = m.find("type")) {
          member.type = value_type(*type, mat + ".type");
        } else if (const JsonValue* pack = m.find("pack")) {
          member.kind = MemberKind::Pack;
          nested_names.back().emplace_back(pack, mat + ".pack");
        } else if (const JsonValue* st = m.find("struct")) {
          member.kind = MemberKind::Struct;
          nested_names.back().emplace_back(st, mat + ".struct");
        } else if (const JsonValue* nd = m.find("ndarray")) {
          member.kind = MemberKind::Ndarray;
          member.type = value_type(*nd, mat + ".ndarray");
          member.ndim = small_integer(required(m, mat, "ndim"), mat + ".ndim");
          if (member.ndim < 1 || member.ndim > kMaxDims)
            fail(m, mat + ".ndim", "ndarrays have 1 to 4 dimensions");
        } else if (const JsonValue* tex = m.find("texture")) {
          member.kind = MemberKind::Texture;
          member.ndim = small_integer(*tex, mat + ".texture");
          if (member.ndim != 2 && member.ndim != 3)
            fail(*tex, mat + ".texture", "textures have 2 or 3 dimensions");
          if (const JsonValue* fmt = m.find("format")) {
            std::string f = string(*fmt, mat + ".format");
            if (!parse_texture_format(f, &member.format))
              fail(*fmt, mat + ".format",
                   "unknown texture format '" + f + "' (r32f, rg32f, rgba32f, rgba8)");
          }
        } else {
          fail(m, mat,
               "a member needs one of \"type\", \"pack\", \"struct\", \"ndarray\", \"texture\"");
        }
        t.members.push_back(member);
      }
      doc.argpack_types.push_back(std::move(t));
    });
    // resolve nested type names now that every type is known
    for (size_t t = 0; t < doc.argpack_types.size(); ++t) {
      size_t n = 0;
      for (ArgpackMember& m : doc.argpack_types[t].members) {
        if (m.kind != MemberKind::Pack && m.kind != MemberKind::Struct) continue;
        const auto& [json, at] = nested_names[t][n++];
        std::string name = string(*json, at);
        m.nested = doc.argpack_type(name);
        if (m.nested < 0) fail(*json, at, "no argpack type is named '" + name + "'");
      }
    }
    try {
      layout_argpack_types(doc.argpack_types);
    } catch (const Error& e) {
      throw Error(Place{path_}, e.message());
    }
  }

  ArgpackDecl argpack(const JsonValue& v, const std::string& at) {
    object(v, at);
    keys(v, at, {"name", "type", "values"});
    ArgpackDecl a;
    a.name = string(required(v, at, "name"), at + ".name");
    a.type = string(required(v, at, "type"), at + ".type");
    if (const JsonValue* values = v.find("values")) a.values = literal_map(*values, at + ".values");
    return a;
  }

  Input input(const std::string& pin, const JsonValue& v, const std::string& at) const {
    Input in;
    in.pin = pin;
    if (v.kind != Kind::String) {
      in.literal = literal(v, at);
      return in;
    }
    // a link: "NODE" or "NODE.PIN"
    const std::string& s = v.text;
    size_t dot = s.find('.');
    std::string id = s.substr(0, dot);
    int64_t node = 0;
    auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), node);
    if (id.empty() || ec != std::errc() || end != id.data() + id.size() || node < 0 ||
        (dot != std::string::npos && dot + 1 == s.size()))
      fail(v, at,
           "bad link \"" + s +
               "\": links are written \"NODE.PIN\" (for example \"3.out\") or \"NODE\"");
    if (node > INT32_MAX)  // node ids are small integers (Node::id); no node has this one
      fail(v, at,
           "bad link \"" + s + "\": node id " + id + " is out of range (expected 0 to " +
               std::to_string(INT32_MAX) + ")");
    in.linked = true;
    in.from_node = static_cast<int>(node);
    in.from_pin = dot == std::string::npos ? "out" : s.substr(dot + 1);
    in.literal.spelling = s;  // remembers whether ".out" was written, for byte-identical saves
    return in;
  }

  Node node(const JsonValue& v, const std::string& at) {
    object(v, at);
    keys(v, at, {"id", "type", "version", "inputs", "params", "regions"});
    Node n;
    n.id = small_integer(required(v, at, "id"), at + ".id");
    int saved = node_;
    node_ = n.id;
    n.type = string(required(v, at, "type"), at + ".type");
    if (const JsonValue* ver = v.find("version")) n.version = small_integer(*ver, at + ".version");
    if (const JsonValue* inputs = v.find("inputs")) {
      object(*inputs, at + ".inputs");
      for (const auto& [pin, value] : inputs->members) {
        pin_ = pin;
        n.inputs.push_back(input(pin, value, at + ".inputs." + pin));
      }
      pin_.clear();
    }
    if (const JsonValue* params = v.find("params")) n.params = literal_map(*params, at + ".params");
    if (const JsonValue* regions = v.find("regions")) {
      object(*regions, at + ".regions");
      for (const auto& [name, list] : regions->members) {
        Region r;
        r.name = name;
        std::string rat = at + ".regions." + name;
        if (list.kind != Kind::Array) fail(list, rat, "expected a list of nodes");
        for (size_t i = 0; i < list.items.size(); ++i)
          r.nodes.push_back(node(list.items[i], rat + "[" + std::to_string(i) + "]"));
        node_ = n.id;
        n.regions.push_back(std::move(r));
      }
    }
    node_ = saved;
    return n;
  }

  std::vector<Node> nodes(const JsonValue& v, const std::string& at) {
    std::vector<Node> out;
    const JsonValue& list = required(v, at, "nodes");
    if (list.kind != Kind::Array) fail(list, at + ".nodes", "expected a list of nodes");
    for (size_t i = 0; i < list.items.size(); ++i)
      out.push_back(node(list.items[i], at + ".nodes[" + std::to_string(i) + "]"));
    return out;
  }

  KernelDecl kernel(const JsonValue& v, const std::string& at) {
    object(v, at);
    keys(v, at, {"name", "params", "returns", "workgroup_size", "block_local", "nodes"});
    KernelDecl k;
    k.name = string(required(v, at, "name"), at + ".name");
    if (const JsonValue* wg = v.find("workgroup_size")) {
      k.workgroup_size = small_integer(*wg, at + ".workgroup_size", 1);
      if (k.workgroup_size > 1024)
        fail(*wg, at + ".workgroup_size", "a workgroup has 1 to 1024 invocations");
    }
    kernel_ = k.name;
    each(v, "params", [&](const JsonValue& p, const std::string& pat0) {
      std::string pat = at + "." + pat0;
      object(p, pat);
      keys(p, pat, {"name", "kind", "type", "ndim"});
      KernelParam param;
      param.name = string(required(p, pat, "name"), pat + ".name");
      pin_ = param.name;
      const JsonValue& kind = required(p, pat, "kind");
      std::string ks = string(kind, pat + ".kind");
      if (ks == "value")
        param.kind = ParamKind::Value;
      else if (ks == "ndarray")
        param.kind = ParamKind::Ndarray;
      else if (ks == "texture")
        param.kind = ParamKind::Texture;
      else if (ks == "argpack")
        param.kind = ParamKind::Argpack;
      else if (ks == "template")
        param.kind = ParamKind::Template;
      else
        fail(kind, pat + ".kind",
             "expected one of value, ndarray, texture, argpack, template; found '" + ks + "'");
      if (const JsonValue* type = p.find("type")) param.type = string(*type, pat + ".type");
      if (const JsonValue* ndim = p.find("ndim")) param.ndim = small_integer(*ndim, pat + ".ndim");
      pin_.clear();
      k.params.push_back(param);
    });
    each(v, "returns", [&](const JsonValue& r, const std::string& rat) {
      k.returns.push_back(string(r, at + "." + rat));
    });
    if (const JsonValue* list = v.find("block_local")) {
      std::string bat = at + ".block_local";
      if (list->kind != Kind::Array)
        fail(*list, bat, std::string("expected a list of names, found ") + kind_name(list->kind));
      for (size_t i = 0; i < list->items.size(); ++i)
        k.block_local.push_back(string(list->items[i], bat + "[" + std::to_string(i) + "]"));
    }
    k.nodes = nodes(v, at);
    kernel_.clear();
    return k;
  }

  FunctionDecl function(const JsonValue& v, const std::string& at) {
    object(v, at);
    keys(v, at, {"name", "inputs", "outputs", "nodes"});
    FunctionDecl f;
    f.name = string(required(v, at, "name"), at + ".name");
    kernel_ = f.name;
    in_function_ = true;
    auto ports = [&](const char* key, std::vector<FunctionPort>& out) {
      each(v, key, [&](const JsonValue& p, const std::string& pat0) {
        std::string pat = at + "." + pat0;
        object(p, pat);
        keys(p, pat, {"name", "type"});
        out.push_back({string(required(p, pat, "name"), pat + ".name"),
                       string(required(p, pat, "type"), pat + ".type")});
      });
    };
    ports("inputs", f.inputs);
    ports("outputs", f.outputs);
    f.nodes = nodes(v, at);
    kernel_.clear();
    in_function_ = false;
    return f;
  }

  Pipeline pipeline(const JsonValue& v, const std::string& at) {
    object(v, at);
    keys(v, at, {"name", "launches"});
    Pipeline p;
    p.name = string(required(v, at, "name"), at + ".name");
    each(v, "launches", [&](const JsonValue& l, const std::string& lat0) {
      std::string lat = at + "." + lat0;
      object(l, lat);
      keys(l, lat, {"kernel", "args"});
      Launch launch;
      launch.kernel = string(required(l, lat, "kernel"), lat + ".kernel");
      if (const JsonValue* args = l.find("args")) launch.args = literal_map(*args, lat + ".args");
      p.launches.push_back(std::move(launch));
    });
    return p;
  }

  // Layout must match the logic: an entry for a graph that does not exist, a second entry
  // for one graph or a position of a node the graph lacks is an error, never kept silently.
  GraphLayout layout(const JsonValue& v, const std::string& at, const Document& doc) {
    object(v, at);
    keys(v, at, {"graph", "positions", "comments", "collapsed"});
    GraphLayout g;
    const JsonValue& graph = required(v, at, "graph");
    g.graph = string(graph, at + ".graph");
    if (!graph_ids_) graph_ids_ = graph_node_ids(doc);  // kernels and functions are read
    auto ids = graph_ids_->find(g.graph);
    if (ids == graph_ids_->end())
      fail(graph, at + ".graph",
           "layout of '" + g.graph + "', but no kernel or function has that name");
    if (!laid_out_.insert(g.graph).second)
      fail(graph, at + ".graph", "a second layout entry for '" + g.graph + "'");
    const std::unordered_set<int>& nodes = ids->second;
    if (const JsonValue* positions = v.find("positions")) {
      object(*positions, at + ".positions");
      for (const auto& [id, xy] : positions->members) {
        std::string pat = at + ".positions." + id;
        NodePosition np;
        JsonValue id_value;
        id_value.kind = Kind::Number;
        id_value.text = id;
        id_value.line = xy.line;
        id_value.column = xy.column;
        np.node = small_integer(id_value, pat);
        // "03" and "3" name one node: a key must spell the id as it is saved, so that a
        // document never saves two positions for one node.
        if (id != std::to_string(np.node))
          fail(xy, pat,
               "position key \"" + id + "\" is not a node id as written (expected \"" +
                   std::to_string(np.node) + "\")");
        if (!nodes.count(np.node))
          fail(xy, pat, "position of node " + id + ", but '" + g.graph + "' has no node " + id);
        if (xy.kind != Kind::Array || xy.items.size() != 2) fail(xy, pat, "expected [x, y]");
        np.x = coordinate(xy.items[0], pat);
        np.y = coordinate(xy.items[1], pat);
        g.positions.push_back(np);
      }
    }
    each(v, "comments", [&](const JsonValue& c, const std::string& cat0) {
      g.comments.push_back(comment(c, at + "." + cat0));
    });
    // Written ascending: an unsorted or repeated list would not save back as it was read.
    each(v, "collapsed", [&](const JsonValue& c, const std::string& cat0) {
      std::string cat = at + "." + cat0;
      int id = small_integer(c, cat);
      if (!nodes.count(id))
        fail(c, cat,
             "node " + std::to_string(id) + " collapsed, but '" + g.graph + "' has no node " +
                 std::to_string(id));
      if (!g.collapsed.empty() && id <= g.collapsed.back())
        fail(c, cat, "collapsed nodes are listed once each, in ascending order");
      g.collapsed.push_back(id);
    });
    return g;
  }

  CommentFrame comment(const JsonValue& v, const std::string& at) const {
    object(v, at);
    keys(v, at, {"title", "rect", "color"});
    CommentFrame c;
    c.title = string(required(v, at, "title"), at + ".title");
    const JsonValue& rect = required(v, at, "rect");
    if (rect.kind != Kind::Array || rect.items.size() != 4)
      fail(rect, at + ".rect", "expected [x, y, width, height]");
    float* out[] = {&c.x, &c.y, &c.w, &c.h};
    for (size_t i = 0; i < 4; ++i) *out[i] = coordinate(rect.items[i], at + ".rect");
    if (!(c.w > 0) || !(c.h > 0))
      fail(rect, at + ".rect", "a comment's width and height must be positive");
    if (const JsonValue* color = v.find("color")) {
      c.color = string(*color, at + ".color");
      bool ok = c.color.size() == 7 && c.color[0] == '#';
      for (size_t i = 1; ok && i < 7; ++i)
        ok = std::isxdigit(static_cast<unsigned char>(c.color[i])) != 0;
      if (!ok)
        fail(*color, at + ".color", "expected a colour \"#rrggbb\", found '" + c.color + "'");
    }
    return c;
  }

  // The editor's viewport settings; a resource it names must exist and suit the way shown.
  ViewSettings view(const JsonValue& v, const Document& doc) const {
    object(v, "view");
    keys(v, "view", {"show", "as", "color_by", "mesh", "point_size"});
    ViewSettings s;
    s.show = string(required(v, "view", "show"), "view.show");
    s.as = string(required(v, "view", "as"), "view.as");
    if (const JsonValue* c = v.find("color_by")) s.color_by = string(*c, "view.color_by");
    if (const JsonValue* m = v.find("mesh")) s.mesh = string(*m, "view.mesh");
    if (const JsonValue* p = v.find("point_size"))
      s.point_size = static_cast<float>(number(*p, "view.point_size"));
    std::string key;
    std::string why = view_problem(doc, s, &key);
    if (!why.empty()) fail(v.find(key) ? *v.find(key) : v, "view." + key, why);
    return s;
  }

  void unique_names(const Document& doc) const {
    std::set<std::string> seen;
    auto check = [&](const std::string& section, const std::string& name) {
      if (!seen.insert(section + ":" + name).second)
        throw Error(Place{path_}, "two " + section + " are named '" + name + "'");
    };
    for (const auto& k : doc.kernels) check("kernels", k.name);
    for (const auto& f : doc.functions) check("functions", f.name);
    for (const auto& p : doc.pipelines) check("pipelines", p.name);
    for (const auto& t : doc.argpack_types) check("argpack types", t.name);
  }

  std::string path_;
  std::string kernel_;  // the kernel or function being read
  bool in_function_ = false;
  int node_ = -1;
  std::string pin_;
  std::optional<GraphNodeIds> graph_ids_;     // layout: the graphs' node ids, found once
  std::unordered_set<std::string> laid_out_;  // layout: graphs with an entry so far
};

// ---------------------------------------------------------------- writing

std::string write_literal(const Literal& l) {
  switch (l.kind) {
    case Literal::Kind::Bool: return l.b ? "true" : "false";
    case Literal::Kind::Int:
    case Literal::Kind::Float: return number_text(l);
    case Literal::Kind::String: return json_quote(l.s);
    case Literal::Kind::List: {
      std::string s = "[";
      for (size_t i = 0; i < l.list.size(); ++i) s += (i ? ", " : "") + write_literal(l.list[i]);
      return s + "]";
    }
    case Literal::Kind::None: break;
  }
  return "null";
}

std::string write_literal_map(const std::vector<std::pair<std::string, Literal>>& m) {
  std::string s = "{";
  for (size_t i = 0; i < m.size(); ++i)
    s += (i ? ", " : "") + json_quote(m[i].first) + ": " + write_literal(m[i].second);
  return s + "}";
}

std::string write_extents(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Layout coordinates are floats: their shortest exact float form ("20.5", "0.1", "-3"), so a
// position written by hand or by the editor reads back and saves unchanged.
std::string coord(float v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : "0";
}

std::string pad(int indent) { return std::string(static_cast<size_t>(indent), ' '); }

void write_nodes(const std::vector<Node>& nodes, int indent, std::string& out);

void write_node(const Node& n, int indent, std::string& out) {
  out += pad(indent) + "{\"id\": " + std::to_string(n.id) + ", \"type\": " + json_quote(n.type);
  if (n.version != 1) out += ", \"version\": " + std::to_string(n.version);
  if (!n.inputs.empty()) {
    out += ", \"inputs\": {";
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Input& in = n.inputs[i];
      out += (i ? ", " : "") + json_quote(in.pin) + ": ";
      if (in.linked) {
        std::string link =
            std::to_string(in.from_node) + (in.from_pin == "out" ? "" : "." + in.from_pin);
        if (in.from_pin == "out" && in.literal.spelling == link + ".out") link += ".out";
        out += json_quote(link);
      } else {
        out += write_literal(in.literal);
      }
    }
    out += "}";
  }
  if (!n.params.empty()) out += ", \"params\": " + write_literal_map(n.params);
  if (!n.regions.empty()) {
    out += ", \"regions\": {";
    for (size_t r = 0; r < n.regions.size(); ++r) {
      out += (r ? ", " : "") + json_quote(n.regions[r].name) + ": [";
      if (!n.regions[r].nodes.empty()) {
        out += "\n";
        write_nodes(n.regions[r].nodes, indent + 2, out);
        out += "\n" + pad(indent);
      }
      out += "]";
    }
    out += "}";
  }
  out += "}";
}

void write_nodes(const std::vector<Node>& nodes, int indent, std::string& out) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    write_node(nodes[i], indent, out);
    if (i + 1 < nodes.size()) out += ",\n";
  }
}

void write_graph_nodes(const std::vector<Node>& nodes, int indent, std::string& out) {
  out += pad(indent) + "\"nodes\": [";
  if (!nodes.empty()) {
    out += "\n";
    write_nodes(nodes, indent + 2, out);
    out += "\n" + pad(indent);
  }
  out += "]\n";
}

const char* param_kind_text(ParamKind k) {
  switch (k) {
    case ParamKind::Value: return "value";
    case ParamKind::Ndarray: return "ndarray";
    case ParamKind::Texture: return "texture";
    case ParamKind::Argpack: return "argpack";
    case ParamKind::Template: return "template";
  }
  return "?";
}

std::string write_kernel(const KernelDecl& k, int indent) {
  std::string out =
      pad(indent) + "{\n" + pad(indent + 2) + "\"name\": " + json_quote(k.name) + ",\n";
  if (!k.params.empty()) {
    out += pad(indent + 2) + "\"params\": [\n";
    for (size_t i = 0; i < k.params.size(); ++i) {
      const KernelParam& p = k.params[i];
      out += pad(indent + 4) + "{\"name\": " + json_quote(p.name) +
             ", \"kind\": " + json_quote(param_kind_text(p.kind));
      if (!p.type.empty()) out += ", \"type\": " + json_quote(p.type);
      if (p.ndim != 0) out += ", \"ndim\": " + std::to_string(p.ndim);
      out += i + 1 < k.params.size() ? "},\n" : "}\n";
    }
    out += pad(indent + 2) + "],\n";
  }
  if (!k.returns.empty()) {
    out += pad(indent + 2) + "\"returns\": [";
    for (size_t i = 0; i < k.returns.size(); ++i) out += (i ? ", " : "") + json_quote(k.returns[i]);
    out += "],\n";
  }
  if (k.workgroup_size)
    out += pad(indent + 2) + "\"workgroup_size\": " + std::to_string(k.workgroup_size) + ",\n";
  if (!k.block_local.empty()) {
    out += pad(indent + 2) + "\"block_local\": [";
    for (size_t i = 0; i < k.block_local.size(); ++i)
      out += (i ? ", " : "") + json_quote(k.block_local[i]);
    out += "],\n";
  }
  write_graph_nodes(k.nodes, indent + 2, out);
  return out + pad(indent) + "}";
}

std::string write_function(const FunctionDecl& f, int indent) {
  std::string out =
      pad(indent) + "{\n" + pad(indent + 2) + "\"name\": " + json_quote(f.name) + ",\n";
  auto ports = [&](const char* key, const std::vector<FunctionPort>& v) {
    if (v.empty()) return;
    out += pad(indent + 2) + "\"" + key + "\": [";
    for (size_t i = 0; i < v.size(); ++i)
      out += (i ? ", " : "") + std::string("{\"name\": ") + json_quote(v[i].name) +
             ", \"type\": " + json_quote(v[i].type) + "}";
    out += "],\n";
  };
  ports("inputs", f.inputs);
  ports("outputs", f.outputs);
  write_graph_nodes(f.nodes, indent + 2, out);
  return out + pad(indent) + "}";
}

std::string write_argpack_type(const Document& doc, const ArgpackType& t) {
  std::string s = "{\"name\": " + json_quote(t.name) +
                  ", \"kind\": " + (t.is_pack ? "\"pack\"" : "\"struct\"") + ", \"members\": [";
  for (size_t i = 0; i < t.members.size(); ++i) {
    const ArgpackMember& m = t.members[i];
    s += (i ? ", " : "") + std::string("{\"name\": ") + json_quote(m.name) + ", ";
    std::string nested = m.nested >= 0 && static_cast<size_t>(m.nested) < doc.argpack_types.size()
                             ? doc.argpack_types[static_cast<size_t>(m.nested)].name
                             : "";
    switch (m.kind) {
      case MemberKind::Value: s += "\"type\": " + json_quote(value_type_name(m.type)); break;
      case MemberKind::Pack: s += "\"pack\": " + json_quote(nested); break;
      case MemberKind::Struct: s += "\"struct\": " + json_quote(nested); break;
      case MemberKind::Ndarray:
        s += "\"ndarray\": " + json_quote(value_type_name(m.type)) +
             ", \"ndim\": " + std::to_string(m.ndim);
        break;
      case MemberKind::Texture:
        s += "\"texture\": " + std::to_string(m.ndim);
        if (m.format != TextureFormat::RGBA32F)
          s += ", \"format\": \"" + std::string(texture_format_name(m.format)) + "\"";
        break;
    }
    s += "}";
  }
  return s + "]}";
}

template <typename T, typename F>
void write_section(std::string& out, const char* key, const std::vector<T>& items, F&& one) {
  if (items.empty()) return;
  out += ",\n  \"" + std::string(key) + "\": [\n";
  for (size_t i = 0; i < items.size(); ++i)
    out += one(items[i]) + (i + 1 < items.size() ? ",\n" : "\n");
  out += "  ]";
}

}  // namespace

Document load_document(std::string_view text, const std::string& path) {
  JsonValue root = parse_json(text, path);
  if (root.kind == Kind::Object) migrate_document(root, path);
  return Reader(path).read(root);
}

std::string program_key(const Document& doc) {
  Document copy = doc;
  copy.layout.clear();
  copy.view = {};
  return save_document(copy);
}

Document load_document_file(const std::string& path) {
  // A regular file of bounded size: a FIFO or a device named as a document must fail, not
  // block the editor or the engine.
  return load_document(read_text_file_checked(path, "document"), path);
}

std::string save_document(const Document& doc) {
  std::string out =
      "{\n  \"format\": \"loom-graph\",\n  \"version\": " + std::to_string(kFormatVersion);
  if (!doc.name.empty()) out += ",\n  \"name\": " + json_quote(doc.name);
  write_section(out, "fields", doc.fields, [](const FieldDesc& f) {
    return "    {\"name\": " + json_quote(f.name) +
           ", \"type\": " + json_quote(value_type_name(f.elem)) +
           ", \"shape\": " + write_extents(f.shape) +
           (f.layout == Layout::SoA ? ", \"layout\": \"soa\"" : "") +
           (f.needs_grad ? ", \"needs_grad\": true" : "") +
           (f.needs_dual ? ", \"needs_dual\": true}" : "}");
  });
  write_section(out, "ndarrays", doc.ndarrays, [](const NdarrayDecl& n) {
    return "    {\"name\": " + json_quote(n.name) +
           ", \"type\": " + json_quote(value_type_name(n.elem)) +
           ", \"shape\": " + write_extents(n.shape) +
           (n.needs_grad ? ", \"needs_grad\": true" : "") +
           (n.needs_dual ? ", \"needs_dual\": true}" : "}");
  });
  write_section(out, "textures", doc.textures, [](const TextureDecl& t) {
    return "    {\"name\": " + json_quote(t.name) + ", \"size\": " + write_extents(t.size) +
           ", \"format\": \"" + texture_format_name(t.format) + "\"}";
  });
  write_section(out, "argpack_types", doc.argpack_types,
                [&](const ArgpackType& t) { return "    " + write_argpack_type(doc, t); });
  write_section(out, "argpacks", doc.argpacks, [](const ArgpackDecl& a) {
    std::string s = "    {\"name\": " + json_quote(a.name) + ", \"type\": " + json_quote(a.type);
    if (!a.values.empty()) s += ", \"values\": " + write_literal_map(a.values);
    return s + "}";
  });
  write_section(out, "functions", doc.functions,
                [](const FunctionDecl& f) { return write_function(f, 4); });
  write_section(out, "kernels", doc.kernels,
                [](const KernelDecl& k) { return write_kernel(k, 4); });
  write_section(out, "pipelines", doc.pipelines, [](const Pipeline& p) {
    std::string s = "    {\"name\": " + json_quote(p.name) + ", \"launches\": [";
    for (size_t i = 0; i < p.launches.size(); ++i) {
      const Launch& l = p.launches[i];
      s += "\n      {\"kernel\": " + json_quote(l.kernel);
      if (!l.args.empty()) s += ", \"args\": " + write_literal_map(l.args);
      s += i + 1 < p.launches.size() ? "}," : "}";
    }
    return s + (p.launches.empty() ? "]}" : "\n    ]}");
  });
  write_section(out, "layout", doc.layout, [](const GraphLayout& g) {
    std::string s = "    {\"graph\": " + json_quote(g.graph) + ", \"positions\": {";
    for (size_t i = 0; i < g.positions.size(); ++i)
      s += (i ? ", " : "") + json_quote(std::to_string(g.positions[i].node)) + ": [" +
           coord(g.positions[i].x) + ", " + coord(g.positions[i].y) + "]";
    s += "}";
    if (!g.comments.empty()) {
      s += ", \"comments\": [";
      for (size_t i = 0; i < g.comments.size(); ++i) {
        const CommentFrame& c = g.comments[i];
        s += (i ? ", " : "") + std::string("{\"title\": ") + json_quote(c.title) + ", \"rect\": [" +
             coord(c.x) + ", " + coord(c.y) + ", " + coord(c.w) + ", " + coord(c.h) + "]";
        if (!c.color.empty()) s += ", \"color\": " + json_quote(c.color);
        s += "}";
      }
      s += "]";
    }
    if (!g.collapsed.empty()) {
      s += ", \"collapsed\": [";
      for (size_t i = 0; i < g.collapsed.size(); ++i)
        s += (i ? ", " : "") + std::to_string(g.collapsed[i]);
      s += "]";
    }
    return s + "}";
  });
  if (!doc.view.empty()) {
    const ViewSettings& v = doc.view;
    out += ",\n  \"view\": {\"show\": " + json_quote(v.show) + ", \"as\": " + json_quote(v.as);
    if (!v.color_by.empty()) out += ", \"color_by\": " + json_quote(v.color_by);
    if (!v.mesh.empty()) out += ", \"mesh\": " + json_quote(v.mesh);
    if (v.point_size != 0) {
      char buf[32];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v.point_size);
      out += ", \"point_size\": " + std::string(buf, ec == std::errc() ? end : buf);
    }
    out += "}";
  }
  return out + "\n}\n";
}

void save_document_file(const Document& doc, const std::string& path) {
  std::string text = save_document(doc);
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw Error(Place{path}, "cannot write the document");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw Error(Place{path}, "cannot replace the document");
}

namespace {

void collect_calls(const Document& doc, const std::vector<Node>& nodes,
                   std::set<std::string>& out) {
  for (const Node& n : nodes) {
    if (n.type == "call") {
      const Literal* f = n.param("function");
      if (f && f->kind == Literal::Kind::String && out.insert(f->s).second) {
        if (const FunctionDecl* fn = doc.function(f->s)) collect_calls(doc, fn->nodes, out);
      }
    }
    for (const Region& r : n.regions) collect_calls(doc, r.nodes, out);
  }
}

}  // namespace

std::string kernel_canonical_text(const Document& doc, const std::string& kernel) {
  const KernelDecl* k = doc.kernel(kernel);
  if (!k) throw Error(Place{doc.path, kernel}, "the document has no kernel '" + kernel + "'");
  // Only what the compiled code may depend on: the kernel, its functions, the resource
  // declarations and argpack types it may reference. Not layout, names or pipelines.
  Document part;
  part.fields = doc.fields;
  part.textures = doc.textures;
  part.argpack_types = doc.argpack_types;
  part.kernels.push_back(*k);
  std::set<std::string> calls;
  collect_calls(doc, k->nodes, calls);
  for (const std::string& name : calls)
    if (const FunctionDecl* f = doc.function(name)) part.functions.push_back(*f);
  return save_document(part);
}

std::string kernel_content_key(const Document& doc, const std::string& kernel) {
  return hash128_hex(kernel_canonical_text(doc, kernel));
}

}  // namespace loom::graph
