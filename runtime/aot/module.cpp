#include "runtime/aot/module.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "runtime/common/abi_serialize.h"
#include "runtime/common/error.h"
#include "runtime/common/json_value.h"

namespace loom::aot {

const char* arch_name(Arch a) { return a == Arch::Vulkan ? "vulkan" : "cpu"; }

const char* template_kind_name(TemplateArgument::Kind k) {
  switch (k) {
    case TemplateArgument::Kind::Field: return "field";
    case TemplateArgument::Kind::Int: return "int";
    case TemplateArgument::Kind::Float: return "float";
    case TemplateArgument::Kind::Bool: return "bool";
    case TemplateArgument::Kind::Ndarray: return "ndarray";
  }
  return "?";
}

void finalize_module(Module& module) {
  module.meta.blobs.clear();
  for (const auto& [name, bytes] : module.blobs)  // std::map: sorted by name
    module.meta.blobs.push_back(
        {name, bytes.size(), hash128_hex(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()))});
}

// ---- writing

namespace {

JsonValue str(const std::string& s) {
  JsonValue v;
  v.kind = JsonValue::Kind::String;
  v.text = s;
  return v;
}
JsonValue num(int64_t i) {
  JsonValue v;
  v.kind = JsonValue::Kind::Number;
  v.text = std::to_string(i);
  return v;
}
JsonValue unum(uint64_t i) {
  JsonValue v;
  v.kind = JsonValue::Kind::Number;
  v.text = std::to_string(i);
  return v;
}
JsonValue real(double d) {
  JsonValue v;
  v.kind = JsonValue::Kind::Number;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  v.text = buf;
  if (v.text.find_first_of(".eEn") == std::string::npos) v.text += ".0";  // stays a float on reading
  return v;
}
JsonValue boolean(bool b) {
  JsonValue v;
  v.kind = JsonValue::Kind::Bool;
  v.b = b;
  return v;
}
JsonValue array() {
  JsonValue v;
  v.kind = JsonValue::Kind::Array;
  return v;
}
JsonValue object() {
  JsonValue v;
  v.kind = JsonValue::Kind::Object;
  return v;
}
void put(JsonValue& o, const std::string& key, JsonValue v) { o.members.emplace_back(key, std::move(v)); }
template <typename T, typename F>
JsonValue array_of(const std::vector<T>& items, F&& each) {
  JsonValue a = array();
  for (const T& item : items) a.items.push_back(each(item));
  return a;
}

bool is_scalar_json(const JsonValue& v) {
  return v.kind != JsonValue::Kind::Array && v.kind != JsonValue::Kind::Object;
}

void write(const JsonValue& v, int indent, std::string& out) {
  std::string pad(static_cast<size_t>(indent + 2), ' ');
  switch (v.kind) {
    case JsonValue::Kind::Null: out += "null"; return;
    case JsonValue::Kind::Bool: out += v.b ? "true" : "false"; return;
    case JsonValue::Kind::Number: out += v.text; return;
    case JsonValue::Kind::String: out += json_quote(v.text); return;
    case JsonValue::Kind::Array: {
      bool flat = std::all_of(v.items.begin(), v.items.end(), is_scalar_json);
      out += '[';
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) out += flat ? ", " : ",";
        if (!flat) out += "\n" + pad;
        write(v.items[i], indent + 2, out);
      }
      if (!flat && !v.items.empty()) out += "\n" + std::string(static_cast<size_t>(indent), ' ');
      out += ']';
      return;
    }
    case JsonValue::Kind::Object: {
      out += '{';
      for (size_t i = 0; i < v.members.size(); ++i) {
        out += i ? ",\n" : "\n";
        out += pad + json_quote(v.members[i].first) + ": ";
        write(v.members[i].second, indent + 2, out);
      }
      if (!v.members.empty()) out += "\n" + std::string(static_cast<size_t>(indent), ' ');
      out += '}';
      return;
    }
  }
}

const char* layout_name(Layout l) { return l == Layout::SoA ? "soa" : "aos"; }
const char* member_kind_name(MemberKind k) {
  switch (k) {
    case MemberKind::Value: return "value";
    case MemberKind::Struct: return "struct";
    case MemberKind::Pack: return "pack";
    case MemberKind::Ndarray: return "ndarray";
    case MemberKind::Texture: return "texture";
  }
  return "?";
}
const char* bound_kind_name(RangeBound::Kind k) {
  switch (k) {
    case RangeBound::Kind::Const: return "const";
    case RangeBound::Kind::Arg: return "arg";
    case RangeBound::Kind::Shape: return "shape";
  }
  return "?";
}
const char* value_kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::Int: return "int";
    case Value::Kind::Float: return "float";
    case Value::Kind::Bool: return "bool";
    case Value::Kind::List: return "list";
    case Value::Kind::Resource: return "resource";
  }
  return "?";
}

