// loom::Program: the kernel life cycle (registration, instantiation per template signature,
// in-memory and offline caches), program resources, argument binding and launches.
#include "engine_plugin/include/loom/program.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "compiler/codegen_llvm/cpu_codegen.h"
#include "compiler/codegen_spirv/spirv_codegen.h"
#include "compiler/codegen_spirv/spirv_tools.h"
#include "compiler/graph/document.h"
#include "compiler/graph/document_json.h"
#include "compiler/graph/lower.h"
#include "compiler/graph/validate.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/printer.h"
#include "compiler/passes/access_rule.h"
#include "compiler/passes/autodiff.h"
#include "compiler/passes/forward_mode.h"
#include "compiler/passes/pipeline.h"
#include "compiler/passes/porting_warnings.h"
#include "engine_plugin/api/aot_instance.h"
#include "engine_plugin/api/argument_values.h"
#include "engine_plugin/api/build_id.h"
#include "engine_plugin/api/device_backend.h"
#include "engine_plugin/api/offline_cache.h"
#include "runtime/common/abi_serialize.h"
#include "runtime/common/bounded_message.h"
#include "runtime/common/error.h"
#include "runtime/common/gradient_values.h"
#include "runtime/common/launch_error.h"
#include "runtime/common/resource_npy.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/host/argpack.h"
#include "runtime/host/field.h"
#include "runtime/host/launch_frame.h"
#include "runtime/host/ndarray.h"
#include "runtime/host/scalar_traits.h"
#include "runtime/host/texture.h"

namespace loom {

namespace {

// A returned component as KernelResult::ints holds it: integers and bools exactly; floats
// truncated toward zero where an int64 holds them, 0 for NaN and out of range (converting
// those is undefined behaviour).
template <typename T>
int64_t integer_component(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    constexpr T kLimit = static_cast<T>(9223372036854775808.0);  // 2^63
    if (!(v > -kLimit && v < kLimit)) return 0;
  }
  return static_cast<int64_t>(v);
}

// Part of every cache key, with build_id(): the hash of the sources computed at build time
// is what keeps entries of another build out; these names only make keys readable.
constexpr const char* kCompilerVersion = "loom-compiler-0.1.0";
constexpr const char* kRuntimeVersion =
    "loom-runtime-0.3.0";  // 0.3: CPU extent functions report work per row

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// One compiled (kernel, template signature) pair and its reusable launch frame.
struct Instance {
  Instance(std::shared_ptr<DeviceKernel> k, std::string sig)
      : kernel(std::move(k)), signature(std::move(sig)), frame(kernel->abi()) {}
  std::shared_ptr<DeviceKernel> kernel;
  std::string signature;
  host::LaunchFrame frame;
  std::vector<std::string> return_names;  // KernelResult::names
};

using host::with_scalar_type;

// What a launch of "K.grad" or "K.dual" runs instead of K (docs/autodiff.md).
enum class Derivative : uint8_t { Adjoint, Tangent };
std::string derived_name(Derivative d, const std::string& name) {
  return d == Derivative::Adjoint ? passes::adjoint_name(name) : passes::tangent_name(name);
}

}  // namespace

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::Cpu: return "cpu";
    case Backend::Vulkan: return "vulkan";
    case Backend::Auto: return "auto";
  }
  return "?";
}

Backend default_backend() {
  const char* v = std::getenv("LOOM_BACKEND");
  if (!v || !*v) return Backend::Cpu;
  std::string s = v;
  if (s == "vulkan") return Backend::Vulkan;
  if (s == "auto") return Backend::Auto;
  if (s == "cpu") return Backend::Cpu;
  throw Error("LOOM_BACKEND is '" + s + "'; choose cpu, vulkan or auto");
}

double KernelResult::value(const std::string& name, int component) const {
  size_t first = 0;
  for (size_t i = 0; i < names.size() && i < types.size(); ++i) {
    if (names[i] == name && component >= 0 && component < types[i].components())
      return values.at(first + static_cast<size_t>(component));
    first += static_cast<size_t>(types[i].components());
  }
  throw Error("the kernel returns no value '" + name + "' with component " +
              std::to_string(component));
}

std::string Stats::to_string() const {
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "stats: %d kernels registered, %d instantiations, cache hits %d memory / %d disk, "
                "%d misses (full compiles), %lld launches\n"
                "  compile ms: lower %.3f, passes %.3f, codegen %.3f, optimize %.3f, emit %.3f, "
                "cache read %.3f, load %.3f\n"
                "  launch ms: %.3f total\n",
                kernels_registered, instantiations, memory_hits, disk_hits, misses,
                static_cast<long long>(launches), ms_lower, ms_passes, ms_codegen, ms_optimize,
                ms_emit, ms_cache_read, ms_load, ms_launch);
  std::string s = buf;
  if (!per_pass.empty()) {
    s += "  per pass ms:";
    for (const PassTime& p : per_pass) {
      std::snprintf(buf, sizeof buf, " %s %.3f;", p.pass.c_str(), p.ms);
      s += buf;
    }
    s += "\n";
  }
  return s;
}

struct Program::Impl {
  // `backend`: the device of the program this one replaces (a reload keeps its device).
  Impl(ProgramOptions o, std::shared_ptr<DeviceBackend> backend_in)
      : options(with_defaults(std::move(o))),
        cache(options.offline_cache ? (options.cache_dir.empty() ? OfflineCache::default_directory()
                                                                 : options.cache_dir)
                                    : std::string(),
              options.warn),
        backend(backend_in ? std::move(backend_in)
                           : std::shared_ptr<DeviceBackend>(make_backend(options))),
        device(backend->device()) {}

  ~Impl() {
    // The device copies of this program's storage go with it (the device may outlive it).
    for (auto& [name, f] : fields)
      if (f) device.remove(f->data());
    for (auto& [name, n] : ndarrays)
      if (n) device.remove(n->data());  // null: moved to the program that replaced this one
    for (auto& [name, t] : textures)
      if (t) device.remove(t->data());
    for (auto& [name, a] : argpacks)
      if (a) device.remove(a->data());
    for (auto& [name, s] : access_shadows)
      if (s) device.remove(s->data());
  }

  static ProgramOptions with_defaults(ProgramOptions o) {
    if (!o.warn) o.warn = [](const std::string& m) { std::fprintf(stderr, "%s\n", m.c_str()); };
    if (const char* v = std::getenv("LOOM_VULKAN_VALIDATION"); v && std::string(v) == "1")
      o.validation = true;
    return o;
  }

  ProgramOptions options;
  OfflineCache cache;
  std::shared_ptr<DeviceBackend> backend;
  Device& device;  // the backend's: loads, launches, device copies of this program's storage
  Stats stats;
  std::unique_ptr<graph::Document> doc = std::make_unique<graph::Document>();
  std::unordered_map<std::string_view, const graph::KernelDecl*> kernel_index;  // set_document
  std::unordered_map<std::string_view, const graph::Pipeline*> pipeline_index;
  std::unordered_map<std::string, std::unique_ptr<Instance>> instances;  // kernel '\n' signature
  std::unordered_map<std::string, std::string> content_keys;             // per kernel
  std::map<std::string, std::unique_ptr<host::Field>> fields;
  // By ndarray: its shadow for a debug K.grad (access_shadow_ndarray); not a resource.
  std::map<std::string, std::unique_ptr<host::Ndarray>> access_shadows;
  std::map<std::string, std::unique_ptr<host::Ndarray>> ndarrays;
  std::map<std::string, ValueType> ndarray_elems;  // element types (a matrix dumps as [rows, cols])
  std::map<std::string, std::unique_ptr<host::Texture>> textures;
  std::map<std::string, std::unique_ptr<host::Argpack>> argpacks;
  std::vector<std::string> resource_order;
  std::set<std::string> code_ndarrays;  // created or wrapped from code (may be removed)
  // Argpack ndarray members and the ndarray each holds: (pack, member path) -> ndarray. A
  // struct member's ndarrays are the outer pack's ("s.data"); a nested pack's are its own.
  std::map<std::pair<std::string, std::string>, std::string> pack_ndarrays;
  // Nested pack members and the argpack each refers to: (pack, member path) -> argpack.
  std::map<std::pair<std::string, std::string>, std::string> pack_packs;
  // Member values set through the API, in order: a reload replays them on the new packs.
  std::vector<std::tuple<std::string, std::string, Arg>> argpack_overrides;
  uint64_t launch_serial = 0;
  // Program::last_returns: per pipeline, what its last run's returning launches returned.
  std::map<std::string, std::vector<LaunchReturns>> pipeline_returns;
  mutable std::mutex running_mutex;
  std::string running;  // running_kernel()

  Place place(const std::string& kernel = "", const std::string& pin = "") const {
    return Place{doc->path, kernel, -1, pin};
  }

  void add_pass_time(const std::string& pass, double ms) {
    for (PassTime& p : stats.per_pass)
      if (p.pass == pass) {
        p.ms += ms;
        return;
      }
    stats.per_pass.push_back({pass, ms});
  }

  // ---- resources

  void claim_name(const std::string& name) {
    if (fields.count(name) || ndarrays.count(name) || textures.count(name) || argpacks.count(name))
      throw Error(place(), "two resources are named '" + name + "'");
    resource_order.push_back(name);
  }

  // An ndarray made from code: everything that can fail (the name, the device copy) happens
  // before anything is recorded, so a failure leaves no trace.
  void add_code_ndarray(const std::string& name, ValueType elem,
                        std::unique_ptr<host::Ndarray> array, bool caller_memory) {
    if (fields.count(name) || ndarrays.count(name) || textures.count(name) || argpacks.count(name))
      throw Error(place(), "two resources are named '" + name + "'");
    device.add_buffer(name, array->data(), array->bytes(), caller_memory);
    claim_name(name);
    ndarrays[name] = std::move(array);
    ndarray_elems[name] = elem;
    code_ndarrays.insert(name);
  }

  void allocate_resources() {
    allocate_storage();
    allocate_argpacks();
  }

  // Without options.allocate (loom check) every declaration is checked as for running, but
  // nothing gets memory or a device copy.
  void allocate_storage() {
    try {
      allocate_storage_unplaced();
    } catch (const Error& e) {
      // "cannot allocate N bytes for field 'x'" and extent errors from runtime/host name
      // the resource; the document is only known here.
      if (!e.place().document.empty()) throw;
      throw Error(place(), e.message());
    }
  }
  void allocate_storage_unplaced() {
    const bool memory = options.allocate;
    auto add_field = [&](const FieldDesc& f) {
      claim_name(f.name);
      fields[f.name] = std::make_unique<host::Field>(f, memory);
      if (memory) device.add_buffer(f.name, fields[f.name]->data(), fields[f.name]->bytes(), false);
    };
    auto add_ndarray = [&](const std::string& name, const graph::NdarrayDecl& n) {
      claim_name(name);
      ndarrays[name] = std::make_unique<host::Ndarray>(n.elem.scalar, n.shape, n.elem.components(),
                                                       name, memory);
      if (memory) device.add_buffer(name, ndarrays[name]->data(), ndarrays[name]->bytes(), false);
      ndarray_elems[name] = n.elem;
    };
    // A resource that needs_grad comes with its adjoint NAME.grad (passes/autodiff.h), one that
    // needs_dual with its tangent NAME.dual (passes/forward_mode.h), zeroed.
    for (const FieldDesc& f : doc->fields) {
      add_field(f);
      for (Derivative d : {Derivative::Adjoint, Derivative::Tangent}) {
        if (!(d == Derivative::Adjoint ? f.needs_grad : f.needs_dual)) continue;
        FieldDesc g = f;
        g.name = derived_name(d, f.name);
        g.needs_grad = g.needs_dual = false;
        add_field(g);
      }
    }
    for (const graph::NdarrayDecl& n : doc->ndarrays) {
      add_ndarray(n.name, n);
      if (n.needs_grad) add_ndarray(passes::adjoint_name(n.name), n);
      if (n.needs_dual) add_ndarray(passes::tangent_name(n.name), n);
    }
    for (const graph::TextureDecl& t : doc->textures) {
      claim_name(t.name);
      if (t.size.size() < 2 || t.size.size() > 3)
        throw Error(place(), "texture '" + t.name + "' needs 2 or 3 extents");
      textures[t.name] =
          t.size.size() == 3
              ? std::make_unique<host::Texture>(t.format, t.size[0], t.size[1], t.size[2], t.name,
                                                memory)
              : std::make_unique<host::Texture>(t.format, t.size[0], t.size[1], t.name, memory);
      if (memory) device.add_texture(t.name, *textures[t.name]);
    }
  }

