#include "runtime/aot/loaded_module.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <typeinfo>

#include "runtime/aot/module_device.h"
#include "runtime/common/error.h"
#include "runtime/host/argpack.h"
#include "runtime/host/extent_check.h"
#include "runtime/host/field.h"
#include "runtime/host/launch_frame.h"
#include "runtime/host/ndarray.h"
#include "runtime/host/scalar_traits.h"
#include "runtime/host/texture.h"

namespace loom::aot {

namespace {

using host::with_scalar_type;

std::string describe(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Int: return "the integer " + std::to_string(v.i);
    case Value::Kind::Float: return "the number " + std::to_string(v.f);
    case Value::Kind::Bool: return v.b ? "true" : "false";
    case Value::Kind::List: return "a list of " + std::to_string(v.list.size());
    case Value::Kind::Resource: return "the resource '" + v.resource + "'";
  }
  return "?";
}

// The components of `v` converted to type `t`, as T; throws at `where` on a mismatch.
template <typename T>
std::vector<T> components_as(const Value& v, ValueType t, const Place& where,
                             const std::string& what) {
  std::vector<double> values;
  bool integral = false;
  uint64_t big = 0;
  switch (v.kind) {
    case Value::Kind::Int:
      integral = true;
      if (v.above_int64) big = static_cast<uint64_t>(v.i);
      values.push_back(v.above_int64 ? static_cast<double>(big) : static_cast<double>(v.i));
      break;
    case Value::Kind::Float: values.push_back(v.f); break;
    case Value::Kind::Bool: values.push_back(v.b ? 1 : 0); break;
    case Value::Kind::List: values = v.list; break;
    case Value::Kind::Resource:
      throw Error(where, what + " takes a " + value_type_name(t) + " value, not " + describe(v));
  }
  if (static_cast<int>(values.size()) != t.components())
    throw Error(where, what + " takes " + std::to_string(t.components()) + " component(s) of " +
                           std::string(scalar_name(t.scalar)) + "; got " + describe(v));
  std::vector<T> out;
  for (double d : values) {
    if constexpr (std::is_integral_v<T>) {
      if (d != std::floor(d))
        throw Error(where, what + " is an integer; " + std::to_string(d) + " is not");
      if (integral && v.above_int64 && std::is_same_v<T, uint64_t>) {
        out.push_back(static_cast<T>(big));
        continue;
      }
      if (d < static_cast<double>(std::numeric_limits<T>::min()) ||
          d > static_cast<double>(std::numeric_limits<T>::max()))
        throw Error(where, what + ": " + std::to_string(static_cast<long long>(d)) +
                               " does not fit in " + std::string(scalar_name(t.scalar)));
      out.push_back(integral && values.size() == 1 && !v.above_int64 ? static_cast<T>(v.i)
                                                                     : static_cast<T>(d));
    } else {
      out.push_back(static_cast<T>(d));
    }
  }
  return out;
}

}  // namespace

void set_value_argument(host::LaunchFrame& frame, int param, const Value& value,
                        const Place& where) {
  const ParamDesc& d = frame.abi().params.at(static_cast<size_t>(param));
  std::string what = "parameter '" + d.name + "'";
  if (d.type.scalar == Scalar::Bool) {
    if (d.type.components() != 1)
      throw Error(where, what + " is a bool vector, which launches do not support");
    if (value.kind != Value::Kind::Bool &&
        !(value.kind == Value::Kind::Int && (value.i == 0 || value.i == 1)))
      throw Error(where, what + " takes true or false, not " + describe(value));
    frame.set_value<bool>(param, value.kind == Value::Kind::Bool ? value.b : value.i != 0);
    return;
  }
  with_scalar_type(d.type.scalar, [&](auto zero) {
    using T = decltype(zero);
    frame.set_components<T>(param, components_as<T>(value, d.type, where, what));
  });
}

struct LoadedModule::Resources {
  std::map<std::string, std::unique_ptr<host::Field>> fields;
  std::map<std::string, std::unique_ptr<host::Ndarray>> ndarrays;
  std::map<std::string, std::unique_ptr<host::Texture>> textures;
  std::map<std::string, std::unique_ptr<host::Argpack>> argpacks;
  // A debug adjoint's shadows (Derivation::shadows), by kernel and shadow parameter: made
  // when first bound, again when the ndarray it shadows has another shape (launches run in
  // order, and each zeroes its shadows first, so one per parameter serves them all).
  std::map<std::pair<int, int>, std::unique_ptr<host::Ndarray>> shadows;
};

