// Kernels and pipelines: lookup, what they take, launches on Loom's queue or into the
// host's command buffers.
#include <cstring>

#include "engine_plugin/c_api/arguments.h"
#include "engine_plugin/c_api/c_api_error.h"
#include "engine_plugin/c_api/handles.h"
#include "engine_plugin/c_api/info_structs.h"
#include "engine_plugin/c_api/launching.h"
#include "engine_plugin/c_api/types.h"
#include "runtime/vulkan/vulkan_runtime.h"

using namespace loom;
using loom::capi::ApiError;
using loom::capi::guard;
using loom::capi::KernelObject;
using loom::capi::ModuleObject;
using loom::capi::need;
using loom::capi::PipelineObject;
using loom::capi::resolve;
using loom::capi::RuntimeObject;

namespace {

aot::TemplateArgument template_argument(const LoomTemplateArgument& t, const std::string& where) {
  aot::TemplateArgument a;
  if (!t.name || !*t.name)
    throw ApiError(LOOM_ERROR_NULL_HANDLE, where + ": a template argument has no name");
  a.param = t.name;
  switch (capi::enum_int(t.kind)) {
    case LOOM_TEMPLATE_INT: a.kind = aot::TemplateArgument::Kind::Int, a.i = t.i; break;
    case LOOM_TEMPLATE_FLOAT: a.kind = aot::TemplateArgument::Kind::Float, a.f = t.f; break;
    case LOOM_TEMPLATE_BOOL: a.kind = aot::TemplateArgument::Kind::Bool, a.b = t.i != 0; break;
    case LOOM_TEMPLATE_FIELD:
      if (!t.field)
        throw ApiError(LOOM_ERROR_NULL_HANDLE,
                       where + ": template argument '" + a.param + "' names no field");
      a.kind = aot::TemplateArgument::Kind::Field, a.field = t.field;
      break;
    case LOOM_TEMPLATE_NDARRAY: {
      a.kind = aot::TemplateArgument::Kind::Ndarray;
      Scalar s = capi::scalar_of(t.dtype, where + ": template argument '" + a.param + "'");
      if (t.components < 1 || t.components > 16)
        throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, where + ": template argument '" + a.param +
                                                        "' has " + std::to_string(t.components) +
                                                        " components");
      a.elem = ValueType{s, static_cast<uint8_t>(t.components), 1};
      a.i = t.ndim;
      break;
    }
    default:
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                     where + ": template argument '" + a.param + "' has kind " +
                         std::to_string(capi::enum_int(t.kind)) + ", not a LoomTemplateKind");
  }
  return a;
}

std::string key_of(const std::string& name, const std::vector<aot::TemplateArgument>& args) {
  std::string key = name;
  for (const aot::TemplateArgument& a : args)
    key += '\x1f' + a.param + '=' + std::to_string(static_cast<int>(a.kind)) + ':' + a.field + ':' +
           std::to_string(a.i) + ':' + std::to_string(a.f) + ':' + value_type_name(a.elem) + ':' +
           (a.b ? "1" : "0");
  return key;
}

}  // namespace