  // What needs the resources' memory refuses a program loaded without it.
  void need_memory(const std::string& what) const {
    if (!options.allocate)
      throw Error(place(), what +
                               ": the program was loaded only to be checked "
                               "(ProgramOptions::allocate is off): its resources have no memory");
  }

  void allocate_argpacks() {
    for (const graph::ArgpackDecl& a : doc->argpacks) {
      claim_name(a.name);
      int type = doc->argpack_type(a.type);
      if (type < 0)
        throw Error(place(), "argpack '" + a.name + "' has unknown type '" + a.type + "'");
      argpacks[a.name] = std::make_unique<host::Argpack>(doc->argpack_types, type);
      device.add_argpack(a.name, *argpacks[a.name]);
    }
    // Values after every pack exists: a nested pack member may name any pack of the document.
    for (const graph::ArgpackDecl& a : doc->argpacks)
      for (const auto& [path, value] : a.values)
        set_member(*argpacks.at(a.name), a.name, path,
                   literal_to_arg(value, Place{doc->path, "", -1, a.name + "." + path}));
  }

  void set_member(host::Argpack& pack, const std::string& pack_name, const std::string& path,
                  const Arg& value) {
    uint32_t offset = 0;
    const ArgpackMember* m =
        find_member(doc->argpack_types, doc->argpack_type(pack.type().name), path, &offset);
    Place where{doc->path, "", -1, pack_name + "." + path};
    if (!m) throw Error(where, "argpack '" + pack_name + "' has no member '" + path + "'");
    switch (m->kind) {
      case MemberKind::Ndarray: {
        if (value.kind() != Arg::Kind::Resource || !ndarrays.count(value.resource()))
          throw Error(where, "member is an ndarray; pass the name of an ndarray, not " +
                                 describe_arg(value));
        pack.set_ndarray(path, *ndarrays.at(value.resource()));
        // Recorded where the write landed (a nested pack's own member), so every pack that
        // refers to that pack sees it; rebinding the ndarray updates it.
        pack_ndarrays[holder_of(pack_name, path)] = value.resource();
        return;
      }
      case MemberKind::Texture: {
        if (value.kind() != Arg::Kind::Resource || !textures.count(value.resource()))
          throw Error(
              where, "member is a texture; pass the name of a texture, not " + describe_arg(value));
        if (textures.at(value.resource())->format() != m->format)
          throw Error(where, std::string("member holds ") + texture_format_name(m->format) +
                                 " textures; '" + value.resource() + "' is " +
                                 texture_format_name(textures.at(value.resource())->format()));
        pack.set_texture(path, *textures.at(value.resource()));
        return;
      }
      case MemberKind::Pack:
      case MemberKind::Struct: {
        if (value.kind() != Arg::Kind::Resource || !argpacks.count(value.resource()))
          throw Error(where, "member is a nested pack; pass the name of an argpack, not " +
                                 describe_arg(value));
        host::Argpack& nested = *argpacks.at(value.resource());
        const std::string& want = doc->argpack_types[static_cast<size_t>(m->nested)].name;
        if (nested.type().name != want)
          throw Error(where, "member is a '" + want + "'; argpack '" + value.resource() +
                                 "' is a '" + nested.type().name + "'");
        pack.set_pack(path, nested);
        auto inside = [&](const auto& entry) {
          return entry.first.first == pack_name &&
                 (entry.first.second == path || entry.first.second.starts_with(path + "."));
        };
        std::erase_if(pack_ndarrays, inside);
        std::erase_if(pack_packs, inside);
        if (m->kind == MemberKind::Pack) {  // members inside now belong to `nested`
          pack_packs[{pack_name, path}] = value.resource();
          return;
        }
        // A struct is copied: so are the ndarrays and packs its members refer to.
        auto copy_refs = [&](auto& refs) {
          std::vector<std::pair<std::string, std::string>> copied;
          for (const auto& [member, target] : refs)
            if (member.first == value.resource())
              copied.emplace_back(path + "." + member.second, target);
          for (auto& [member, target] : copied) refs[{pack_name, member}] = std::move(target);
        };
        copy_refs(pack_ndarrays);
        copy_refs(pack_packs);
        return;
      }
      case MemberKind::Value: break;
    }
    std::vector<uint8_t> bytes =
        argument_bytes(value, m->type, where, "member '" + pack_name + "." + path + "'");
    if (m->type.scalar == Scalar::Bool) {  // std::vector<bool> has no data(): write one by one
      if (m->type.components() != 1)
        throw Error(where, "bool vectors in argpacks are not supported; use i32 components");
      pack.set<bool>(path, bytes[0] != 0);
      return;
    }
    with_scalar_type(m->type.scalar, [&](auto zero) {
      using T = decltype(zero);
      std::vector<T> values(static_cast<size_t>(m->type.components()));
      std::memcpy(values.data(), bytes.data(), bytes.size());
      pack.set_components<T>(path, values);
    });
  }

  // The pack that holds member `path` of argpack `pack` itself, and the path there: through
  // the nested packs `pack` refers to, as host::Argpack forwards writes to them.
  std::pair<std::string, std::string> holder_of(const std::string& pack,
                                                const std::string& path) const {
    std::pair<std::string, std::string> at{pack, path};
    for (int depth = 0; depth < 16; ++depth) {  // no deeper than argpack types nest
      bool nested = false;
      for (size_t dot = at.second.find('.'); dot != std::string::npos && !nested;
           dot = at.second.find('.', dot + 1))
        if (auto it = pack_packs.find({at.first, at.second.substr(0, dot)});
            it != pack_packs.end()) {
          at = {it->second, at.second.substr(dot + 1)};
          nested = true;
        }
      if (!nested) break;
    }
    return at;
  }

  // The ndarray argpack `pack` holds at member `path`, through nested packs; "" when it holds
  // none there.
  std::string member_ndarray(const std::string& pack, const std::string& path) const {
    auto it = pack_ndarrays.find(holder_of(pack, path));
    return it == pack_ndarrays.end() ? "" : it->second;
  }

  // The float ndarray members of argpack type `type_name` (argpack_layout.h).
  std::vector<std::string> float_ndarray_members(const std::string& type_name) const {
    return loom::float_ndarray_members(doc->argpack_types, doc->argpack_type(type_name));
  }

  void rebind_ndarray(const std::string& name, void* data, std::vector<int64_t> shape);
  void remove_ndarray(const std::string& name);

  // ---- instantiation

  // Kernels and pipelines by name, so a document of many kernels costs no scan per lookup.
  // Set with the document (an Impl's document never changes: a reload makes a new Impl).
  void set_document(std::unique_ptr<graph::Document> d) {
    doc = std::move(d);
    kernel_index.clear();
    pipeline_index.clear();
    for (const graph::KernelDecl& k : doc->kernels) kernel_index.emplace(k.name, &k);
    for (const graph::Pipeline& p : doc->pipelines) pipeline_index.emplace(p.name, &p);
  }

  const graph::KernelDecl* find_kernel(const std::string& name) const {
    auto it = kernel_index.find(name);
    return it == kernel_index.end() ? nullptr : it->second;
  }

  const graph::Pipeline* find_pipeline(const std::string& name) const {
    auto it = pipeline_index.find(name);
    return it == pipeline_index.end() ? nullptr : it->second;
  }

  const graph::KernelDecl& kernel_decl(const std::string& name) const {
    const graph::KernelDecl* k = find_kernel(name);
    if (!k) throw Error(place(name), "the document has no kernel '" + name + "'");
    return *k;
  }

