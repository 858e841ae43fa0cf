// Arrays (module fields and ndarrays, the runtime's ndarrays) and textures: made, imported
// from the host's Vulkan objects, read, written, exported.
#include <atomic>
#include <cstring>

#include "engine_plugin/c_api/c_api_error.h"
#include "engine_plugin/c_api/handles.h"
#include "engine_plugin/c_api/info_structs.h"
#include "engine_plugin/c_api/types.h"
#include "runtime/vulkan/texture_format.h"
#include "runtime/vulkan/vulkan_runtime.h"

using namespace loom;
using loom::capi::ApiError;
using loom::capi::ArrayObject;
using loom::capi::guard;
using loom::capi::ModuleObject;
using loom::capi::need;
using loom::capi::resolve;
using loom::capi::RuntimeObject;
using loom::capi::TextureObject;

namespace loom::capi {

host::Ndarray* ndarray_of(const ArrayObject& a) {
  if (a.is_field) return nullptr;
  if (!a.module) return a.own.get();
  host::Ndarray* n = a.module->loaded->ndarray(a.name);
  if (!n)
    throw ApiError(LOOM_ERROR_NOT_FOUND, Place{a.module->what},
                   "the module has no ndarray '" + a.name + "' any more");
  return n;
}

host::Field* field_of(const ArrayObject& a) {
  if (!a.is_field) return nullptr;
  host::Field* f = a.module->loaded->field(a.name);
  if (!f)
    throw ApiError(LOOM_ERROR_NOT_FOUND, Place{a.module->what},
                   "the module has no field '" + a.name + "' any more");
  return f;
}

host::Texture& texture_of(const TextureObject& t) {
  if (!t.module) return *t.own;
  host::Texture* x = t.module->loaded->texture(t.name);
  if (!x)
    throw ApiError(LOOM_ERROR_NOT_FOUND, Place{t.module->what},
                   "the module has no texture '" + t.name + "' any more");
  return *x;
}

host::Argpack& argpack_of(const ArgpackObject& p) {
  if (p.own) return *p.own;
  host::Argpack* x = p.module->loaded->argpack(p.name);
  if (!x)
    throw ApiError(LOOM_ERROR_NOT_FOUND, Place{p.module->what},
                   "the module has no argpack '" + p.name + "' any more");
  return *x;
}

}  // namespace loom::capi

namespace {

// What every array call needs: where its bytes are and how big it is.
struct ArrayView {
  uint8_t* data = nullptr;  // host copy, or the key of an imported buffer
  size_t bytes = 0;
  RuntimeObject* runtime = nullptr;
  bool imported = false;
  std::string what;
};

ArrayView view_of(const ArrayObject& a) {
  ArrayView v;
  v.runtime = a.runtime;
  v.imported = a.imported;
  v.what = (a.module ? a.module->what + ": " : std::string()) +
           (a.is_field ? "field '" : "ndarray '") + a.name + "'";
  if (host::Field* f = capi::field_of(a)) {
    v.data = f->data();
    v.bytes = f->bytes();
  } else {
    host::Ndarray* n = capi::ndarray_of(a);
    v.data = n->data();
    v.bytes = n->bytes();
  }
  return v;
}

std::vector<int64_t> shape_of(uint32_t ndim, const int64_t* shape, const char* call) {
  if (ndim < 1 || ndim > LOOM_MAX_DIMS)
    throw ApiError(LOOM_ERROR_WRONG_NDIM,
                   std::string(call) + ": ndim " + std::to_string(ndim) + " is not in 1..4" +
                       (ndim == 0 ? " (ndarrays have dimensions; one value is a 0-d field)" : ""));
  if (!shape) throw ApiError(LOOM_ERROR_NULL_HANDLE, std::string(call) + ": shape is null");
  std::vector<int64_t> s(shape, shape + ndim);
  for (uint32_t d = 0; d < ndim; ++d)
    if (s[d] < 1)
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, std::string(call) + ": extent " +
                                                      std::to_string(s[d]) + " of dimension " +
                                                      std::to_string(d) + " is not positive");
  return s;
}

