// What the C ABI's opaque handles point at. A module's handles name what they refer to
// (a kernel by name and template arguments, a resource by name) and resolve it in the
// module loaded now, so they stay valid when a hot reload swaps the module underneath.
#pragma once

#include <loom/loom.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runtime/aot/loaded_module.h"
#include "runtime/aot/module_device.h"
#include "runtime/host/argpack.h"
#include "runtime/host/field.h"
#include "runtime/host/launch_frame.h"
#include "runtime/host/ndarray.h"
#include "runtime/host/texture.h"
#include "runtime/vulkan/host_frames.h"

struct LoomRuntime_T {
  LoomArch arch = LOOM_ARCH_CPU;
  uint32_t frames_in_flight = 2;
  std::unique_ptr<loom::Device> device;
  std::unique_ptr<loom::vk::HostFrames> frames;  // made by the first host-frame call
  // Modules loom_module_destroy let go of, kept until the host frames that may use them are
  // done (a reload waits for the queue instead: it must read the old module's state).
  struct Retired {
    std::unique_ptr<loom::aot::LoadedModule> module;
    std::vector<std::unique_ptr<loom::host::Argpack>> packs;  // the host created of its types
    uint64_t frame = 0;                                       // frames begun when it was retired
  };
  std::vector<Retired> retired;
  std::set<LoomModule_T*> modules;
  std::set<LoomArray_T*> arrays;      // ndarrays of the runtime
  std::set<LoomTexture_T*> textures;  // textures of the runtime

  loom::vk::HostFrames& host_frames();
  // Keeps `module` until the work that may use it is done (frees it now when none can).
  void retire(Retired module);
  void free_retired(bool all);
  void release(Retired& module);  // the device copies of its packs; the module frees its own
};

// A module file's (or folder's newest file's) modification time and size: what a reload
// compares. `exists` false for none.
struct FileStamp {
  bool exists = false;
  int64_t mtime_ns = 0;  // file clock ticks, any epoch (may be negative)
  uint64_t size = 0;
  bool operator==(const FileStamp&) const = default;
};

struct LoomKernel_T {
  LoomModule_T* module = nullptr;
  std::string name;
  std::vector<loom::aot::TemplateArgument> template_args;
  int index = -1;  // in the module loaded now
  std::unique_ptr<loom::host::LaunchFrame> frame;
};

struct LoomPipeline_T {
  LoomModule_T* module = nullptr;
  std::string name;
  int index = -1;
};

// A field or ndarray of a module (resolved by name), or an ndarray of the runtime: with a
// host copy, or the host's VkBuffer (`imported`, `own` then wraps this handle as its key).
struct LoomArray_T {
  LoomRuntime_T* runtime = nullptr;
  LoomModule_T* module = nullptr;
  std::string name;
  bool is_field = false;
  bool imported = false;
  std::unique_ptr<loom::host::Ndarray> own;
};

struct LoomTexture_T {
  LoomRuntime_T* runtime = nullptr;
  LoomModule_T* module = nullptr;
  std::string name;
  bool imported = false;
  std::unique_ptr<loom::host::Texture> own;
};

// An argpack instance of a module (resolved by name) or one the host created of a module's
// argpack type (`own`).
struct LoomArgpack_T {
  LoomModule_T* module = nullptr;
  std::string name;  // instance name, or the type name of a created pack
  std::unique_ptr<loom::host::Argpack> own;
};

struct LoomModule_T {
  LoomRuntime_T* runtime = nullptr;
  std::string path;  // "" for modules loaded from memory
  std::string what;  // names the module in errors
  std::unique_ptr<loom::aot::LoadedModule> loaded;
  uint64_t generation = 0;
  FileStamp loaded_stamp, failed_stamp;
  std::map<std::string, std::unique_ptr<LoomKernel_T>> kernels;  // by name + template arguments
  std::map<std::string, std::unique_ptr<LoomPipeline_T>> pipelines;
  std::map<std::string, std::unique_ptr<LoomArray_T>> arrays;
  std::map<std::string, std::unique_ptr<LoomTexture_T>> textures;
  std::map<std::string, std::unique_ptr<LoomArgpack_T>> argpacks;
  std::map<LoomArgpack_T*, std::unique_ptr<LoomArgpack_T>> created_packs;
  std::vector<std::string> names[6];  // loom_module_get_item_name, per LoomModuleItem - 1

  void refresh_names();
};

namespace loom::capi {

// What a handle refers to now (throws ApiError when it is gone or null).
host::Ndarray* ndarray_of(const LoomArray_T& a);  // null for fields
host::Field* field_of(const LoomArray_T& a);      // null for ndarrays
host::Texture& texture_of(const LoomTexture_T& t);
host::Argpack& argpack_of(const LoomArgpack_T& p);
vk::VulkanRuntime& vulkan_of(LoomRuntime_T& r, const char* call);

}  // namespace loom::capi