  // The kernel K that "K.grad" (its adjoint) or "K.dual" (its tangent kernel) names, or null
  // when `name` names neither.
  const graph::KernelDecl* derived_from(const std::string& name, Derivative* mode) const {
    if (find_kernel(name)) return nullptr;
    for (Derivative d : {Derivative::Adjoint, Derivative::Tangent}) {
      const std::string suffix = derived_name(d, "");
      if (name.size() <= suffix.size() ||
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      *mode = d;
      return find_kernel(name.substr(0, name.size() - suffix.size()));
    }
    return nullptr;
  }

  // The kernel a launch of `kernel` runs, or whose adjoint or tangent kernel it runs.
  const graph::KernelDecl& launch_decl(const std::string& kernel) const {
    Derivative mode = Derivative::Adjoint;
    if (const graph::KernelDecl* k = derived_from(kernel, &mode)) return *k;
    return kernel_decl(kernel);
  }

  // The launch of an adjoint or tangent kernel: which ndarray parameters get a derived twin
  // PARAM.grad / PARAM.dual (those bound to an ndarray that has NAME.grad / NAME.dual, or given
  // the twin as an argument), which float ndarray members of argpack parameters do
  // (PARAM.PATH.grad / .dual: the pack holds an ndarray there that has one, or the twin is
  // given), and the arguments with each twin bound (to the companion unless the caller bound
  // it; a tangent kernel's value-parameter tangents default to 0).
  struct DerivedLaunch {
    Derivative mode = Derivative::Adjoint;
    std::set<std::string> ndarray_params;
    std::set<std::string> argpack_params;   // K.dual: those given a tangent argpack (P.dual)
    std::set<std::string> member_ndarrays;  // "p.inner.vel": PARAM.PATH of each member twin
    Args args;
    std::string key() const {
      std::string k = mode == Derivative::Adjoint ? "adjoint:" : "tangent:";
      for (const std::string& p : ndarray_params) k += p + ',';
      if (!argpack_params.empty()) k += "packs:";
      for (const std::string& p : argpack_params) k += p + ',';
      if (!member_ndarrays.empty()) k += "members:";
      for (const std::string& p : member_ndarrays) k += p + ',';
      return k;
    }
    // By parameter of `abi`: whether it is an argpack given a tangent argpack.
    std::vector<bool> argpack_tangents(const KernelABI& abi) const {
      std::vector<bool> out;
      for (const ParamDesc& p : abi.params)
        out.push_back(p.kind == ParamKind::Argpack && argpack_params.count(p.name) != 0);
      return out;
    }
  };
  DerivedLaunch derived_launch(const graph::KernelDecl& decl, const Args& args,
                               Derivative mode) const {
    DerivedLaunch a;
    a.mode = mode;
    a.args = args;
    auto given = [&](const std::string& name) {
      return std::any_of(args.begin(), args.end(),
                         [&](const auto& arg) { return arg.first == name; });
    };
    for (const graph::KernelParam& p : decl.params) {
      std::string twin = derived_name(mode, p.name);
      if (p.kind == graph::ParamKind::Argpack) {
        if (mode == Derivative::Tangent && given(twin))
          a.argpack_params.insert(p.name);  // none given: no tangent
        const Arg* pack = nullptr;
        for (const auto& [name, value] : args)
          if (name == p.name && value.kind() == Arg::Kind::Resource) pack = &value;
        for (const std::string& path : float_ndarray_members(p.type)) {
          std::string member = p.name + "." + path;
          if (given(derived_name(mode, member))) {
            a.member_ndarrays.insert(member);
            continue;
          }
          std::string held = pack ? member_ndarray(pack->resource(), path) : "";
          if (held.empty() || !ndarrays.count(derived_name(mode, held))) continue;
          a.member_ndarrays.insert(member);
          a.args.emplace_back(derived_name(mode, member), Arg(derived_name(mode, held)));
        }
        continue;
      }
      if (p.kind == graph::ParamKind::Value && mode == Derivative::Tangent) {
        std::optional<ValueType> t = parse_value_type(p.type);
        if (!t || !is_float(t->scalar) || given(twin)) continue;
        if (t->is_scalar())
          a.args.emplace_back(twin, Arg(0.0));
        else
          a.args.emplace_back(twin,
                              Arg(std::vector<double>(static_cast<size_t>(t->components()), 0.0)));
        continue;
      }
      if (p.kind != graph::ParamKind::Ndarray) continue;
      if (given(twin)) {
        a.ndarray_params.insert(p.name);
        continue;
      }
      for (const auto& [name, value] : args) {
        if (name != p.name || value.kind() != Arg::Kind::Resource) continue;
        std::string companion = derived_name(mode, value.resource());
        if (!ndarrays.count(companion)) continue;
        a.ndarray_params.insert(p.name);
        a.args.emplace_back(twin, Arg(companion));
      }
    }
    return a;
  }

  graph::TemplateArgs template_args(const graph::KernelDecl& decl, const Args& args) const {
    graph::TemplateArgs t;
    t.distinct_ndarrays = distinct_ndarrays(decl, args);
    for (const graph::KernelParam& p : decl.params) {
      bool open_ndarray = p.kind == graph::ParamKind::Ndarray && p.type.empty();
      if (p.kind != graph::ParamKind::Template && !open_ndarray) continue;
      const Arg* a = nullptr;
      for (const auto& [name, value] : args)
        if (name == p.name) a = &value;
      if (!a)
        throw Error(place(decl.name, p.name), "missing argument for parameter '" + p.name + "'");
      graph::TemplateArg ta;
      if (open_ndarray) {  // element type and dimensions of the bound ndarray are compiled in
        auto it = a->kind() == Arg::Kind::Resource ? ndarrays.find(a->resource()) : ndarrays.end();
        if (it == ndarrays.end())
          throw Error(
              place(decl.name, p.name),
              "parameter '" + p.name + "' takes the name of an ndarray, not " + describe_arg(*a));
        ta.kind = graph::TemplateArg::Kind::Ndarray;
        ta.field = value_type_name(
            {it->second->dtype(), static_cast<uint8_t>(it->second->components()), 1});
        ta.i = it->second->ndim();
        t.set(p.name, ta);
        continue;
      }
      switch (a->kind()) {
        case Arg::Kind::Resource:
          if (!fields.count(a->resource()))
            throw Error(place(decl.name, p.name),
                        "template parameter '" + p.name + "' takes a field or a constant; '" +
                            a->resource() + "' is not a field of the program");
          ta.kind = graph::TemplateArg::Kind::Field;
          ta.field = a->resource();
          break;
        case Arg::Kind::Int:
          ta.kind = graph::TemplateArg::Kind::Int;
          ta.i = a->as_int();
          break;
        case Arg::Kind::Float:
          ta.kind = graph::TemplateArg::Kind::Float;
          ta.f = a->as_double();
          break;
        case Arg::Kind::Bool:
          ta.kind = graph::TemplateArg::Kind::Bool;
          ta.b = a->as_int() != 0;
          break;
        case Arg::Kind::List:
          throw Error(place(decl.name, p.name),
                      "template parameter '" + p.name + "' cannot take a list");
      }
      t.set(p.name, ta);
    }
    return t;
  }

  // Two or more ndarray parameters, each bound to a different ndarray, and no argpack (whose
  // members could hold one of them again): their buffers never overlap. On Vulkan every
  // ndarray has a buffer of its own, wrapped caller memory included.
  bool distinct_ndarrays(const graph::KernelDecl& decl, const Args& args) const {
    std::vector<std::string> bound;
    for (const graph::KernelParam& p : decl.params) {
      if (p.kind == graph::ParamKind::Argpack) return false;
      if (p.kind != graph::ParamKind::Ndarray) continue;
      // A derived launch binds PARAM.grad or PARAM.dual too: those must be distinct as well.
      for (const auto& [name, value] : args)
        if ((name == p.name || name == passes::adjoint_name(p.name) ||
             name == passes::tangent_name(p.name)) &&
            value.kind() == Arg::Kind::Resource)
          bound.push_back(value.resource());
    }
    std::sort(bound.begin(), bound.end());
    return bound.size() >= 2 && std::adjacent_find(bound.begin(), bound.end()) == bound.end();
  }

  void check_argument_names(const graph::KernelDecl& decl, const Args& args,
                            const Derivative* derived = nullptr) const {
    std::unordered_set<std::string_view> seen;
    for (const auto& [name, value] : args)
      if (!seen.insert(name).second)
        throw Error(place(decl.name, name),
                    "kernel '" + decl.name + "': argument '" + name + "' is given twice");
    std::unordered_set<std::string> params;
    for (const graph::KernelParam& p : decl.params) {
      params.insert(p.name);
      if (derived && p.kind == graph::ParamKind::Argpack)
        for (const std::string& path : float_ndarray_members(p.type))
          params.insert(derived_name(*derived, p.name + "." + path));
      bool tangent = derived && *derived == Derivative::Tangent;
      if (derived && (p.kind == graph::ParamKind::Ndarray ||
                      (tangent && p.kind == graph::ParamKind::Argpack) ||
                      (tangent && p.kind == graph::ParamKind::Value && parse_value_type(p.type) &&
                       is_float(parse_value_type(p.type)->scalar))))
        params.insert(derived_name(*derived, p.name));
    }
    for (const auto& [name, value] : args) {
      bool known = params.count(name) != 0;
      if (!known)
        throw Error(place(decl.name, name),
                    "kernel '" + decl.name + "' has no parameter '" + name + "'");
    }
  }

  const std::string& content_key(const std::string& kernel) {
    auto it = content_keys.find(kernel);
    if (it != content_keys.end()) return it->second;
    return content_keys[kernel] = graph::kernel_content_key(*doc, kernel);
  }

  // ir::Kernel::private_copies for this program's backend.
  int private_copies() const { return options.privatize_scatter ? backend->private_copies() : 0; }

  // Lowers and optimises; `observer` sees the IR after lowering ("lower") and each pass.
  std::unique_ptr<ir::Kernel> lower_and_optimise(const std::string& kernel,
                                                 const graph::TemplateArgs& targs,
                                                 const passes::PassObserver& observer = {},
                                                 const DerivedLaunch* derived = nullptr) {
    auto t0 = Clock::now();
    std::unique_ptr<ir::Kernel> k = graph::lower_kernel(*doc, kernel_decl(kernel), targs);
    stats.ms_lower += ms_since(t0);
    k->fast_math = options.fast_math;
    k->index_bits = backend->index_bits();
    k->private_copies = private_copies();
    if (observer) observer("lower", *k);
    passes::PipelineOptions po;
    po.debug = options.debug;
    po.ad_stack_size = options.ad_stack_size;
    po.access_shadows = options.debug;  // bound below (bind_fields makes NAME.written)
    if (derived) {
      std::vector<bool> slots = derived_slots(*k, *derived);
      if (derived->mode == Derivative::Adjoint)
        po.adjoint = passes::AdjointOptions{slots, doc->argpack_types};
      else
        po.tangent =
            passes::TangentOptions{slots, derived->argpack_tangents(k->abi), doc->argpack_types};
    }
    std::vector<passes::PassTiming> timings;
    auto t1 = Clock::now();
    passes::run_pipeline(*k, po, observer, &timings);
    stats.ms_passes += ms_since(t1);
    for (const auto& t : timings) add_pass_time(t.pass, t.ms);
    return k;
  }

  // Which of a lowered kernel's slots get a derived twin: fields whose NAME.grad / NAME.dual
  // the program holds, and the ndarray parameters and argpack ndarray members of `a`.
  std::vector<bool> derived_slots(const ir::Kernel& k, const DerivedLaunch& a) const {
    std::vector<bool> slots;
    for (const ResourceDesc& r : k.abi.resources) {
      bool has = false;
      if (r.kind == ResourceKind::Field) {
        has = fields.count(derived_name(a.mode, r.field)) != 0;
      } else if (r.kind == ResourceKind::Ndarray && r.param >= 0) {
        const ParamDesc& p = k.abi.params.at(static_cast<size_t>(r.param));
        std::string path;
        if (r.param_offset < 0)
          has = a.ndarray_params.count(p.name) != 0;
        else if (find_resource_member_at(doc->argpack_types, p.argpack_type,
                                         static_cast<uint32_t>(r.param_offset), &path))
          has = a.member_ndarrays.count(p.name + "." + path) != 0;
      }
      slots.push_back(has && is_float(r.dtype));
    }
    return slots;
  }

  // The fields with a derived twin of `mode`, for the keys of derived kernels.
  std::string fields_with(Derivative mode) const {
    std::string names;
    for (const FieldDesc& f : doc->fields)
      if (mode == Derivative::Adjoint ? f.needs_grad : f.needs_dual) names += f.name + ',';
    return names;
  }

  // Where the adjoint of `decl` gets no gradient through ops without a derivative
  // (passes/gradient_reach.h), placed on K's nodes.
  std::vector<Program::Warning> gradient_warnings(const graph::KernelDecl& decl,
                                                  const graph::TemplateArgs& targs,
                                                  const DerivedLaunch& derived) {
    std::unique_ptr<ir::Kernel> k = graph::lower_kernel(*doc, decl, targs);
    k->fast_math = options.fast_math;
    passes::PipelineOptions po;
    po.debug = options.debug;
    po.adjoint = passes::AdjointOptions{derived_slots(*k, derived), doc->argpack_types};
    std::vector<Program::Warning> out;
    for (passes::GradientWarning& w : passes::gradient_warnings(*k, po))
      out.push_back({Place{doc->path, decl.name, w.node, ""}, std::move(w.message)});
    return out;
  }

  KernelRecord compile(const std::string& kernel, const graph::TemplateArgs& targs,
                       const DerivedLaunch* derived = nullptr) {
    std::unique_ptr<ir::Kernel> k = lower_and_optimise(kernel, targs, {}, derived);
    return backend->compile(*k, stats);
  }

  Instance& instance(const graph::KernelDecl& decl, const graph::TemplateArgs& targs,
                     const DerivedLaunch* derived = nullptr) {
    std::string signature = targs.signature();
    std::string derived_key = derived ? derived->key() + fields_with(derived->mode) : "";
    if (derived && derived->mode == Derivative::Adjoint)
      derived_key += ",stack=" + std::to_string(options.ad_stack_size);
    std::string name = derived ? derived_name(derived->mode, decl.name) : decl.name;
    // Derived kernels have keys of their own; a primal's stay what they were (reload looks
    // them up).
    std::string memory_key = decl.name + '\n' + targs.key();
    if (derived) memory_key += '\n' + derived_key;
    auto found = instances.find(memory_key);
    if (found != instances.end()) {
      ++stats.memory_hits;
      return *found->second;
    }
    if (derived && derived->mode == Derivative::Adjoint)
      for (const Program::Warning& w : gradient_warnings(decl, targs, *derived))
        options.warn(w.to_string());
    std::string key = hash128_hex(
        content_key(decl.name) + '\n' + targs.key() + '\n' +
        (derived ? derived_key + '\n' : std::string()) + backend->target_signature() + '\n' +
        (options.debug ? "debug" : "release") + (options.fast_math ? ",fast" : ",ieee") +
        (options.cancellable ? ",cancellable" : "") +
        ",copies=" + std::to_string(private_copies()) + '\n' + kCompilerVersion + '\n' +
        kRuntimeVersion + '\n' + build_id());
    auto t0 = Clock::now();
    std::optional<KernelRecord> record = cache.load(key);
    stats.ms_cache_read += ms_since(t0);
    std::shared_ptr<DeviceKernel> loaded;
    if (record) {
      // A readable entry whose object does not load (bad object code, a missing task
      // symbol, another kernel's record) is corrupt too: recompiled and replaced.
      auto t1 = Clock::now();
      try {
        if (record->abi.name != name)
          throw Error("the entry holds kernel '" + record->abi.name + "', not '" + name + "'");
        loaded = device.load(*record);
        ++stats.disk_hits;
      } catch (const std::exception& e) {
        cache.discard(key, cache.path_for(key) + ": " + e.what());
        record.reset();
      }
      stats.ms_load += ms_since(t1);
    }
    if (!record) {
      record = compile(decl.name, targs, derived);
      ++stats.misses;
      cache.store(key, *record);
      auto t1 = Clock::now();
      loaded = device.load(*record);
      stats.ms_load += ms_since(t1);
    }
    auto inst = std::make_unique<Instance>(std::move(loaded), signature);
    if (derived && derived->mode == Derivative::Adjoint) {
      // the gradients of float value parameters and argpack members, named by them
      for (const GradientValue& g : gradient_values(inst->kernel->abi(), doc->argpack_types))
        inst->return_names.push_back(g.name);
    } else {
      for (const graph::ReturnValue& r : graph::kernel_returns(*doc, decl))
        inst->return_names.push_back(r.name);
    }
    ++stats.instantiations;
    return *(instances[memory_key] = std::move(inst));
  }

  // ---- binding and launching

  const Arg& argument(const KernelABI& abi, const std::string& param, const Args& args) const {
    for (const auto& [name, value] : args)
      if (name == param) return value;
    throw Error(place(abi.name, param), "missing argument for parameter '" + param + "'");
  }

  void bind_value(Instance& inst, size_t p, const Arg& a) {
    const ParamDesc& d = inst.kernel->abi().params[p];
    Place where = place(inst.kernel->abi().name, d.name);
    std::vector<uint8_t> bytes = argument_bytes(a, d.type, where, "parameter '" + d.name + "'");
    int index = static_cast<int>(p);
    if (d.type.scalar == Scalar::Bool) {  // std::vector<bool> has no data(): scalars only
      if (d.type.components() != 1)
        throw Error(where,
                    "parameter '" + d.name + "' of type " + value_type_name(d.type) +
                        " is a bool vector, which launches do not support; use i32 components");
      inst.frame.set_value<bool>(index, bytes[0] != 0);
      return;
    }
    with_scalar_type(d.type.scalar, [&](auto zero) {
      using T = decltype(zero);
      std::vector<T> values(static_cast<size_t>(d.type.components()));
      std::memcpy(values.data(), bytes.data(), bytes.size());
      inst.frame.set_components<T>(index, values);
    });
  }

  // Binds the arguments of one launch into the instance's frame.
  void bind(Instance& inst, const Args& args) {
    const KernelABI& abi = inst.kernel->abi();
    for (size_t p = 0; p < abi.params.size(); ++p) {
      const ParamDesc& d = abi.params[p];
      Place where = place(abi.name, d.name);
      int index = static_cast<int>(p);
      if (const host::Ndarray* shadow = access_shadow_ndarray(abi, d, args)) {
        inst.frame.set_ndarray(index, *shadow);
        continue;
      }
      const Arg& a = argument(abi, d.name, args);
      if (d.kind == ParamKind::Value) {
        bind_value(inst, p, a);
        continue;
      }
      if (a.kind() != Arg::Kind::Resource)
        throw Error(where,
                    "parameter '" + d.name + "' takes a resource name, not " + describe_arg(a));
      const std::string& r = a.resource();
      if (d.kind == ParamKind::Ndarray) {
        auto it = ndarrays.find(r);
        if (it == ndarrays.end())
          throw Error(where, "'" + r + "' is not an ndarray of the program");
        const host::Ndarray& nd = *it->second;
        if (nd.dtype() != d.type.scalar || nd.components() != d.type.components() ||
            nd.ndim() != d.ndim)
          throw Error(where,
                      "parameter '" + d.name + "' needs an ndarray of " + value_type_name(d.type) +
                          " with " + std::to_string(d.ndim) + " dimensions; '" + r + "' has " +
                          value_type_name({nd.dtype(), static_cast<uint8_t>(nd.components()), 1}) +
                          " with " + std::to_string(nd.ndim()));
        inst.frame.set_ndarray(index, nd);
      } else if (d.kind == ParamKind::Texture) {
        auto it = textures.find(r);
        if (it == textures.end()) throw Error(where, "'" + r + "' is not a texture of the program");
        if (it->second->ndim() != d.ndim)
          throw Error(
              where, "parameter '" + d.name + "' needs a " + std::to_string(d.ndim) + "-d texture");
        inst.frame.set_texture(index, *it->second);
      } else {
        auto it = argpacks.find(r);
        if (it == argpacks.end())
          throw Error(where, "'" + r + "' is not an argpack of the program");
        if (doc->argpack_type(it->second->type().name) != d.argpack_type)
          throw Error(where, "parameter '" + d.name + "' needs an argpack of type '" +
                                 doc->argpack_types[static_cast<size_t>(d.argpack_type)].name +
                                 "'");
        inst.frame.set_argpack(index, *it->second);
      }
    }
    check_twin_shapes(abi, args);
    for (const ResourceDesc& res : abi.resources) {
      if (res.kind != ResourceKind::Field) continue;
      auto it = fields.find(res.field);
      if (it == fields.end()) it = make_access_shadow(res.field);
      if (it == fields.end())
        throw Error(place(abi.name),
                    "kernel uses field '" + res.field + "', which the program lacks");
      inst.frame.bind_field(res.field, *it->second);
    }
  }

  // A derived kernel's ndarray twins have the shapes of what their parameters are given (or
  // of the ndarray the argpack member they twin holds): the adjoint of x[i] is x.grad[i], over
  // the same loops, so a smaller twin would be written past its end.
  void check_twin_shapes(const KernelABI& abi, const Args& args) const {
    Derivative mode = Derivative::Adjoint;
    if (!derived_from(abi.name, &mode)) return;
    const std::string suffix = derived_name(mode, "");
    auto bound = [&](const std::string& param) -> const host::Ndarray* {
      for (const auto& [name, value] : args)
        if (name == param && value.kind() == Arg::Kind::Resource)
          if (auto it = ndarrays.find(value.resource()); it != ndarrays.end())
            return it->second.get();
      return nullptr;
    };
    for (const ParamDesc& twin : abi.params) {
      if (twin.kind != ParamKind::Ndarray || !twin.name.ends_with(suffix)) continue;
      const std::string of = twin.name.substr(0, twin.name.size() - suffix.size());
      const host::Ndarray* t = bound(twin.name);
      const host::Ndarray* o = nullptr;
      for (const ParamDesc& base : abi.params) {
        if (base.kind == ParamKind::Ndarray && base.name == of) o = bound(of);
        if (base.kind == ParamKind::Argpack && of.starts_with(base.name + "."))
          for (const auto& [name, value] : args)
            if (name == base.name && value.kind() == Arg::Kind::Resource)
              if (auto it = ndarrays.find(
                      member_ndarray(value.resource(), of.substr(base.name.size() + 1)));
                  it != ndarrays.end())
                o = it->second.get();
      }
      if (!t || !o || t->shape() == o->shape()) continue;
      auto text = [](const std::vector<int64_t>& shape) {
        std::string s = "[";
        for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
        return s + "]";
      };
      throw Error(place(abi.name, twin.name),
                  "the ndarray given for '" + twin.name + "' has the shape " + text(t->shape()) +
                      ", the one given for '" + of + "' " + text(o->shape()) +
                      "; a twin has the shape of its parameter's ndarray");
    }
  }

  // The shadow field NAME.written a debug K.grad checks the global data access rule with
  // (passes/access_rule.h): i32 elements of NAME's shape and components, made when a kernel first
  // binds it, not a resource of the document (resource_names() leaves it out). end() for any other
  // name.
  std::map<std::string, std::unique_ptr<host::Field>>::iterator make_access_shadow(
      const std::string& name) {
    for (auto& [field, f] : fields) {
      if (passes::access_shadow_name(field) != name) continue;
      FieldDesc d = f->desc();
      d.name = name;
      d.elem.scalar = Scalar::I32;  // loop ordinals
      auto shadow = std::make_unique<host::Field>(d, options.allocate);
      if (options.allocate) device.add_buffer(name, shadow->data(), shadow->bytes(), false);
      return fields.emplace(name, std::move(shadow)).first;
    }
    return fields.end();
  }

  // Whether slot `r` of `abi` is a shadow of the access rule's checks.
  bool is_access_shadow(const KernelABI& abi, const ResourceDesc& r) const {
    const std::string suffix = passes::access_shadow_name("");
    if (r.kind == ResourceKind::Field) return r.field.ends_with(suffix) && !doc->field(r.field);
    return r.param >= 0 && r.param_offset < 0 &&
           abi.params.at(static_cast<size_t>(r.param)).name.ends_with(suffix);
  }

  // A debug K.grad's parameter P.written (passes/access_rule.h): a shadow of the ndarray
  // bound to P, or for P.PATH.written of the ndarray argpack P holds at PATH (i32 elements of
  // its shape and components), made (again when those changed) when first bound. Null for any
  // other parameter.
  const host::Ndarray* access_shadow_ndarray(const KernelABI& abi, const ParamDesc& d,
                                             const Args& args) {
    if (d.kind != ParamKind::Ndarray) return nullptr;
    const std::string suffix = passes::access_shadow_name("");
    if (!d.name.ends_with(suffix)) return nullptr;
    const std::string of = d.name.substr(0, d.name.size() - suffix.size());
    auto bound_to = [&](const std::string& param) -> std::string {
      const Arg& a = argument(abi, param, args);
      return a.kind() == Arg::Kind::Resource ? a.resource() : "";
    };
    for (const ParamDesc& base : abi.params) {
      if (base.kind == ParamKind::Ndarray && base.name == of)
        return shadow_of_ndarray(bound_to(base.name));
      if (base.kind == ParamKind::Argpack && of.starts_with(base.name + ".")) {
        std::string pack = bound_to(base.name);
        if (pack.empty()) return nullptr;  // binding `base` says what is wrong
        std::string path = of.substr(base.name.size() + 1);
        std::string held = member_ndarray(pack, path);
        if (held.empty())
          throw Error(place(abi.name, base.name),
                      "argpack '" + pack + "' holds no ndarray at member '" + path +
                          "', which the kernel reads (set one with set_argpack)");
        return shadow_of_ndarray(held);
      }
    }
    return nullptr;
  }

  // The shadow of ndarray `name` (null when there is no such ndarray: binding the parameter
  // says what is wrong).
  const host::Ndarray* shadow_of_ndarray(const std::string& name) {
    auto it = ndarrays.find(name);
    if (it == ndarrays.end()) return nullptr;
    const host::Ndarray& nd = *it->second;
    std::unique_ptr<host::Ndarray>& shadow = access_shadows[it->first];
    if (!shadow || shadow->shape() != nd.shape() || shadow->components() != nd.components()) {
      if (shadow) device.remove(shadow->data());
      std::string shadow_name = passes::access_shadow_name(it->first);
      shadow = std::make_unique<host::Ndarray>(Scalar::I32, nd.shape(), nd.components(),
                                               shadow_name, options.allocate);
      if (options.allocate) device.add_buffer(shadow_name, shadow->data(), shadow->bytes(), false);
    }
    return shadow.get();
  }

  // The dotted path of the resource member at byte `offset` of argpack type `type`.
  std::string member_path_at(int type, uint32_t offset) const {
    std::string path;
    find_resource_member_at(doc->argpack_types, type, offset, &path);
    return path;
  }

  // What a kernel's resource slot is, in the document's words.
  std::string describe_slot(const KernelABI& abi, int slot) const {
    if (slot < 0 || static_cast<size_t>(slot) >= abi.resources.size())
      return "resource slot " + std::to_string(slot);
    const ResourceDesc& r = abi.resources[static_cast<size_t>(slot)];
    if (r.kind == ResourceKind::Field) return "field '" + r.field + "'";
    if (r.param < 0 || static_cast<size_t>(r.param) >= abi.params.size())
      return "resource slot " + std::to_string(slot);
    const ParamDesc& p = abi.params[static_cast<size_t>(r.param)];
    std::string kind = resource_kind_name(r.kind);
    if (r.param_offset < 0) return kind + " parameter '" + p.name + "'";
    std::string path = member_path_at(p.argpack_type, static_cast<uint32_t>(r.param_offset));
    return kind + " '" + p.name + "." + (path.empty() ? "?" : path) + "' (argpack member)";
  }

  // A failure inside a launch, placed in the document; an access out of bounds names the
  // field, ndarray parameter or argpack member ("p.inner.data") it went through.
  Error launch_error(const Instance& inst, const Error& e) const {
    Place where = e.place();
    if (where.document.empty()) where.document = doc->path;
    if (where.kernel.empty()) where.kernel = inst.kernel->abi().name;
    const LaunchError& le = inst.frame.error();
    if (le.code != 1) return Error(where, e.message());
    if (le.slot == -1)  // a local array or element index: no resource to name
      return Error(where, describe_launch_error(inst.kernel->abi(), {}, le));
    return Error(where, "index out of bounds: " + describe_slot(inst.kernel->abi(), le.slot) +
                            ", dim " + std::to_string(le.dim) + ", index " +
                            std::to_string(le.index) + " not in [0, " + std::to_string(le.extent) +
                            ")");
  }

  // What running_kernel() reports to other threads (the editor names a launch that hangs).
  void set_running(const std::string& kernel) {
    std::lock_guard<std::mutex> lock(running_mutex);
    running = kernel;
  }

  // The instantiation a launch of `kernel` (a kernel, K.grad or K.dual) runs, compiled if new,
  // and the arguments it binds (a derived launch's twins added).
  std::pair<Instance*, Args> launch_instance(const std::string& kernel, const Args& args) {
    std::optional<DerivedLaunch> derived;
    Derivative mode = Derivative::Adjoint;
    const graph::KernelDecl* primal = derived_from(kernel, &mode);
    if (primal) derived = derived_launch(*primal, args, mode);
    const graph::KernelDecl& decl = primal ? *primal : kernel_decl(kernel);
    check_argument_names(decl, args, primal ? &mode : nullptr);
    Args bound = derived ? derived->args : args;
    Instance& inst = instance(decl, template_args(decl, bound), derived ? &*derived : nullptr);
    return {&inst, std::move(bound)};
  }

  LaunchAccess launch_access(const std::string& kernel, const Args& args) {
    auto [inst, bound] = launch_instance(kernel, args);
    const KernelABI& abi = inst->kernel->abi();
    LaunchAccess out;
    out.complete = abi.resource_access_known;
    auto add = [](std::vector<std::string>& list, const std::string& name) {
      if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
    };
    for (const ResourceAccess& a : abi.resource_access) {
      const ResourceDesc& r = abi.resources.at(static_cast<size_t>(a.slot));
      if (is_access_shadow(abi, r)) continue;  // the program's own, not a resource
      std::string name;
      if (r.kind == ResourceKind::Field) {
        name = r.field;
      } else if (r.param >= 0) {
        const ParamDesc& param = abi.params.at(static_cast<size_t>(r.param));
        for (const auto& [given, value] : bound)
          if (given == param.name && value.kind() == Arg::Kind::Resource) name = value.resource();
        if (r.param_offset >= 0)  // the ndarray the argpack holds there (not a texture's)
          name = name.empty()
                     ? ""
                     : member_ndarray(name, member_path_at(param.argpack_type,
                                                           static_cast<uint32_t>(r.param_offset)));
      }
      if (name.empty()) {  // a texture inside an argpack: the program cannot name it here
        out.complete = false;
        continue;
      }
      if (a.access & (kResourceRead | kResourceAtomic)) add(out.reads, name);
      if (a.access & (kResourceWrite | kResourceAtomic)) add(out.writes, name);
    }
    std::sort(out.reads.begin(), out.reads.end());
    std::sort(out.writes.begin(), out.writes.end());
    return out;
  }

  KernelResult launch(const std::string& kernel, const Args& args) {
    need_memory("launching kernel '" + kernel + "'");
    auto [instance_ptr, bound] = launch_instance(kernel, args);
    Instance& inst = *instance_ptr;
    bind(inst, bound);
    LaunchContext& ctx = inst.frame.context();
    ctx.seed = 0x9e3779b97f4a7c15ull * ++launch_serial;  // fresh random numbers every launch
    auto t0 = Clock::now();
    set_running(kernel);
    try {
      device.launch(*inst.kernel, ctx);
    } catch (const Error& e) {
      set_running("");
      stats.ms_launch += ms_since(t0);
      throw launch_error(inst, e);
    }
    set_running("");
    stats.ms_launch += ms_since(t0);
    ++stats.launches;
    KernelResult result;
    result.names = inst.return_names;
    result.types = inst.kernel->abi().returns;
    size_t c = 0;
    for (const ValueType& t : result.types)
      for (int k = 0; k < t.components(); ++k, ++c) {
        with_scalar_type(t.scalar, [&](auto zero) {
          using T = decltype(zero);
          T v = inst.frame.returned<T>(c);
          result.values.push_back(static_cast<double>(v));
          result.ints.push_back(integer_component(v));
        });
      }
    return result;
  }

  ResourceBytes resource_bytes(const std::string& name) {
    need_memory("'" + name + "'");
    ResourceBytes r;
    r.name = name;
    if (auto it = fields.find(name); it != fields.end()) {
      const host::Field& f = *it->second;
      ValueType e = f.desc().elem;
      r.dtype = e.scalar;
      r.shape = f.desc().shape;
      if (e.is_vector()) r.elem_dims = {e.rows};
      if (e.is_matrix()) r.elem_dims = {e.rows, e.cols};
      r.layout = f.desc().layout;
      r.data = f.data();
      r.bytes = f.bytes();
      return r;
    }
    if (auto it = ndarrays.find(name); it != ndarrays.end()) {
      const host::Ndarray& n = *it->second;
      ValueType e = ndarray_elems.at(name);
      r.dtype = n.dtype();
      r.shape = n.shape();
      if (e.is_vector()) r.elem_dims = {e.rows};
      if (e.is_matrix()) r.elem_dims = {e.rows, e.cols};
      r.data = n.data();
      r.bytes = n.bytes();
      return r;
    }
    if (auto it = textures.find(name); it != textures.end()) {
      const host::Texture& t = *it->second;
      r.dtype = t.format() == TextureFormat::RGBA8 ? Scalar::U8 : Scalar::F32;
      if (t.ndim() == 3) r.shape = {t.depth()};
      r.shape.push_back(t.height());
      r.shape.push_back(t.width());
      r.elem_dims = {t.channels()};
      r.data = t.data();
      r.bytes = t.bytes();
      return r;
    }
    // Not a pin: the program's resources by name, listed so the user sees what there is.
    std::string have;
    auto list = [&](const auto& by_name) {
      for (const auto& entry : by_name) have += (have.empty() ? "" : ", ") + entry.first;
    };
    list(fields);
    list(ndarrays);
    list(textures);
    throw Error(place(),
                "no field, ndarray or texture '" + name + "' in the program" +
                    (have.empty() ? std::string(" (it has none)") : " (it has " + have + ")"));
  }

  // Value arguments of every pipeline launch, converted as a launch converts them: what
  // `loom run` would refuse, loading (and so `loom check`) refuses.
  void check_pipeline_values() const {
    for (const graph::Pipeline& pipe : doc->pipelines)
      for (const auto& [kernel, args] : pipeline_launches(pipe.name)) {
        Derivative mode = Derivative::Adjoint;
        const graph::KernelDecl* primal = derived_from(kernel, &mode);
        const graph::KernelDecl& decl = primal ? *primal : kernel_decl(kernel);
        check_argument_names(decl, args, primal ? &mode : nullptr);
        std::unordered_map<std::string_view, const Arg*> given;  // names are unique (above)
        for (const auto& [name, value] : args) given.emplace(name, &value);
        for (const graph::KernelParam& param : decl.params) {
          auto type = parse_value_type(param.type);
          if (param.kind != graph::ParamKind::Value || !type)
            continue;  // validation checked the rest
          auto value = given.find(param.name);
          if (value != given.end())
            argument_bytes(*value->second, *type, place(kernel, param.name),
                           "pipeline '" + pipe.name + "': parameter '" + param.name + "'");
        }
      }
  }

  // One run of pipeline `name`, keeping what its launches return (last_returns).
  void run_launches(const std::string& name,
                    const std::vector<std::pair<std::string, Args>>& launches) {
    std::vector<LaunchReturns>& record = pipeline_returns[name];
    record.clear();
    for (size_t i = 0; i < launches.size(); ++i) {
      KernelResult result = launch(launches[i].first, launches[i].second);
      if (!result.names.empty()) record.push_back({i, launches[i].first, std::move(result)});
    }
    device.flush();  // the device starts on the batch while the host goes on
  }

  std::vector<std::pair<std::string, Args>> pipeline_launches(const std::string& name) const {
    const graph::Pipeline* p = find_pipeline(name);
    if (!p) throw Error(place(), "the document has no pipeline '" + name + "'");
    std::vector<std::pair<std::string, Args>> out;
    for (const graph::Launch& l : p->launches) {
      Args args;
      for (const auto& [param, value] : l.args)
        args.emplace_back(param, literal_to_arg(value, Place{doc->path, l.kernel, -1, param}));
      out.emplace_back(l.kernel, std::move(args));
    }
    return out;
  }

  // Calls `visit(kernel, template args, "kernel[signature]")` once per instantiation the
  // pipelines launch, in pipeline order.
  template <typename Visit>
  void for_each_pipeline_instantiation(Visit&& visit) {
    std::set<std::string> seen;
    for (const graph::Pipeline& p : doc->pipelines) {
      for (const auto& [kernel, args] : pipeline_launches(p.name)) {
        Derivative mode = Derivative::Adjoint;
        if (derived_from(kernel, &mode)) continue;  // K.grad, K.dual: checked as K
        const graph::KernelDecl& decl = kernel_decl(kernel);
        check_argument_names(decl, args);
        graph::TemplateArgs targs = template_args(decl, args);
        std::string sig = targs.signature();
        if (!seen.insert(kernel + '\n' + targs.key()).second) continue;
        visit(kernel, targs, kernel + (sig.empty() ? "" : "[" + sig + "]"));
      }
    }
  }
};

void Program::Impl::rebind_ndarray(const std::string& name, void* data,
                                   std::vector<int64_t> shape) {
  Place where = place("", name);
  auto it = ndarrays.find(name);
  if (it == ndarrays.end()) throw Error(where, "'" + name + "' is not an ndarray of the program");
  const host::Ndarray& old = *it->second;
  if (old.owns_memory())
    throw Error(where,
                "ndarray '" + name +
                    "' owns its memory; only ndarrays made with wrap_ndarray can be rebound");
  if (!data) throw Error(where, "ndarray '" + name + "' cannot be rebound to null memory");
  auto fresh =
      std::make_unique<host::Ndarray>(data, old.dtype(), std::move(shape), old.components());
  // Argpack members holding it must accept the new shape before anything changes.
  for (const auto& [member, nd] : pack_ndarrays) {
    if (nd != name) continue;
    const host::Argpack& pack = *argpacks.at(member.first);
    const ArgpackMember* m = find_member(doc->argpack_types, doc->argpack_type(pack.type().name),
                                         member.second, nullptr);
    if (m && m->ndim != 0 && m->ndim != fresh->ndim())
      throw Error(where, "ndarray '" + name + "' is bound to argpack member '" + member.first +
                             "." + member.second + "', which takes " + std::to_string(m->ndim) +
                             " dimensions, not " + std::to_string(fresh->ndim()));
  }
  device.read_back(old.data());  // the old memory keeps the results of earlier launches
  if (fresh->data() != old.data()) {
    device.add_buffer(name, fresh->data(), fresh->bytes(),
                      true);  // may refuse: nothing changed yet
    device.remove(old.data());
  } else {  // the same memory with another shape: its device copy is replaced
    device.remove(old.data());
    try {
      device.add_buffer(name, fresh->data(), fresh->bytes(), true);
    } catch (...) {
      device.add_buffer(name, old.data(), old.bytes(), true);
      throw;
    }
  }
  it->second = std::move(fresh);
  for (const auto& [member, nd] : pack_ndarrays)
    if (nd == name) argpacks.at(member.first)->set_ndarray(member.second, *it->second);
}

void Program::Impl::remove_ndarray(const std::string& name) {
  Place where = place("", name);
  if (!ndarrays.count(name)) {
    bool declared = fields.count(name) || textures.count(name) || argpacks.count(name);
    throw Error(
        where,
        "'" + name + "' is not an ndarray of the program" +
            (declared ? std::string("; only ndarrays created or wrapped from code can be removed")
                      : ""));
  }
  if (!code_ndarrays.count(name))
    throw Error(where, "ndarray '" + name +
                           "' is declared by the document; only ndarrays created or wrapped from "
                           "code can be removed");
  for (const auto& [member, nd] : pack_ndarrays)
    if (nd == name)
      throw Error(where, "ndarray '" + name + "' is still bound to argpack member '" +
                             member.first + "." + member.second +
                             "'; bind another ndarray there first");
  device.read_back(ndarrays.at(name)->data());
  device.remove(ndarrays.at(name)->data());
  ndarrays.erase(name);
  if (auto shadow = access_shadows.find(name); shadow != access_shadows.end()) {
    if (shadow->second) device.remove(shadow->second->data());
    access_shadows.erase(shadow);
  }
  ndarray_elems.erase(name);
  code_ndarrays.erase(name);
  std::erase(resource_order, name);
}

Program::Program(ProgramOptions options)
    : impl_(std::make_unique<Impl>(std::move(options), nullptr)) {}
Program::~Program() = default;

void Program::load(graph::Document document) {
  auto doc = std::make_unique<graph::Document>(std::move(document));
  layout_argpack_types(doc->argpack_types);
  graph::validate_document(*doc);
  auto fresh = std::make_unique<Impl>(impl_->options, impl_->backend);
  fresh->set_document(std::move(doc));
  fresh->allocate_resources();  // throws before anything of the old program is touched
  fresh->check_pipeline_values();
  fresh->stats.kernels_registered = static_cast<int>(fresh->doc->kernels.size());
  impl_ = std::move(fresh);
}

void Program::load_file(const std::string& path) { load(graph::load_document_file(path)); }

namespace {

bool same_literal(const graph::Literal& a, const graph::Literal& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case graph::Literal::Kind::Bool: return a.b == b.b;
    case graph::Literal::Kind::Int: return a.i == b.i && a.above_int64 == b.above_int64;
    case graph::Literal::Kind::Float: return a.f == b.f;
    case graph::Literal::Kind::String: return a.s == b.s;
    case graph::Literal::Kind::List:
      if (a.list.size() != b.list.size()) return false;
      for (size_t i = 0; i < a.list.size(); ++i)
        if (!same_literal(a.list[i], b.list[i])) return false;
      return true;
    case graph::Literal::Kind::None: return true;
  }
  return false;
}

// The value a document declares for argpack member `pack.member`, if it declares one.
const graph::Literal* declared_value(const graph::Document& doc, const std::string& pack,
                                     const std::string& member) {
  for (const graph::ArgpackDecl& a : doc.argpacks)
    if (a.name == pack)
      for (const auto& [path, value] : a.values)
        if (path == member) return &value;
  return nullptr;
}

// Two storage declarations of one name that can share contents.
template <typename Decl>
const Decl* find_decl(const std::vector<Decl>& decls, const std::string& name) {
  for (const Decl& d : decls)
    if (d.name == name) return &d;
  return nullptr;
}

}  // namespace

