// AotModule: compiles a program's instantiations for a module's target and gathers what
// they run on into runtime/aot's Module (metadata + blobs).
#include "engine_plugin/include/loom/aot_module.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>

#include "compiler/codegen_llvm/cpu_codegen.h"
#include "compiler/codegen_spirv/spirv_codegen.h"
#include "compiler/graph/document.h"
#include "compiler/passes/access_rule.h"
#include "engine_plugin/api/aot_instance.h"
#include "engine_plugin/api/argument_values.h"
#include "runtime/aot/module.h"
#include "runtime/aot/module_files.h"
#include "runtime/common/bounded_message.h"
#include "runtime/common/error.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/cpu/host_cpu.h"

namespace loom {

// aot_module.h spells the default feature set out, as it includes no runtime header.
static_assert(kAllVulkanFeatures == kAllSpirvRequirements);
static_assert(kVulkanSubgroupArithmetic == kNeedSubgroupArithmetic);

namespace {

// Blob names are file names in the folder form: letters, digits, '_', '-', '.'.
std::string file_safe(const std::string& name) {
  std::string s;
  for (char c : name)
    s += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ? c : '_';
  return s;
}

std::string blob_stem(size_t index, const std::string& kernel) {
  return std::to_string(index) + "." + file_safe(kernel);
}

bool same_template(const std::vector<aot::TemplateArgument>& a,
                   const std::vector<aot::TemplateArgument>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto &x = a[i], &y = b[i];
    // Floats by their bits: a NaN argument matches itself, 0.0 and -0.0 stay apart.
    if (x.param != y.param || x.kind != y.kind || x.field != y.field || x.elem != y.elem ||
        x.i != y.i || x.b != y.b || std::bit_cast<uint64_t>(x.f) != std::bit_cast<uint64_t>(y.f))
      return false;
  }
  return true;
}

// The exact components of `a` as `type`, checked as a launch checks them: a scalar as Int,
// Float or Bool, a vector or matrix as a list.
aot::Value normalised_value(const Arg& a, ValueType type, const Place& where,
                            const std::string& what) {
  std::vector<uint8_t> bytes = argument_bytes(a, type, where, what);
  auto component = [&](int c, bool* integral, int64_t* i, bool* above) -> double {
    const uint8_t* p =
        bytes.data() + static_cast<size_t>(c) * static_cast<size_t>(size_of(type.scalar));
    *integral = !is_float(type.scalar);
    *above = false;
    auto load = [&](auto zero) {
      decltype(zero) v;
      std::memcpy(&v, p, sizeof v);
      return v;
    };
    switch (type.scalar) {
      case Scalar::Bool: *i = p[0]; return p[0];
      case Scalar::I8:
        // NOLINTNEXTLINE(bugprone-signed-char-misuse): an I8 value, sign-extended on purpose
        *i = load(int8_t{});
        return static_cast<double>(*i);
      case Scalar::I16: *i = load(int16_t{}); return static_cast<double>(*i);
      case Scalar::I32: *i = load(int32_t{}); return static_cast<double>(*i);
      case Scalar::I64: *i = load(int64_t{}); return static_cast<double>(*i);
      case Scalar::U8: *i = load(uint8_t{}); return static_cast<double>(*i);
      case Scalar::U16: *i = load(uint16_t{}); return static_cast<double>(*i);
      case Scalar::U32: *i = load(uint32_t{}); return static_cast<double>(*i);
      case Scalar::U64: {
        uint64_t u = load(uint64_t{});
        *i = static_cast<int64_t>(u);
        *above = u > static_cast<uint64_t>(INT64_MAX);
        return static_cast<double>(u);
      }
      case Scalar::F32: return load(float{});
      case Scalar::F64: return load(double{});
      case Scalar::Void: break;
    }
    return 0;
  };
  aot::Value v;
  bool integral = false, above = false;
  int64_t i = 0;
  if (type.components() == 1) {
    double d = component(0, &integral, &i, &above);
    if (type.scalar == Scalar::Bool) {
      v.kind = aot::Value::Kind::Bool;
      v.b = i != 0;
    } else if (integral) {
      v.kind = aot::Value::Kind::Int;
      v.i = i;
      v.above_int64 = above;
    } else {
      v.kind = aot::Value::Kind::Float;
      v.f = d;
    }
    return v;
  }
  v.kind = aot::Value::Kind::List;
  for (int c = 0; c < type.components(); ++c) v.list.push_back(component(c, &integral, &i, &above));
  return v;
}

// "x, t, x.grad": a kernel's parameters, which for a derived kernel say its twins.
std::string param_names(const KernelABI& abi) {
  std::string names;
  for (const ParamDesc& p : abi.params) names += (names.empty() ? "" : ", ") + p.name;
  return names;
}

// Whether a float ndarray parameter of `primal`, or an argpack parameter, has no example
// argument, so its twins were chosen by default rather than by the caller.
bool defaulted_twins(const graph::Document& doc, const std::string& primal, const Args& args) {
  const graph::KernelDecl* decl = doc.kernel(primal);
  if (!decl) return false;
  for (const graph::KernelParam& p : decl->params) {
    auto type = parse_value_type(p.type);
    bool twinned = p.kind == graph::ParamKind::Argpack ||
                   (p.kind == graph::ParamKind::Ndarray && type && is_float(type->scalar));
    if (!twinned) continue;
    if (std::none_of(args.begin(), args.end(), [&](const auto& a) { return a.first == p.name; }))
      return true;
  }
  return false;
}

// The twins of a derived instantiation: its parameters after the primal's own, each named
// after the parameter it is the twin of, or after an argpack parameter and the path of the
// ndarray member it is the twin of (passes/twin_slots.h appends them so).
aot::Derivation derivation_of(const AotInstance& inst, const std::vector<ArgpackType>& types) {
  aot::Derivation d;
  d.mode = inst.derived;
  d.of = inst.primal;
  const std::string suffix = aot::derivation_suffix(inst.derived);
  const std::vector<ParamDesc>& params = inst.ir->abi.params;
  const std::string written = passes::access_shadow_name("");
  for (size_t p = 0; p < params.size(); ++p) {
    const std::string& name = params[p].name;
    // A debug adjoint's shadows come last, after the twins (passes/pipeline.cpp).
    bool shadow = inst.derived == aot::Derivation::Mode::Adjoint && name.ends_with(written);
    if (!shadow && !name.ends_with(suffix)) continue;
    const std::string of = name.substr(0, name.size() - (shadow ? written : suffix).size());
    auto& list = shadow ? d.shadows : d.twins;
    for (size_t q = 0; q < p; ++q) {
      if (params[q].name == of) {
        list.push_back({static_cast<int>(p), static_cast<int>(q), ""});
        break;
      }
      const std::string prefix = params[q].name + ".";
      if (params[q].kind != ParamKind::Argpack || !of.starts_with(prefix)) continue;
      std::string member = of.substr(prefix.size());
      if (find_member(types, params[q].argpack_type, member, nullptr)) {
        list.push_back({static_cast<int>(p), static_cast<int>(q), member});
        break;
      }
    }
  }
  return d;
}

aot::Value resource_value(const std::string& name) {
  aot::Value v;
  v.kind = aot::Value::Kind::Resource;
  v.resource = name;
  return v;
}

// The module's CPU levels, fewest features first (ties in the order asked for), and per
// level the CPU codegen takes ("" for "host": this machine's CPU and all its features).
struct CpuLevels {
  std::vector<aot::CpuLevel> levels;
  std::vector<std::string> codegen_cpu;
};

CpuLevels resolve_cpu_levels(std::vector<std::string> names) {
  if (names.empty()) {
    std::string portable = codegen::default_module_cpu();
    names.push_back(portable.empty() ? "host" : portable);
  }
  std::vector<std::pair<aot::CpuLevel, std::string>> found;
  for (const std::string& name : names) {
    if (name.empty()) throw Error("AOT module: an empty CPU level name (use \"host\")");
    codegen::CpuCodegenOptions co;
    co.cpu = name == "host" ? "" : name;
    // Recorded: the features the runtime can check on the machine that loads the module.
    codegen::CpuTarget target = codegen::describe_cpu_target(co, cpu::known_cpu_features());
    for (const auto& [level, cpu] : found)
      if (level.cpu == target.cpu)
        throw Error("AOT module: CPU level '" + target.cpu + "' is asked for twice" +
                    (name == "host" ? " (\"host\" is " + target.cpu + ")" : std::string()));
    found.push_back({{target.cpu, target.features}, co.cpu});
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.first.features.size() < b.first.features.size();
  });
  CpuLevels out;
  for (auto& [level, cpu] : found) {
    out.levels.push_back(std::move(level));
    out.codegen_cpu.push_back(std::move(cpu));
  }
  return out;
}

}  // namespace

