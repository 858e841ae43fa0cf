/* loom.hpp: a header-only C++17 layer over loom.h. Objects the host owns (runtimes, modules,
 * ndarrays, textures, created argpacks) are move-only RAII handles that destroy themselves;
 * failed calls throw loom::plugin::Error carrying the LoomResult and Loom's message. It adds
 * no state and no library: every call is the loom.h call of the same name.
 *
 *   loom::plugin::Runtime runtime = loom::plugin::create_runtime(info);
 *   loom::plugin::Module sim = loom::plugin::load_module(runtime, "sim.loommod");
 *   loom::plugin::check(loom_pipeline_launch(loom::plugin::pipeline(sim, "step")));
 *
 * Lifetimes follow loom.h: declare the runtime before what is made from it (C++ destroys in
 * reverse order), and a pack before the ndarrays it refers to would be destroyed after them
 * (Loom refuses to free what a pack refers to). Destructors cannot throw: a destroy Loom
 * refuses is left to loom_last_error_message(). Kernels, pipelines and a module's own arrays,
 * textures and packs belong to their module and are plain handles.
 *
 * Without C++ exceptions (-fno-exceptions), define LOOM_HPP_ON_ERROR(result, message) to what
 * a failed call should do (the default prints the message and aborts). */
#ifndef LOOM_HPP_
#define LOOM_HPP_

#include <loom/loom.h>

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#include <stdexcept>
#include <string>
#define LOOM_HPP_EXCEPTIONS 1
#else
#include <cstdio>
#include <cstdlib>
#endif

namespace loom::plugin {

#if LOOM_HPP_EXCEPTIONS
// A loom.h call failed: `result` is its LoomResult, what() Loom's message for it.
class Error : public std::runtime_error {
 public:
  Error(LoomResult result, const char* message)
      : std::runtime_error(std::string(loom_result_name(result)) + ": " + message),
        result_(result) {}
  LoomResult result() const { return result_; }

