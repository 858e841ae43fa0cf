#include "runtime/aot/module.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <utility>

#include "runtime/common/abi_fields.h"
#include "runtime/common/abi_serialize.h"
#include "runtime/common/error.h"
#include "runtime/common/json_value.h"

namespace loom::aot {

const char* arch_name(Arch a) { return a == Arch::Vulkan ? "vulkan" : "cpu"; }

const char* derivation_suffix(Derivation::Mode mode) {
  return mode == Derivation::Mode::Tangent ? ".dual" : ".grad";
}

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
        {name, bytes.size(),
         hash128_hex(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()))});
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
// JSON has no token for infinity or NaN, and a bare `inf` would make the whole module
// unreadable, so those three are written as the strings "inf", "-inf" and "nan" (read back by
// Reader::real_of); every finite double keeps its exact %.17g spelling.
JsonValue real(double d) {
  JsonValue v;
  if (!std::isfinite(d)) {
    v.kind = JsonValue::Kind::String;
    v.text = std::isnan(d) ? "nan" : d > 0 ? "inf" : "-inf";
    return v;
  }
  v.kind = JsonValue::Kind::Number;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  v.text = buf;
  if (v.text.find_first_of(".eEn") == std::string::npos)
    v.text += ".0";  // stays a float on reading
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
void put(JsonValue& o, const std::string& key, JsonValue v) {
  o.members.emplace_back(key, std::move(v));
}
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
JsonValue shape_json(const std::vector<int64_t>& s) {
  return array_of(s, [](int64_t e) { return num(e); });
}

JsonValue value_json(const Value& v) {
  JsonValue o = object();
  put(o, "kind", str(value_kind_name(v.kind)));
  switch (v.kind) {
    case Value::Kind::Int:
      put(o, "value", v.above_int64 ? unum(static_cast<uint64_t>(v.i)) : num(v.i));
      break;
    case Value::Kind::Float: put(o, "value", real(v.f)); break;
    case Value::Kind::Bool: put(o, "value", boolean(v.b)); break;
    case Value::Kind::List:
      put(o, "value", array_of(v.list, [](double d) { return real(d); }));
      break;
    case Value::Kind::Resource: put(o, "value", str(v.resource)); break;
  }
  return o;
}

JsonValue named_values_json(const std::vector<std::pair<std::string, Value>>& values) {
  JsonValue o = object();
  for (const auto& [name, v] : values) put(o, name, value_json(v));
  return o;
}

// Writes the field lists of abi_fields.h as JSON members of `out`. A SPIR-V task's words
// are not written: the task names the blob that holds them, taken from `blobs` in order.
class JsonFieldWriter {
 public:
  static constexpr FieldForm kForm = FieldForm::Json;
  JsonFieldWriter(JsonValue& out, const std::vector<std::string>* blobs, size_t* next_blob)
      : out_(out), blobs_(blobs), next_blob_(next_blob) {}

  void text(const char* key, const std::string& s) { put(out_, key, str(s)); }
  template <typename I>
  void integer(const char* key, I i, int64_t, int64_t) {
    put(out_, key, num(i));
  }
  // Left out at its default, so metadata older readers know stays as it was.
  template <typename I>
  void optional_integer(const char* key, I i, int64_t lo, int64_t hi, I absent) {
    if (i != absent) integer(key, i, lo, hi);
  }
  void optional_flag(const char* key, bool b) {
    if (b) flag(key, b);
  }
  void flag(const char* key, bool b) { put(out_, key, boolean(b)); }
  template <typename E, typename NameOf>
  void choice(const char* key, E e, E, NameOf name_of) {
    put(out_, key, str(std::string(name_of(e))));
  }
  void type(const char* key, ValueType t, bool) { put(out_, key, type_json(t)); }
  void extents(const char* key, const std::array<int64_t, kMaxDims>& shape) {
    put(out_, key, shape_json(std::vector<int64_t>(shape.begin(), shape.end())));
  }
  template <typename T, typename Each>
  void list(const char* key, const std::vector<T>& items, uint32_t, Each&& each) {
    put(out_, key, array_of(items, [&](const T& item) {
          JsonValue o = object();
          JsonFieldWriter w(o, blobs_, next_blob_);
          each(w, item);
          return o;
        }));
  }
  template <typename T>
  void list(const char* key, const std::vector<T>& items, uint32_t max) {
    list(key, items, max, [](JsonFieldWriter& v, const T& item) { visit_fields(v, item); });
  }
  void types(const char* key, const std::vector<ValueType>& items, uint32_t, bool) {
    put(out_, key, array_of(items, type_json));
  }
  void byte_list(const char* key, const std::vector<uint8_t>& items, uint32_t, int, int) {
    put(out_, key, array_of(items, [](uint8_t b) { return num(b); }));
  }
  void texts(const char* key, const std::vector<std::string>& items, uint32_t) {
    put(out_, key, array_of(items, str));
  }
  void bound_pairs(const char* begin_key, const std::vector<RangeBound>& begin, const char* end_key,
                   const std::vector<RangeBound>& end, uint32_t max) {
    list(begin_key, begin, max);
    list(end_key, end, max);
  }
  void spirv_code(const char* key, const std::vector<uint32_t>&) {
    size_t i = (*next_blob_)++;
    put(out_, key, str(i < blobs_->size() ? (*blobs_)[i] : ""));
  }
  // Absent, not empty, when not present: a module without it reads as before.
  template <typename T, typename Each>
  void optional_list(const char* key, bool present, const std::vector<T>& items, uint32_t max,
                     Each&& each) {
    if (present) list(key, items, max, std::forward<Each>(each));
  }
  void require(bool, const char*) {}

 private:
  JsonValue& out_;
  const std::vector<std::string>* blobs_;
  size_t* next_blob_;
};

JsonValue abi_json(const KernelABI& abi) {
  JsonValue o = object();
  JsonFieldWriter w(o, nullptr, nullptr);
  visit_fields(w, abi);
  return o;
}

JsonValue spirv_json(const SpirvKernel& k, const std::vector<std::string>& blobs) {
  JsonValue o = object();
  size_t next_blob = 0;
  JsonFieldWriter w(o, &blobs, &next_blob);
  visit_fields(w, k);
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

// An optional key: a runtime before derived kernels loads them as kernels like any other
// (pipelines bind every twin), so it needs no new format version.
JsonValue derivation_json(const KernelInfo& k) {
  const Derivation& d = k.derived;
  JsonValue j = object();
  put(j, "mode", str(d.mode == Derivation::Mode::Tangent ? "dual" : "grad"));
  put(j, "of", str(d.of));
  auto twin_json = [&](const Derivation::Twin& t) {
    JsonValue o = object();
    put(o, "param", str(k.abi.params.at(static_cast<size_t>(t.param)).name));
    put(o, "of", str(k.abi.params.at(static_cast<size_t>(t.of)).name));
    if (!t.member.empty()) put(o, "member", str(t.member));
    return o;
  };
  put(j, "twins", array_of(d.twins, twin_json));
  if (!d.shadows.empty()) put(j, "shadows", array_of(d.shadows, twin_json));
  return j;
}

}  // namespace

int module_format_version(const ModuleMetadata& m) {
  auto plus = [](const std::vector<RangeBound>& bounds) {
    return std::any_of(bounds.begin(), bounds.end(),
                       [](const RangeBound& b) { return b.plus != 0; });
  };
  for (const KernelInfo& k : m.kernels) {
    if (!k.derived.shadows.empty()) return 3;
    for (const Derivation::Twin& t : k.derived.twins)
      if (!t.member.empty()) return 3;
  }
  for (const KernelInfo& k : m.kernels) {
    for (const ExtentAssumption& e : k.abi.extent_assumptions)
      if (plus(e.begin) || plus(e.end)) return 2;
    for (const SpirvTask& t : k.spirv.tasks)
      if (t.direct || plus(t.begin) || plus(t.end)) return 2;
  }
  return 1;
}

std::string metadata_to_json(const ModuleMetadata& m) {
  JsonValue root = object();
  put(root, "format", str("loom-module"));
  put(root, "format_version", num(module_format_version(m)));
  put(root, "name", str(m.name));
  put(root, "arch", str(arch_name(m.arch)));
  put(root, "producer", str(m.producer));
  JsonValue req = object();
  if (m.arch == Arch::Vulkan) {
    JsonValue features = array();
    for (uint32_t bit = 0; bit < 32; ++bit)
      if (m.needs.vulkan_features & (1u << bit))
        features.items.push_back(str(describe_requirements(1u << bit)));
    put(req, "vulkan_features", std::move(features));
    put(req, "workgroup_size", num(m.needs.workgroup_size));
    put(req, "push_constant_bytes", num(m.needs.push_constant_bytes));
  } else {
    // "cpu" and "cpu_features": the lowest level, where runtimes before levels look; every
    // level in "cpu_levels" when there is more than one (so one-level modules read as before).
    CpuLevel lowest = m.needs.cpu_levels.empty() ? CpuLevel{} : m.needs.cpu_levels.front();
    put(req, "target", str(m.needs.target));
    put(req, "cpu", str(lowest.cpu));
    put(req, "cpu_features", array_of(lowest.features, str));
    if (m.needs.cpu_levels.size() > 1)
      put(req, "cpu_levels", array_of(m.needs.cpu_levels, [](const CpuLevel& l) {
            JsonValue j = object();
            put(j, "cpu", str(l.cpu));
            put(j, "cpu_features", array_of(l.features, str));
            return j;
          }));
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
        if (k.derived.mode != Derivation::Mode::None) put(j, "derived", derivation_json(k));
        if (m.arch == Arch::Vulkan) {
          put(j, "spirv", spirv_json(k.spirv, k.spirv_blobs));
          return j;
        }
        // As for the levels: the lowest level's object where runtimes before levels look.
        put(j, "object", str(k.objects.empty() ? std::string() : k.objects.front()));
        if (k.objects.size() > 1) put(j, "objects", array_of(k.objects, str));
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
  Reader(const JsonValue& v, std::string path, const std::string& what)
      : v_(v), path_(std::move(path)), what_(what) {
    if (v.kind != JsonValue::Kind::Object) fail("is not an object");
  }

  [[noreturn]] void fail(const std::string& why) const { fail_at(path_, why); }
  [[noreturn]] void fail_at(const std::string& path, const std::string& why) const {
    throw Error(Place{what_}, "corrupt module metadata: " +
                                  (path.empty() ? std::string("the top level") : path) + " " + why);
  }
  std::string at(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  bool has(const std::string& key) const { return v_.find(key) != nullptr; }

  const JsonValue& get(const std::string& key, JsonValue::Kind kind, const char* kind_name) const {
    const JsonValue* v = v_.find(key);
    if (!v) fail_at(at(key), "is missing");
    if (v->kind != kind) fail_at(at(key), std::string("is not ") + kind_name);
    return *v;
  }
  std::string string(const std::string& key) const {
    return get(key, JsonValue::Kind::String, "a string").text;
  }
  bool boolean(const std::string& key) const {
    return get(key, JsonValue::Kind::Bool, "true or false").b;
  }
  int64_t integer(const std::string& key, int64_t lo, int64_t hi) const {
    return integer_of(get(key, JsonValue::Kind::Number, "a number"), at(key), lo, hi);
  }
  int64_t integer_of(const JsonValue& v, const std::string& path, int64_t lo, int64_t hi) const {
    if (v.kind != JsonValue::Kind::Number || !v.is_integer()) fail_at(path, "is not an integer");
    errno = 0;
    char* end = nullptr;
    long long x = std::strtoll(v.text.c_str(), &end, 10);
    if (errno || x < lo || x > hi)
      fail_at(path, "is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
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
  // A float as real() writes it: a number, or one of the strings "inf", "-inf", "nan".
  double real_of(const JsonValue& v, const std::string& path) const {
    if (v.kind == JsonValue::Kind::String) {
      if (v.text == "inf") return std::numeric_limits<double>::infinity();
      if (v.text == "-inf") return -std::numeric_limits<double>::infinity();
      if (v.text == "nan") return std::numeric_limits<double>::quiet_NaN();
      fail_at(path, "is not a number (nor \"inf\", \"-inf\" or \"nan\")");
    }
    if (v.kind != JsonValue::Kind::Number) fail_at(path, "is not a number");
    return std::strtod(v.text.c_str(), nullptr);
  }
  double real(const std::string& key) const {
    const JsonValue* v = v_.find(key);
    if (!v) fail_at(at(key), "is missing");
    return real_of(*v, at(key));
  }
  const std::vector<JsonValue>& list(const std::string& key) const {
    return get(key, JsonValue::Kind::Array, "an array").items;
  }
  std::vector<std::string> strings(const std::string& key) const {
    std::vector<std::string> out;
    const auto& items = list(key);
    for (size_t i = 0; i < items.size(); ++i) {
      if (items[i].kind != JsonValue::Kind::String)
        fail_at(at(key) + "[" + std::to_string(i) + "]", "is not a string");
      out.push_back(items[i].text);
    }
    return out;
  }
  Reader object(const std::string& key) const {
    return Reader(get(key, JsonValue::Kind::Object, "an object"), at(key), what_);
  }
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
  ValueType type_or_void(const std::string& key) const {
    return string(key) == "void" ? ValueType{} : type(key);
  }
  std::vector<int64_t> shape(const std::string& key, size_t max_dims) const {
    const auto& items = list(key);
    if (items.size() > max_dims)
      fail_at(at(key), "has more than " + std::to_string(max_dims) + " extents");
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
      if (n.text[0] != '-' &&
          std::strtoull(n.text.c_str(), nullptr, 10) > static_cast<uint64_t>(INT64_MAX)) {
        v.above_int64 = true;
        v.i = static_cast<int64_t>(std::strtoull(n.text.c_str(), nullptr, 10));
      } else {
        v.i = r.integer("value", INT64_MIN, INT64_MAX);
      }
      break;
    }
    case Value::Kind::Float: v.f = r.real("value"); break;
    case Value::Kind::Bool: v.b = r.boolean("value"); break;
    case Value::Kind::List: {
      const auto& items = r.list("value");
      for (size_t i = 0; i < items.size(); ++i)
        v.list.push_back(r.real_of(items[i], r.at("value") + "[" + std::to_string(i) + "]"));
      break;
    }
    case Value::Kind::Resource: v.resource = r.string("value"); break;
  }
  return v;
}

std::vector<std::pair<std::string, Value>> read_named_values(const Reader& r) {
  std::vector<std::pair<std::string, Value>> out;
  for (const auto& [name, v] : r.json().members)
    out.emplace_back(name, read_value(Reader(v, r.at(name), r.what())));
  return out;
}

// Reads the field lists of abi_fields.h from the members of one JSON object, checking each
// field as its list declares. A SPIR-V task's blob name is appended to `blobs`.
class JsonFieldReader {
 public:
  static constexpr FieldForm kForm = FieldForm::Json;
  JsonFieldReader(const Reader& r, std::vector<std::string>* blobs) : r_(r), blobs_(blobs) {}

  void text(const char* key, std::string& s) { s = r_.string(key); }
  template <typename I>
  void integer(const char* key, I& i, int64_t lo, int64_t hi) {
    i = static_cast<I>(r_.integer(key, lo, hi));
  }
  template <typename I>
  void optional_integer(const char* key, I& i, int64_t lo, int64_t hi, I absent) {
    i = r_.has(key) ? static_cast<I>(r_.integer(key, lo, hi)) : absent;
  }
  void optional_flag(const char* key, bool& b) { b = r_.has(key) && r_.boolean(key); }
  void flag(const char* key, bool& b) { b = r_.boolean(key); }
  template <typename E, typename NameOf>
  void choice(const char* key, E& e, E last, NameOf name_of) {
    std::string s = r_.string(key);
    for (int i = 0; i <= static_cast<int>(last); ++i) {
      if (s != name_of(static_cast<E>(i))) continue;
      e = static_cast<E>(i);
      return;
    }
    r_.fail_at(r_.at(key), "has an unknown value '" + s + "'");
  }
  void type(const char* key, ValueType& t, bool void_ok) {
    t = void_ok ? r_.type_or_void(key) : r_.type(key);
  }
  void extents(const char* key, std::array<int64_t, kMaxDims>& shape) {
    std::vector<int64_t> read = r_.shape(key, kMaxDims);
    shape.fill(0);
    std::copy(read.begin(), read.end(), shape.begin());
  }
  template <typename T, typename Each>
  void list(const char* key, std::vector<T>& items, uint32_t max, Each&& each) {
    items.resize(count(key, max));
    for (size_t i = 0; i < items.size(); ++i) {
      JsonFieldReader item(r_.item(key, i), blobs_);
      each(item, items[i]);
    }
  }
  template <typename T>
  void list(const char* key, std::vector<T>& items, uint32_t max) {
    list(key, items, max, [](JsonFieldReader& v, T& item) { visit_fields(v, item); });
  }
  void types(const char* key, std::vector<ValueType>& items, uint32_t max, bool void_ok) {
    items.resize(count(key, max));
    for (size_t i = 0; i < items.size(); ++i) {
      const JsonValue& t = r_.list(key)[i];
      std::optional<ValueType> type;
      if (t.kind == JsonValue::Kind::String)
        type = void_ok && t.text == "void" ? ValueType{} : parse_value_type(t.text);
      if (!type) r_.fail_at(item_path(key, i), "is not a value type");
      items[i] = *type;
    }
  }
  void byte_list(const char* key, std::vector<uint8_t>& items, uint32_t max, int lo, int hi) {
    items.resize(count(key, max));
    for (size_t i = 0; i < items.size(); ++i)
      items[i] = static_cast<uint8_t>(r_.integer_of(r_.list(key)[i], item_path(key, i), lo, hi));
  }
  void texts(const char* key, std::vector<std::string>& items, uint32_t max) {
    count(key, max);
    items = r_.strings(key);
  }
  void bound_pairs(const char* begin_key, std::vector<RangeBound>& begin, const char* end_key,
                   std::vector<RangeBound>& end, uint32_t max) {
    list(begin_key, begin, max);
    list(end_key, end, max);
    if (begin.size() != end.size())
      r_.fail_at(r_.at(end_key), "has " + std::to_string(end.size()) + " bounds; " + begin_key +
                                     " has " + std::to_string(begin.size()));
  }
  void spirv_code(const char* key, std::vector<uint32_t>&) { blobs_->push_back(r_.string(key)); }
  template <typename T, typename Each>
  void optional_list(const char* key, bool& present, std::vector<T>& items, uint32_t max,
                     Each&& each) {
    present = r_.json().find(key) != nullptr;
    items.clear();
    if (present) list(key, items, max, std::forward<Each>(each));
  }
  void require(bool ok, const char* why) {
    if (!ok) r_.fail(why);
  }

 private:
  size_t count(const char* key, uint32_t max) {
    size_t n = r_.list(key).size();
    if (n > max) r_.fail_at(r_.at(key), "has more than " + std::to_string(max) + " items");
    return n;
  }
  std::string item_path(const char* key, size_t i) const {
    return r_.at(key) + "[" + std::to_string(i) + "]";
  }

  Reader r_;
  std::vector<std::string>* blobs_;
};

KernelABI read_abi(const Reader& r, const std::string& name) {
  KernelABI abi;
  JsonFieldReader fields(r, nullptr);
  visit_fields(fields, abi);
  abi.name = name;
  return abi;
}

void read_spirv(const Reader& r, KernelInfo& k) {
  JsonFieldReader fields(r, &k.spirv_blobs);
  visit_fields(fields, k.spirv);
}

TemplateArgument read_template(const Reader& r) {
  TemplateArgument t;
  t.param = r.string("param");
  t.kind =
      r.name_of<TemplateArgument::Kind>("kind", {{"field", TemplateArgument::Kind::Field},
                                                 {"int", TemplateArgument::Kind::Int},
                                                 {"float", TemplateArgument::Kind::Float},
                                                 {"bool", TemplateArgument::Kind::Bool},
                                                 {"ndarray", TemplateArgument::Kind::Ndarray}});
  switch (t.kind) {
    case TemplateArgument::Kind::Field: t.field = r.string("value"); break;
    case TemplateArgument::Kind::Int: t.i = r.integer("value", INT64_MIN, INT64_MAX); break;
    case TemplateArgument::Kind::Float: t.f = r.real("value"); break;
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
    if ((kAllSpirvRequirements & (1u << bit)) && describe_requirements(1u << bit) == name)
      return 1u << bit;
  return 0;
}

// The steps of metadata_from_json, in the order the sections appear.

void check_format(const JsonValue& root, const Reader& r, ModuleMetadata& m) {
  if (!root.find("format") || root.find("format")->text != "loom-module")
    throw Error(Place{r.what()},
                "not a Loom module (its metadata has no \"format\": \"loom-module\")");
  m.format_version = static_cast<int>(r.integer("format_version", 0, kI32Max));
  if (m.format_version < 1 || m.format_version > kModuleFormatVersion)
    throw Error(Place{r.what()},
                "module format version " + std::to_string(m.format_version) +
                    " is not one this runtime reads (versions 1 to " +
                    std::to_string(kModuleFormatVersion) +
                    "); rebuild the module with `loom compile`, or load it with a newer Loom",
                ErrorKind::Version);
}

// Calls read(item reader) for every item of the array `key` of `r`.
template <typename F>
void for_each_item(const Reader& r, const std::string& key, F&& read) {
  for (size_t i = 0; i < r.list(key).size(); ++i) read(r.item(key, i));
}

// A CPU module's levels: "cpu_levels" when it has several, else the one level of "cpu" and
// "cpu_features" (every module before levels). The lowest level is in both places.
void read_cpu_levels(const Reader& req, ModuleMetadata& m) {
  CpuLevel lowest{req.string("cpu"), req.strings("cpu_features")};
  if (!req.json().find("cpu_levels")) {
    m.needs.cpu_levels = {lowest};
    return;
  }
  for_each_item(req, "cpu_levels", [&](const Reader& l) {
    m.needs.cpu_levels.push_back({l.string("cpu"), l.strings("cpu_features")});
    for (size_t i = 0; i + 1 < m.needs.cpu_levels.size(); ++i)
      if (m.needs.cpu_levels[i].cpu == m.needs.cpu_levels.back().cpu)
        l.fail_at(l.at("cpu"), "names CPU '" + l.string("cpu") + "' a second time");
  });
  if (m.needs.cpu_levels.empty()) req.fail_at(req.at("cpu_levels"), "is empty");
  const CpuLevel& first = m.needs.cpu_levels.front();
  if (first.cpu != lowest.cpu || first.features != lowest.features)
    req.fail_at(req.at("cpu_levels[0]"), "is not the level of requires.cpu and cpu_features");
}

void read_requirements(const Reader& req, ModuleMetadata& m) {
  if (m.arch == Arch::Cpu) {
    m.needs.target = req.string("target");
    read_cpu_levels(req, m);
    return;
  }
  const auto& features = req.list("vulkan_features");
  for (size_t i = 0; i < features.size(); ++i) {
    uint32_t bit = features[i].kind == JsonValue::Kind::String ? feature_bit(features[i].text) : 0;
    if (!bit)
      req.fail_at(req.at("vulkan_features") + "[" + std::to_string(i) + "]",
                  "is not a device feature Loom knows");
    m.needs.vulkan_features |= bit;
  }
  m.needs.workgroup_size = static_cast<uint32_t>(req.integer("workgroup_size", 0, 1 << 16));
  m.needs.push_constant_bytes =
      static_cast<uint32_t>(req.integer("push_constant_bytes", 0, 1 << 16));
}

void read_storage(const Reader& r, ModuleMetadata& m) {
  for_each_item(r, "fields", [&](const Reader& f) {
    m.fields.push_back({f.string("name"), f.type("type"), f.shape("shape", kMaxDims),
                        f.name_of<Layout>("layout", {{"aos", Layout::AoS}, {"soa", Layout::SoA}})});
  });
  for_each_item(r, "ndarrays", [&](const Reader& n) {
    m.ndarrays.push_back({n.string("name"), n.type("type"), n.shape("shape", kMaxDims)});
  });
  for_each_item(r, "textures", [&](const Reader& t) {
    TextureInfo info;
    info.name = t.string("name");
    if (!parse_texture_format(t.string("format"), &info.format))
      t.fail_at(t.at("format"), "is not a texture format");
    info.size = t.shape("size", 3);
    if (info.size.size() < 2) t.fail_at(t.at("size"), "needs 2 or 3 extents");
    m.textures.push_back(info);
  });
}

ArgpackMember read_argpack_member(const Reader& mm, size_t type_count, uint32_t type_size) {
  ArgpackMember member;
  member.name = mm.string("name");
  member.kind = mm.name_of<MemberKind>("kind", {{"value", MemberKind::Value},
                                                {"struct", MemberKind::Struct},
                                                {"pack", MemberKind::Pack},
                                                {"ndarray", MemberKind::Ndarray},
                                                {"texture", MemberKind::Texture}});
  member.type = member.kind == MemberKind::Value ? mm.type("type") : mm.type_or_void("type");
  member.ndim = static_cast<int>(mm.integer("ndim", 0, kMaxDims));
  member.nested = static_cast<int>(mm.integer("nested", -1, static_cast<int64_t>(type_count) - 1));
  member.offset = static_cast<uint32_t>(mm.integer("offset", 0, type_size));
  if (!parse_texture_format(mm.string("format"), &member.format))
    mm.fail_at(mm.at("format"), "is not a texture format");
  if ((member.kind == MemberKind::Struct || member.kind == MemberKind::Pack) && member.nested < 0)
    mm.fail("names no nested type");
  return member;
}

void read_argpack_types(const Reader& r, ModuleMetadata& m) {
  size_t type_count = r.list("argpack_types").size();
  for_each_item(r, "argpack_types", [&](const Reader& t) {
    ArgpackType type;
    type.name = t.string("name");
    type.is_pack = t.boolean("is_pack");
    type.size = static_cast<uint32_t>(t.integer("size", 0, 1 << 16));
    type.align = static_cast<uint32_t>(t.integer("align", 1, 256));
    for_each_item(t, "members", [&](const Reader& mm) {
      type.members.push_back(read_argpack_member(mm, type_count, type.size));
    });
    m.argpack_types.push_back(std::move(type));
  });
}

// The stored layout must be the layout this runtime computes: a pack's bytes are written
// at these offsets and read by the kernels at the offsets they were compiled with.
void check_argpack_layouts(const ModuleMetadata& m, const std::string& what) {
  std::vector<ArgpackType> check = m.argpack_types;
  try {
    layout_argpack_types(check);
  } catch (const Error& e) {
    throw Error(Place{what}, "corrupt module metadata: argpack_types: " + e.message());
  }
  for (size_t i = 0; i < check.size(); ++i) {
    bool same = check[i].size == m.argpack_types[i].size;
    for (size_t j = 0; same && j < check[i].members.size(); ++j)
      same = check[i].members[j].offset == m.argpack_types[i].members[j].offset;
    if (!same)
      throw Error(Place{what}, "corrupt module metadata: argpack_types[" + std::to_string(i) +
                                   "] ('" + check[i].name +
                                   "') has a layout this runtime does not compute");
  }
}

void read_argpacks(const Reader& r, ModuleMetadata& m) {
  for_each_item(r, "argpacks", [&](const Reader& a) {
    ArgpackInfo info;
    info.name = a.string("name");
    info.type =
        static_cast<int>(a.integer("type", 0, static_cast<int64_t>(m.argpack_types.size()) - 1));
    info.values = read_named_values(a.object("values"));
    m.argpacks.push_back(std::move(info));
  });
}

// kernels[i].derived: the mode, the primal's name (the kernel's name less the suffix), and
// each twin a parameter after the primal's own, of the same kind, type and dimensions as the
// parameter it is the twin of, named after it; a twin of the ndarray an argpack holds, of the
// element type and dimensions of that member of the parameter's argpack type (`types`). Whether
// the module holds the primal is checked once every kernel is read (check_derivations).
Derivation read_derivation(const Reader& d, const KernelInfo& k,
                           const std::vector<ArgpackType>& types) {
  Derivation out;
  out.mode = d.name_of<Derivation::Mode>(
      "mode", {{"grad", Derivation::Mode::Adjoint}, {"dual", Derivation::Mode::Tangent}});
  const std::string suffix = derivation_suffix(out.mode);
  out.of = d.string("of");
  if (out.of.empty() || k.name != out.of + suffix)
    d.fail_at(d.at("of"),
              "is '" + out.of + "'; kernel '" + k.name + "' is not '" + out.of + suffix + "'");
  const std::vector<ParamDesc>& params = k.abi.params;
  auto param_named = [&](const Reader& t, const std::string& key) {
    std::string name = t.string(key);
    for (size_t p = 0; p < params.size(); ++p)
      if (params[p].name == name) return static_cast<int>(p);
    t.fail_at(t.at(key), "names '" + name + "', which is no parameter of kernel '" + k.name + "'");
  };
  // The float ndarray an argpack parameter holds at `member` (a twin's or a shadow's).
  auto argpack_ndarray = [&](const Reader& t, const ParamDesc& op, const std::string& member) {
    if (op.kind != ParamKind::Argpack || op.argpack_type < 0 ||
        static_cast<size_t>(op.argpack_type) >= types.size())
      t.fail_at(t.at("member"), "names a member of '" + op.name + "', which is no argpack");
    const ArgpackMember* m = find_member(types, op.argpack_type, member, nullptr);
    if (!m || m->kind != MemberKind::Ndarray || !is_float(m->type.scalar))
      t.fail_at(t.at("member"), "is '" + member +
                                    "', which is no float ndarray member of argpack type '" +
                                    types[static_cast<size_t>(op.argpack_type)].name + "'");
    return m;
  };
  const size_t shadow_count = d.has("shadows") ? d.list("shadows").size() : 0;
  size_t count = d.list("twins").size();
  if (count + shadow_count > params.size())
    d.fail_at(d.at("twins"), "has " + std::to_string(count) + " twins and " +
                                 std::to_string(shadow_count) + " shadows; kernel '" + k.name +
                                 "' has " + std::to_string(params.size()) + " parameters");
  const size_t first_shadow = params.size() - shadow_count;
  const size_t first_twin = first_shadow - count;
  // An entry of `twins` or `shadows` (`read`: those before it, from parameter `first` on): its
  // parameter in its place, of one of K's own parameters (or of an argpack's ndarray there).
  auto read_entry = [&](const Reader& t, const std::vector<Derivation::Twin>& read, size_t first,
                        const char* list) {
    Derivation::Twin e{param_named(t, "param"), param_named(t, "of"),
                       t.has("member") ? t.string("member") : std::string()};
    size_t expected = first + read.size();
    if (static_cast<size_t>(e.param) != expected)
      t.fail_at(t.at("param"), "is parameter " + std::to_string(e.param) + " of kernel '" + k.name +
                                   "'; " + list +
                                   " are its last parameters (twins before shadows), in order "
                                   "(this one should be parameter " +
                                   std::to_string(expected) + ")");
    const std::string& of = params[static_cast<size_t>(e.of)].name;
    if (static_cast<size_t>(e.of) >= first_twin)
      t.fail_at(t.at("of"), "names '" + of + "', which is a twin or a shadow itself");
    return e;
  };
  // ... and named by no entry before it (`of`: what it names, "p.vel" for a member).
  auto check_once = [](const Reader& t, const std::vector<Derivation::Twin>& read,
                       const Derivation::Twin& e, const std::string& of) {
    for (const Derivation::Twin& before : read)
      if (before.of == e.of && before.member == e.member)
        t.fail_at(t.at("of"), "names '" + of + "' a second time");
  };
  for_each_item(d, "twins", [&](const Reader& t) {
    Derivation::Twin twin = read_entry(t, out.twins, first_twin, "twins");
    const ParamDesc& tp = params[static_cast<size_t>(twin.param)];
    const ParamDesc& op = params[static_cast<size_t>(twin.of)];
    // A twin of an argpack's ndarray: that member.
    const ArgpackMember* member =
        twin.member.empty() ? nullptr : argpack_ndarray(t, op, twin.member);
    const std::string of = member ? op.name + "." + twin.member : op.name;
    if (tp.name != of + suffix)
      t.fail_at(t.at("param"),
                "is '" + tp.name + "'; the twin of '" + of + "' is '" + of + suffix + "'");
    check_once(t, out.twins, twin, of);
    if (member) {
      if (tp.kind != ParamKind::Ndarray || tp.type != member->type || tp.ndim != member->ndim)
        t.fail_at(t.at("param"), "'" + tp.name +
                                     "' is not an ndarray of the element type and dimensions of '" +
                                     of + "'");
      out.twins.push_back(twin);
      return;
    }
    bool tangent = out.mode == Derivation::Mode::Tangent;
    bool value_twin = tangent && op.kind == ParamKind::Value && is_float(op.type.scalar);
    bool pack_twin = tangent && op.kind == ParamKind::Argpack;
    if (op.kind != ParamKind::Ndarray && !value_twin && !pack_twin)
      t.fail_at(t.at("of"), "names '" + op.name + "', which has no " + suffix.substr(1) +
                                " twin (only ndarray parameters" +
                                (tangent ? std::string(", float value parameters and argpacks")
                                         : std::string()) +
                                " have one)");
    if (tp.kind != op.kind || tp.type != op.type || tp.ndim != op.ndim)
      t.fail_at(t.at("param"),
                "'" + tp.name + "' is not of the kind, type and dimensions of '" + op.name + "'");
    if (tp.argpack_type != op.argpack_type)
      t.fail_at(t.at("param"), "'" + tp.name + "' is an argpack of type " +
                                   std::to_string(tp.argpack_type) + ", '" + op.name +
                                   "' of type " + std::to_string(op.argpack_type) +
                                   "; a twin has its parameter's argpack type");
    out.twins.push_back(twin);
  });
  if (!d.has("shadows")) return out;
  if (out.mode != Derivation::Mode::Adjoint)
    d.fail_at(d.at("shadows"), "are given, but only adjoint kernels have shadows");
  for_each_item(d, "shadows", [&](const Reader& t) {
    Derivation::Twin shadow = read_entry(t, out.shadows, first_shadow, "shadows");
    const ParamDesc& sp = params[static_cast<size_t>(shadow.param)];
    const ParamDesc& op = params[static_cast<size_t>(shadow.of)];
    ValueType elem = op.type;
    int ndim = op.ndim;
    std::string of = op.name;
    if (!shadow.member.empty()) {
      const ArgpackMember* m = argpack_ndarray(t, op, shadow.member);
      elem = m->type;
      ndim = m->ndim;
      of += "." + shadow.member;
    } else if (op.kind != ParamKind::Ndarray) {
      t.fail_at(t.at("of"), "names '" + op.name +
                                "', which is no ndarray (only ndarrays have "
                                "shadows)");
    }
    if (sp.name != of + ".written")
      t.fail_at(t.at("param"),
                "is '" + sp.name + "'; the shadow of '" + of + "' is '" + of + ".written'");
    if (sp.kind != ParamKind::Ndarray || sp.type.scalar != Scalar::I32 ||
        sp.type.components() != elem.components() || sp.ndim != ndim)
      t.fail_at(t.at("param"), "'" + sp.name + "' is not an ndarray of i32 elements of the " +
                                   "components and dimensions of '" + of + "'");
    check_once(t, out.shadows, shadow, of);
    // Both are resource slots of the kernel: the runtime binds the shadow beside what it
    // shadows.
    uint32_t offset = 0;
    if (!shadow.member.empty()) find_member(types, op.argpack_type, shadow.member, &offset);
    auto slot_of = [&](int param, int32_t at) {
      return std::any_of(
          k.abi.resources.begin(), k.abi.resources.end(),
          [&](const ResourceDesc& r) { return r.param == param && r.param_offset == at; });
    };
    if (!slot_of(shadow.param, -1) ||
        !slot_of(shadow.of, shadow.member.empty() ? -1 : static_cast<int32_t>(offset)))
      t.fail_at(t.at("param"),
                "'" + sp.name + "' or '" + of + "' is no resource slot of kernel '" + k.name + "'");
    out.shadows.push_back(shadow);
  });
  return out;
}

}  // namespace

size_t launch_param_count(const KernelInfo& k) {
  return k.abi.params.size() - std::min(k.abi.params.size(), k.derived.shadows.size());
}

namespace {

// Every derived kernel's primal is in the module, and is a kernel of its own (not derived).
void check_derivations(const Reader& r, const ModuleMetadata& m) {
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const Derivation& d = m.kernels[i].derived;
    if (d.mode == Derivation::Mode::None) continue;
    bool found = std::any_of(m.kernels.begin(), m.kernels.end(), [&](const KernelInfo& k) {
      return k.name == d.of && k.derived.mode == Derivation::Mode::None;
    });
    if (!found)
      r.fail_at("kernels[" + std::to_string(i) + "].derived.of",
                "names kernel '" + d.of + "', which the module lacks");
  }
}

KernelInfo read_kernel(const Reader& k, const ModuleMetadata& m) {
  KernelInfo info;
  info.name = k.string("name");
  for_each_item(k, "template_args",
                [&](const Reader& t) { info.template_args.push_back(read_template(t)); });
  info.return_names = k.strings("return_names");
  info.abi = read_abi(k.object("abi"), info.name);
  for (const ParamDesc& p : info.abi.params)
    if (p.kind == ParamKind::Argpack &&
        (p.argpack_type < 0 || static_cast<size_t>(p.argpack_type) >= m.argpack_types.size()))
      k.fail_at(k.at("abi.params"), "names argpack type " + std::to_string(p.argpack_type) +
                                        ", which the module lacks");
  if (k.has("derived")) info.derived = read_derivation(k.object("derived"), info, m.argpack_types);
  if (m.arch == Arch::Cpu) {
    info.objects = {k.string("object")};
    size_t levels = m.needs.cpu_levels.size();
    if (!k.json().find("objects")) {
      if (levels > 1)
        k.fail_at(k.at("objects"),
                  "is missing (the module has " + std::to_string(levels) + " CPU levels)");
      return info;
    }
    info.objects = k.strings("objects");
    if (info.objects.size() != levels)
      k.fail_at(k.at("objects"), "has " + std::to_string(info.objects.size()) +
                                     " objects; the module has " + std::to_string(levels) +
                                     " CPU levels");
    if (info.objects.front() != k.string("object"))
      k.fail_at(k.at("objects[0]"), "is not the object of " + k.at("object"));
    return info;
  }
  read_spirv(k.object("spirv"), info);
  if (info.spirv.tasks.size() != info.abi.tasks.size())
    k.fail_at(k.at("spirv.tasks"), "has " + std::to_string(info.spirv.tasks.size()) +
                                       " tasks; the ABI has " +
                                       std::to_string(info.abi.tasks.size()));
  return info;
}

void read_pipelines(const Reader& r, ModuleMetadata& m) {
  for_each_item(r, "pipelines", [&](const Reader& p) {
    PipelineInfo info;
    info.name = p.string("name");
    for_each_item(p, "launches", [&](const Reader& l) {
      LaunchInfo launch;
      launch.kernel =
          static_cast<int>(l.integer("kernel", 0, static_cast<int64_t>(m.kernels.size()) - 1));
      launch.args = read_named_values(l.object("args"));
      info.launches.push_back(std::move(launch));
    });
    m.pipelines.push_back(std::move(info));
  });
}

}  // namespace

ModuleMetadata metadata_from_json(const std::string& text, const std::string& what) {
  JsonValue root = parse_json(text, what);
  Reader r(root, "", what);
  ModuleMetadata m;
  check_format(root, r, m);
  m.name = r.string("name");
  m.arch = r.name_of<Arch>("arch", {{"cpu", Arch::Cpu}, {"vulkan", Arch::Vulkan}});
  m.producer = r.string("producer");
  read_requirements(r.object("requires"), m);
  read_storage(r, m);
  read_argpack_types(r, m);
  check_argpack_layouts(m, what);
  read_argpacks(r, m);
  for_each_item(r, "kernels", [&](const Reader& k) { m.kernels.push_back(read_kernel(k, m)); });
  check_derivations(r, m);
  read_pipelines(r, m);
  for_each_item(r, "blobs", [&](const Reader& b) {
    m.blobs.push_back({b.string("name"), b.unsigned_integer("size"), b.string("hash")});
  });
  return m;
}

}  // namespace loom::aot