struct LoadedModule::BoundLaunch {
  int kernel = -1;
  host::LaunchFrame frame;  // the module's arguments, bound once
  // Per parameter, binds the module's argument into a frame: a run given arguments fills
  // `given` from these and the arguments, so `frame` keeps the module's for later runs.
  std::vector<std::function<void(host::LaunchFrame&)>> module_args;
  std::unique_ptr<host::LaunchFrame> given;  // made by the first run given arguments
  BoundLaunch(int k, KernelABI abi) : kernel(k), frame(std::move(abi)) {}
};

PipelineArgument PipelineArgument::value(ValueType type, const void* components) {
  PipelineArgument a;
  a.kind = ParamKind::Value;
  a.type = type;
  a.bytes.resize(static_cast<size_t>(type.components()) *
                 static_cast<size_t>(size_of(type.scalar)));
  std::memcpy(a.bytes.data(), components, a.bytes.size());
  return a;
}
PipelineArgument PipelineArgument::of(const host::Ndarray& ndarray) {
  PipelineArgument a;
  a.kind = ParamKind::Ndarray;
  a.ndarray = &ndarray;
  return a;
}
PipelineArgument PipelineArgument::of(const host::Texture& texture) {
  PipelineArgument a;
  a.kind = ParamKind::Texture;
  a.texture = &texture;
  return a;
}
PipelineArgument PipelineArgument::of(host::Argpack& argpack) {
  PipelineArgument a;
  a.kind = ParamKind::Argpack;
  a.argpack = &argpack;
  return a;
}

LoadedModule::LoadedModule(Module module, Device& device, std::string what,
                           const LoadOptions& options)
    : module_(std::move(module)),
      device_(device),
      what_(std::move(what)),
      resources_(std::make_unique<Resources>()) {
  size_t level = check_requirements(device_, module_.meta, what_, options.cpu_level);
  if (device_.kind() == DeviceKind::Cpu) cpu_level_ = static_cast<int>(level);
  for (size_t i = 0; i < module_.meta.kernels.size(); ++i)
    kernels_.push_back(load_module_kernel(device_, module_, i, what_, level));
  try {
    allocate();
    bind_pipelines();
  } catch (const Error& e) {
    release_device_copies();  // the destructor does not run for a constructor that throws
    // Storage errors ("cannot allocate N bytes for field 'x'") name the resource; the module
    // is only known here. Errors of another type (internal ones) go as they are.
    if (typeid(e) != typeid(Error) || !e.place().document.empty()) throw;
    throw Error(Place{what_}, e.message(), e.kind());
  } catch (...) {
    release_device_copies();
    throw;
  }
}

LoadedModule::~LoadedModule() { release_device_copies(); }

void LoadedModule::release_device_copies() {
  if (!resources_) return;
  for (auto& [name, f] : resources_->fields)
    if (f) device_.remove(f->data());
  for (auto& [name, n] : resources_->ndarrays)
    if (n) device_.remove(n->data());
  for (auto& [name, t] : resources_->textures)
    if (t) device_.remove(t->data());
  for (auto& [name, a] : resources_->argpacks)
    if (a) device_.remove(a->data());
  for (auto& [storage, s] : resources_->shadows)
    if (s) device_.remove(s->data());
  resources_.reset();
}