uint32_t check_components(uint32_t components, const char* call) {
  if (components < 1 || components > LOOM_MAX_COMPONENTS)
    throw ApiError(LOOM_ERROR_WRONG_DTYPE, std::string(call) + ": " + std::to_string(components) +
                                               " components per element is not in 1..16");
  return components;
}

// Names for the runtime's own ndarrays and textures in errors ("ndarray3"); runtimes on
// different threads draw from one counter.
std::string next_name(const char* kind) {
  static std::atomic<uint64_t> serial{0};
  return std::string(kind) + std::to_string(++serial);
}

// Refuses to free `target` while a pack member refers to it: the pack's bytes hold its address
// and its next launch would read freed memory.
void check_unused(const RuntimeObject& r, const void* target, const char* call,
                  const std::string& what) {
  std::string user =
      capi::user_of(r, [&](const capi::MemberRef& ref) { return ref.object == target; });
  if (!user.empty())
    throw ApiError(LOOM_ERROR_IN_USE, std::string(call) + ": " + what + " is " + user +
                                          "; set the member to another one or destroy the pack "
                                          "first");
}

void check_bytes(uint64_t given, size_t want, const std::string& what) {
  if (given != want)
    throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, what + " holds " + std::to_string(want) +
                                                    " bytes; the call gives " +
                                                    std::to_string(given));
}

// With LOOM_QUEUE_ENGINE_OWNED, a read that would have to wait for the engine's queue.
void check_readable_now(RuntimeObject& r, const void* key, const char* call,
                        const std::string& what) {
  vk::VulkanRuntime* v = r.device->vulkan();
  if (!v || !v->read_would_wait(key)) return;
  throw ApiError(LOOM_ERROR_NOT_SUPPORTED,
                 std::string(call) + ": " + what +
                     " is newer on the device, and with LOOM_QUEUE_ENGINE_OWNED Loom never "
                     "waits for the engine's queue: record the read with " +
                     (std::string(call) == "loom_texture_read" ? "loom_texture_read_into"
                                                               : "loom_array_read_into"));
}

// loom_array_read_into and loom_texture_read_into: the copy of `key` recorded into `cb`.
void read_into(RuntimeObject& r, const void* key, VkCommandBuffer cb, LoomReadbackFn done,
               void* user, LoomReadback* out, const std::string& what, const char* call) {
  capi::vulkan_of(r, call);
  if (!cb) throw ApiError(LOOM_ERROR_NULL_HANDLE, std::string(call) + ": command_buffer is null");
  if (!out && !done)
    throw ApiError(LOOM_ERROR_NULL_HANDLE,
                   std::string(call) + ": give `out` (to poll), `done` (to be called), or both");
  vk::HostFrames& frames = r.host_frames();
  auto rb = std::make_unique<capi::ReadbackObject>();
  rb->runtime = &r;
  rb->what = what;
  rb->done = done;
  rb->user = user;
  rb->host_owned = out != nullptr;
  try {
    rb->id = frames.read_into(cb, key);
  } catch (const Error& e) {
    throw ApiError(LOOM_ERROR_NOT_SUPPORTED, std::string(call) + ": " + e.what());
  }
  if (out) *out = rb->handle.as<LoomReadback>();
  capi::ReadbackObject* key_of = rb.get();
  r.readbacks.emplace(key_of, std::move(rb));
}

}  // namespace