ReloadReport Program::reload(graph::Document document) {
  auto t0 = Clock::now();
  ReloadReport report;
  Impl& old = *impl_;
  auto doc = std::make_unique<graph::Document>(std::move(document));
  layout_argpack_types(doc->argpack_types);
  graph::validate_document(*doc);
  auto fresh = std::make_unique<Impl>(old.options, old.backend);
  fresh->set_document(std::move(doc));
  fresh->stats = old.stats;
  fresh->stats.kernels_registered = static_cast<int>(fresh->doc->kernels.size());
  fresh->allocate_storage();

  // Kernels whose content did not change keep their compiled code.
  for (const auto& [key, inst] : old.instances) {
    std::string kernel = key.substr(0, key.find('\n'));
    if (!fresh->find_kernel(kernel) || fresh->content_key(kernel) != old.content_key(kernel))
      continue;
    auto copy = std::make_unique<Instance>(inst->kernel, inst->signature);
    copy->return_names = inst->return_names;
    fresh->instances[key] = std::move(copy);
  }

  // Ndarrays made from code belong to the program, not the document: they move over (and
  // back, if the new document does not compile).
  std::vector<std::string> moved;
  for (const std::string& name : old.code_ndarrays) {
    if (fresh->fields.count(name) || fresh->ndarrays.count(name) || fresh->textures.count(name)) {
      report.notices.push_back("ndarray '" + name +
                               "' made from code is shadowed by the document's '" + name +
                               "': dropped");
      report.dropped.push_back(name);
      continue;
    }
    fresh->ndarrays[name] = std::move(old.ndarrays.at(name));
    fresh->ndarray_elems[name] = old.ndarray_elems.at(name);
    fresh->code_ndarrays.insert(name);
    fresh->resource_order.push_back(name);
    moved.push_back(name);
  }
  auto move_back = [&] {
    for (const std::string& name : moved) old.ndarrays[name] = std::move(fresh->ndarrays.at(name));
  };
  try {
    int compiled_before = fresh->stats.misses + fresh->stats.disk_hits;
    std::unordered_map<std::string, bool> seen;
    for (const graph::Pipeline& p : fresh->doc->pipelines)
      for (const auto& [kernel, args] : fresh->pipeline_launches(p.name)) {
        Derivative mode = Derivative::Adjoint;
        if (fresh->derived_from(kernel, &mode)) continue;  // compiled at their first launch
        const graph::KernelDecl& decl = fresh->kernel_decl(kernel);
        fresh->check_argument_names(decl, args);
        graph::TemplateArgs targs = fresh->template_args(decl, args);
        std::string key = kernel + '\n' + targs.key();
        if (seen[key]) continue;
        seen[key] = true;
        bool reused = fresh->instances.count(key) > 0;
        fresh->instance(decl, targs);
        report.kernels_reused += reused ? 1 : 0;
      }
    report.kernels_compiled = fresh->stats.misses + fresh->stats.disk_hits - compiled_before;
    fresh->check_pipeline_values();
  } catch (...) {
    move_back();
    throw;
  }

  // Committed: storage whose declaration is unchanged changes hands (contents, device copy
  // and all); what changed starts afresh.
  auto carry = [&](auto& from, auto& to, const auto& old_decls, const auto& new_decls, auto same) {
    for (auto& [name, storage] : to) {
      const auto* now = find_decl(new_decls, name);
      if (!now) continue;  // made from code: moved above
      const auto* before = find_decl(old_decls, name);
      if (before && from.count(name) && same(*before, *now)) {
        std::swap(storage, from.at(name));
        report.kept.push_back(name);
      } else {
        report.reinitialized.push_back(name);
        report.notices.push_back("'" + name + "' " +
                                 (before ? "changed its declaration" : "is new") +
                                 (before ? ": re-initialised" : ""));
      }
    }
  };
  carry(old.fields, fresh->fields, old.doc->fields, fresh->doc->fields,
        [](const FieldDesc& a, const FieldDesc& b) {
          return a.elem == b.elem && a.shape == b.shape && a.layout == b.layout;
        });
  carry(old.ndarrays, fresh->ndarrays, old.doc->ndarrays, fresh->doc->ndarrays,
        [](const graph::NdarrayDecl& a, const graph::NdarrayDecl& b) {
          return a.elem == b.elem && a.shape == b.shape;
        });
  carry(old.textures, fresh->textures, old.doc->textures, fresh->doc->textures,
        [](const graph::TextureDecl& a, const graph::TextureDecl& b) {
          return a.size == b.size && a.format == b.format;
        });
  for (const FieldDesc& f : old.doc->fields)
    if (!find_decl(fresh->doc->fields, f.name)) report.dropped.push_back(f.name);
  for (const graph::NdarrayDecl& n : old.doc->ndarrays)
    if (!find_decl(fresh->doc->ndarrays, n.name)) report.dropped.push_back(n.name);
  for (const graph::TextureDecl& t : old.doc->textures)
    if (!find_decl(fresh->doc->textures, t.name)) report.dropped.push_back(t.name);

  // Argpacks from the new document, then the values set through the API, except where the
  // document now says something else for that member.
  fresh->allocate_argpacks();
  for (const auto& [pack, member, value] : old.argpack_overrides) {
    if (!fresh->argpacks.count(pack)) continue;
    const graph::Literal* before = declared_value(*old.doc, pack, member);
    const graph::Literal* now = declared_value(*fresh->doc, pack, member);
    if ((before == nullptr) != (now == nullptr) || (before && !same_literal(*before, *now)))
      continue;
    try {
      fresh->set_member(*fresh->argpacks.at(pack), pack, member, value);
      fresh->argpack_overrides.emplace_back(pack, member, value);
    } catch (const Error& e) {
      report.notices.push_back(std::string("argpack value ") + pack + "." + member +
                               " not kept: " + e.what());
    }
  }
  for (const std::string& n : report.dropped)
    report.notices.push_back("'" + n + "' is gone from the document");
  report.ms = ms_since(t0);
  impl_ = std::move(fresh);
  return report;
}