void LoadedModule::allocate() {
  const ModuleMetadata& m = module_.meta;
  Resources& r = *resources_;
  auto claim = [&](const std::string& name) {
    if (r.fields.count(name) || r.ndarrays.count(name) || r.textures.count(name) ||
        r.argpacks.count(name))
      throw Error(Place{what_}, "corrupt module metadata: two resources are named '" + name + "'");
  };
  for (const FieldDesc& f : m.fields) {
    claim(f.name);
    auto field = std::make_unique<host::Field>(f);
    device_.add_buffer(f.name, field->data(), field->bytes(), false);
    r.fields[f.name] = std::move(field);
  }
  for (const NdarrayInfo& n : m.ndarrays) {
    claim(n.name);
    auto nd = std::make_unique<host::Ndarray>(n.elem.scalar, n.shape, n.elem.components(), n.name);
    device_.add_buffer(n.name, nd->data(), nd->bytes(), false);
    r.ndarrays[n.name] = std::move(nd);
  }
  for (const TextureInfo& t : m.textures) {
    claim(t.name);
    auto tex =
        t.size.size() == 3
            ? std::make_unique<host::Texture>(t.format, t.size[0], t.size[1], t.size[2], t.name)
            : std::make_unique<host::Texture>(t.format, t.size[0], t.size[1], t.name);
    device_.add_texture(t.name, *tex);
    r.textures[t.name] = std::move(tex);
  }
  for (const ArgpackInfo& a : m.argpacks) {
    claim(a.name);
    auto pack = std::make_unique<host::Argpack>(m.argpack_types, a.type);
    device_.add_argpack(a.name, *pack);
    r.argpacks[a.name] = std::move(pack);
  }
  for (const ArgpackInfo& a : m.argpacks) {
    host::Argpack& pack = *r.argpacks.at(a.name);
    // Named, not a structured binding: clang before 16 cannot capture a binding in a lambda.
    for (const auto& member_value : a.values) {
      const std::string& path = member_value.first;
      const Value& value = member_value.second;
      Place where{what_, "", -1, a.name + "." + path};
      uint32_t offset = 0;
      const ArgpackMember* member = find_member(m.argpack_types, a.type, path, &offset);
      if (!member) throw Error(where, "argpack '" + a.name + "' has no member '" + path + "'");
      std::string what = "member '" + a.name + "." + path + "'";
      auto resource = [&]() -> const std::string& {
        if (value.kind != Value::Kind::Resource)
          throw Error(where, what + " takes a resource name, not " + describe(value));
        return value.resource;
      };
      switch (member->kind) {
        case MemberKind::Ndarray: {
          host::Ndarray* nd = ndarray(resource());
          if (!nd)
            throw Error(where, what + ": '" + value.resource + "' is not an ndarray of the module");
          if (nd->dtype() != member->type.scalar || nd->components() != member->type.components() ||
              nd->ndim() != member->ndim)
            throw Error(where, what + " holds ndarrays of " + value_type_name(member->type) +
                                   " with " + std::to_string(member->ndim) + " dimensions; '" +
                                   value.resource + "' is not one");
          pack.set_ndarray(path, *nd);
          break;
        }
        case MemberKind::Texture: {
          host::Texture* tex = texture(resource());
          if (!tex || tex->format() != member->format)
            throw Error(where, what + " holds " + texture_format_name(member->format) +
                                   " textures; '" + value.resource + "' is not one of the module");
          pack.set_texture(path, *tex);
          break;
        }
        case MemberKind::Pack:
        case MemberKind::Struct: {
          host::Argpack* nested = argpack(resource());
          if (!nested ||
              nested->type().name != m.argpack_types.at(static_cast<size_t>(member->nested)).name)
            throw Error(where, what + " takes an argpack of type '" +
                                   m.argpack_types.at(static_cast<size_t>(member->nested)).name +
                                   "'; '" + value.resource + "' is not one of the module");
          pack.set_pack(path, *nested);
          break;
        }
        case MemberKind::Value:
          if (member->type.scalar == Scalar::Bool) {
            if (value.kind != Value::Kind::Bool || member->type.components() != 1)
              throw Error(where, what + " takes true or false, not " + describe(value));
            pack.set<bool>(path, value.b);
            break;
          }
          with_scalar_type(member->type.scalar, [&](auto zero) {
            using T = decltype(zero);
            pack.set_components<T>(path, components_as<T>(value, member->type, where, what));
          });
          break;
      }
    }
  }
}