extern "C" {

LoomResult loom_module_get_array(LoomModule module, const char* name, LoomArray* out) {
  return guard("loom_module_get_array", LOOM_ERROR_NOT_FOUND, [&] {
    ModuleObject& m = resolve(module, "loom_module_get_array: module");
    need(name, "loom_module_get_array: name");
    need(out, "loom_module_get_array: out");
    auto it = m.arrays.find(name);
    if (it != m.arrays.end()) {
      *out = it->second->handle.as<LoomArray>();
      return;
    }
    bool field = m.loaded->field(name) != nullptr;
    if (!field && !m.loaded->ndarray(name)) {
      std::string kind = m.loaded->texture(name)   ? " (it is a texture)"
                         : m.loaded->argpack(name) ? " (it is an argpack)"
                                                   : "";
      throw ApiError(kind.empty() ? LOOM_ERROR_NOT_FOUND : LOOM_ERROR_WRONG_TYPE, Place{m.what},
                     std::string("the module has no field or ndarray '") + name + "'" + kind);
    }
    auto a = std::make_unique<ArrayObject>();
    a->runtime = m.runtime;
    a->module = &m;
    a->name = name;
    a->is_field = field;
    *out = a->handle.as<LoomArray>();
    m.arrays[name] = std::move(a);
  });
}

LoomResult loom_ndarray_create(LoomRuntime runtime, LoomDataType dtype, uint32_t components,
                               uint32_t ndim, const int64_t* shape, LoomArray* out) {
  return guard("loom_ndarray_create", LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_ndarray_create: runtime");
    need(out, "loom_ndarray_create: out");
    Scalar s = capi::scalar_of(dtype, "loom_ndarray_create: dtype");
    auto a = std::make_unique<ArrayObject>();
    a->runtime = &r;
    a->name = next_name("ndarray");
    a->own = std::make_unique<host::Ndarray>(
        s, shape_of(ndim, shape, "loom_ndarray_create"),
        static_cast<int>(check_components(components, "loom_ndarray_create")), a->name);
    r.device->add_buffer(a->name, a->own->data(), a->own->bytes(), false);
    *out = a->handle.as<LoomArray>();
    r.arrays[a.get()] = std::move(a);
  });
}

LoomResult loom_ndarray_import_vulkan(LoomRuntime runtime, const LoomVulkanBuffer* buffer,
                                      LoomDataType dtype, uint32_t components, uint32_t ndim,
                                      const int64_t* shape, LoomArray* out) {
  return guard("loom_ndarray_import_vulkan", LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_ndarray_import_vulkan: runtime");
    const LoomVulkanBuffer& b = need(buffer, "loom_ndarray_import_vulkan: buffer");
    need(out, "loom_ndarray_import_vulkan: out");
    vk::VulkanRuntime& v = capi::vulkan_of(r, "loom_ndarray_import_vulkan");
    if (!b.buffer)
      throw ApiError(LOOM_ERROR_NULL_HANDLE, "loom_ndarray_import_vulkan: buffer->buffer is null");
    Scalar s = capi::scalar_of(dtype, "loom_ndarray_import_vulkan: dtype");
    auto a = std::make_unique<ArrayObject>();
    a->runtime = &r;
    a->imported = true;
    a->name = next_name("imported ndarray ");
    a->own = std::make_unique<host::Ndarray>(
        a.get(), s, shape_of(ndim, shape, "loom_ndarray_import_vulkan"),
        static_cast<int>(check_components(components, "loom_ndarray_import_vulkan")), a->name);
    if (b.size < a->own->bytes())
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                     "loom_ndarray_import_vulkan: the buffer range holds " +
                         std::to_string(b.size) + " bytes; the ndarray needs " +
                         std::to_string(a->own->bytes()));
    v.import_buffer(a.get(), b.buffer, b.offset, a->own->bytes(), a->name);
    *out = a->handle.as<LoomArray>();
    r.arrays[a.get()] = std::move(a);
  });
}