const graph::Document& Program::document() const { return *impl_->doc; }

KernelResult Program::launch(const std::string& kernel, const Args& args) {
  return impl_->launch(kernel, args);
}

void Program::run_pipeline(const std::string& name) {
  impl_->run_launches(name, impl_->pipeline_launches(name));
}

std::vector<std::pair<std::string, Args>> Program::pipeline_launches(const std::string& name,
                                                                     const Args& args) const {
  auto launches = impl_->pipeline_launches(name);
  std::vector<std::string> names;  // the parameters of the launches' kernels, first seen first
  for (const auto& [kernel, ignored] : launches)
    for (const graph::KernelParam& p : impl_->launch_decl(kernel).params)
      if (std::find(names.begin(), names.end(), p.name) == names.end()) names.push_back(p.name);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& given = args[i].first;
    for (size_t j = 0; j < i; ++j)
      if (args[j].first == given)
        throw Error(impl_->place("", given),
                    "pipeline '" + name + "': argument '" + given + "' is given twice");
    if (std::find(names.begin(), names.end(), given) != names.end()) continue;
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    throw Error(impl_->place("", given), "pipeline '" + name + "' takes no argument '" + given +
                                             "'; its launches take: " + list);
  }
  for (auto& [kernel, launch_args] : launches) {
    const graph::KernelDecl& decl = impl_->launch_decl(kernel);
    for (const auto& arg : args) {
      const std::string& given = arg.first;  // named: clang before 16 cannot capture a binding
      bool takes = false;
      for (const graph::KernelParam& p : decl.params) takes |= p.name == given;
      if (!takes) continue;
      auto it = std::find_if(launch_args.begin(), launch_args.end(),
                             [&](const auto& a) { return a.first == given; });
      if (it != launch_args.end())
        it->second = arg.second;
      else
        launch_args.emplace_back(given, arg.second);
    }
  }
  return launches;
}

