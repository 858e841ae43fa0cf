// Pipelines given arguments at launch (loom_pipeline_launch_with): the host's ndarrays,
// textures, packs and values by parameter name, in place of those the module bound, and what
// names a pipeline takes (loom_pipeline_get_param).

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
using loom::capi::PipelineObject;
using loom::capi::resolve;
using loom::capi::RuntimeObject;

namespace {

// Pipeline `p`'s parameter `name`; a name no launch takes is LOOM_ERROR_NOT_FOUND (listing
// those it takes), a template parameter LOOM_ERROR_NOT_SUPPORTED.
aot::PipelineParam param_named(const PipelineObject& p, const std::string& name) {
  const aot::LoadedModule& m = *p.module->loaded;
  try {
    return m.pipeline_param(p.index, name);
  } catch (const ApiError&) {
    throw;
  } catch (const Error& e) {
    bool is_template = false;
    for (const aot::LaunchInfo& l :
         m.metadata().pipelines.at(static_cast<size_t>(p.index)).launches)
      for (const aot::TemplateArgument& t : m.kernel_info(l.kernel).template_args)
        is_template |= t.param == name;
    throw ApiError(is_template ? LOOM_ERROR_NOT_SUPPORTED : LOOM_ERROR_NOT_FOUND, e.place(),
                   e.message());
  }
}

// The host's arguments, checked against every launch that takes each (as loom_launch checks
// its arguments), as the runtime takes them. Nothing runs when one is wrong.
aot::PipelineArguments arguments_of(PipelineObject& p, uint32_t count,
                                    const LoomNamedArgument* args, const char* call) {
  if (count && !args) throw ApiError(LOOM_ERROR_NULL_HANDLE, std::string(call) + ": args is null");
  capi::ModuleObject& m = *p.module;
  const aot::PipelineInfo& info = m.loaded->metadata().pipelines.at(static_cast<size_t>(p.index));
  aot::PipelineArguments out;
  for (uint32_t i = 0; i < count; ++i) {
    std::string arg = std::string(call) + ": args[" + std::to_string(i) + "]";
    if (!args[i].name) throw ApiError(LOOM_ERROR_NULL_HANDLE, arg + ".name is null");
    std::string name = args[i].name;
    if (out.count(name))
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, Place{m.what},
                     arg + ": '" + name + "' is given twice");
    aot::PipelineParam param = param_named(p, name);
    for (const aot::PipelineParam::Use& use : param.uses) {
      int kernel = info.launches.at(static_cast<size_t>(use.launch)).kernel;
      const KernelABI& abi = m.loaded->device_kernel(kernel).abi();
      std::string what = "pipeline '" + p.name + "', launch " + std::to_string(use.launch) +
                         " (kernel '" + abi.name + "'): parameter '" + name + "'";
      Place where{m.what, abi.name, -1, name};
      aot::PipelineArgument given;
      try {
        given = capi::pipeline_argument(m, abi, use.param, args[i].value, where, what);
      } catch (const ApiError& e) {
        // A launch of an instantiation for an open ndarray parameter: say why another
        // element type cannot do.
        std::string note;
        for (const aot::TemplateArgument& t : m.loaded->kernel_info(kernel).template_args)
          if (t.param == name && t.kind == aot::TemplateArgument::Kind::Ndarray)
            note = "; the pipeline launches the instantiation for ndarrays of " +
                   value_type_name(t.elem) + " with " + std::to_string(t.i) +
                   " dimension(s) and cannot pick another at launch";
        if (note.empty()) throw;
        throw ApiError(e.code(), e.place(), e.message() + note);
      }
      if (use.launch == param.uses.front().launch) out.emplace(name, std::move(given));
    }
  }
  return out;
}

}  // namespace