void LoadedModule::bind_pipelines() {
  for (const PipelineInfo& p : module_.meta.pipelines) {
    std::vector<std::unique_ptr<BoundLaunch>> launches;
    for (const LaunchInfo& l : p.launches) {
      const KernelABI& abi = kernels_.at(static_cast<size_t>(l.kernel))->abi();
      auto bound = std::make_unique<BoundLaunch>(l.kernel, abi);
      const size_t given = launch_param_count(kernel_info(l.kernel));
      for (size_t i = 0; i < abi.params.size(); ++i) {
        const ParamDesc& d = abi.params[i];
        Place where{what_, abi.name, -1, d.name};
        if (i >= given) {  // a shadow: bound at each launch (bind_access_shadows)
          bound->module_args.emplace_back([](host::LaunchFrame&) {});
          continue;
        }
        const Value* v = nullptr;
        for (const auto& [name, value] : l.args)
          if (name == d.name) v = &value;
        if (!v)
          throw Error(where,
                      "pipeline '" + p.name + "' gives no argument for parameter '" + d.name + "'");
        int param = static_cast<int>(i);
        std::function<void(host::LaunchFrame&)> bind;
        if (d.kind == ParamKind::Value) {
          bind = [value = *v, where, param](host::LaunchFrame& frame) {
            set_value_argument(frame, param, value, where);
          };
        } else if (v->kind != Value::Kind::Resource) {
          throw Error(where, "pipeline '" + p.name + "': parameter '" + d.name +
                                 "' takes a resource name, not " + describe(*v));
        } else if (d.kind == ParamKind::Ndarray) {
          host::Ndarray* nd = ndarray(v->resource);
          if (!nd || nd->dtype() != d.type.scalar || nd->components() != d.type.components() ||
              nd->ndim() != d.ndim)
            throw Error(where, "parameter '" + d.name + "' needs an ndarray of " +
                                   value_type_name(d.type) + " with " + std::to_string(d.ndim) +
                                   " dimensions; '" + v->resource + "' is not one of the module");
          bind = [nd, param](host::LaunchFrame& frame) { frame.set_ndarray(param, *nd); };
        } else if (d.kind == ParamKind::Texture) {
          host::Texture* tex = texture(v->resource);
          if (!tex || tex->ndim() != d.ndim)
            throw Error(where, "parameter '" + d.name + "' needs a " + std::to_string(d.ndim) +
                                   "-d texture; '" + v->resource + "' is not one of the module");
          bind = [tex, param](host::LaunchFrame& frame) { frame.set_texture(param, *tex); };
        } else {
          host::Argpack* pack = argpack(v->resource);
          if (!pack || pack->type().name !=
                           module_.meta.argpack_types.at(static_cast<size_t>(d.argpack_type)).name)
            throw Error(
                where, "parameter '" + d.name + "' needs an argpack of type '" +
                           module_.meta.argpack_types.at(static_cast<size_t>(d.argpack_type)).name +
                           "'; '" + v->resource + "' is not one of the module");
          bind = [pack, param](host::LaunchFrame& frame) { frame.set_argpack(param, *pack); };
        }
        bind(bound->frame);
        bound->module_args.push_back(std::move(bind));
      }
      launches.push_back(std::move(bound));
    }
    pipelines_.push_back(std::move(launches));
  }
}

namespace {

bool template_matches(const TemplateArgument& have, const TemplateArgument& want) {
  using K = TemplateArgument::Kind;
  if (have.kind == K::Float && want.kind == K::Int) return have.f == static_cast<double>(want.i);
  if (have.kind != want.kind) return false;
  switch (have.kind) {
    case K::Field: return have.field == want.field;
    case K::Int: return have.i == want.i;
    case K::Float: return have.f == want.f;
    case K::Bool: return have.b == want.b;
    case K::Ndarray: return have.elem == want.elem && have.i == want.i;
  }
  return false;
}

std::string describe_template(const std::vector<TemplateArgument>& args) {
  std::string s;
  for (const TemplateArgument& t : args) {
    s += (s.empty() ? "" : ", ") + t.param + "=";
    switch (t.kind) {
      case TemplateArgument::Kind::Field: s += "field " + t.field; break;
      case TemplateArgument::Kind::Int: s += std::to_string(t.i); break;
      case TemplateArgument::Kind::Float: s += std::to_string(t.f); break;
      case TemplateArgument::Kind::Bool: s += t.b ? "true" : "false"; break;
      case TemplateArgument::Kind::Ndarray:
        s += "ndarray " + value_type_name(t.elem) + "/" + std::to_string(t.i) + "d";
        break;
    }
  }
  return "(" + s + ")";
}

}  // namespace

int LoadedModule::find_kernel(const std::string& name,
                              const std::vector<TemplateArgument>& template_args) const {
  const auto& kernels = module_.meta.kernels;
  for (size_t k = 0; k < kernels.size(); ++k) {
    if (kernels[k].name != name || kernels[k].template_args.size() != template_args.size())
      continue;
    bool all = true;
    for (const TemplateArgument& have : kernels[k].template_args) {
      int given = 0;
      bool match = false;
      for (const TemplateArgument& want : template_args)
        if (want.param == have.param) ++given, match = template_matches(have, want);
      all &= given == 1 && match;
    }
    if (all) return static_cast<int>(k);
  }
  return -1;
}