void Program::run_pipeline(const std::string& name, const Args& args) {
  auto launches = pipeline_launches(name, args);
  for (const auto& [kernel, launch_args] : launches) {
    // What a launch checks, before any runs: names, template arguments (compiling what a
    // new binding needs) and the arguments' types.
    const graph::KernelDecl& decl = impl_->launch_decl(kernel);
    impl_->check_argument_names(decl, launch_args);
    impl_->bind(impl_->instance(decl, impl_->template_args(decl, launch_args)), launch_args);
  }
  impl_->run_launches(name, launches);
}

LaunchAccess Program::launch_access(const std::string& kernel, const Args& args) {
  return impl_->launch_access(kernel, args);
}

bool Program::has_pipeline(const std::string& name) const {
  return impl_->find_pipeline(name) != nullptr;
}

const std::vector<LaunchReturns>& Program::last_returns(const std::string& name) const {
  if (!has_pipeline(name))
    throw Error(impl_->place(), "the document has no pipeline '" + name + "'");
  return impl_->pipeline_returns[name];  // an empty record for one not run yet
}

// A mutable host view: current now, and uploaded again before the next launch that uses it.
ArrayView Program::array(const std::string& name) {
  impl_->need_memory("'" + name + "'");
  if (auto it = impl_->fields.find(name); it != impl_->fields.end()) {
    const host::Field& f = *it->second;
    impl_->device.read_back(f.data());
    impl_->device.host_wrote(f.data());
    return ArrayView{f.desc().elem.scalar, f.components(), f.desc().shape,
                     f.desc().layout,      f.data(),       f.bytes()};
  }
  if (auto it = impl_->ndarrays.find(name); it != impl_->ndarrays.end()) {
    const host::Ndarray& n = *it->second;
    impl_->device.read_back(n.data());
    impl_->device.host_wrote(n.data());
    return ArrayView{n.dtype(), n.components(), n.shape(), Layout::AoS, n.data(), n.bytes()};
  }
  throw Error(impl_->place("", name), "'" + name + "' is not a field or ndarray of the program");
}

