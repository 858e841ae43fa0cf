// Modules: loading from a path or memory, what they hold, hot reload.
#include <cstring>
#include <filesystem>
#include <map>
#include <system_error>

#include "engine_plugin/c_api/c_api_error.h"
#include "engine_plugin/c_api/compiler_bridge.h"
#include "engine_plugin/c_api/handles.h"
#include "engine_plugin/c_api/info_structs.h"
#include "engine_plugin/c_api/types.h"
#include "runtime/aot/module_files.h"
#include "runtime/common/file_version.h"
#include "runtime/common/input_file.h"
#include "runtime/vulkan/vulkan_device.h"
#include "runtime/vulkan/vulkan_runtime.h"

using namespace loom;
using loom::capi::ApiError;
using loom::capi::ArgpackObject;
using loom::capi::ArrayObject;
using loom::capi::guard;
using loom::capi::HandleKind;
using loom::capi::MemberRef;
using loom::capi::ModuleObject;
using loom::capi::need;
using loom::capi::resolve;
using loom::capi::RuntimeObject;
using loom::capi::TextureObject;

namespace loom::capi {

void ModuleObject::refresh_names() {
  const aot::ModuleMetadata& m = loaded->metadata();
  for (auto& list : names) list.clear();
  for (const aot::KernelInfo& k : m.kernels) names[LOOM_ITEM_KERNEL - 1].push_back(k.name);
  for (const aot::PipelineInfo& p : m.pipelines) names[LOOM_ITEM_PIPELINE - 1].push_back(p.name);
  for (const FieldDesc& f : m.fields) names[LOOM_ITEM_FIELD - 1].push_back(f.name);
  for (const aot::NdarrayInfo& n : m.ndarrays) names[LOOM_ITEM_NDARRAY - 1].push_back(n.name);
  for (const aot::TextureInfo& t : m.textures) names[LOOM_ITEM_TEXTURE - 1].push_back(t.name);
  for (const aot::ArgpackInfo& a : m.argpacks) names[LOOM_ITEM_ARGPACK - 1].push_back(a.name);
}

}  // namespace loom::capi

namespace {

// Errors while reading a module are about the file unless they say otherwise.
template <typename Read>
aot::Module read_or_corrupt(Read&& read) {
  try {
    return read();
  } catch (const ApiError&) {
    throw;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::General) throw;
    throw Error(e.place(), e.message(), ErrorKind::Corrupt);
  }
}

// A module's source as it is on disk now. What was read is hashed, so that a reload can tell
// a file rewritten within one timestamp tick from an unchanged one (runtime/common/file_version.h).
struct Source {
  enum class Kind { Archive, Folder, Document } kind = Kind::Archive;
  FileVersion version;  // the stamp, taken before reading, and the hash of what was read
  // An archive's bytes, loaded as hashed. A folder and a document are read again by their
  // readers: a change in between loads newer content than the hash says, and the next call
  // sees the hash differ and reloads once more, never misses it.
  std::vector<uint8_t> bytes;
};

// `stamp`: the path's, taken just before.
Source read_source(const std::string& path, const FileStamp& stamp) {
  namespace fs = std::filesystem;
  Source s;
  std::error_code ec;
  if (capi::is_graph_document(path)) {
    s.kind = Source::Kind::Document;
    s.version = FileVersion(stamp, content_hash(read_text_file_checked(path, "graph document")));
    return s;
  }
  if (fs::is_directory(path, ec)) {
    s.kind = Source::Kind::Folder;
    // Every regular file, by name: what the stamp covers and more than the module reads.
    std::map<std::string, std::vector<uint8_t>> files;
    for (const auto& entry : fs::directory_iterator(path, ec))
      if (entry.is_regular_file(ec))
        files[entry.path().filename().string()] =
            read_file_checked(entry.path().string(), "module file");
    uint64_t hash = kContentHashStart;
    for (const auto& [name, bytes] : files) {
      uint64_t size = bytes.size();
      hash = content_hash(name.c_str(), name.size() + 1, hash);
      hash = content_hash(&size, sizeof size, hash);
      hash = content_hash(bytes.data(), bytes.size(), hash);
    }
    s.version = FileVersion(stamp, hash);
    return s;
  }
  s.bytes = read_file_checked(path, "module file");
  s.version = FileVersion(stamp, content_hash(s.bytes.data(), s.bytes.size()));
  return s;
}