LoomResult loom_ndarray_rebind_vulkan(LoomArray array, const LoomVulkanBuffer* buffer) {
  return guard("loom_ndarray_rebind_vulkan", LOOM_ERROR_DEVICE, [&] {
    ArrayObject& a = resolve(array, "loom_ndarray_rebind_vulkan: array");
    const LoomVulkanBuffer& b = need(buffer, "loom_ndarray_rebind_vulkan: buffer");
    if (!a.imported)
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, "loom_ndarray_rebind_vulkan: '" + a.name +
                                                      "' is Loom's; only an ndarray made by "
                                                      "loom_ndarray_import_vulkan moves");
    if (!b.buffer)
      throw ApiError(LOOM_ERROR_NULL_HANDLE, "loom_ndarray_rebind_vulkan: buffer->buffer is null");
    size_t need_bytes = a.own->bytes();
    if (b.size < need_bytes)
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                     "loom_ndarray_rebind_vulkan: the buffer range holds " +
                         std::to_string(b.size) + " bytes; '" + a.name + "' needs " +
                         std::to_string(need_bytes));
    vk::VulkanRuntime& v = capi::vulkan_of(*a.runtime, "loom_ndarray_rebind_vulkan");
    try {
      v.rebind_buffer(a.own->data(), b.buffer, b.offset);
    } catch (const Error& e) {
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                     std::string("loom_ndarray_rebind_vulkan: ") + e.what());
    }
  });
}

LoomResult loom_ndarray_destroy(LoomArray array) {
  return guard("loom_ndarray_destroy", LOOM_ERROR_INVALID_ARGUMENT, [&] {
    ArrayObject* a = capi::resolve_or_null(array, "loom_ndarray_destroy: array");
    if (!a) return;
    if (a->module)
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, "loom_ndarray_destroy: '" + a->name +
                                                      "' belongs to module " + a->module->what +
                                                      " and goes with it");
    RuntimeObject& r = *a->runtime;
    check_unused(r, a, "loom_ndarray_destroy", "ndarray '" + a->name + "'");
    r.device->remove(a->own->data());
    r.arrays.erase(a);  // the handle turns stale with the object
  });
}

LoomResult loom_array_get_info(LoomArray array, LoomArrayInfo* out) {
  return guard("loom_array_get_info", LOOM_ERROR_INVALID_ARGUMENT, [&] {
    ArrayObject& a = resolve(array, "loom_array_get_info: array");
    capi::check_out(out, "loom_array_get_info: out");
    LoomArrayInfo info{};
    info.is_field = a.is_field;
    info.host_copy = !a.imported;
    if (host::Field* f = capi::field_of(a)) {
      info.dtype = capi::dtype_of(f->desc().elem.scalar);
      info.components = static_cast<uint32_t>(f->components());
      info.soa = f->desc().layout == Layout::SoA;
      info.ndim = static_cast<uint32_t>(f->desc().shape.size());
      for (size_t d = 0; d < f->desc().shape.size(); ++d) info.shape[d] = f->desc().shape[d];
      info.bytes = f->bytes();
      capi::write_out(out, info);
      return;
    }
    host::Ndarray& n = *capi::ndarray_of(a);
    info.dtype = capi::dtype_of(n.dtype());
    info.components = static_cast<uint32_t>(n.components());
    info.ndim = static_cast<uint32_t>(n.ndim());
    for (int d = 0; d < n.ndim(); ++d) info.shape[d] = n.shape()[static_cast<size_t>(d)];
    info.bytes = n.bytes();
    capi::write_out(out, info);
  });
}

LoomResult loom_array_read(LoomArray array, void* dst, uint64_t bytes) {
  return guard("loom_array_read", LOOM_ERROR_DEVICE, [&] {
    ArrayView v = view_of(resolve(array, "loom_array_read: array"));
    need(dst, "loom_array_read: dst");
    check_bytes(bytes, v.bytes, v.what);
    check_readable_now(*v.runtime, v.data, "loom_array_read", v.what);
    if (v.imported) {
      capi::vulkan_of(*v.runtime, "loom_array_read").read_buffer(v.data, 0, v.bytes, dst);
      return;
    }
    v.runtime->device->read_back(v.data);
    std::memcpy(dst, v.data, v.bytes);
  });
}

LoomResult loom_array_write(LoomArray array, const void* src, uint64_t bytes) {
  return guard("loom_array_write", LOOM_ERROR_DEVICE, [&] {
    ArrayView v = view_of(resolve(array, "loom_array_write: array"));
    need(src, "loom_array_write: src");
    check_bytes(bytes, v.bytes, v.what);
    if (v.imported) {
      capi::vulkan_of(*v.runtime, "loom_array_write").write_buffer(v.data, 0, src, v.bytes);
      return;
    }
    std::memcpy(v.data, src, v.bytes);  // uploads go on the queue after the work before them
    v.runtime->device->host_wrote(v.data);
  });
}