struct AotModule::Impl {
  Program& program;
  AotOptions options;
  aot::Module module;
  std::set<std::string> resources;       // names already in the module
  std::vector<std::string> codegen_cpu;  // per CPU level: what codegen compiles for

  const graph::Document& doc() const { return program.document(); }
};

AotModule::AotModule(Program& program, AotOptions options)
    : impl_(std::make_unique<Impl>(Impl{program, std::move(options), {}, {}, {}})) {
  if (impl_->options.arch != Backend::Cpu && impl_->options.arch != Backend::Vulkan)
    throw Error("AOT modules are compiled for the CPU or for Vulkan, not for '" +
                std::string(backend_name(impl_->options.arch)) + "'");
  if (impl_->options.workgroup_size < 1 || impl_->options.workgroup_size > 1024)
    throw Error("AOT module: workgroup size " + std::to_string(impl_->options.workgroup_size) +
                " is not in [1, 1024]");
  aot::ModuleMetadata& m = impl_->module.meta;
  m.name = program.document().name;
  m.arch = impl_->options.arch == Backend::Vulkan ? aot::Arch::Vulkan : aot::Arch::Cpu;
  m.producer = "loom " LOOM_VERSION_STRING;
  m.argpack_types = program.document().argpack_types;
  if (m.arch == aot::Arch::Cpu) {
    CpuLevels levels = resolve_cpu_levels(impl_->options.cpu_levels);
    m.needs.cpu_levels = std::move(levels.levels);
    impl_->codegen_cpu = std::move(levels.codegen_cpu);
  }
}