// The module `source` holds (a document compiled for the runtime's device).
aot::Module module_of(RuntimeObject& r, const std::string& path, const Source& source) {
  switch (source.kind) {
    case Source::Kind::Document: {
      std::vector<uint8_t> bytes =
          capi::compile_document(path, r.arch == LOOM_ARCH_CPU ? "cpu" : "vulkan");
      return read_or_corrupt([&] { return aot::read_module_bytes(bytes, path); });
    }
    case Source::Kind::Folder: return read_or_corrupt([&] { return aot::read_module_path(path); });
    case Source::Kind::Archive: break;
  }
  return read_or_corrupt([&] { return aot::read_module_bytes(source.bytes, path); });
}

std::unique_ptr<aot::LoadedModule> instantiate(RuntimeObject& r, aot::Module module,
                                               const std::string& what) {
  return std::make_unique<aot::LoadedModule>(std::move(module), *r.device, what);
}

LoomModule make_module(RuntimeObject& r, std::unique_ptr<aot::LoadedModule> loaded,
                       std::string path, std::string what, const FileVersion& version = {}) {
  auto m = std::make_unique<ModuleObject>();
  m->runtime = &r;
  m->path = std::move(path);
  m->what = std::move(what);
  m->loaded = std::move(loaded);
  m->loaded_version = version;
  m->refresh_names();
  r.modules.insert(m.get());
  LoomModule handle = m->handle.as<LoomModule>();
  static_cast<void>(m.release());  // owned through the handle until loom_module_destroy
  return handle;
}

// ---- references from pack members into a module

// The pack objects of the runtime, declared and created, of every module.
template <typename Visit>
void for_each_pack(RuntimeObject& r, Visit&& visit) {
  for (ModuleObject* m : r.modules) {
    for (auto& [name, p] : m->argpacks) visit(*p);
    for (auto& [raw, p] : m->created_packs) visit(*p);
  }
}

// `ref` points at a resource or a declared pack of `m`: objects a reload replaces.
bool replaced_by_reload(const MemberRef& ref, const ModuleObject& m) {
  switch (ref.kind) {
    case HandleKind::Array: return static_cast<const ArrayObject*>(ref.object)->module == &m;
    case HandleKind::Texture: return static_cast<const TextureObject*>(ref.object)->module == &m;
    case HandleKind::Argpack: {
      const auto* p = static_cast<const ArgpackObject*>(ref.object);
      return p->module == &m && !p->own;
    }
    default: return false;
  }
}

// `ref` points at anything that goes with `m`.
bool owned_by(const MemberRef& ref, const ModuleObject& m) {
  switch (ref.kind) {
    case HandleKind::Array: return static_cast<const ArrayObject*>(ref.object)->module == &m;
    case HandleKind::Texture: return static_cast<const TextureObject*>(ref.object)->module == &m;
    case HandleKind::Argpack: return static_cast<const ArgpackObject*>(ref.object)->module == &m;
    default: return false;
  }
}

// ---- hot reload: what the host holds must be there in the new module, state carries over

// The parameters the host gives (not a debug adjoint's shadows, which the module binds) and
// the return values.
bool same_params(const aot::KernelInfo& ka, const aot::KernelInfo& kb,
                 const aot::ModuleMetadata& ma, const aot::ModuleMetadata& mb) {
  const KernelABI &a = ka.abi, &b = kb.abi;
  const size_t given = aot::launch_param_count(ka);
  if (given != aot::launch_param_count(kb) || a.returns != b.returns) return false;
  for (size_t i = 0; i < given; ++i) {
    const ParamDesc &x = a.params[i], &y = b.params[i];
    if (x.kind != y.kind || x.type != y.type || x.ndim != y.ndim) return false;
    if (x.kind == ParamKind::Argpack &&
        ma.argpack_types.at(static_cast<size_t>(x.argpack_type)).name !=
            mb.argpack_types.at(static_cast<size_t>(y.argpack_type)).name)
      return false;
  }
  return true;
}