int LoadedModule::kernel(const std::string& name,
                         const std::vector<TemplateArgument>& template_args) const {
  int k = find_kernel(name, template_args);
  if (k >= 0) return k;
  std::string have;
  for (const KernelInfo& info : module_.meta.kernels)
    if (info.name == name)
      have += (have.empty() ? "" : ", ") + describe_template(info.template_args);
  if (have.empty()) throw Error(Place{what_, name}, "the module has no kernel '" + name + "'");
  throw Error(Place{what_, name}, "the module has no instantiation of kernel '" + name + "' for " +
                                      describe_template(template_args) + "; it has " + have);
}

void LoadedModule::launch(int index, host::LaunchFrame& frame) {
  launch(index, frame, [this](DeviceKernel& k, LaunchContext& ctx) { device_.launch(k, ctx); });
}

namespace {

// The slot of ndarray parameter `param` itself (not a pack member), -1 when its code has none.
int param_slot(const KernelABI& abi, int param) {
  for (size_t s = 0; s < abi.resources.size(); ++s)
    if (abi.resources[s].param == param && abi.resources[s].param_offset < 0)
      return static_cast<int>(s);
  return -1;
}

std::string shape_text(const ResourceView& v, int ndim) {
  std::string s = "[";
  for (int d = 0; d < ndim; ++d) s += (d ? ", " : "") + std::to_string(v.shape[d]);
  return s + "]";
}

// The slot of the ndarray member at `path` of argpack parameter `param`, or -1.
int member_slot(const KernelABI& abi, int param, const std::string& path,
                const std::vector<ArgpackType>& types) {
  uint32_t offset = 0;
  int type = abi.params.at(static_cast<size_t>(param)).argpack_type;
  if (!find_member(types, type, path, &offset)) return -1;
  for (size_t s = 0; s < abi.resources.size(); ++s)
    if (abi.resources[s].param == param &&
        abi.resources[s].param_offset == static_cast<int32_t>(offset))
      return static_cast<int>(s);
  return -1;
}

// A derived kernel's ndarray twins have the shapes of their parameters' ndarrays (or of the
// ndarrays the argpack members they twin hold): the adjoint of x[i] is x.grad[i], over the same
// loops.
void check_twin_shapes(const KernelInfo& info, const LaunchContext& ctx, const Place& where,
                       const std::vector<ArgpackType>& types) {
  for (const Derivation::Twin& t : info.derived.twins) {
    const ParamDesc& twin = info.abi.params.at(static_cast<size_t>(t.param));
    if (twin.kind != ParamKind::Ndarray) continue;
    int ts = param_slot(info.abi, t.param);
    int os = t.member.empty() ? param_slot(info.abi, t.of)
                              : member_slot(info.abi, t.of, t.member, types);
    if (ts < 0 || os < 0) continue;
    const ResourceView& tv = ctx.resources[ts];
    const ResourceView& ov = ctx.resources[os];
    if (std::equal(tv.shape, tv.shape + twin.ndim, ov.shape)) continue;
    std::string of = info.abi.params.at(static_cast<size_t>(t.of)).name;
    if (!t.member.empty()) of += "." + t.member;
    throw host::ExtentError(where, "the ndarray given for '" + twin.name + "' has the shape " +
                                       shape_text(tv, twin.ndim) + ", the one given for '" + of +
                                       "' " + shape_text(ov, twin.ndim) +
                                       "; a twin has the shape of its parameter's ndarray");
  }
}

}  // namespace

void LoadedModule::bind_access_shadows(int index, host::LaunchFrame& frame) {
  const KernelInfo& info = kernel_info(index);
  if (info.derived.shadows.empty()) return;
  const LaunchContext& ctx = frame.context();  // the views of what the launch binds
  for (const Derivation::Twin& s : info.derived.shadows) {
    int of = s.member.empty() ? param_slot(info.abi, s.of)
                              : member_slot(info.abi, s.of, s.member, module_.meta.argpack_types);
    if (of < 0)  // read_derivation checked that it has a slot
      throw Error(Place{what_, info.name},
                  "corrupt module metadata: shadow '" +
                      info.abi.params.at(static_cast<size_t>(s.param)).name +
                      "' shadows nothing the kernel touches");
    const ResourceView& v = ctx.resources[of];
    const ParamDesc& p = info.abi.params.at(static_cast<size_t>(s.param));
    std::vector<int64_t> shape(v.shape, v.shape + p.ndim);
    std::unique_ptr<host::Ndarray>& shadow = resources_->shadows[{index, s.param}];
    if (!shadow || shadow->shape() != shape || shadow->components() != p.type.components()) {
      if (shadow) device_.remove(shadow->data());
      shadow = std::make_unique<host::Ndarray>(Scalar::I32, shape, p.type.components(), p.name);
      device_.add_buffer(p.name, shadow->data(), shadow->bytes(), false);
    }
    frame.set_ndarray(s.param, *shadow);
  }
}