AotModule::~AotModule() = default;

void AotModule::add_resource(const std::string& name) {
  if (impl_->resources.count(name)) return;
  const graph::Document& doc = impl_->doc();
  aot::ModuleMetadata& m = impl_->module.meta;
  Place where{doc.path, "", -1, name};
  if (const FieldDesc* f = doc.field(name)) {
    impl_->resources.insert(name);
    m.fields.push_back(*f);
    return;
  }
  if (const graph::NdarrayDecl* n = doc.ndarray(name)) {
    impl_->resources.insert(name);
    m.ndarrays.push_back({n->name, n->elem, n->shape});
    return;
  }
  // NAME.grad / NAME.dual: the adjoint or tangent companion of a float field or ndarray that
  // needs_grad / needs_dual, a resource of its own in the module (docs/autodiff.md).
  for (aot::Derivation::Mode mode :
       {aot::Derivation::Mode::Adjoint, aot::Derivation::Mode::Tangent}) {
    std::string suffix = aot::derivation_suffix(mode);
    if (name.size() <= suffix.size() || !name.ends_with(suffix)) continue;
    std::string base = name.substr(0, name.size() - suffix.size());
    bool adjoint = mode == aot::Derivation::Mode::Adjoint;
    if (const FieldDesc* f = doc.field(base); f && (adjoint ? f->needs_grad : f->needs_dual)) {
      impl_->resources.insert(name);
      FieldDesc companion = *f;
      companion.name = name;
      companion.needs_grad = companion.needs_dual = false;
      m.fields.push_back(std::move(companion));
      return;
    }
    if (const graph::NdarrayDecl* n = doc.ndarray(base);
        n && (adjoint ? n->needs_grad : n->needs_dual)) {
      impl_->resources.insert(name);
      m.ndarrays.push_back({name, n->elem, n->shape});
      return;
    }
  }
  // NAME.written: the shadow a debug adjoint checks the access rule across loops with
  // (passes/access_rule.h): i32 elements of the field's shape and components, zeroed by each
  // launch of the adjoint before it marks them.
  const std::string written = passes::access_shadow_name("");
  if (const FieldDesc* f = name.ends_with(written) ? doc.field_or_derivative(name.substr(
                                                         0, name.size() - written.size()))
                                                   : nullptr) {
    impl_->resources.insert(name);
    FieldDesc shadow = *f;
    shadow.name = name;
    shadow.elem.scalar = Scalar::I32;
    shadow.needs_grad = shadow.needs_dual = false;
    m.fields.push_back(std::move(shadow));
    return;
  }
  if (const graph::TextureDecl* t = doc.texture(name)) {
    impl_->resources.insert(name);
    m.textures.push_back({t->name, t->format, t->size});
    return;
  }
  if (const graph::ArgpackDecl* a = doc.argpack(name)) {
    impl_->resources.insert(name);
    aot::ArgpackInfo info;
    info.name = a->name;
    info.type = doc.argpack_type(a->type);
    if (info.type < 0)
      throw Error(where, "argpack '" + name + "' has unknown type '" + a->type + "'");
    for (const auto& [path, literal] : a->values) {
      Place at{doc.path, "", -1, name + "." + path};
      uint32_t offset = 0;
      const ArgpackMember* member = find_member(doc.argpack_types, info.type, path, &offset);
      if (!member) throw Error(at, "argpack '" + name + "' has no member '" + path + "'");
      Arg arg = literal_to_arg(literal, at);
      if (member->kind == MemberKind::Value) {
        info.values.emplace_back(
            path, normalised_value(arg, member->type, at, "member '" + name + "." + path + "'"));
        continue;
      }
      if (arg.kind() != Arg::Kind::Resource)
        throw Error(at, "member '" + name + "." + path + "' takes a resource name");
      add_resource(arg.resource());
      info.values.emplace_back(path, resource_value(arg.resource()));
    }
    m.argpacks.push_back(std::move(info));
    return;
  }
  throw Error(where, "the document has no field, ndarray, texture or argpack '" + name + "'");
}