bool same_layout(const std::vector<ArgpackType>& a, int ta, const std::vector<ArgpackType>& b,
                 int tb) {
  const ArgpackType &x = a.at(static_cast<size_t>(ta)), &y = b.at(static_cast<size_t>(tb));
  if (x.name != y.name || x.size != y.size || x.members.size() != y.members.size()) return false;
  for (size_t i = 0; i < x.members.size(); ++i) {
    const ArgpackMember &p = x.members[i], &q = y.members[i];
    if (p.name != q.name || p.kind != q.kind || p.type != q.type || p.ndim != q.ndim ||
        p.offset != q.offset || p.format != q.format)
      return false;
    if ((p.kind == MemberKind::Struct || p.kind == MemberKind::Pack) &&
        !same_layout(a, p.nested, b, q.nested))
      return false;
  }
  return true;
}

int type_index(const std::vector<ArgpackType>& types, const std::string& name) {
  for (size_t i = 0; i < types.size(); ++i)
    if (types[i].name == name) return static_cast<int>(i);
  return -1;
}

// Value members (through struct members) of a pack of the same layout; resources and
// nested packs are the new module's.
void copy_values(const std::vector<ArgpackType>& types, int type, uint32_t base,
                 const uint8_t* from, uint8_t* to) {
  for (const ArgpackMember& m : types.at(static_cast<size_t>(type)).members) {
    if (m.kind == MemberKind::Value)
      std::memcpy(to + base + m.offset, from + base + m.offset, std140_size(m.type));
    else if (m.kind == MemberKind::Struct)
      copy_values(types, m.nested, base + m.offset, from, to);
  }
}

void check_held(const ModuleObject& m, const aot::LoadedModule& next) {
  const aot::LoadedModule& now = *m.loaded;
  const std::string& what = next.what();
  for (const auto& [key, k] : m.kernels) {
    int index = next.find_kernel(k->name, k->template_args);
    if (index < 0)
      throw ApiError(LOOM_ERROR_NOT_FOUND, Place{what, k->name},
                     "the new module lacks this kernel (or this instantiation), which the host "
                     "holds; the old module keeps running");
    if (!same_params(now.kernel_info(k->index), next.kernel_info(index), now.metadata(),
                     next.metadata()))
      throw ApiError(LOOM_ERROR_WRONG_TYPE, Place{what, k->name},
                     "the kernel's parameters or return values changed, so the host's launches no "
                     "longer match; the old "
                     "module keeps running");
  }
  for (const auto& [name, p] : m.pipelines)
    if (next.find_pipeline(name) < 0)
      throw ApiError(LOOM_ERROR_NOT_FOUND, Place{what},
                     "the new module lacks pipeline '" + name +
                         "', which the host holds; the old module keeps running");
  for (const auto& [name, a] : m.arrays) {
    const host::Field* f = a->is_field ? next.field(name) : nullptr;
    const host::Ndarray* n = a->is_field ? nullptr : next.ndarray(name);
    bool same = a->is_field ? f && f->desc().elem == now.field(name)->desc().elem
                            : n && n->dtype() == now.ndarray(name)->dtype() &&
                                  n->components() == now.ndarray(name)->components();
    if (!same)
      throw ApiError(LOOM_ERROR_WRONG_TYPE, Place{what},
                     std::string(a->is_field ? "field '" : "ndarray '") + name +
                         "', which the host holds, is missing from the new module or has another "
                         "element type; the old "
                         "module keeps running");
  }
  for (const auto& [name, t] : m.textures) {
    const host::Texture* x = next.texture(name);
    if (!x || x->format() != now.texture(name)->format())
      throw ApiError(
          LOOM_ERROR_WRONG_TYPE, Place{what},
          "texture '" + name +
              "', which the host holds, is missing from the new module or has another format; "
              "the old module keeps running");
  }
  for (const auto& [name, p] : m.argpacks)
    if (!next.argpack(name) || next.argpack(name)->type().name != now.argpack(name)->type().name)
      throw ApiError(
          LOOM_ERROR_WRONG_TYPE, Place{what},
          "argpack '" + name +
              "', which the host holds, is missing from the new module or has another type; "
              "the old module keeps running");
  for (const auto& [raw, p] : m.created_packs) {
    const std::vector<ArgpackType>& types = next.metadata().argpack_types;
    int t = type_index(types, p->name);
    const host::Argpack& pack = *p->own;
    if (t < 0 || !same_layout(now.metadata().argpack_types,
                              type_index(now.metadata().argpack_types, p->name), types, t))
      throw ApiError(LOOM_ERROR_WRONG_TYPE, Place{what},
                     "argpack type '" + pack.type().name +
                         "' of a pack the host created changed its layout; destroy the "
                         "pack first; the old module keeps running");
  }
}