 private:
  LoomResult result_;
};
#endif

// Throws Error (or runs LOOM_HPP_ON_ERROR) unless `result` is LOOM_SUCCESS.
inline void check(LoomResult result) {
  if (result == LOOM_SUCCESS) return;
#if LOOM_HPP_EXCEPTIONS
  throw Error(result, loom_last_error_message());
#elif defined(LOOM_HPP_ON_ERROR)
  LOOM_HPP_ON_ERROR(result, loom_last_error_message());
#else
  std::fprintf(stderr, "loom: %s: %s\n", loom_result_name(result), loom_last_error_message());
  std::abort();
#endif
}

// A loom.h handle the host owns, destroyed with `Destroy` when this goes.
template <typename H, LoomResult (*Destroy)(H)>
class Owned {
 public:
  Owned() = default;
  explicit Owned(H handle) : handle_(handle) {}
  Owned(Owned&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { reset(); }

  H get() const { return handle_; }
  operator H() const { return handle_; }  // pass it to loom.h calls as is
  explicit operator bool() const { return handle_ != nullptr; }
  // Gives the handle up: the caller destroys it.
  H release() { return std::exchange(handle_, nullptr); }
  // Destroys it now (a refused destroy leaves the message in loom_last_error_message()).
  void reset() {
    if (handle_) Destroy(std::exchange(handle_, nullptr));
  }

 private:
  H handle_ = nullptr;
};

using Runtime = Owned<LoomRuntime, loom_runtime_destroy>;
using Module = Owned<LoomModule, loom_module_destroy>;
using Ndarray = Owned<LoomArray, loom_ndarray_destroy>;  // made by the host, not a module's
using Texture = Owned<LoomTexture, loom_texture_destroy>;
using Argpack = Owned<LoomArgpack, loom_argpack_destroy>;     // made with loom_argpack_create
using Readback = Owned<LoomReadback, loom_readback_destroy>;  // a read recorded into a frame

inline Runtime create_runtime(LoomRuntimeCreateInfo info) {
  info.struct_size = sizeof info;
  LoomRuntime r = nullptr;
  check(loom_runtime_create(&info, &r));
  return Runtime(r);
}

inline Runtime import_vulkan(LoomVulkanDeviceImport device) {
  device.struct_size = sizeof device;
  LoomRuntime r = nullptr;
  check(loom_runtime_import_vulkan(&device, &r));
  return Runtime(r);
}

inline Module load_module(LoomRuntime runtime, const char* path) {
  LoomModule m = nullptr;
  check(loom_module_load(runtime, path, &m));
  return Module(m);
}

inline Ndarray create_ndarray(LoomRuntime runtime, LoomDataType dtype,
                              std::initializer_list<int64_t> shape, uint32_t components = 1) {
  std::vector<int64_t> dims(shape);
  LoomArray a = nullptr;
  check(loom_ndarray_create(runtime, dtype, components, static_cast<uint32_t>(dims.size()),
                            dims.data(), &a));
  return Ndarray(a);
}

inline Texture create_texture(LoomRuntime runtime, LoomTextureFormat format, uint32_t width,
                              uint32_t height = 1, uint32_t depth = 1) {
  LoomTexture t = nullptr;
  check(loom_texture_create(runtime, format, width, height, depth, &t));
  return Texture(t);
}

inline Argpack create_argpack(LoomModule module, const char* type_name) {
  LoomArgpack p = nullptr;
  check(loom_argpack_create(module, type_name, &p));
  return Argpack(p);
}

// Results, with their struct_size set.
inline LoomRuntimeInfo runtime_info(LoomRuntime runtime) {
  LoomRuntimeInfo info{sizeof(LoomRuntimeInfo)};
  check(loom_runtime_get_info(runtime, &info));
  return info;
}
inline LoomModuleInfo module_info(LoomModule module) {
  LoomModuleInfo info{sizeof(LoomModuleInfo)};
  check(loom_module_get_info(module, &info));
  return info;
}
inline LoomArrayInfo array_info(LoomArray array) {
  LoomArrayInfo info{sizeof(LoomArrayInfo)};
  check(loom_array_get_info(array, &info));
  return info;
}
inline LoomTextureInfo texture_info(LoomTexture texture) {
  LoomTextureInfo info{sizeof(LoomTextureInfo)};
  check(loom_texture_get_info(texture, &info));
  return info;
}

// Reads recorded into the engine's command buffer `cb` (Vulkan): poll with get().
inline Readback read_into(LoomArray array, VkCommandBuffer cb) {
  LoomReadback r = nullptr;
  check(loom_array_read_into(array, cb, nullptr, nullptr, &r));
  return Readback(r);
}
inline Readback read_into(LoomTexture texture, VkCommandBuffer cb) {
  LoomReadback r = nullptr;
  check(loom_texture_read_into(texture, cb, nullptr, nullptr, &r));
  return Readback(r);
}
// Copies the read-back bytes once its frame completed: false, writing nothing, before then.
inline bool get(LoomReadback readback, void* dst, uint64_t bytes) {
  LoomResult r = loom_readback_get(readback, dst, bytes);
  if (r == LOOM_ERROR_NOT_READY) return false;
  check(r);
  return true;
}

// What a module owns, by name: valid while the module lives (and across its hot reloads).
inline LoomKernel kernel(LoomModule module, const char* name) {
  LoomKernel k = nullptr;
  check(loom_module_get_kernel(module, name, 0, nullptr, &k));
  return k;
}
inline LoomPipeline pipeline(LoomModule module, const char* name) {
  LoomPipeline p = nullptr;
  check(loom_module_get_pipeline(module, name, &p));
  return p;
}
inline LoomArray array(LoomModule module, const char* name) {
  LoomArray a = nullptr;
  check(loom_module_get_array(module, name, &a));
  return a;
}

}  // namespace loom::plugin

#endif  // LOOM_HPP_