JsonValue type_json(ValueType t) { return str(value_type_name(t)); }
JsonValue shape_json(const std::vector<int64_t>& s) { return array_of(s, [](int64_t e) { return num(e); }); }

JsonValue value_json(const Value& v) {
  JsonValue o = object();
  put(o, "kind", str(value_kind_name(v.kind)));
  switch (v.kind) {
    case Value::Kind::Int:
      put(o, "value", v.above_int64 ? unum(static_cast<uint64_t>(v.i)) : num(v.i));
      break;
    case Value::Kind::Float: put(o, "value", real(v.f)); break;
    case Value::Kind::Bool: put(o, "value", boolean(v.b)); break;
    case Value::Kind::List: put(o, "value", array_of(v.list, [](double d) { return real(d); })); break;
    case Value::Kind::Resource: put(o, "value", str(v.resource)); break;
  }
  return o;
}

JsonValue named_values_json(const std::vector<std::pair<std::string, Value>>& values) {
  JsonValue o = object();
  for (const auto& [name, v] : values) put(o, name, value_json(v));
  return o;
}

JsonValue abi_json(const KernelABI& abi) {
  JsonValue o = object();
  put(o, "params", array_of(abi.params, [](const ParamDesc& p) {
        JsonValue j = object();
        put(j, "name", str(p.name));
        put(j, "kind", str(param_kind_name(p.kind)));
        put(j, "type", type_json(p.type));
        put(j, "ndim", num(p.ndim));
        put(j, "argpack_type", num(p.argpack_type));
        put(j, "size", num(p.size));
        return j;
      }));
  put(o, "resources", array_of(abi.resources, [](const ResourceDesc& r) {
        JsonValue j = object();
        put(j, "kind", str(resource_kind_name(r.kind)));
        put(j, "dtype", str(std::string(scalar_name(r.dtype))));
        put(j, "components", num(r.components));
        put(j, "ndim", num(r.ndim));
        put(j, "shape", shape_json(std::vector<int64_t>(r.shape.begin(), r.shape.end())));
        put(j, "layout", str(layout_name(r.layout)));
        put(j, "format", str(texture_format_name(r.format)));
        put(j, "field", str(r.field));
        put(j, "param", num(r.param));
        put(j, "param_offset", num(r.param_offset));
        return j;
      }));
  put(o, "returns", array_of(abi.returns, type_json));
  put(o, "tasks", array_of(abi.tasks, [](const TaskDesc& t) {
        JsonValue j = object();
        put(j, "kind", num(t.kind));
        put(j, "symbol", str(t.symbol));
        put(j, "extent_symbol", str(t.extent_symbol));
        put(j, "dims", num(t.dims));
        return j;
      }));
  put(o, "temps_size", num(abi.temps_size));
  return o;
}

JsonValue bounds_json(const std::vector<RangeBound>& bounds) {
  return array_of(bounds, [](const RangeBound& b) {
    JsonValue j = object();
    put(j, "kind", str(bound_kind_name(b.kind)));
    put(j, "value", num(b.value));
    put(j, "offset", num(b.offset));
    return j;
  });
}

JsonValue spirv_json(const SpirvKernel& k, const std::vector<std::string>& blobs) {
  JsonValue o = object();
  put(o, "bindings", array_of(k.bindings, [](const SpirvBinding& b) {
        JsonValue j = object();
        put(j, "binding", num(b.binding));
        put(j, "kind", str(binding_kind_name(b.kind)));
        put(j, "index", num(b.index));
        put(j, "sampled_linearly", boolean(b.sampled_linearly));
        return j;
      }));
  put(o, "args_in_push_constants", boolean(k.args_in_push_constants));
  JsonValue tasks = array();
  for (size_t i = 0; i < k.tasks.size(); ++i) {
    const SpirvTask& t = k.tasks[i];
    JsonValue j = object();
    put(j, "kind", num(t.kind));
    put(j, "spirv", str(i < blobs.size() ? blobs[i] : ""));
    put(j, "workgroup_size", num(t.workgroup_size));
    put(j, "grid_dims", num(t.grid_dims));
    put(j, "host_extent", boolean(t.host_extent));
    put(j, "begin", bounds_json(t.begin));
    put(j, "end", bounds_json(t.end));
    put(j, "access", array_of(t.access, [](uint8_t a) { return num(a); }));
    tasks.items.push_back(std::move(j));
  }
  put(o, "tasks", std::move(tasks));
  put(o, "assert_messages", array_of(k.assert_messages, str));
  put(o, "requirements", num(k.requirements));
  return o;
}