// Pack members the host pointed at this module's ndarrays, textures and packs are pointed
// at the new module's after a swap; they must still fit the member.
void check_referenced(ModuleObject& m, const aot::LoadedModule& next) {
  const aot::LoadedModule& now = *m.loaded;
  for_each_pack(*m.runtime, [&](const ArgpackObject& p) {
    if (p.module == &m && !p.own) return;  // the new module's declared packs start afresh
    for (const auto& [path, ref] : p.refs) {
      if (!replaced_by_reload(ref, m)) continue;
      bool fits = true;
      std::string name;
      if (ref.kind == HandleKind::Array) {
        name = static_cast<const ArrayObject*>(ref.object)->name;
        fits = next.ndarray(name) && next.ndarray(name)->ndim() == now.ndarray(name)->ndim();
      } else if (ref.kind == HandleKind::Texture) {
        name = static_cast<const TextureObject*>(ref.object)->name;
        fits = next.texture(name) && next.texture(name)->ndim() == now.texture(name)->ndim();
      }
      if (!fits)
        throw ApiError(LOOM_ERROR_WRONG_TYPE, Place{next.what()},
                       "'" + name + "' has other dimensions in the new module, and member '" +
                           path + "' of argpack '" + p.name +
                           "' refers to it; the old module keeps running");
    }
  });
}

void rebind_referenced(ModuleObject& m) {
  for (auto& [name, p] : m.argpacks) p->refs.clear();  // now at the new module's values
  for_each_pack(*m.runtime, [&](ArgpackObject& p) {
    for (const auto& [path, ref] : p.refs) {
      if (!replaced_by_reload(ref, m)) continue;
      host::Argpack& pack = capi::argpack_of(p);
      if (ref.kind == HandleKind::Array)
        pack.set_ndarray(path, *capi::ndarray_of(*static_cast<const ArrayObject*>(ref.object)));
      else if (ref.kind == HandleKind::Texture)
        pack.set_texture(path, capi::texture_of(*static_cast<const TextureObject*>(ref.object)));
      else
        pack.set_pack(path, capi::argpack_of(*static_cast<const ArgpackObject*>(ref.object)));
    }
  });
}

void carry_state(RuntimeObject& r, aot::LoadedModule& from, aot::LoadedModule& to) {
  loom::Device& device = from.device();
  auto copy = [&](const uint8_t* src, uint8_t* dst, size_t bytes) {
    if (r.engine_owned_queue) {
      // Copied on the device, by commands that run in the engine's next command buffer Loom
      // records into, after the frames that wrote the old state: nothing waits.
      capi::vulkan_of(r, "reload").copy_device(src, dst);
      return;
    }
    device.read_back(src);
    std::memcpy(dst, src, bytes);
    device.host_wrote(dst);
  };
  for (const FieldDesc& d : to.metadata().fields) {
    const host::Field* old = from.field(d.name);
    host::Field* now = to.field(d.name);
    if (old && old->desc().elem == d.elem && old->desc().shape == d.shape &&
        old->desc().layout == d.layout)
      copy(old->data(), now->data(), now->bytes());
  }
  for (const aot::NdarrayInfo& d : to.metadata().ndarrays) {
    const host::Ndarray* old = from.ndarray(d.name);
    host::Ndarray* now = to.ndarray(d.name);
    if (old && old->dtype() == now->dtype() && old->components() == now->components() &&
        old->shape() == now->shape())
      copy(old->data(), now->data(), now->bytes());
  }
  for (const aot::TextureInfo& d : to.metadata().textures) {
    const host::Texture* old = from.texture(d.name);
    host::Texture* now = to.texture(d.name);
    if (old && old->format() == now->format() && old->ndim() == now->ndim() &&
        old->width() == now->width() && old->height() == now->height() &&
        old->depth() == now->depth())
      copy(old->data(), now->data(), now->bytes());
  }
  for (const aot::ArgpackInfo& d : to.metadata().argpacks) {
    const host::Argpack* old = from.argpack(d.name);
    host::Argpack* now = to.argpack(d.name);
    int t_old = old ? type_index(from.metadata().argpack_types, old->type().name) : -1;
    if (t_old >= 0 &&
        same_layout(from.metadata().argpack_types, t_old, to.metadata().argpack_types, d.type)) {
      copy_values(to.metadata().argpack_types, d.type, 0, old->data(), now->data());
      device.host_wrote(now->data());
    }
  }
}