void AotModule::add_field(const std::string& name) {
  if (!impl_->doc().field(name))
    throw Error(Place{impl_->doc().path, "", -1, name}, "the document has no field '" + name + "'");
  add_resource(name);
}

int AotModule::add_instance(const std::string& kernel, const Args& args, const std::string& name,
                            Args* bound) {
  Program& program = impl_->program;
  aot::ModuleMetadata& m = impl_->module.meta;
  bool vulkan = m.arch == aot::Arch::Vulkan;
  AotInstance inst;
  program.lower_for_module(kernel, args, vulkan ? 32 : 64, inst);
  std::string module_name = name.empty() ? kernel : name;
  bool derived = inst.derived != aot::Derivation::Mode::None;
  if (bound) *bound = derived ? inst.args : args;
  if (derived) {
    // The module holds K beside K.grad, for the same template arguments: K's own arguments.
    std::string suffix = aot::derivation_suffix(inst.derived);
    if (module_name != kernel)
      throw Error(
          Place{impl_->doc().path, kernel},
          "AOT module: '" + kernel + "' is found by its own name, not '" + module_name + "'");
    Args primal_args;
    for (const auto& [param, value] : args)
      if (!param.ends_with(suffix)) primal_args.emplace_back(param, value);
    add_instance(inst.primal, primal_args, inst.primal);
  }
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    const aot::KernelInfo& have = m.kernels[k];
    if (have.name != module_name || !same_template(have.template_args, inst.template_args))
      continue;
    // One derived kernel per instantiation: its twins are in its code. Twins asked for by
    // default (no example argument) take the ones the module holds.
    if (derived && param_names(have.abi) != param_names(inst.ir->abi) &&
        !defaulted_twins(impl_->doc(), inst.primal, args))
      throw Error(Place{impl_->doc().path, kernel},
                  "AOT module: '" + kernel + "' is launched with the twins (" +
                      param_names(inst.ir->abi) + ") and with (" + param_names(have.abi) +
                      "); a module holds one per instantiation (bind the same ndarrays, or give "
                      "the twin arguments)");
    return static_cast<int>(k);
  }

  size_t index = m.kernels.size();
  aot::KernelInfo info;
  info.name = module_name;
  info.template_args = inst.template_args;
  info.return_names = inst.return_names;
  if (derived) info.derived = derivation_of(inst, m.argpack_types);
  std::string stem = blob_stem(index, module_name);
  if (!vulkan) {
    for (size_t level = 0; level < m.needs.cpu_levels.size(); ++level) {
      codegen::CpuCodegenOptions co;
      co.fast_math = program.options().fast_math;
      co.cpu = impl_->codegen_cpu[level];
      codegen::CompiledCpuKernel c = codegen::compile_kernel_to_object(*inst.ir, co);
      if (level == 0 && program.options().warn)  // the same for every level
        for (const std::string& note : c.notes)
          program.options().warn(bounded_message("note: kernel '" + module_name + "', " + note));
      // Levels share one ABI: the tasks come from the IR, not from the CPU.
      if (level > 0 && c.abi.tasks.size() != info.abi.tasks.size())
        throw InternalError("AOT module: kernel '" + module_name + "' has " +
                            std::to_string(c.abi.tasks.size()) + " tasks for CPU '" +
                            m.needs.cpu_levels[level].cpu + "' and " +
                            std::to_string(info.abi.tasks.size()) + " for the first level");
      info.abi = std::move(c.abi);
      std::string blob = stem + "." + file_safe(m.needs.cpu_levels[level].cpu) + ".o";
      info.objects.push_back(blob);
      impl_->module.blobs[blob] = std::move(c.object);
    }
  } else {
    codegen::SpirvTarget target;
    target.features = impl_->options.vulkan_features;
    target.max_push_constant_bytes = 128;  // every Vulkan device has at least this much
    target.workgroup_size = static_cast<uint32_t>(impl_->options.workgroup_size);
    target.device_name = "the module's target";
    target.spirv_version = std::min(kSpirv1_5, max_spirv_version(impl_->options.vulkan_version));
    if (target.spirv_version == 0)
      throw Error("AOT module: Vulkan " + vulkan_version_text(impl_->options.vulkan_version) +
                  " is no Vulkan version Loom targets (1.0 or later)");
    codegen::CompiledSpirvKernel c = codegen::compile_kernel_to_spirv(*inst.ir, target);
    info.abi = std::move(c.abi);
    info.spirv = std::move(c.kernel);
    for (size_t t = 0; t < info.spirv.tasks.size(); ++t) {
      std::vector<uint32_t>& words = info.spirv.tasks[t].spirv;
      std::string blob = stem + ".task" + std::to_string(t) + ".spv";
      std::vector<uint8_t>& bytes = impl_->module.blobs[blob];
      bytes.resize(words.size() * 4);
      std::memcpy(bytes.data(), words.data(), bytes.size());
      words.clear();
      info.spirv_blobs.push_back(blob);
      m.needs.workgroup_size = std::max(m.needs.workgroup_size, info.spirv.tasks[t].workgroup_size);
    }
    m.needs.vulkan_features |= info.spirv.requirements;
    if (info.spirv.args_in_push_constants)
      m.needs.push_constant_bytes =
          std::max(m.needs.push_constant_bytes, args_layout(info.abi).size);
  }
  for (const ResourceDesc& r : info.abi.resources)
    if (r.kind == ResourceKind::Field) add_resource(r.field);
  m.kernels.push_back(std::move(info));
  return static_cast<int>(index);
}