LoomResult loom_array_export_vulkan(LoomArray array, LoomVulkanBuffer* out) {
  return guard("loom_array_export_vulkan", LOOM_ERROR_DEVICE, [&] {
    ArrayView v = view_of(resolve(array, "loom_array_export_vulkan: array"));
    LoomVulkanBuffer& b = need(out, "loom_array_export_vulkan: out");
    vk::VulkanRuntime& vr = capi::vulkan_of(*v.runtime, "loom_array_export_vulkan");
    vr.upload(v.data);  // what the host wrote reaches the device copy the host will bind
    vk::BufferExport e = vr.export_buffer(v.data);
    b = LoomVulkanBuffer{e.buffer, e.offset, e.size};
  });
}

LoomResult loom_array_read_into(LoomArray array, VkCommandBuffer command_buffer,
                                LoomReadbackFn done, void* user, LoomReadback* out) {
  return guard("loom_array_read_into", LOOM_ERROR_DEVICE, [&] {
    ArrayView v = view_of(resolve(array, "loom_array_read_into: array"));
    read_into(*v.runtime, v.data, command_buffer, done, user, out, v.what, "loom_array_read_into");
  });
}

// ---- reads recorded into the host's command buffers

LoomResult loom_readback_get(LoomReadback readback, void* dst, uint64_t bytes) {
  return guard("loom_readback_get", LOOM_ERROR_DEVICE, [&] {
    capi::ReadbackObject& rb = resolve(readback, "loom_readback_get: readback");
    need(dst, "loom_readback_get: dst");
    vk::HostFrames& frames = rb.runtime->host_frames();
    check_bytes(bytes, frames.readback_bytes(rb.id), "the read-back of " + rb.what);
    if (!frames.readback_ready(rb.id))
      throw ApiError(LOOM_ERROR_NOT_READY,
                     "loom_readback_get: the read-back of " + rb.what +
                         " is recorded in a frame the engine has not completed yet (it lands "
                         "frames_in_flight loom_runtime_begin_frame calls after that frame)");
    std::memcpy(dst, frames.readback_data(rb.id), bytes);
  });
}

LoomResult loom_readback_destroy(LoomReadback readback) {
  return guard("loom_readback_destroy", LOOM_ERROR_DEVICE, [&] {
    capi::ReadbackObject* rb = capi::resolve_or_null(readback, "loom_readback_destroy: readback");
    if (!rb) return;
    RuntimeObject& r = *rb->runtime;
    r.host_frames().release_readback(rb->id);
    r.readbacks.erase(rb);
  });
}

// ---- textures

LoomResult loom_module_get_texture(LoomModule module, const char* name, LoomTexture* out) {
  return guard("loom_module_get_texture", LOOM_ERROR_NOT_FOUND, [&] {
    ModuleObject& m = resolve(module, "loom_module_get_texture: module");
    need(name, "loom_module_get_texture: name");
    need(out, "loom_module_get_texture: out");
    auto it = m.textures.find(name);
    if (it != m.textures.end()) {
      *out = it->second->handle.as<LoomTexture>();
      return;
    }
    if (!m.loaded->texture(name)) {
      bool other = m.loaded->field(name) || m.loaded->ndarray(name) || m.loaded->argpack(name);
      throw ApiError(other ? LOOM_ERROR_WRONG_TYPE : LOOM_ERROR_NOT_FOUND, Place{m.what},
                     std::string("the module has no texture '") + name + "'" +
                         (other ? " (it is another kind of resource)" : ""));
    }
    auto t = std::make_unique<TextureObject>();
    t->runtime = m.runtime;
    t->module = &m;
    t->name = name;
    *out = t->handle.as<LoomTexture>();
    m.textures[name] = std::move(t);
  });
}