extern "C" {

LoomResult loom_module_get_kernel(LoomModule module, const char* name, uint32_t template_arg_count,
                                  const LoomTemplateArgument* template_args, LoomKernel* out) {
  return guard("loom_module_get_kernel", LOOM_ERROR_NOT_FOUND, [&] {
    ModuleObject& m = resolve(module, "loom_module_get_kernel: module");
    need(name, "loom_module_get_kernel: name");
    need(out, "loom_module_get_kernel: out");
    if (template_arg_count && !template_args)
      throw ApiError(LOOM_ERROR_NULL_HANDLE, "loom_module_get_kernel: template_args is null");
    std::vector<aot::TemplateArgument> targs;
    for (uint32_t i = 0; i < template_arg_count; ++i)
      targs.push_back(template_argument(template_args[i], m.what + ": kernel '" + name + "'"));
    std::string key = key_of(name, targs);
    auto it = m.kernels.find(key);
    if (it != m.kernels.end()) {
      *out = it->second->handle.as<LoomKernel>();
      return;
    }
    int index = m.loaded->kernel(name, targs);  // throws naming what the module has
    auto k = std::make_unique<KernelObject>();
    k->module = &m;
    k->name = name;
    k->template_args = std::move(targs);
    k->index = index;
    k->frame = std::make_unique<host::LaunchFrame>(m.loaded->device_kernel(index).abi());
    *out = k->handle.as<LoomKernel>();
    m.kernels[key] = std::move(k);
  });
}

LoomResult loom_module_get_pipeline(LoomModule module, const char* name, LoomPipeline* out) {
  return guard("loom_module_get_pipeline", LOOM_ERROR_NOT_FOUND, [&] {
    ModuleObject& m = resolve(module, "loom_module_get_pipeline: module");
    need(name, "loom_module_get_pipeline: name");
    need(out, "loom_module_get_pipeline: out");
    auto it = m.pipelines.find(name);
    if (it != m.pipelines.end()) {
      *out = it->second->handle.as<LoomPipeline>();
      return;
    }
    int index = m.loaded->find_pipeline(name);
    if (index < 0) {
      std::string have;
      for (const std::string& p : m.names[LOOM_ITEM_PIPELINE - 1])
        have += (have.empty() ? "" : ", ") + p;
      throw ApiError(LOOM_ERROR_NOT_FOUND, Place{m.what},
                     std::string("the module has no pipeline '") + name + "'" +
                         (have.empty() ? " (it has none)" : "; it has " + have));
    }
    auto p = std::make_unique<PipelineObject>();
    p->module = &m;
    p->name = name;
    p->index = index;
    *out = p->handle.as<LoomPipeline>();
    m.pipelines[name] = std::move(p);
  });
}

LoomResult loom_kernel_get_info(LoomKernel kernel, LoomKernelInfo* out) {
  return guard("loom_kernel_get_info", LOOM_ERROR_INVALID_ARGUMENT, [&] {
    KernelObject& k = resolve(kernel, "loom_kernel_get_info: kernel");
    capi::check_out(out, "loom_kernel_get_info: out");
    LoomKernelInfo info{};
    const KernelABI& abi = k.frame->abi();
    info.name = k.module->loaded->kernel_info(k.index).name.c_str();
    // A debug adjoint's shadows are the runtime's own: not parameters the host gives.
    info.param_count =
        static_cast<uint32_t>(aot::launch_param_count(k.module->loaded->kernel_info(k.index)));
    uint32_t components = 0;
    for (ValueType t : abi.returns) components += static_cast<uint32_t>(t.components());
    info.return_count = components;
    capi::write_out(out, info);
  });
}

LoomResult loom_kernel_get_param(LoomKernel kernel, uint32_t index, LoomParamInfo* out) {
  return guard("loom_kernel_get_param", LOOM_ERROR_INVALID_ARGUMENT, [&] {
    KernelObject& k = resolve(kernel, "loom_kernel_get_param: kernel");
    capi::check_out(out, "loom_kernel_get_param: out");
    LoomParamInfo info{};
    const aot::KernelInfo& kinfo = k.module->loaded->kernel_info(k.index);
    const KernelABI& abi = kinfo.abi;
    const size_t count = aot::launch_param_count(kinfo);  // not a debug adjoint's shadows
    if (index >= count)
      throw ApiError(
          LOOM_ERROR_NOT_FOUND, Place{k.module->what, k.name},
          "parameter " + std::to_string(index) + " is past the kernel's " + std::to_string(count));
    const ParamDesc& p = abi.params[index];
    info.name = p.name.c_str();
    info.kind = static_cast<LoomParamKind>(static_cast<int>(p.kind) + 1);
    info.dtype = capi::dtype_of(p.type.scalar);
    info.components = static_cast<uint32_t>(p.type.components());
    info.ndim = static_cast<uint32_t>(p.ndim);
    if (p.kind == ParamKind::Argpack)
      info.argpack_type = k.module->loaded->metadata()
                              .argpack_types.at(static_cast<size_t>(p.argpack_type))
                              .name.c_str();
    capi::write_out(out, info);
  });
}

LoomResult loom_launch(LoomKernel kernel, uint32_t arg_count, const LoomArgument* args) {
  return guard("loom_launch", LOOM_ERROR_DEVICE, [&] {
    KernelObject& k = resolve(kernel, "loom_launch: kernel");
    if (k.module->runtime->engine_owned_queue && !k.frame->abi().returns.empty())
      throw ApiError(LOOM_ERROR_NOT_SUPPORTED, Place{k.module->what, k.name},
                     "the kernel returns values, which need a wait, and with "
                     "LOOM_QUEUE_ENGINE_OWNED Loom never waits for the engine's queue");
    capi::bind_arguments(k, arg_count, args);
    capi::launching([&] { k.module->loaded->launch(k.index, *k.frame); });
  });
}

LoomResult loom_launch_into(LoomKernel kernel, VkCommandBuffer command_buffer, uint32_t arg_count,
                            const LoomArgument* args) {
  return guard("loom_launch_into", LOOM_ERROR_DEVICE, [&] {
    KernelObject& k = resolve(kernel, "loom_launch_into: kernel");
    RuntimeObject& r = *k.module->runtime;
    capi::check_into(r, command_buffer, "loom_launch_into");
    if (!k.frame->abi().returns.empty())
      throw ApiError(LOOM_ERROR_NOT_SUPPORTED, Place{k.module->what, k.name},
                     "the kernel returns values, which need a wait; launch it with loom_launch");
    capi::bind_arguments(k, arg_count, args);
    capi::launching(
        [&] { k.module->loaded->launch(k.index, *k.frame, capi::into(r, command_buffer)); });
  });
}

LoomResult loom_kernel_get_return(LoomKernel kernel, uint32_t index, LoomDataType dtype,
                                  void* out) {
  return guard("loom_kernel_get_return", LOOM_ERROR_INVALID_ARGUMENT, [&] {
    KernelObject& k = resolve(kernel, "loom_kernel_get_return: kernel");
    need(out, "loom_kernel_get_return: out");
    std::vector<Scalar> scalars;
    for (ValueType t : k.frame->abi().returns)
      for (int c = 0; c < t.components(); ++c) scalars.push_back(t.scalar);
    Place where{k.module->what, k.name};
    if (index >= scalars.size())
      throw ApiError(LOOM_ERROR_NOT_FOUND, where,
                     "return component " + std::to_string(index) + " is past the kernel's " +
                         std::to_string(scalars.size()));
    Scalar want = capi::scalar_of(dtype, "loom_kernel_get_return: dtype");
    if (want != scalars[index])
      throw ApiError(LOOM_ERROR_WRONG_DTYPE, where,
                     "return component " + std::to_string(index) + " is " +
                         std::string(scalar_name(scalars[index])) + ", asked for " +
                         std::string(scalar_name(want)));
    if (want == Scalar::Bool) {
      int32_t v = k.frame->returned<bool>(index) ? 1 : 0;
      std::memcpy(out, &v, 4);
      return;
    }
    host::with_scalar_type(want, [&](auto zero) {
      using T = decltype(zero);
      T v = k.frame->returned<T>(index);
      std::memcpy(out, &v, sizeof v);
    });
  });
}

LoomResult loom_kernel_get_return_named(LoomKernel kernel, const char* name, LoomDataType dtype,
                                        uint32_t count, void* out) {
  return guard("loom_kernel_get_return_named", LOOM_ERROR_INVALID_ARGUMENT, [&] {
    KernelObject& k = resolve(kernel, "loom_kernel_get_return_named: kernel");
    need(name, "loom_kernel_get_return_named: name");
    need(out, "loom_kernel_get_return_named: out");
    const std::vector<std::string>& names = k.module->loaded->kernel_info(k.index).return_names;
    const std::vector<ValueType>& returns = k.frame->abi().returns;
    Place where{k.module->what, k.name, -1, name};
    uint32_t first = 0;
    size_t r = 0;
    for (; r < returns.size() && r < names.size() && names[r] != name; ++r)
      first += static_cast<uint32_t>(returns[r].components());
    if (r == returns.size() || r == names.size()) {
      std::string have;
      for (size_t i = 0; i < returns.size() && i < names.size(); ++i)
        have += (have.empty() ? "'" : ", '") + names[i] + "'";
      throw ApiError(LOOM_ERROR_NOT_FOUND, where,
                     std::string("the kernel returns no value '") + name + "'" +
                         (have.empty() ? " (it returns none)" : "; it returns " + have));
    }
    ValueType t = returns[r];
    Scalar want = capi::scalar_of(dtype, "loom_kernel_get_return_named: dtype");
    if (want != t.scalar || count != static_cast<uint32_t>(t.components()))
      throw ApiError(LOOM_ERROR_WRONG_DTYPE, where,
                     std::string("return value '") + name + "' is a " + value_type_name(t) +
                         " of " + std::to_string(t.components()) + " component(s), asked for " +
                         std::to_string(count) + " of " + std::string(scalar_name(want)));
    auto* bytes = static_cast<uint8_t*>(out);
    for (uint32_t c = 0; c < count; ++c) {
      if (want == Scalar::Bool) {
        int32_t v = k.frame->returned<bool>(first + c) ? 1 : 0;
        std::memcpy(bytes + size_t{4} * c, &v, 4);
        continue;
      }
      host::with_scalar_type(want, [&](auto zero) {
        using T = decltype(zero);
        T v = k.frame->returned<T>(first + c);
        std::memcpy(bytes + sizeof v * c, &v, sizeof v);
      });
    }
  });
}

LoomResult loom_pipeline_launch(LoomPipeline pipeline) {
  return guard("loom_pipeline_launch", LOOM_ERROR_DEVICE, [&] {
    PipelineObject& p = resolve(pipeline, "loom_pipeline_launch: pipeline");
    capi::launching([&] { p.module->loaded->run_pipeline(p.index); });
  });
}

LoomResult loom_pipeline_launch_into(LoomPipeline pipeline, VkCommandBuffer command_buffer) {
  return guard("loom_pipeline_launch_into", LOOM_ERROR_DEVICE, [&] {
    PipelineObject& p = resolve(pipeline, "loom_pipeline_launch_into: pipeline");
    RuntimeObject& r = *p.module->runtime;
    capi::check_into(r, command_buffer, "loom_pipeline_launch_into");
    aot::LoadedModule::Launcher launcher = capi::into(r, command_buffer);
    capi::launching([&] { p.module->loaded->run_pipeline(p.index, &launcher); });
  });
}

}  // extern "C"