// The module's own packs whose layout the new module changes start at its declared values
// (carry_state copies only packs of an unchanged layout): the members the host set in them
// (loom_argpack_set), as "pack.member", so the reload can say which settings it dropped.
std::vector<std::string> reset_members(const ModuleObject& m, const aot::LoadedModule& next) {
  const aot::LoadedModule& now = *m.loaded;
  std::vector<std::string> reset;
  for (const auto& [name, p] : m.argpacks) {
    const host::Argpack* old = now.argpack(name);
    const host::Argpack* fresh = next.argpack(name);
    if (p->host_set.empty() || !old || !fresh) continue;  // check_held: both have a held pack
    int t_old = type_index(now.metadata().argpack_types, old->type().name);
    int t_new = type_index(next.metadata().argpack_types, fresh->type().name);
    if (t_old >= 0 && t_new >= 0 &&
        same_layout(now.metadata().argpack_types, t_old, next.metadata().argpack_types, t_new))
      continue;
    for (const std::string& path : p->host_set) reset.push_back(name + "." + path);
  }
  return reset;
}

// After a swap: keeps the reset members for loom_module_get_reload_reset, forgets that the
// host set them, and warns through the host's log once per pack.
void report_reset_members(ModuleObject& m, std::vector<std::string> reset) {
  m.reload_resets = std::move(reset);
  std::map<std::string, std::string> members_by_pack;
  for (const std::string& path : m.reload_resets) {
    size_t dot = path.find('.');
    std::string pack = path.substr(0, dot);
    m.argpacks.at(pack)->host_set.erase(path.substr(dot + 1));
    std::string& members = members_by_pack[pack];
    members += (members.empty() ? "" : ", ") + path.substr(dot + 1);
  }
  if (!m.runtime->warn) return;
  for (const auto& [pack, members] : members_by_pack)
    m.runtime->warn("reload of " + m.what + ": argpack '" + pack +
                    "' has another layout in the new module, so the members the host set (" +
                    members + ") are back at the new module's values");
}

// The host's own frames may still write the old module's resources: on Vulkan, wait for
// the queue the host and Loom share (a reload is rare; frames never wait like this).
void wait_for_host_frames(RuntimeObject& r) {
  if (r.arch != LOOM_ARCH_VULKAN || !r.frames || r.frames->stats().launches == 0) return;
  if (r.engine_owned_queue) return;  // state is copied on the device (carry_state)
  vk::VulkanRuntime& v = capi::vulkan_of(r, "reload");
  v.flush();
  v.device().with_queue([&] { return vkQueueWaitIdle(v.device().queue()); });
}