LoomResult loom_texture_create(LoomRuntime runtime, LoomTextureFormat format, uint32_t width,
                               uint32_t height, uint32_t depth, LoomTexture* out) {
  return guard("loom_texture_create", LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_texture_create: runtime");
    need(out, "loom_texture_create: out");
    TextureFormat f = capi::texture_format_of(format, "loom_texture_create: format");
    if (width < 1 || height < 1)
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                     "loom_texture_create: a " + std::to_string(width) + " x " +
                         std::to_string(height) + " texture has no texels");
    auto t = std::make_unique<TextureObject>();
    t->runtime = &r;
    t->name = next_name("texture");
    t->own = depth == 0 ? std::make_unique<host::Texture>(f, width, height, t->name)
                        : std::make_unique<host::Texture>(f, width, height, depth, t->name);
    r.device->add_texture(t->name, *t->own);
    *out = t->handle.as<LoomTexture>();
    r.textures[t.get()] = std::move(t);
  });
}

LoomResult loom_texture_import_vulkan(LoomRuntime runtime, const LoomVulkanImage* image,
                                      LoomTexture* out) {
  return guard("loom_texture_import_vulkan", LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_texture_import_vulkan: runtime");
    const LoomVulkanImage& i = need(image, "loom_texture_import_vulkan: image");
    need(out, "loom_texture_import_vulkan: out");
    vk::VulkanRuntime& v = capi::vulkan_of(r, "loom_texture_import_vulkan");
    if (!i.image || !i.view)
      throw ApiError(LOOM_ERROR_NULL_HANDLE,
                     "loom_texture_import_vulkan: image->image or image->view is null");
    // The caller's VkFormat and VkImageLayout are read as integers (capi::enum_int) and
    // checked before they become the C++ enums: a value outside an enum's range is undefined
    // behaviour the optimiser may use to drop the check.
    int32_t format = capi::enum_int(i.format);
    TextureFormat f;
    if (format < 0 || !vk::texture_format_of(static_cast<VkFormat>(format), &f))
      throw ApiError(LOOM_ERROR_WRONG_DTYPE,
                     "loom_texture_import_vulkan: image->format: VkFormat " +
                         std::to_string(format) +
                         " is none of R32_SFLOAT, R32G32_SFLOAT, R32G32B32A32_SFLOAT, "
                         "R8G8B8A8_UNORM");
    int32_t layout = capi::enum_int(i.layout);
    if (layout != static_cast<int32_t>(VK_IMAGE_LAYOUT_GENERAL) &&
        layout != static_cast<int32_t>(VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL))
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                     "loom_texture_import_vulkan: image->layout: VkImageLayout " +
                         std::to_string(layout) +
                         " is neither GENERAL nor SHADER_READ_ONLY_OPTIMAL (the layouts kernels "
                         "use images in)");
    if (i.ndim != 2 && i.ndim != 3)
      throw ApiError(LOOM_ERROR_WRONG_NDIM, "loom_texture_import_vulkan: ndim " +
                                                std::to_string(i.ndim) + "; textures have 2 or 3");
    auto t = std::make_unique<TextureObject>();
    t->runtime = &r;
    t->imported = true;
    t->name = next_name("imported texture ");
    t->own = std::make_unique<host::Texture>(
        host::Texture::device_only(t.get(), f, static_cast<int>(i.ndim), i.extent.width,
                                   i.extent.height, i.ndim == 3 ? i.extent.depth : 1, t->name));
    v.import_image(t.get(), i.image, i.view, static_cast<VkFormat>(format), i.extent,
                   static_cast<VkImageLayout>(layout), t->name);
    *out = t->handle.as<LoomTexture>();
    r.textures[t.get()] = std::move(t);
  });
}

LoomResult loom_texture_destroy(LoomTexture texture) {
  return guard("loom_texture_destroy", LOOM_ERROR_INVALID_ARGUMENT, [&] {
    TextureObject* t = capi::resolve_or_null(texture, "loom_texture_destroy: texture");
    if (!t) return;
    if (t->module)
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, "loom_texture_destroy: '" + t->name +
                                                      "' belongs to module " + t->module->what +
                                                      " and goes with it");
    RuntimeObject& r = *t->runtime;
    check_unused(r, t, "loom_texture_destroy", "texture '" + t->name + "'");
    r.device->remove(t->own->data());
    r.textures.erase(t);  // the handle turns stale with the object
  });
}