void Program::write_array(const std::string& name, const void* data, size_t bytes) {
  impl_->need_memory("'" + name + "'");
  uint8_t* storage = nullptr;
  size_t size = 0;
  if (auto it = impl_->fields.find(name); it != impl_->fields.end()) {
    storage = it->second->data();
    size = it->second->bytes();
  } else if (auto nd = impl_->ndarrays.find(name); nd != impl_->ndarrays.end()) {
    storage = nd->second->data();
    size = nd->second->bytes();
  } else {
    throw Error(impl_->place("", name), "'" + name + "' is not a field or ndarray of the program");
  }
  if (bytes != size)
    throw Error(impl_->place("", name), "writing " + std::to_string(bytes) + " bytes into '" +
                                            name + "', which holds " + std::to_string(size));
  std::memcpy(storage, data, bytes);
  impl_->device.host_wrote(storage);
}

TextureView Program::texture(const std::string& name) {
  impl_->need_memory("'" + name + "'");
  auto it = impl_->textures.find(name);
  if (it == impl_->textures.end())
    throw Error(impl_->place("", name), "'" + name + "' is not a texture of the program");
  const host::Texture& t = *it->second;
  impl_->device.read_back(t.data());
  impl_->device.host_wrote(t.data());
  std::vector<int64_t> size = {t.width(), t.height()};
  if (t.ndim() == 3) size.push_back(t.depth());
  return TextureView{t.format(), size, t.data(), t.bytes()};
}

void Program::create_ndarray(const std::string& name, ValueType elem, std::vector<int64_t> shape) {
  // Checked (extents, memory) before the name is taken, so a failure leaves no trace.
  auto array =
      std::make_unique<host::Ndarray>(elem.scalar, std::move(shape), elem.components(), name);
  impl_->add_code_ndarray(name, elem, std::move(array), false);
}

void Program::wrap_ndarray(const std::string& name, ValueType elem, std::vector<int64_t> shape,
                           void* data) {
  auto array =
      std::make_unique<host::Ndarray>(data, elem.scalar, std::move(shape), elem.components(), name);
  impl_->add_code_ndarray(name, elem, std::move(array), true);
}

void Program::rebind_ndarray(const std::string& name, void* data, std::vector<int64_t> shape) {
  impl_->rebind_ndarray(name, data, std::move(shape));
}

void Program::remove_ndarray(const std::string& name) { impl_->remove_ndarray(name); }

void Program::set_argpack(const std::string& pack, const std::string& member, const Arg& value) {
  auto it = impl_->argpacks.find(pack);
  if (it == impl_->argpacks.end())
    throw Error(impl_->place("", pack), "'" + pack + "' is not an argpack of the program");
  impl_->set_member(*it->second, pack, member, value);
  impl_->argpack_overrides.emplace_back(pack, member, value);
}

double Program::get_argpack(const std::string& pack, const std::string& member,
                            int component) const {
  auto it = impl_->argpacks.find(pack);
  if (it == impl_->argpacks.end())
    throw Error(impl_->place("", pack), "'" + pack + "' is not an argpack of the program");
  const graph::Document& doc = *impl_->doc;
  const ArgpackMember* m =
      find_member(doc.argpack_types, doc.argpack_type(it->second->type().name), member, nullptr);
  if (!m || m->kind != MemberKind::Value || component < 0 || component >= m->type.components())
    throw Error(impl_->place("", pack + "." + member),
                "no value member '" + member + "' (component " + std::to_string(component) +
                    ") in argpack '" + pack + "'");
  if (m->type.scalar == Scalar::Bool) return it->second->get<bool>(member) ? 1.0 : 0.0;
  double result = 0;
  with_scalar_type(m->type.scalar, [&](auto zero) {
    using T = decltype(zero);
    result = static_cast<double>(it->second->get_components<T>(
        member, m->type.components())[static_cast<size_t>(component)]);
  });
  return result;
}

void Program::load_npy(const std::string& resource, const std::string& path) {
  ResourceBytes bytes = impl_->resource_bytes(resource);
  impl_->device.read_back(bytes.data);  // a failed read must leave the current contents
  read_resource_npy(bytes, path);
  impl_->device.host_wrote(bytes.data);
}

void Program::dump_npy(const std::string& resource, const std::string& path) {
  ResourceBytes bytes = impl_->resource_bytes(resource);
  impl_->device.read_back(bytes.data);
  write_resource_npy(bytes, path);
}

std::vector<std::string> Program::resource_names() const { return impl_->resource_order; }

std::string Program::ir_text(const std::string& kernel, const std::string& after_pass,
                             const Args& template_args) {
  const graph::KernelDecl& decl = impl_->kernel_decl(kernel);
  if (!after_pass.empty()) {
    auto names = pass_names();
    if (std::find(names.begin(), names.end(), after_pass) == names.end()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      throw Error(impl_->place(kernel), "unknown pass '" + after_pass + "'; passes are: " + list);
    }
  }
  std::string text;
  std::map<std::string, int> runs;  // a pass that runs again is named "pass#2", "pass#3"
  auto observer = [&](std::string_view pass, ir::Kernel& k) {
    int n = ++runs[std::string(pass)];
    std::string name = n == 1 ? std::string(pass) : std::string(pass) + "#" + std::to_string(n);
    if (name == after_pass) text = ir::print_kernel(k);
  };
  auto k = impl_->lower_and_optimise(kernel, impl_->template_args(decl, template_args), observer);
  if (after_pass.empty()) text = ir::print_kernel(*k);
  return text;
}

std::string Program::spirv_text(const std::string& kernel, const Args& template_args) {
  const graph::KernelDecl& decl = impl_->kernel_decl(kernel);
  graph::TemplateArgs targs = impl_->template_args(decl, template_args);
  std::unique_ptr<ir::Kernel> k = graph::lower_kernel(*impl_->doc, kernel, targs);
  k->fast_math = impl_->options.fast_math;
  k->index_bits = 32;
  passes::PipelineOptions po;
  po.debug = impl_->options.debug;
  passes::run_pipeline(*k, po);
  std::string text;
  if (impl_->backend->kind() == Backend::Vulkan) {
    Stats scratch;
    KernelRecord record = impl_->backend->compile(*k, scratch);
    SpirvKernel code = deserialize_spirv_kernel(record.code, "kernel '" + kernel + "'");
    for (size_t t = 0; t < code.tasks.size(); ++t)
      text +=
          "; task " + std::to_string(t) + "\n" + codegen::disassemble_spirv(code.tasks[t].spirv);
    return text;
  }
  codegen::CompiledSpirvKernel c = codegen::compile_kernel_to_spirv(*k);
  text = "; for a Vulkan device with every optional feature (this program runs on " +
         std::string(backend_name(impl_->backend->kind())) + ")\n";
  for (size_t t = 0; t < c.kernel.tasks.size(); ++t)
    text +=
        "; task " + std::to_string(t) + "\n" + codegen::disassemble_spirv(c.kernel.tasks[t].spirv);
  return text;
}

