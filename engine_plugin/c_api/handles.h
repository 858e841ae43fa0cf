// What the C ABI's opaque handles name. A handle is an entry of the handle table
// (handle_table.h), never a pointer to one of these: each object holds its HandleSlot, and
// every entry point resolves the host's handles through resolve(). A module's handles name
// what they refer to (a kernel by name and template arguments, a resource by name) and
// resolve it in the module loaded now, so they stay valid when a hot reload swaps the
// module underneath.
#pragma once

#include <loom/loom.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine_plugin/c_api/call_scope.h"
#include "engine_plugin/c_api/handle_table.h"
#include "runtime/aot/loaded_module.h"
#include "runtime/aot/module_device.h"
#include "runtime/common/file_version.h"
#include "runtime/host/argpack.h"
#include "runtime/host/field.h"
#include "runtime/host/launch_frame.h"
#include "runtime/host/ndarray.h"
#include "runtime/host/texture.h"
#include "runtime/vulkan/host_frames.h"

namespace loom::capi {

struct ModuleObject;
struct ArrayObject;
struct TextureObject;
struct ArgpackObject;
struct ReadbackObject;

struct RuntimeObject {
  // The call inside the runtime now, if any (call_scope.h). Declared before `handle`: it lives
  // while the runtime is in the handle table, so a call that finds the runtime being
  // destroyed there is refused by it.
  RuntimeOwner owner;
  HandleSlot handle{HandleKind::Runtime, this};
  LoomArch arch = LOOM_ARCH_CPU;
  uint32_t frames_in_flight = 2;
  std::unique_ptr<loom::Device> device;
  std::unique_ptr<loom::vk::HostFrames> frames;  // made by the first host-frame call
  bool engine_owned_queue = false;               // LOOM_QUEUE_ENGINE_OWNED: Loom never submits
  std::function<void(const std::string&)> warn;  // the host's log callback, or stderr
  // Modules loom_module_destroy let go of, kept until the host frames that may use them are
  // done (a reload waits for the queue instead: it must read the old module's state).
  struct Retired {
    std::unique_ptr<loom::aot::LoadedModule> module;
    std::vector<std::unique_ptr<loom::host::Argpack>> packs;  // the host created of its types
    uint64_t frame = 0;                                       // frames begun when it was retired
    uint64_t work = 0;  // engine-owned queue: the stream value recorded when it was retired
  };
  std::vector<Retired> retired;
  std::set<ModuleObject*> modules;                                    // owned by the host's handle
  std::map<ArrayObject*, std::unique_ptr<ArrayObject>> arrays;        // ndarrays of the runtime
  std::map<TextureObject*, std::unique_ptr<TextureObject>> textures;  // textures of the runtime
  std::map<ReadbackObject*, std::unique_ptr<ReadbackObject>> readbacks;  // recorded reads

  loom::vk::HostFrames& host_frames();
  // Keeps `module` until the work that may use it is done (frees it now when none can).
  void retire(Retired module);
  void free_retired(bool all);
  void release(Retired& module);  // the device copies of its packs; the module frees its own
};

struct KernelObject {
  HandleSlot handle{HandleKind::Kernel, this};
  ModuleObject* module = nullptr;
  std::string name;
  std::vector<loom::aot::TemplateArgument> template_args;
  int index = -1;  // in the module loaded now
  std::unique_ptr<loom::host::LaunchFrame> frame;
};

struct PipelineObject {
  HandleSlot handle{HandleKind::Pipeline, this};
  ModuleObject* module = nullptr;
  std::string name;
  int index = -1;
};

// A field or ndarray of a module (resolved by name), or an ndarray of the runtime: with a
// host copy, or the host's VkBuffer (`imported`, `own` then wraps this object as its key).
struct ArrayObject {
  HandleSlot handle{HandleKind::Array, this};
  RuntimeObject* runtime = nullptr;
  ModuleObject* module = nullptr;
  std::string name;
  bool is_field = false;
  bool imported = false;
  std::unique_ptr<loom::host::Ndarray> own;
};

struct TextureObject {
  HandleSlot handle{HandleKind::Texture, this};
  RuntimeObject* runtime = nullptr;
  ModuleObject* module = nullptr;
  std::string name;
  bool imported = false;
  std::unique_ptr<loom::host::Texture> own;
};

// What a pack member set through the C ABI refers to: an ndarray or a texture (the pack's
// bytes hold its address), or a nested pack bound by reference. Destroying a referred
// object is refused while the reference stands (LOOM_ERROR_IN_USE).
struct MemberRef {
  HandleKind kind = HandleKind::Array;  // Array, Texture or Argpack
  void* object = nullptr;               // ArrayObject, TextureObject or ArgpackObject
};

// An argpack instance of a module (resolved by name) or one the host created of a module's
// argpack type (`own`).
struct ArgpackObject {
  HandleSlot handle{HandleKind::Argpack, this};
  ModuleObject* module = nullptr;
  std::string name;  // instance name, or the type name of a created pack
  std::unique_ptr<loom::host::Argpack> own;
  // By member path in this pack; members written through a bound nested pack are recorded
  // on that pack. Struct members copied from a pack inherit its references.
  std::map<std::string, MemberRef> refs;
  // Member paths the host wrote through loom_argpack_set: what a reload that cannot carry
  // them says it reset (loom_module_get_reload_reset).
  std::set<std::string> host_set;
};

// A read recorded into a host command buffer (vk::HostFrames::read_into). `done`: called
// by loom_runtime_begin_frame once it landed; `host_owned` false: freed after that call.
struct ReadbackObject {
  HandleSlot handle{HandleKind::Readback, this};
  RuntimeObject* runtime = nullptr;
  uint64_t id = 0;   // in the runtime's HostFrames
  std::string what;  // "ndarray 'x'"
  LoomReadbackFn done = nullptr;
  void* user = nullptr;
  bool host_owned = true;
  bool called = false;
};

struct ModuleObject {
  HandleSlot handle{HandleKind::Module, this};
  RuntimeObject* runtime = nullptr;
  std::string path;  // "" for modules loaded from memory
  std::string what;  // names the module in errors
  std::unique_ptr<loom::aot::LoadedModule> loaded;
  uint64_t generation = 0;
  // What was read of `path` for the module running and for the last reload that failed.
  FileVersion loaded_version, failed_version;
  std::map<std::string, std::unique_ptr<KernelObject>> kernels;  // by name + template arguments
  std::map<std::string, std::unique_ptr<PipelineObject>> pipelines;
  std::map<std::string, std::unique_ptr<ArrayObject>> arrays;
  std::map<std::string, std::unique_ptr<TextureObject>> textures;
  std::map<std::string, std::unique_ptr<ArgpackObject>> argpacks;
  std::map<ArgpackObject*, std::unique_ptr<ArgpackObject>> created_packs;
  std::vector<std::string> names[6];  // loom_module_get_item_name, per LoomModuleItem - 1
  // "pack.member" per host-set member the last reload reset (loom_module_get_reload_reset).
  std::vector<std::string> reload_resets;