JsonValue template_json(const TemplateArgument& t) {
  JsonValue j = object();
  put(j, "param", str(t.param));
  put(j, "kind", str(template_kind_name(t.kind)));
  switch (t.kind) {
    case TemplateArgument::Kind::Field: put(j, "value", str(t.field)); break;
    case TemplateArgument::Kind::Int: put(j, "value", num(t.i)); break;
    case TemplateArgument::Kind::Float: put(j, "value", real(t.f)); break;
    case TemplateArgument::Kind::Bool: put(j, "value", boolean(t.b)); break;
    case TemplateArgument::Kind::Ndarray:
      put(j, "elem", type_json(t.elem));
      put(j, "ndim", num(t.i));
      break;
  }
  return j;
}

}  // namespace

std::string metadata_to_json(const ModuleMetadata& m) {
  JsonValue root = object();
  put(root, "format", str("loom-module"));
  put(root, "format_version", num(m.format_version));
  put(root, "name", str(m.name));
  put(root, "arch", str(arch_name(m.arch)));
  put(root, "producer", str(m.producer));
  JsonValue req = object();
  if (m.arch == Arch::Vulkan) {
    JsonValue features = array();
    for (uint32_t bit = 0; bit < 32; ++bit)
      if (m.needs.vulkan_features & (1u << bit)) features.items.push_back(str(describe_requirements(1u << bit)));
    put(req, "vulkan_features", std::move(features));
    put(req, "workgroup_size", num(m.needs.workgroup_size));
    put(req, "push_constant_bytes", num(m.needs.push_constant_bytes));
  } else {
    put(req, "target", str(m.needs.target));
    put(req, "cpu", str(m.needs.cpu));
    put(req, "cpu_features", array_of(m.needs.cpu_features, str));
  }
  put(root, "requires", std::move(req));
  put(root, "fields", array_of(m.fields, [](const FieldDesc& f) {
        JsonValue j = object();
        put(j, "name", str(f.name));
        put(j, "type", type_json(f.elem));
        put(j, "shape", shape_json(f.shape));
        put(j, "layout", str(layout_name(f.layout)));
        return j;
      }));
  put(root, "ndarrays", array_of(m.ndarrays, [](const NdarrayInfo& n) {
        JsonValue j = object();
        put(j, "name", str(n.name));
        put(j, "type", type_json(n.elem));
        put(j, "shape", shape_json(n.shape));
        return j;
      }));
  put(root, "textures", array_of(m.textures, [](const TextureInfo& t) {
        JsonValue j = object();
        put(j, "name", str(t.name));
        put(j, "format", str(texture_format_name(t.format)));
        put(j, "size", shape_json(t.size));
        return j;
      }));
  put(root, "argpack_types", array_of(m.argpack_types, [](const ArgpackType& t) {
        JsonValue j = object();
        put(j, "name", str(t.name));
        put(j, "is_pack", boolean(t.is_pack));
        put(j, "size", num(t.size));
        put(j, "align", num(t.align));
        put(j, "members", array_of(t.members, [](const ArgpackMember& mm) {
              JsonValue k = object();
              put(k, "name", str(mm.name));
              put(k, "kind", str(member_kind_name(mm.kind)));
              put(k, "type", type_json(mm.type));
              put(k, "ndim", num(mm.ndim));
              put(k, "nested", num(mm.nested));
              put(k, "offset", num(mm.offset));
              put(k, "format", str(texture_format_name(mm.format)));
              return k;
            }));
        return j;
      }));
  put(root, "argpacks", array_of(m.argpacks, [](const ArgpackInfo& a) {
        JsonValue j = object();
        put(j, "name", str(a.name));
        put(j, "type", num(a.type));
        put(j, "values", named_values_json(a.values));
        return j;
      }));
  put(root, "kernels", array_of(m.kernels, [&](const KernelInfo& k) {
        JsonValue j = object();
        put(j, "name", str(k.name));
        put(j, "template_args", array_of(k.template_args, template_json));
        put(j, "return_names", array_of(k.return_names, str));
        put(j, "abi", abi_json(k.abi));
        if (m.arch == Arch::Cpu)
          put(j, "object", str(k.object));
        else
          put(j, "spirv", spirv_json(k.spirv, k.spirv_blobs));
        return j;
      }));
  put(root, "pipelines", array_of(m.pipelines, [&](const PipelineInfo& p) {
        JsonValue j = object();
        put(j, "name", str(p.name));
        put(j, "launches", array_of(p.launches, [&](const LaunchInfo& l) {
              JsonValue k = object();
              put(k, "kernel", num(l.kernel));
              put(k, "args", named_values_json(l.args));
              return k;
            }));
        return j;
      }));
  put(root, "blobs", array_of(m.blobs, [](const BlobInfo& b) {
        JsonValue j = object();
        put(j, "name", str(b.name));
        put(j, "size", unum(b.size));
        put(j, "hash", str(b.hash));
        return j;
      }));
  std::string out;
  write(root, 0, out);
  out += '\n';
  return out;
}