void AotModule::add_kernel(const std::string& kernel, const Args& example_args,
                           const std::string& name) {
  add_instance(kernel, example_args, name);
}

AotModule::KernelTemplate AotModule::add_kernel_template(const std::string& kernel) {
  if (!impl_->doc().kernel(kernel))
    throw Error(Place{impl_->doc().path, kernel}, "the document has no kernel '" + kernel + "'");
  return KernelTemplate(*this, kernel);
}

AotModule::KernelTemplate& AotModule::KernelTemplate::instantiate(const Args& template_args) {
  module_.add_instance(kernel_, template_args, kernel_);
  return *this;
}

void AotModule::add_pipeline(const std::string& name) {
  const graph::Document& doc = impl_->doc();
  const graph::Pipeline* p = doc.pipeline(name);
  if (!p) throw Error(Place{doc.path}, "the document has no pipeline '" + name + "'");
  aot::ModuleMetadata& m = impl_->module.meta;
  for (const aot::PipelineInfo& existing : m.pipelines)
    if (existing.name == name) return;
  aot::PipelineInfo info;
  info.name = name;
  for (const graph::Launch& l : p->launches) {
    Args args;
    for (const auto& [param, literal] : l.args)
      args.emplace_back(param, literal_to_arg(literal, Place{doc.path, l.kernel, -1, param}));
    aot::LaunchInfo launch;
    Args bound;  // K.grad, K.dual: with every twin bound
    launch.kernel = add_instance(l.kernel, args, l.kernel, &bound);
    args = std::move(bound);
    const aot::KernelInfo& kernel = m.kernels[static_cast<size_t>(launch.kernel)];
    const KernelABI& abi = kernel.abi;
    // Not a debug adjoint's shadows: the module binds those at each launch.
    for (size_t i = 0; i < aot::launch_param_count(kernel); ++i) {
      const ParamDesc& d = abi.params[i];
      Place where{doc.path, l.kernel, -1, d.name};
      const Arg* a = nullptr;
      for (const auto& [param, value] : args)
        if (param == d.name) a = &value;
      if (!a)
        throw Error(where,
                    "pipeline '" + name + "': missing argument for parameter '" + d.name + "'");
      if (d.kind == ParamKind::Value) {
        launch.args.emplace_back(
            d.name, normalised_value(*a, d.type, where,
                                     "pipeline '" + name + "': parameter '" + d.name + "'"));
        continue;
      }
      if (a->kind() != Arg::Kind::Resource)
        throw Error(where, "pipeline '" + name + "': parameter '" + d.name +
                               "' takes a resource name, not " + describe_arg(*a));
      add_resource(a->resource());
      launch.args.emplace_back(d.name, resource_value(a->resource()));
    }
    info.launches.push_back(std::move(launch));
  }
  m.pipelines.push_back(std::move(info));
}