std::string Program::llvm_ir_text(const std::string& kernel, const Args& template_args,
                                  bool optimized) {
  const graph::KernelDecl& decl = impl_->kernel_decl(kernel);
  std::unique_ptr<ir::Kernel> k =
      graph::lower_kernel(*impl_->doc, kernel, impl_->template_args(decl, template_args));
  k->fast_math = impl_->options.fast_math;
  k->private_copies =
      impl_->options.privatize_scatter ? cpu_private_copies(impl_->options.threads) : 0;
  passes::PipelineOptions po;
  po.debug = impl_->options.debug;
  passes::run_pipeline(*k, po);
  codegen::CpuCodegenOptions co;
  co.fast_math = impl_->options.fast_math;
  co.cancel_checks = impl_->options.cancellable && impl_->backend->kind() == Backend::Cpu;
  return codegen::dump_llvm_ir(*k, co, optimized);
}

void Program::lower_for_module(const std::string& kernel, const Args& args, int index_bits,
                               AotInstance& out) {
  // K.grad / K.dual: twins bound as a launch binds them; a float ndarray parameter given no
  // example argument gets its twin too (the engine binds it at launch), and so does each float
  // ndarray member of an argpack parameter given none.
  Derivative mode = Derivative::Adjoint;
  const graph::KernelDecl* primal = impl_->derived_from(kernel, &mode);
  const graph::KernelDecl& decl = primal ? *primal : impl_->kernel_decl(kernel);
  impl_->check_argument_names(decl, args, primal ? &mode : nullptr);
  std::optional<Impl::DerivedLaunch> derived;
  if (primal) {
    derived = impl_->derived_launch(decl, args, mode);
    for (const graph::KernelParam& p : decl.params) {
      auto type = parse_value_type(p.type);
      bool given =
          std::any_of(args.begin(), args.end(), [&](const auto& a) { return a.first == p.name; });
      if (p.kind == graph::ParamKind::Ndarray && type && is_float(type->scalar) && !given)
        derived->ndarray_params.insert(p.name);
      if (p.kind == graph::ParamKind::Argpack && !given)
        for (const std::string& path : impl_->float_ndarray_members(p.type))
          derived->member_ndarrays.insert(p.name + "." + path);
    }
  }
  const Args& bound = derived ? derived->args : args;
  graph::TemplateArgs targs = impl_->template_args(decl, bound);
  std::unique_ptr<ir::Kernel> k = graph::lower_kernel(*impl_->doc, decl, targs);
  k->fast_math = impl_->options.fast_math;
  k->index_bits = index_bits;
  // A CPU module (64-bit offsets) runs on machines of any size: copies for 16 threads, and
  // the atomics as written on any further thread.
  k->private_copies = impl_->options.privatize_scatter && index_bits == 64 ? 16 : 0;
  passes::PipelineOptions po;
  po.debug = impl_->options.debug;
  po.access_shadows = impl_->options.debug;  // the module's own (LoadedModule binds them)
  if (derived) {
    std::vector<bool> slots = impl_->derived_slots(*k, *derived);
    if (mode == Derivative::Adjoint)
      po.adjoint = passes::AdjointOptions{slots, impl_->doc->argpack_types};
    else
      po.tangent = passes::TangentOptions{slots, derived->argpack_tangents(k->abi),
                                          impl_->doc->argpack_types};
  }
  passes::run_pipeline(*k, po);
  out.derived = !primal                       ? aot::Derivation::Mode::None
                : mode == Derivative::Adjoint ? aot::Derivation::Mode::Adjoint
                                              : aot::Derivation::Mode::Tangent;
  out.primal = primal ? decl.name : "";
  out.args = bound;
  out.ir = std::move(k);
  out.template_args.clear();
  auto sorted = targs.values;
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [param, t] : sorted) {
    aot::TemplateArgument a;
    a.param = param;
    switch (t.kind) {
      case graph::TemplateArg::Kind::Field:
        a.kind = aot::TemplateArgument::Kind::Field;
        a.field = t.field;
        break;
      case graph::TemplateArg::Kind::Int:
        a.kind = aot::TemplateArgument::Kind::Int;
        a.i = t.i;
        break;
      case graph::TemplateArg::Kind::Float:
        a.kind = aot::TemplateArgument::Kind::Float;
        a.f = t.f;
        break;
      case graph::TemplateArg::Kind::Bool:
        a.kind = aot::TemplateArgument::Kind::Bool;
        a.b = t.b;
        break;
      case graph::TemplateArg::Kind::Ndarray:
        a.kind = aot::TemplateArgument::Kind::Ndarray;
        a.elem = parse_value_type(t.field).value_or(ValueType{});
        a.i = t.i;
        break;
    }
    out.template_args.push_back(std::move(a));
  }
  out.return_names.clear();
  if (out.derived == aot::Derivation::Mode::Adjoint) {  // gradients of values and members
    for (const GradientValue& g : gradient_values(out.ir->abi, impl_->doc->argpack_types))
      out.return_names.push_back(g.name);
    return;
  }
  for (const graph::ReturnValue& r : graph::kernel_returns(*impl_->doc, decl))
    out.return_names.push_back(r.name);
}

Backend Program::backend() const { return impl_->backend->kind(); }
std::string Program::device_name() const { return impl_->device.name(); }
DeviceCounters Program::device_counters() { return impl_->backend->counters(); }
void Program::synchronize() { impl_->device.synchronize(); }
bool Program::synchronize(double timeout_ms) { return impl_->device.synchronize(timeout_ms); }
void Program::cancel() { impl_->device.cancel(); }
void Program::clear_cancel() { impl_->device.clear_cancel(); }
std::string Program::running_kernel() const {
  std::lock_guard<std::mutex> lock(impl_->running_mutex);
  return impl_->running;
}

// The notes offload left in a lowered and optimised kernel, placed in the document.
static std::vector<Program::TaskNote> notes_of(const ir::Kernel& k, const std::string& document,
                                               const std::string& kernel,
                                               const std::string& instantiation) {
  std::vector<Program::TaskNote> out;
  for (size_t t = 0; t < k.task_notes.size(); ++t) {
    const ir::TaskNote& note = k.task_notes[t];
    out.push_back({Place{document, kernel, note.node, ""}, instantiation, static_cast<int>(t),
                   note.parallel, note.text});
  }
  return out;
}

std::vector<Program::TaskNote> Program::task_notes() {
  std::vector<TaskNote> out;
  impl_->for_each_pipeline_instantiation(
      [&](const std::string& kernel, const graph::TemplateArgs& targs, const std::string& name) {
        auto k = impl_->lower_and_optimise(kernel, targs);
        for (TaskNote& n : notes_of(*k, impl_->doc->path, kernel, name)) out.push_back(n);
      });
  return out;
}

namespace {

// "1 task", "3 tasks".
std::string count_of(size_t n, const std::string& thing) {
  return std::to_string(n) + " " + thing + (n == 1 ? "" : "s");
}

}  // namespace

std::vector<std::string> Program::prepare_pipelines(bool compile) {
  std::vector<std::string> lines;
  impl_->for_each_pipeline_instantiation(
      [&](const std::string& kernel, const graph::TemplateArgs& targs, const std::string& name) {
        if (compile) {
          Instance& inst = impl_->instance(impl_->kernel_decl(kernel), targs);
          lines.push_back(bounded_message(name + ": compiled, " +
                                          count_of(inst.kernel->abi().tasks.size(), "task")));
          return;
        }
        auto k = impl_->lower_and_optimise(kernel, targs);
        size_t tasks = 0;
        for (const auto& inst : k->body->insts) tasks += inst->op == ir::Op::Offload;
        lines.push_back(bounded_message(name + ": ok, " + count_of(tasks, "task")));
        // How offload ran each task (parallel, reductions, or serial and why).
        for (const TaskNote& note : notes_of(*k, impl_->doc->path, kernel, name))
          lines.push_back(bounded_message(
              "  task " + std::to_string(note.task) +
              (note.place.node >= 0 ? " (node " + std::to_string(note.place.node) + ")" : "") +
              ": " + note.text));
      });
  return lines;
}

std::string Program::Warning::to_string() const {
  std::string where = place.to_string();
  return bounded_message(where.empty() ? message : where + ": " + message);
}

std::vector<Program::Warning> Program::warnings() {
  std::vector<Warning> out;
  std::set<std::string> seen;
  for (const graph::Pipeline& p : impl_->doc->pipelines) {
    for (const auto& [kernel, args] : impl_->pipeline_launches(p.name)) {
      Derivative mode = Derivative::Adjoint;
      if (const graph::KernelDecl* primal = impl_->derived_from(kernel, &mode)) {
        // K.grad: where its gradients stop, once per kernel; K.dual: said for K.
        if (mode != Derivative::Adjoint || !seen.insert(kernel).second) continue;
        Impl::DerivedLaunch derived = impl_->derived_launch(*primal, args, mode);
        for (Warning& w : impl_->gradient_warnings(
                 *primal, impl_->template_args(*primal, derived.args), derived))
          out.push_back(std::move(w));
        continue;
      }
      const graph::KernelDecl& decl = impl_->kernel_decl(kernel);
      graph::TemplateArgs targs = impl_->template_args(decl, args);
      // Instantiations share their nodes: a mistake is said once per kernel.
      if (!seen.insert(kernel).second) continue;
      std::unique_ptr<ir::Kernel> k = graph::lower_kernel(*impl_->doc, decl, targs);
      for (passes::PortingWarning& w : passes::porting_warnings(*k))
        out.push_back({Place{impl_->doc->path, kernel, w.node, ""}, std::move(w.message)});
    }
  }
  // Kernels no pipeline launches (tried with `loom launch`, or launched by an engine) are
  // checked too when they need no template arguments to be compiled.
  for (const graph::KernelDecl& decl : impl_->doc->kernels) {
    if (seen.count(decl.name)) continue;
    bool templated = false;
    for (const graph::KernelParam& p : decl.params)
      templated |= p.kind == graph::ParamKind::Template ||
                   (p.kind == graph::ParamKind::Ndarray && p.type.empty());
    if (templated) continue;
    std::unique_ptr<ir::Kernel> k = graph::lower_kernel(*impl_->doc, decl, {});
    for (passes::PortingWarning& w : passes::porting_warnings(*k))
      out.push_back({Place{impl_->doc->path, decl.name, w.node, ""}, std::move(w.message)});
  }
  return out;
}

std::vector<std::string> Program::pass_names() {
  std::vector<std::string> names = {"lower"};
  std::map<std::string, int> runs;
  for (const std::string& n : passes::pipeline_pass_names()) {
    int k = ++runs[n];
    names.push_back(k == 1 ? n : n + "#" + std::to_string(k));
  }
  return names;
}

const Stats& Program::stats() const { return impl_->stats; }
const ProgramOptions& Program::options() const { return impl_->options; }

}  // namespace loom