  void refresh_names();
};

// The object behind each public handle type.
template <typename H>
struct HandleTraits;
template <>
struct HandleTraits<LoomRuntime> {
  using Object = RuntimeObject;
  static constexpr HandleKind kind = HandleKind::Runtime;
};
template <>
struct HandleTraits<LoomModule> {
  using Object = ModuleObject;
  static constexpr HandleKind kind = HandleKind::Module;
};
template <>
struct HandleTraits<LoomKernel> {
  using Object = KernelObject;
  static constexpr HandleKind kind = HandleKind::Kernel;
};
template <>
struct HandleTraits<LoomPipeline> {
  using Object = PipelineObject;
  static constexpr HandleKind kind = HandleKind::Pipeline;
};
template <>
struct HandleTraits<LoomArray> {
  using Object = ArrayObject;
  static constexpr HandleKind kind = HandleKind::Array;
};
template <>
struct HandleTraits<LoomTexture> {
  using Object = TextureObject;
  static constexpr HandleKind kind = HandleKind::Texture;
};
template <>
struct HandleTraits<LoomArgpack> {
  using Object = ArgpackObject;
  static constexpr HandleKind kind = HandleKind::Argpack;
};
template <>
struct HandleTraits<LoomReadback> {
  using Object = ReadbackObject;
  static constexpr HandleKind kind = HandleKind::Readback;
};

// The runtime an object belongs to: fixed when the object is made, so it may be read under
// the handle table's lock while another thread's call is inside that runtime.
inline RuntimeObject& runtime_of(RuntimeObject& r) { return r; }
inline RuntimeObject& runtime_of(const ModuleObject& m) { return *m.runtime; }
inline RuntimeObject& runtime_of(const KernelObject& k) { return *k.module->runtime; }
inline RuntimeObject& runtime_of(const PipelineObject& p) { return *p.module->runtime; }
inline RuntimeObject& runtime_of(const ArrayObject& a) { return *a.runtime; }
inline RuntimeObject& runtime_of(const TextureObject& t) { return *t.runtime; }
inline RuntimeObject& runtime_of(const ArgpackObject& p) { return *p.module->runtime; }
inline RuntimeObject& runtime_of(const ReadbackObject& rb) { return *rb.runtime; }

// The object a host handle names, or null for a null handle (destroy calls: a no-op).
// Throws LOOM_ERROR_INVALID_HANDLE naming `what` ("loom_launch: kernel") otherwise. The
// call enters the object's runtime (CallScope::enter: LOOM_ERROR_RUNTIME_BUSY while another
// call is inside it) in the same step, under the table's lock, so an object another thread
// is destroying is either gone from the table or in a runtime that call is inside.
template <typename H>
typename HandleTraits<H>::Object* resolve_or_null(H handle, const std::string& what) {
  using Object = typename HandleTraits<H>::Object;
  if (!handle) return nullptr;
  auto value = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
  return static_cast<Object*>(
      HandleTable::instance().find(value, HandleTraits<H>::kind, what, [&](void* object) {
        CallScope::enter(runtime_of(*static_cast<Object*>(object)).owner, what);
      }));
}
// The same; a null handle is LOOM_ERROR_NULL_HANDLE.
template <typename H>
typename HandleTraits<H>::Object& resolve(H handle, const std::string& what) {
  if (!handle) throw ApiError(LOOM_ERROR_NULL_HANDLE, what + " is null");
  return *resolve_or_null(handle, what);
}

// What a handle refers to now (throws ApiError when it is gone).
host::Ndarray* ndarray_of(const ArrayObject& a);  // null for fields
host::Field* field_of(const ArrayObject& a);      // null for ndarrays
host::Texture& texture_of(const TextureObject& t);
host::Argpack& argpack_of(const ArgpackObject& p);
vk::VulkanRuntime& vulkan_of(RuntimeObject& r, const char* call);

// The first pack member of the runtime whose reference `matches`, skipping the packs of
// `skip` (a module about to go): "member 'b' of argpack 'Pair' (made from m.loommod)", or ""
// when none. What a destroy that would leave a pack pointing at freed memory reports.
std::string user_of(const RuntimeObject& r, const std::function<bool(const MemberRef&)>& matches,
                    const ModuleObject* skip = nullptr);

}  // namespace loom::capi