void AotModule::add_document() {
  const graph::Document& doc = impl_->doc();
  for (const FieldDesc& f : doc.fields) {
    add_resource(f.name);
    if (f.needs_grad) add_resource(f.name + aot::derivation_suffix(aot::Derivation::Mode::Adjoint));
    if (f.needs_dual) add_resource(f.name + aot::derivation_suffix(aot::Derivation::Mode::Tangent));
  }
  for (const graph::NdarrayDecl& n : doc.ndarrays) {
    add_resource(n.name);
    if (n.needs_grad) add_resource(n.name + aot::derivation_suffix(aot::Derivation::Mode::Adjoint));
    if (n.needs_dual) add_resource(n.name + aot::derivation_suffix(aot::Derivation::Mode::Tangent));
  }
  for (const graph::TextureDecl& t : doc.textures) add_resource(t.name);
  for (const graph::ArgpackDecl& a : doc.argpacks) add_resource(a.name);
  for (const graph::Pipeline& p : doc.pipelines) add_pipeline(p.name);
}

aot::Module AotModule::module() const {
  aot::Module m = impl_->module;
  aot::finalize_module(m);
  return m;
}

std::string AotModule::save(const std::string& folder, const std::string& name) const {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) throw Error(Place{folder}, "cannot create the folder: " + ec.message());
  aot::Module m = module();
  m.meta.name = name;
  std::string path = (std::filesystem::path(folder) / (name + aot::kModuleExtension)).string();
  aot::save_module_archive(m, path);
  return path;
}

void AotModule::save_archive(const std::string& path) const {
  aot::save_module_archive(module(), path);
}
void AotModule::save_folder(const std::string& dir) const {
  aot::save_module_folder(module(), dir);
}

}  // namespace loom