LoomResult reload(LoomModule module, LoomReloadStatus* status, bool force) {
  const char* call = force ? "loom_module_reload" : "loom_module_reload_if_changed";
  return guard(call, LOOM_ERROR_DEVICE, [&] {
    ModuleObject& m = resolve(module, std::string(call) + ": module");
    LoomReloadStatus& out = need(status, "status");
    out = LOOM_RELOAD_UNCHANGED;
    if (m.path.empty()) return;
    // Time and size only say when to look (a stamp not yet settled says nothing); what was
    // read decides (runtime/common/file_version.h).
    FileStamp stamp = file_stamp(m.path);
    if (!force && (m.loaded_version.unchanged_at(stamp) || m.failed_version.unchanged_at(stamp)))
      return;
    std::unique_ptr<aot::LoadedModule> next;
    std::vector<std::string> reset;
    FileVersion version(stamp);  // no hash: a file that cannot be read is read again
    try {
      Source source = read_source(m.path, stamp);
      version = source.version;
      if (!force && m.loaded_version.same_content(version.hash)) {
        // Rewritten or touched with what runs (or back to it after a failed change).
        m.loaded_version = version;
        m.failed_version = FileVersion{};
        return;
      }
      if (!force && m.failed_version.same_content(version.hash)) {
        m.failed_version = version;  // what failed is not tried again until it changes
        return;
      }
      next = instantiate(*m.runtime, module_of(*m.runtime, m.path, source), m.what);
      check_held(m, *next);
      check_referenced(m, *next);
      wait_for_host_frames(*m.runtime);
      carry_state(*m.runtime, *m.loaded, *next);
      reset = reset_members(m, *next);
    } catch (...) {
      m.failed_version = version;
      throw;
    }
    for (auto& [key, k] : m.kernels) {
      k->index = next->find_kernel(k->name, k->template_args);
      k->frame = std::make_unique<host::LaunchFrame>(next->device_kernel(k->index).abi());
    }
    for (auto& [name, p] : m.pipelines) p->index = next->find_pipeline(name);
    std::unique_ptr<aot::LoadedModule> old = std::move(m.loaded);
    m.loaded = std::move(next);
    if (m.runtime->engine_owned_queue) {
      // The engine's frames in flight and the recorded copies still read the old module.
      RuntimeObject::Retired retired;
      retired.module = std::move(old);
      m.runtime->retire(std::move(retired));
    }
    old.reset();  // otherwise nothing in flight uses it any more: waited for above
    // Packs pointing at the old module's resources (freed just now) point at the new ones.
    rebind_referenced(m);
    m.loaded_version = version;
    m.failed_version = FileVersion{};
    ++m.generation;
    m.refresh_names();
    report_reset_members(m, std::move(reset));
    out = LOOM_RELOAD_SWAPPED;
  });
}

}  // namespace

extern "C" {

LoomResult loom_module_load(LoomRuntime runtime, const char* path, LoomModule* out) {
  return guard("loom_module_load", LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_module_load: runtime");
    need(path, "loom_module_load: path");
    need(out, "loom_module_load: out");
    if (!*path) throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, "loom_module_load: the path is empty");
    Source source = read_source(path, file_stamp(path));
    *out = make_module(r, instantiate(r, module_of(r, path, source), path), path, path,
                       source.version);
  });
}

LoomResult loom_module_load_memory(LoomRuntime runtime, const void* data, size_t size,
                                   const char* name, LoomModule* out) {
  return guard("loom_module_load_memory", LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_module_load_memory: runtime");
    need(data, "loom_module_load_memory: data");
    need(out, "loom_module_load_memory: out");
    std::string what = name && *name ? name : "<memory>";
    std::vector<uint8_t> bytes(static_cast<const uint8_t*>(data),
                               static_cast<const uint8_t*>(data) + size);
    aot::Module module = read_or_corrupt([&] { return aot::read_module_bytes(bytes, what); });
    *out = make_module(r, instantiate(r, std::move(module), what), "", what);
  });
}