LoomResult loom_texture_get_info(LoomTexture texture, LoomTextureInfo* out) {
  return guard("loom_texture_get_info", LOOM_ERROR_INVALID_ARGUMENT, [&] {
    const host::Texture& t = capi::texture_of(resolve(texture, "loom_texture_get_info: texture"));
    capi::check_out(out, "loom_texture_get_info: out");
    LoomTextureInfo info{};
    info.format = capi::loom_format_of(t.format());
    info.ndim = static_cast<uint32_t>(t.ndim());
    info.width = static_cast<uint32_t>(t.width());
    info.height = static_cast<uint32_t>(t.height());
    info.depth = static_cast<uint32_t>(t.depth());
    info.host_copy = t.has_host_memory();
    capi::write_out(out, info);
  });
}

LoomResult loom_texture_read(LoomTexture texture, void* dst, uint64_t bytes) {
  return guard("loom_texture_read", LOOM_ERROR_DEVICE, [&] {
    TextureObject& h = resolve(texture, "loom_texture_read: texture");
    const host::Texture& t = capi::texture_of(h);
    need(dst, "loom_texture_read: dst");
    if (!t.has_host_memory())
      throw ApiError(LOOM_ERROR_NOT_SUPPORTED,
                     "loom_texture_read: the texture is the host's image; read it with Vulkan");
    check_bytes(bytes, t.bytes(), "texture '" + h.name + "'");
    check_readable_now(*h.runtime, t.data(), "loom_texture_read", "texture '" + h.name + "'");
    h.runtime->device->read_back(t.data());
    std::memcpy(dst, t.data(), t.bytes());
  });
}

LoomResult loom_texture_write(LoomTexture texture, const void* src, uint64_t bytes) {
  return guard("loom_texture_write", LOOM_ERROR_DEVICE, [&] {
    TextureObject& h = resolve(texture, "loom_texture_write: texture");
    const host::Texture& t = capi::texture_of(h);
    need(src, "loom_texture_write: src");
    if (!t.has_host_memory())
      throw ApiError(LOOM_ERROR_NOT_SUPPORTED,
                     "loom_texture_write: the texture is the host's image; write it with Vulkan");
    check_bytes(bytes, t.bytes(), "texture '" + h.name + "'");
    std::memcpy(t.data(), src, t.bytes());
    h.runtime->device->host_wrote(t.data());
  });
}

LoomResult loom_texture_read_into(LoomTexture texture, VkCommandBuffer command_buffer,
                                  LoomReadbackFn done, void* user, LoomReadback* out) {
  return guard("loom_texture_read_into", LOOM_ERROR_DEVICE, [&] {
    TextureObject& h = resolve(texture, "loom_texture_read_into: texture");
    host::Texture& t = capi::texture_of(h);
    read_into(*h.runtime, t.data(), command_buffer, done, user, out, "texture '" + h.name + "'",
              "loom_texture_read_into");
  });
}

LoomResult loom_texture_export_vulkan(LoomTexture texture, LoomVulkanImage* out) {
  return guard("loom_texture_export_vulkan", LOOM_ERROR_DEVICE, [&] {
    TextureObject& h = resolve(texture, "loom_texture_export_vulkan: texture");
    const host::Texture& t = capi::texture_of(h);
    LoomVulkanImage& i = need(out, "loom_texture_export_vulkan: out");
    vk::VulkanRuntime& v = capi::vulkan_of(*h.runtime, "loom_texture_export_vulkan");
    v.upload(t.data());
    vk::ImageExport e = v.export_image(t.data());
    i = LoomVulkanImage{e.image,  e.view,   e.format,
                        e.extent, e.layout, static_cast<uint32_t>(t.ndim())};
  });
}

}  // extern "C"