// ---- reading

namespace {

// Reads one JSON object, naming the key path of every problem.
class Reader {
 public:
  Reader(const JsonValue& v, std::string path, const std::string& what) : v_(v), path_(std::move(path)), what_(what) {
    if (v.kind != JsonValue::Kind::Object) fail("is not an object");
  }

  [[noreturn]] void fail(const std::string& why) const { fail_at(path_, why); }
  [[noreturn]] void fail_at(const std::string& path, const std::string& why) const {
    throw Error(Place{what_}, "corrupt module metadata: " + (path.empty() ? std::string("the top level") : path) + " " + why);
  }
  std::string at(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  const JsonValue& get(const std::string& key, JsonValue::Kind kind, const char* kind_name) const {
    const JsonValue* v = v_.find(key);
    if (!v) fail_at(at(key), "is missing");
    if (v->kind != kind) fail_at(at(key), std::string("is not ") + kind_name);
    return *v;
  }
  std::string string(const std::string& key) const { return get(key, JsonValue::Kind::String, "a string").text; }
  bool boolean(const std::string& key) const { return get(key, JsonValue::Kind::Bool, "true or false").b; }
  int64_t integer(const std::string& key, int64_t lo, int64_t hi) const {
    return integer_of(get(key, JsonValue::Kind::Number, "a number"), at(key), lo, hi);
  }
  int64_t integer_of(const JsonValue& v, const std::string& path, int64_t lo, int64_t hi) const {
    if (v.kind != JsonValue::Kind::Number || !v.is_integer()) fail_at(path, "is not an integer");
    errno = 0;
    char* end = nullptr;
    long long x = std::strtoll(v.text.c_str(), &end, 10);
    if (errno || x < lo || x > hi) fail_at(path, "is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return x;
  }
  uint64_t unsigned_integer(const std::string& key) const {
    const JsonValue& v = get(key, JsonValue::Kind::Number, "a number");
    if (!v.is_integer() || v.text[0] == '-') fail_at(at(key), "is not an unsigned integer");
    errno = 0;
    unsigned long long x = std::strtoull(v.text.c_str(), nullptr, 10);
    if (errno) fail_at(at(key), "is out of range");
    return x;
  }
  double real_of(const JsonValue& v, const std::string& path) const {
    if (v.kind != JsonValue::Kind::Number) fail_at(path, "is not a number");
    return std::strtod(v.text.c_str(), nullptr);
  }
  const std::vector<JsonValue>& list(const std::string& key) const { return get(key, JsonValue::Kind::Array, "an array").items; }
  std::vector<std::string> strings(const std::string& key) const {
    std::vector<std::string> out;
    const auto& items = list(key);
    for (size_t i = 0; i < items.size(); ++i) {
      if (items[i].kind != JsonValue::Kind::String) fail_at(at(key) + "[" + std::to_string(i) + "]", "is not a string");
      out.push_back(items[i].text);
    }
    return out;
  }
  Reader object(const std::string& key) const { return Reader(get(key, JsonValue::Kind::Object, "an object"), at(key), what_); }
  Reader item(const std::string& key, size_t i) const {
    const JsonValue& v = list(key)[i];
    return Reader(v, at(key) + "[" + std::to_string(i) + "]", what_);
  }
  ValueType type(const std::string& key) const {
    auto t = parse_value_type(string(key));
    if (!t) fail_at(at(key), "is not a value type: '" + string(key) + "'");
    return *t;
  }
  // The same, or "void" where what is described has no value type (argpack, texture and
  // open ndarray parameters; struct, pack and texture members).
  ValueType type_or_void(const std::string& key) const { return string(key) == "void" ? ValueType{} : type(key); }
  std::vector<int64_t> shape(const std::string& key, size_t max_dims) const {
    const auto& items = list(key);
    if (items.size() > max_dims) fail_at(at(key), "has more than " + std::to_string(max_dims) + " extents");
    std::vector<int64_t> s;
    for (size_t i = 0; i < items.size(); ++i)
      s.push_back(integer_of(items[i], at(key) + "[" + std::to_string(i) + "]", 0, INT32_MAX));
    return s;
  }
  template <typename E>
  E name_of(const std::string& key, std::initializer_list<std::pair<const char*, E>> names) const {
    std::string s = string(key);
    for (const auto& [n, e] : names)
      if (s == n) return e;
    fail_at(at(key), "has an unknown value '" + s + "'");
  }
  const JsonValue& json() const { return v_; }
  const std::string& path() const { return path_; }
  const std::string& what() const { return what_; }

 private:
  const JsonValue& v_;
  std::string path_;
  const std::string& what_;
};

constexpr int64_t kI32Max = INT32_MAX;

Value read_value(const Reader& r) {
  Value v;
  v.kind = r.name_of<Value::Kind>("kind", {{"int", Value::Kind::Int},
                                           {"float", Value::Kind::Float},
                                           {"bool", Value::Kind::Bool},
                                           {"list", Value::Kind::List},
                                           {"resource", Value::Kind::Resource}});
  switch (v.kind) {
    case Value::Kind::Int: {
      const JsonValue& n = r.get("value", JsonValue::Kind::Number, "a number");
      if (!n.is_integer()) r.fail_at(r.at("value"), "is not an integer");
      if (n.text[0] != '-' && std::strtoull(n.text.c_str(), nullptr, 10) > static_cast<uint64_t>(INT64_MAX)) {
        v.above_int64 = true;
        v.i = static_cast<int64_t>(std::strtoull(n.text.c_str(), nullptr, 10));
      } else {
        v.i = r.integer("value", INT64_MIN, INT64_MAX);
      }
      break;
    }
    case Value::Kind::Float: v.f = r.real_of(r.get("value", JsonValue::Kind::Number, "a number"), r.at("value")); break;
    case Value::Kind::Bool: v.b = r.boolean("value"); break;
    case Value::Kind::List: {
      const auto& items = r.list("value");
      for (size_t i = 0; i < items.size(); ++i) v.list.push_back(r.real_of(items[i], r.at("value") + "[" + std::to_string(i) + "]"));
      break;
    }
    case Value::Kind::Resource: v.resource = r.string("value"); break;
  }
  return v;
}

std::vector<std::pair<std::string, Value>> read_named_values(const Reader& r) {
  std::vector<std::pair<std::string, Value>> out;
  for (const auto& [name, v] : r.json().members) out.emplace_back(name, read_value(Reader(v, r.at(name), r.what())));
  return out;
}

KernelABI read_abi(const Reader& r, const std::string& name) {
  KernelABI abi;
  abi.name = name;
  for (size_t i = 0; i < r.list("params").size(); ++i) {
    Reader p = r.item("params", i);
    ParamDesc d;
    d.name = p.string("name");
    d.kind = p.name_of<ParamKind>("kind", {{"value", ParamKind::Value},
                                           {"ndarray", ParamKind::Ndarray},
                                           {"texture", ParamKind::Texture},
                                           {"argpack", ParamKind::Argpack}});
    d.type = d.kind == ParamKind::Value ? p.type("type") : p.type_or_void("type");
    d.ndim = static_cast<int>(p.integer("ndim", 0, kMaxDims));
    d.argpack_type = static_cast<int>(p.integer("argpack_type", -1, kI32Max));
    d.size = static_cast<uint32_t>(p.integer("size", 0, kI32Max));
    abi.params.push_back(d);
  }
  for (size_t i = 0; i < r.list("resources").size(); ++i) {
    Reader q = r.item("resources", i);
    ResourceDesc d;
    d.kind = q.name_of<ResourceKind>("kind", {{"field", ResourceKind::Field},
                                              {"ndarray", ResourceKind::Ndarray},
                                              {"texture", ResourceKind::Texture}});
    auto s = parse_scalar(q.string("dtype"));
    if (!s) q.fail_at(q.at("dtype"), "is not a scalar type");
    d.dtype = *s;
    d.components = static_cast<int>(q.integer("components", 1, 16));
    d.ndim = static_cast<int>(q.integer("ndim", 0, kMaxDims));
    std::vector<int64_t> shape = q.shape("shape", kMaxDims);
    std::copy(shape.begin(), shape.end(), d.shape.begin());
    d.layout = q.name_of<Layout>("layout", {{"aos", Layout::AoS}, {"soa", Layout::SoA}});
    if (!parse_texture_format(q.string("format"), &d.format)) q.fail_at(q.at("format"), "is not a texture format");
    d.field = q.string("field");
    d.param = static_cast<int>(q.integer("param", -1, static_cast<int64_t>(abi.params.size()) - 1));
    d.param_offset = static_cast<int32_t>(q.integer("param_offset", -1, kI32Max));
    if (d.kind != ResourceKind::Field && d.param < 0) q.fail("names no parameter");
    abi.resources.push_back(d);
  }
  for (size_t i = 0; i < r.list("returns").size(); ++i) {
    const JsonValue& t = r.list("returns")[i];
    auto type = t.kind == JsonValue::Kind::String ? parse_value_type(t.text) : std::nullopt;
    if (!type) r.fail_at(r.at("returns") + "[" + std::to_string(i) + "]", "is not a value type");
    abi.returns.push_back(*type);
  }
  for (size_t i = 0; i < r.list("tasks").size(); ++i) {
    Reader t = r.item("tasks", i);
    TaskDesc d;
    d.kind = static_cast<uint8_t>(t.integer("kind", 0, 2));
    d.symbol = t.string("symbol");
    d.extent_symbol = t.string("extent_symbol");
    d.dims = static_cast<uint8_t>(t.integer("dims", 1, kMaxDims));
    abi.tasks.push_back(d);
  }
  abi.temps_size = static_cast<uint32_t>(r.integer("temps_size", 0, kI32Max));
  return abi;
}

std::vector<RangeBound> read_bounds(const Reader& r, const std::string& key) {
  std::vector<RangeBound> out;
  for (size_t i = 0; i < r.list(key).size(); ++i) {
    Reader b = r.item(key, i);
    RangeBound rb;
    rb.kind = b.name_of<RangeBound::Kind>(
        "kind", {{"const", RangeBound::Kind::Const}, {"arg", RangeBound::Kind::Arg}, {"shape", RangeBound::Kind::Shape}});
    rb.value = b.integer("value", INT64_MIN, INT64_MAX);
    rb.offset = static_cast<uint32_t>(b.integer("offset", 0, kI32Max));
    out.push_back(rb);
  }
  return out;
}

void read_spirv(const Reader& r, KernelInfo& k) {
  static const std::initializer_list<std::pair<const char*, BindingKind>> kinds = {
      {"args", BindingKind::Args},       {"temps", BindingKind::Temps},
      {"returns", BindingKind::Returns}, {"error", BindingKind::Error},
      {"argpack", BindingKind::Argpack}, {"buffer", BindingKind::Buffer},
      {"storage_image", BindingKind::StorageImage}, {"sampled_image", BindingKind::SampledImage},
      {"sampler", BindingKind::Sampler}};
  for (size_t i = 0; i < r.list("bindings").size(); ++i) {
    Reader b = r.item("bindings", i);
    SpirvBinding sb;
    sb.binding = static_cast<uint32_t>(b.integer("binding", 0, 4095));
    std::string kind = b.string("kind");
    bool known = false;
    for (const auto& [n, e] : kinds)
      if (kind == binding_kind_name(e)) sb.kind = e, known = true;
    if (!known) b.fail_at(b.at("kind"), "has an unknown value '" + kind + "'");
    sb.index = static_cast<int32_t>(b.integer("index", -1, kI32Max));
    sb.sampled_linearly = b.boolean("sampled_linearly");
    k.spirv.bindings.push_back(sb);
  }
  k.spirv.args_in_push_constants = r.boolean("args_in_push_constants");
  for (size_t i = 0; i < r.list("tasks").size(); ++i) {
    Reader t = r.item("tasks", i);
    SpirvTask st;
    st.kind = static_cast<uint8_t>(t.integer("kind", 0, 2));
    k.spirv_blobs.push_back(t.string("spirv"));
    st.workgroup_size = static_cast<uint32_t>(t.integer("workgroup_size", 1, 1 << 16));
    st.grid_dims = static_cast<uint8_t>(t.integer("grid_dims", 1, 2));
    st.host_extent = t.boolean("host_extent");
    st.begin = read_bounds(t, "begin");
    st.end = read_bounds(t, "end");
    const auto& access = t.list("access");
    for (size_t a = 0; a < access.size(); ++a)
      st.access.push_back(static_cast<uint8_t>(t.integer_of(access[a], t.at("access") + "[" + std::to_string(a) + "]", 0, 3)));
    k.spirv.tasks.push_back(std::move(st));
  }
  k.spirv.assert_messages = r.strings("assert_messages");
  k.spirv.requirements = static_cast<uint32_t>(r.integer("requirements", 0, kAllSpirvRequirements));
}

TemplateArgument read_template(const Reader& r) {
  TemplateArgument t;
  t.param = r.string("param");
  t.kind = r.name_of<TemplateArgument::Kind>("kind", {{"field", TemplateArgument::Kind::Field},
                                                       {"int", TemplateArgument::Kind::Int},
                                                       {"float", TemplateArgument::Kind::Float},
                                                       {"bool", TemplateArgument::Kind::Bool},
                                                       {"ndarray", TemplateArgument::Kind::Ndarray}});
  switch (t.kind) {
    case TemplateArgument::Kind::Field: t.field = r.string("value"); break;
    case TemplateArgument::Kind::Int: t.i = r.integer("value", INT64_MIN, INT64_MAX); break;
    case TemplateArgument::Kind::Float: t.f = r.real_of(r.get("value", JsonValue::Kind::Number, "a number"), r.at("value")); break;
    case TemplateArgument::Kind::Bool: t.b = r.boolean("value"); break;
    case TemplateArgument::Kind::Ndarray:
      t.elem = r.type("elem");
      t.i = r.integer("ndim", 1, kMaxDims);
      break;
  }
  return t;
}

uint32_t feature_bit(const std::string& name) {
  for (uint32_t bit = 0; bit < 32; ++bit)
    if ((kAllSpirvRequirements & (1u << bit)) && describe_requirements(1u << bit) == name) return 1u << bit;
  return 0;
}

}  // namespace

ModuleMetadata metadata_from_json(const std::string& text, const std::string& what) {
  JsonValue root = parse_json(text, what);
  Reader r(root, "", what);
  if (!root.find("format") || root.find("format")->text != "loom-module")
    throw Error(Place{what}, "not a Loom module (its metadata has no \"format\": \"loom-module\")");
  ModuleMetadata m;
  m.format_version = static_cast<int>(r.integer("format_version", 0, kI32Max));
  if (m.format_version < 1 || m.format_version > kModuleFormatVersion)
    throw Error(Place{what}, "module format version " + std::to_string(m.format_version) +
                                 " is not one this runtime reads (versions 1 to " + std::to_string(kModuleFormatVersion) +
                                 "); rebuild the module with `loom compile`, or load it with a newer Loom",
                ErrorKind::Version);
  m.name = r.string("name");
  m.arch = r.name_of<Arch>("arch", {{"cpu", Arch::Cpu}, {"vulkan", Arch::Vulkan}});
  m.producer = r.string("producer");
  Reader req = r.object("requires");
  if (m.arch == Arch::Vulkan) {
    const auto& features = req.list("vulkan_features");
    for (size_t i = 0; i < features.size(); ++i) {
      uint32_t bit = features[i].kind == JsonValue::Kind::String ? feature_bit(features[i].text) : 0;
      if (!bit) req.fail_at(req.at("vulkan_features") + "[" + std::to_string(i) + "]", "is not a device feature Loom knows");
      m.needs.vulkan_features |= bit;
    }
    m.needs.workgroup_size = static_cast<uint32_t>(req.integer("workgroup_size", 0, 1 << 16));
    m.needs.push_constant_bytes = static_cast<uint32_t>(req.integer("push_constant_bytes", 0, 1 << 16));
  } else {
    m.needs.target = req.string("target");
    m.needs.cpu = req.string("cpu");
    m.needs.cpu_features = req.strings("cpu_features");
  }
  for (size_t i = 0; i < r.list("fields").size(); ++i) {
    Reader f = r.item("fields", i);
    FieldDesc d;
    d.name = f.string("name");
    d.elem = f.type("type");
    d.shape = f.shape("shape", kMaxDims);
    d.layout = f.name_of<Layout>("layout", {{"aos", Layout::AoS}, {"soa", Layout::SoA}});
    m.fields.push_back(d);
  }
  for (size_t i = 0; i < r.list("ndarrays").size(); ++i) {
    Reader n = r.item("ndarrays", i);
    m.ndarrays.push_back({n.string("name"), n.type("type"), n.shape("shape", kMaxDims)});
  }
  for (size_t i = 0; i < r.list("textures").size(); ++i) {
    Reader t = r.item("textures", i);
    TextureInfo info;
    info.name = t.string("name");
    if (!parse_texture_format(t.string("format"), &info.format)) t.fail_at(t.at("format"), "is not a texture format");
    info.size = t.shape("size", 3);
    if (info.size.size() < 2) t.fail_at(t.at("size"), "needs 2 or 3 extents");
    m.textures.push_back(info);
  }
  for (size_t i = 0; i < r.list("argpack_types").size(); ++i) {
    Reader t = r.item("argpack_types", i);
    ArgpackType type;
    type.name = t.string("name");
    type.is_pack = t.boolean("is_pack");
    type.size = static_cast<uint32_t>(t.integer("size", 0, 1 << 16));
    type.align = static_cast<uint32_t>(t.integer("align", 1, 256));
    for (size_t j = 0; j < t.list("members").size(); ++j) {
      Reader mm = t.item("members", j);
      ArgpackMember member;
      member.name = mm.string("name");
      member.kind = mm.name_of<MemberKind>("kind", {{"value", MemberKind::Value},
                                                    {"struct", MemberKind::Struct},
                                                    {"pack", MemberKind::Pack},
                                                    {"ndarray", MemberKind::Ndarray},
                                                    {"texture", MemberKind::Texture}});
      member.type = member.kind == MemberKind::Value ? mm.type("type") : mm.type_or_void("type");
      member.ndim = static_cast<int>(mm.integer("ndim", 0, kMaxDims));
      member.nested = static_cast<int>(mm.integer("nested", -1, static_cast<int64_t>(r.list("argpack_types").size()) - 1));
      member.offset = static_cast<uint32_t>(mm.integer("offset", 0, type.size));
      if (!parse_texture_format(mm.string("format"), &member.format)) mm.fail_at(mm.at("format"), "is not a texture format");
      if ((member.kind == MemberKind::Struct || member.kind == MemberKind::Pack) && member.nested < 0)
        mm.fail("names no nested type");
      type.members.push_back(member);
    }
    m.argpack_types.push_back(std::move(type));
  }
  // The stored layout must be the layout this runtime computes: a pack's bytes are written
  // at these offsets and read by the kernels at the offsets they were compiled with.
  {
    std::vector<ArgpackType> check = m.argpack_types;
    try {
      layout_argpack_types(check);
    } catch (const Error& e) {
      throw Error(Place{what}, "corrupt module metadata: argpack_types: " + e.message());
    }
    for (size_t i = 0; i < check.size(); ++i) {
      bool same = check[i].size == m.argpack_types[i].size;
      for (size_t j = 0; same && j < check[i].members.size(); ++j) same = check[i].members[j].offset == m.argpack_types[i].members[j].offset;
      if (!same) throw Error(Place{what}, "corrupt module metadata: argpack_types[" + std::to_string(i) + "] ('" +
                                              check[i].name + "') has a layout this runtime does not compute");
    }
  }
  for (size_t i = 0; i < r.list("argpacks").size(); ++i) {
    Reader a = r.item("argpacks", i);
    ArgpackInfo info;
    info.name = a.string("name");
    info.type = static_cast<int>(a.integer("type", 0, static_cast<int64_t>(m.argpack_types.size()) - 1));
    info.values = read_named_values(a.object("values"));
    m.argpacks.push_back(std::move(info));
  }
  for (size_t i = 0; i < r.list("kernels").size(); ++i) {
    Reader k = r.item("kernels", i);
    KernelInfo info;
    info.name = k.string("name");
    for (size_t j = 0; j < k.list("template_args").size(); ++j) info.template_args.push_back(read_template(k.item("template_args", j)));
    info.return_names = k.strings("return_names");
    info.abi = read_abi(k.object("abi"), info.name);
    for (const ParamDesc& p : info.abi.params)
      if (p.kind == ParamKind::Argpack && (p.argpack_type < 0 || static_cast<size_t>(p.argpack_type) >= m.argpack_types.size()))
        k.fail_at(k.at("abi.params"), "names argpack type " + std::to_string(p.argpack_type) + ", which the module lacks");
    if (m.arch == Arch::Cpu) {
      info.object = k.string("object");
    } else {
      read_spirv(k.object("spirv"), info);
      if (info.spirv.tasks.size() != info.abi.tasks.size())
        k.fail_at(k.at("spirv.tasks"), "has " + std::to_string(info.spirv.tasks.size()) + " tasks; the ABI has " +
                                           std::to_string(info.abi.tasks.size()));
    }
    m.kernels.push_back(std::move(info));
  }
  for (size_t i = 0; i < r.list("pipelines").size(); ++i) {
    Reader p = r.item("pipelines", i);
    PipelineInfo info;
    info.name = p.string("name");
    for (size_t j = 0; j < p.list("launches").size(); ++j) {
      Reader l = p.item("launches", j);
      LaunchInfo launch;
      launch.kernel = static_cast<int>(l.integer("kernel", 0, static_cast<int64_t>(m.kernels.size()) - 1));
      launch.args = read_named_values(l.object("args"));
      info.launches.push_back(std::move(launch));
    }
    m.pipelines.push_back(std::move(info));
  }
  for (size_t i = 0; i < r.list("blobs").size(); ++i) {
    Reader b = r.item("blobs", i);
    m.blobs.push_back({b.string("name"), b.unsigned_integer("size"), b.string("hash")});
  }
  return m;
}

}  // namespace loom::aot