extern "C" {

LoomResult loom_pipeline_launch_with(LoomPipeline pipeline, uint32_t count,
                                     const LoomNamedArgument* args) {
  return guard("loom_pipeline_launch_with", LOOM_ERROR_DEVICE, [&] {
    PipelineObject& p = resolve(pipeline, "loom_pipeline_launch_with: pipeline");
    aot::PipelineArguments given = arguments_of(p, count, args, "loom_pipeline_launch_with");
    capi::launching([&] { p.module->loaded->run_pipeline(p.index, given); });
  });
}

LoomResult loom_pipeline_launch_into_with(LoomPipeline pipeline, VkCommandBuffer command_buffer,
                                          uint32_t count, const LoomNamedArgument* args) {
  return guard("loom_pipeline_launch_into_with", LOOM_ERROR_DEVICE, [&] {
    const char* call = "loom_pipeline_launch_into_with";
    PipelineObject& p = resolve(pipeline, std::string(call) + ": pipeline");
    RuntimeObject& r = *p.module->runtime;
    capi::check_into(r, command_buffer, call);
    aot::PipelineArguments given = arguments_of(p, count, args, call);
    aot::LoadedModule::Launcher launcher = capi::into(r, command_buffer);
    capi::launching([&] { p.module->loaded->run_pipeline(p.index, given, &launcher); });
  });
}

LoomResult loom_pipeline_get_param_count(LoomPipeline pipeline, uint32_t* count) {
  return guard("loom_pipeline_get_param_count", LOOM_ERROR_INVALID_ARGUMENT, [&] {
    PipelineObject& p = resolve(pipeline, "loom_pipeline_get_param_count: pipeline");
    uint32_t& out = capi::need(count, "loom_pipeline_get_param_count: count");
    out = static_cast<uint32_t>(p.module->loaded->pipeline_params(p.index).size());
  });
}

LoomResult loom_pipeline_get_param(LoomPipeline pipeline, uint32_t index,
                                   LoomPipelineParamInfo* out) {
  return guard("loom_pipeline_get_param", LOOM_ERROR_INVALID_ARGUMENT, [&] {
    PipelineObject& p = resolve(pipeline, "loom_pipeline_get_param: pipeline");
    capi::check_out(out, "loom_pipeline_get_param: out");
    const aot::LoadedModule& m = *p.module->loaded;
    std::vector<aot::PipelineParam> params = m.pipeline_params(p.index);
    if (index >= params.size())
      throw ApiError(LOOM_ERROR_NOT_FOUND, Place{p.module->what},
                     "pipeline '" + p.name + "': parameter " + std::to_string(index) +
                         " is past its " + std::to_string(params.size()));
    const aot::PipelineParam& q = params[index];
    const aot::PipelineParam::Use& first = q.uses.front();
    int kernel = m.metadata()
                     .pipelines.at(static_cast<size_t>(p.index))
                     .launches.at(static_cast<size_t>(first.launch))
                     .kernel;
    // The module's strings (not the copy above), valid until the next reload.
    const ParamDesc& d = m.kernel_info(kernel).abi.params.at(static_cast<size_t>(first.param));
    LoomPipelineParamInfo info{};
    info.name = d.name.c_str();
    info.kind = static_cast<LoomParamKind>(static_cast<int>(d.kind) + 1);
    info.dtype = capi::dtype_of(d.type.scalar);
    info.components = static_cast<uint32_t>(d.type.components());
    info.ndim = static_cast<uint32_t>(d.ndim);
    if (d.kind == ParamKind::Argpack)
      info.argpack_type =
          m.metadata().argpack_types.at(static_cast<size_t>(d.argpack_type)).name.c_str();
    info.launch_count = static_cast<uint32_t>(q.uses.size());
    info.first_launch = static_cast<uint32_t>(first.launch);
    // What the launches taking it do to it: the parameter itself, or its pack's members.
    info.access_known = 1;
    for (const aot::PipelineParam::Use& use : q.uses) {
      const KernelABI& abi = m.kernel_info(m.metadata()
                                               .pipelines.at(static_cast<size_t>(p.index))
                                               .launches.at(static_cast<size_t>(use.launch))
                                               .kernel)
                                 .abi;
      if (!abi.resource_access_known && !abi.resources.empty()) info.access_known = 0;
      // Slots of the parameter itself or of its pack's members (not its twins or shadows).
      for (const ResourceAccess& a : abi.resource_access) {
        const ResourceDesc& r = abi.resources.at(static_cast<size_t>(a.slot));
        if (r.param >= 0 && abi.params.at(static_cast<size_t>(r.param)).name == q.name)
          info.access |= a.access;
      }
    }
    if (!info.access_known) info.access = 0;
    capi::write_out(out, info);
  });
}

}  // extern "C"