void LoadedModule::launch(int index, host::LaunchFrame& frame, const Launcher& launcher) {
  DeviceKernel& k = *kernels_.at(static_cast<size_t>(index));
  for (const ResourceDesc& r : k.abi().resources) {
    if (r.kind != ResourceKind::Field) continue;
    host::Field* f = field(r.field);
    if (!f)
      throw Error(Place{what_, k.abi().name},
                  "the kernel uses field '" + r.field + "', which the module lacks");
    frame.bind_field(r.field, *f);
  }
  bind_access_shadows(index, frame);
  LaunchContext& ctx = frame.context();
  check_twin_shapes(kernel_info(index), ctx, Place{what_, k.abi().name},
                    module_.meta.argpack_types);
  ctx.seed = 0x9e3779b97f4a7c15ull * ++launch_serial_;
  try {
    launcher(k, ctx);
  } catch (const Error& e) {
    Place where = e.place();
    if (where.document.empty()) where.document = what_;
    if (where.kernel.empty()) where.kernel = k.abi().name;
    throw Error(where, e.message(), e.kind());
  }
}

bool LoadedModule::has_pipeline(const std::string& name) const { return find_pipeline(name) >= 0; }

int LoadedModule::find_pipeline(const std::string& name) const {
  for (size_t p = 0; p < module_.meta.pipelines.size(); ++p)
    if (module_.meta.pipelines[p].name == name) return static_cast<int>(p);
  return -1;
}

void LoadedModule::run_pipeline(const std::string& name) {
  int p = find_pipeline(name);
  if (p < 0) throw Error(Place{what_}, "the module has no pipeline '" + name + "'");
  run_pipeline(p);
}

void LoadedModule::run_pipeline(int index, const Launcher* launcher) {
  for (auto& bound : pipelines_.at(static_cast<size_t>(index))) {
    if (launcher)
      launch(bound->kernel, bound->frame, *launcher);
    else
      launch(bound->kernel, bound->frame);
  }
}

void LoadedModule::run_pipeline(const std::string& name, const PipelineArguments& args) {
  int p = find_pipeline(name);
  if (p < 0) throw Error(Place{what_}, "the module has no pipeline '" + name + "'");
  run_pipeline(p, args);
}

std::vector<PipelineParam> LoadedModule::pipeline_params(int index) const {
  const PipelineInfo& p = module_.meta.pipelines.at(static_cast<size_t>(index));
  std::vector<PipelineParam> params;
  for (size_t l = 0; l < p.launches.size(); ++l) {
    const KernelABI& abi = kernels_.at(static_cast<size_t>(p.launches[l].kernel))->abi();
    const size_t given = launch_param_count(kernel_info(p.launches[l].kernel));
    for (size_t i = 0; i < given; ++i) {
      const std::string& name = abi.params[i].name;
      auto it = std::find_if(params.begin(), params.end(),
                             [&](const PipelineParam& q) { return q.name == name; });
      if (it == params.end()) it = params.insert(params.end(), PipelineParam{name, {}});
      it->uses.push_back({static_cast<int>(l), static_cast<int>(i)});
    }
  }
  return params;
}

namespace {

const char* kind_phrase(ParamKind k) {
  switch (k) {
    case ParamKind::Value: return "a value";
    case ParamKind::Ndarray: return "an ndarray";
    case ParamKind::Texture: return "a texture";
    case ParamKind::Argpack: return "an argpack";
  }
  return "?";
}

}  // namespace