LoomResult loom_module_destroy(LoomModule module) {
  return guard("loom_module_destroy", LOOM_ERROR_DEVICE, [&] {
    ModuleObject* m = capi::resolve_or_null(module, "loom_module_destroy: module");
    if (!m) return;
    RuntimeObject& r = *m->runtime;
    // A pack of another module pointing at this one's resources or packs would dangle.
    std::string user = capi::user_of(
        r, [&](const MemberRef& ref) { return owned_by(ref, *m); }, m);
    if (!user.empty())
      throw ApiError(LOOM_ERROR_IN_USE, "loom_module_destroy: " + m->what + ": " + user +
                                            " refers to the module's resources; set it to "
                                            "another one or destroy that pack first");
    r.modules.erase(m);
    RuntimeObject::Retired gone;
    gone.module = std::move(m->loaded);
    for (auto& [raw, pack] : m->created_packs) gone.packs.push_back(std::move(pack->own));
    r.retire(std::move(gone));
    std::unique_ptr<ModuleObject> handles(m);  // its handles and its objects' turn stale
  });
}

LoomResult loom_module_get_info(LoomModule module, LoomModuleInfo* out) {
  return guard("loom_module_get_info", LOOM_ERROR_DEVICE, [&] {
    ModuleObject& m = resolve(module, "loom_module_get_info: module");
    capi::check_out(out, "loom_module_get_info: out");
    const aot::ModuleMetadata& meta = m.loaded->metadata();
    LoomModuleInfo info{};
    info.arch = meta.arch == aot::Arch::Cpu ? LOOM_ARCH_CPU : LOOM_ARCH_VULKAN;
    info.format_version = static_cast<uint32_t>(meta.format_version);
    info.kernel_count = static_cast<uint32_t>(meta.kernels.size());
    info.pipeline_count = static_cast<uint32_t>(meta.pipelines.size());
    info.field_count = static_cast<uint32_t>(meta.fields.size());
    info.ndarray_count = static_cast<uint32_t>(meta.ndarrays.size());
    info.texture_count = static_cast<uint32_t>(meta.textures.size());
    info.argpack_count = static_cast<uint32_t>(meta.argpacks.size());
    info.generation = m.generation;
    capi::copy_name(info.name, meta.name);
    int level = m.loaded->cpu_level();
    if (level >= 0 && static_cast<size_t>(level) < meta.needs.cpu_levels.size())
      capi::copy_name(info.cpu_level, meta.needs.cpu_levels[static_cast<size_t>(level)].cpu);
    capi::write_out(out, info);
  });
}

LoomResult loom_module_get_item_name(LoomModule module, LoomModuleItem item, uint32_t index,
                                     const char** name) {
  return guard("loom_module_get_item_name", LOOM_ERROR_INVALID_ARGUMENT, [&] {
    ModuleObject& m = resolve(module, "loom_module_get_item_name: module");
    need(name, "loom_module_get_item_name: name");
    int32_t kind = capi::enum_int(item);
    if (kind < LOOM_ITEM_KERNEL || kind > LOOM_ITEM_ARGPACK)
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, Place{m.what},
                     "item: " + std::to_string(kind) + " is not a LoomModuleItem");
    const std::vector<std::string>& list = m.names[static_cast<size_t>(kind - 1)];
    if (index >= list.size())
      throw ApiError(LOOM_ERROR_NOT_FOUND, Place{m.what},
                     "index " + std::to_string(index) + " is past the module's " +
                         std::to_string(list.size()) + " item(s) of that kind");
    *name = list[index].c_str();
  });
}

LoomResult loom_module_reload_if_changed(LoomModule module, LoomReloadStatus* status) {
  return reload(module, status, false);
}
LoomResult loom_module_reload(LoomModule module, LoomReloadStatus* status) {
  return reload(module, status, true);
}

LoomResult loom_module_get_reload_reset(LoomModule module, uint32_t index,
                                        const char** pack_member_path) {
  return guard("loom_module_get_reload_reset", LOOM_ERROR_INVALID_ARGUMENT, [&] {
    const ModuleObject& m = resolve(module, "loom_module_get_reload_reset: module");
    const char*& out = need(pack_member_path, "loom_module_get_reload_reset: pack_member_path");
    if (index >= m.reload_resets.size())
      throw ApiError(LOOM_ERROR_NOT_FOUND, Place{m.what},
                     "loom_module_get_reload_reset: index " + std::to_string(index) +
                         "; the last reload reset " + std::to_string(m.reload_resets.size()) +
                         " host-set member(s)");
    out = m.reload_resets[index].c_str();
  });
}

}  // extern "C"