PipelineParam LoadedModule::pipeline_param(int index, const std::string& name) const {
  std::vector<PipelineParam> params = pipeline_params(index);
  for (PipelineParam& q : params)
    if (q.name == name) return std::move(q);
  const PipelineInfo& p = module_.meta.pipelines.at(static_cast<size_t>(index));
  std::string pipeline = "pipeline '" + p.name + "'";
  // Template parameters are not parameters of the instantiation: their values are compiled
  // into the code the pipeline launches.
  for (size_t l = 0; l < p.launches.size(); ++l) {
    const KernelInfo& k = kernel_info(p.launches[l].kernel);
    for (const TemplateArgument& t : k.template_args)
      if (t.param == name)
        throw Error(Place{what_, k.name, -1, name},
                    pipeline + ", launch " + std::to_string(l) + " (kernel '" + k.name + "'): '" +
                        name + "' is a template parameter, compiled into the instantiation " +
                        "the pipeline launches " + describe_template({t}) +
                        "; a pipeline cannot change it at launch");
  }
  std::string names;
  for (const PipelineParam& q : params) names += (names.empty() ? "" : ", ") + q.name;
  throw Error(Place{what_},
              pipeline + " takes no argument '" + name + "'; " +
                  (names.empty() ? "its launches take none" : "its launches take: " + names));
}

void LoadedModule::check_pipeline_argument(int index, const PipelineParam& param,
                                           const PipelineArgument& arg) const {
  const PipelineInfo& p = module_.meta.pipelines.at(static_cast<size_t>(index));
  std::string pipeline = "pipeline '" + p.name + "'";
  for (const PipelineParam::Use& use : param.uses) {
    const LaunchInfo& l = p.launches.at(static_cast<size_t>(use.launch));
    const KernelInfo& k = kernel_info(l.kernel);
    const KernelABI& abi = kernels_.at(static_cast<size_t>(l.kernel))->abi();
    const ParamDesc& d = abi.params.at(static_cast<size_t>(use.param));
    Place where{what_, k.name, -1, d.name};
    std::string what = pipeline + ", launch " + std::to_string(use.launch) + " (kernel '" + k.name +
                       "'): parameter '" + d.name + "'";
    if (arg.kind != d.kind)
      throw Error(where,
                  what + " takes " + kind_phrase(d.kind) + ", given " + kind_phrase(arg.kind));
    switch (d.kind) {
      case ParamKind::Value:
        if (arg.type != d.type ||
            arg.bytes.size() != static_cast<size_t>(d.type.components()) *
                                    static_cast<size_t>(size_of(d.type.scalar)))
          throw Error(where, what + " is a " + value_type_name(d.type) + ", given a " +
                                 value_type_name(arg.type) + " of " +
                                 std::to_string(arg.bytes.size()) + " bytes");
        break;
      case ParamKind::Ndarray: {
        if (!arg.ndarray) throw Error(where, what + ": the ndarray is null");
        const host::Ndarray& nd = *arg.ndarray;
        if (nd.dtype() == d.type.scalar && nd.components() == d.type.components() &&
            nd.ndim() == d.ndim)
          break;
        std::string message =
            what + " takes an ndarray of " + value_type_name(d.type) + " with " +
            std::to_string(d.ndim) + " dimension(s), given one of " +
            value_type_name(ValueType{nd.dtype(), static_cast<uint8_t>(nd.components()), 1}) +
            " with " + std::to_string(nd.ndim());
        for (const TemplateArgument& t : k.template_args)
          if (t.param == d.name && t.kind == TemplateArgument::Kind::Ndarray)
            message +=
                "; its element type and dimensions are template arguments, and the "
                "pipeline launches the instantiation " +
                describe_template({t}) + ": it cannot pick another at launch";
        throw Error(where, message);
      }
      case ParamKind::Texture: {
        if (!arg.texture) throw Error(where, what + ": the texture is null");
        if (arg.texture->ndim() != d.ndim)
          throw Error(where, what + " takes a " + std::to_string(d.ndim) + "-d texture, given a " +
                                 std::to_string(arg.texture->ndim()) + "-d one");
        for (const ResourceDesc& r : abi.resources)
          if (r.param == use.param && r.param_offset < 0 && r.format != arg.texture->format())
            throw Error(where, what + " takes a texture of format " +
                                   texture_format_name(r.format) + ", given " +
                                   texture_format_name(arg.texture->format()));
        break;
      }
      case ParamKind::Argpack: {
        if (!arg.argpack) throw Error(where, what + ": the argpack is null");
        const ArgpackType& want =
            module_.meta.argpack_types.at(static_cast<size_t>(d.argpack_type));
        if (arg.argpack->type().name != want.name || arg.argpack->type().size != want.size)
          throw Error(where, what + " takes an argpack of type '" + want.name +
                                 "', given one of type '" + arg.argpack->type().name + "'");
        // An unset ndarray or texture member holds a null address the kernel would follow.
        arg.argpack->sync();
        for (const ResourceDesc& r : abi.resources)
          if (r.param == use.param && r.param_offset >= 0 &&
              !arg.argpack->resource_view_at(static_cast<uint32_t>(r.param_offset)).data)
            throw Error(where, what + ": the pack's " +
                                   (r.kind == ResourceKind::Texture ? "texture" : "ndarray") +
                                   " member at byte " + std::to_string(r.param_offset) +
                                   " is not set; the kernel uses it");
        break;
      }
    }
  }
}

void LoadedModule::run_pipeline(int index, const PipelineArguments& args,
                                const Launcher* launcher) {
  auto& launches = pipelines_.at(static_cast<size_t>(index));
  // Per launch, the arguments it is given: (parameter index, argument).
  std::vector<std::vector<std::pair<int, const PipelineArgument*>>> given(launches.size());
  for (const auto& [name, arg] : args) {
    PipelineParam param = pipeline_param(index, name);
    check_pipeline_argument(index, param, arg);
    for (const PipelineParam::Use& use : param.uses)
      given[static_cast<size_t>(use.launch)].emplace_back(use.param, &arg);
  }
  // Everything is checked before anything runs; then each launch given arguments gets its
  // second frame: the module's arguments, then the given ones over them.
  for (size_t l = 0; l < launches.size(); ++l) {
    if (given[l].empty()) continue;
    BoundLaunch& b = *launches[l];
    if (!b.given) b.given = std::make_unique<host::LaunchFrame>(b.frame.abi());
    host::LaunchFrame& frame = *b.given;
    for (const auto& bind : b.module_args) bind(frame);
    // Not a structured binding: clang before 16 cannot capture one in a lambda.
    for (const auto& param_arg : given[l]) {
      int param = param_arg.first;
      const PipelineArgument* arg = param_arg.second;
      switch (arg->kind) {
        case ParamKind::Value: {
          Scalar s = arg->type.scalar;
          if (s == Scalar::Bool) {
            frame.set_value<bool>(param, arg->bytes.at(0) != 0);
            break;
          }
          with_scalar_type(s, [&](auto zero) {
            using T = decltype(zero);
            std::vector<T> components(arg->bytes.size() / sizeof(T));
            std::memcpy(components.data(), arg->bytes.data(), components.size() * sizeof(T));
            frame.set_components<T>(param, components);
          });
          break;
        }
        case ParamKind::Ndarray: frame.set_ndarray(param, *arg->ndarray); break;
        case ParamKind::Texture: frame.set_texture(param, *arg->texture); break;
        case ParamKind::Argpack: frame.set_argpack(param, *arg->argpack); break;
      }
    }
  }
  for (size_t l = 0; l < launches.size(); ++l) {
    BoundLaunch& b = *launches[l];
    host::LaunchFrame& frame = given[l].empty() ? b.frame : *b.given;
    if (launcher)
      launch(b.kernel, frame, *launcher);
    else
      launch(b.kernel, frame);
  }
}

host::Field* LoadedModule::field(const std::string& name) const {
  auto it = resources_->fields.find(name);
  return it == resources_->fields.end() ? nullptr : it->second.get();
}
host::Ndarray* LoadedModule::ndarray(const std::string& name) const {
  auto it = resources_->ndarrays.find(name);
  return it == resources_->ndarrays.end() ? nullptr : it->second.get();
}
host::Texture* LoadedModule::texture(const std::string& name) const {
  auto it = resources_->textures.find(name);
  return it == resources_->textures.end() ? nullptr : it->second.get();
}
host::Argpack* LoadedModule::argpack(const std::string& name) const {
  auto it = resources_->argpacks.find(name);
  return it == resources_->argpacks.end() ? nullptr : it->second.get();
}

std::vector<std::string> LoadedModule::resource_names() const {
  std::vector<std::string> names;
  for (const FieldDesc& f : module_.meta.fields) names.push_back(f.name);
  for (const NdarrayInfo& n : module_.meta.ndarrays) names.push_back(n.name);
  for (const TextureInfo& t : module_.meta.textures) names.push_back(t.name);
  for (const ArgpackInfo& a : module_.meta.argpacks) names.push_back(a.name);
  return names;
}

}  // namespace loom::aot
