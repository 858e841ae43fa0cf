// Argpacks: a module's instances, packs the host creates of a module's types, members.
#include "engine_plugin/c_api/arguments.h"
#include "engine_plugin/c_api/c_api_error.h"
#include "engine_plugin/c_api/handles.h"

using namespace loom;
using loom::capi::ApiError;
using loom::capi::ArgpackObject;
using loom::capi::guard;
using loom::capi::ModuleObject;
using loom::capi::need;
using loom::capi::resolve;

extern "C" {

LoomResult loom_module_get_argpack(LoomModule module, const char* name, LoomArgpack* out) {
  return guard(LOOM_ERROR_NOT_FOUND, [&] {
    ModuleObject& m = resolve(module, "loom_module_get_argpack: module");
    need(name, "loom_module_get_argpack: name");
    need(out, "loom_module_get_argpack: out");
    auto it = m.argpacks.find(name);
    if (it != m.argpacks.end()) {
      *out = it->second->handle.as<LoomArgpack>();
      return;
    }
    if (!m.loaded->argpack(name))
      throw ApiError(LOOM_ERROR_NOT_FOUND, Place{m.what},
                     std::string("the module has no argpack '") + name + "'");
    auto p = std::make_unique<ArgpackObject>();
    p->module = &m;
    p->name = name;
    *out = p->handle.as<LoomArgpack>();
    m.argpacks[name] = std::move(p);
  });
}

LoomResult loom_argpack_create(LoomModule module, const char* type_name, LoomArgpack* out) {
  return guard(LOOM_ERROR_DEVICE, [&] {
    ModuleObject& m = resolve(module, "loom_argpack_create: module");
    need(type_name, "loom_argpack_create: type_name");
    need(out, "loom_argpack_create: out");
    const std::vector<ArgpackType>& types = m.loaded->metadata().argpack_types;
    int type = -1;
    std::string packs;
    for (size_t i = 0; i < types.size(); ++i) {
      if (types[i].name == type_name && types[i].is_pack) type = static_cast<int>(i);
      if (types[i].is_pack) packs += (packs.empty() ? "" : ", ") + types[i].name;
    }
    if (type < 0)
      throw ApiError(LOOM_ERROR_NOT_FOUND, Place{m.what},
                     std::string("the module has no argpack type '") + type_name + "'" +
                         (packs.empty() ? " (it has none)" : "; it has " + packs));
    auto p = std::make_unique<ArgpackObject>();
    p->module = &m;
    p->name = type_name;
    p->own = std::make_unique<host::Argpack>(types, type);
    m.runtime->device->add_argpack(type_name, *p->own);
    *out = p->handle.as<LoomArgpack>();
    m.created_packs[p.get()] = std::move(p);
  });
}

LoomResult loom_argpack_destroy(LoomArgpack pack) {
  return guard(LOOM_ERROR_INVALID_ARGUMENT, [&] {
    ArgpackObject* p = capi::resolve_or_null(pack, "loom_argpack_destroy: pack");
    if (!p) return;
    if (!p->own)
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, "loom_argpack_destroy: argpack '" + p->name +
                                                      "' belongs to module " + p->module->what +
                                                      " and goes with it");
    ModuleObject& m = *p->module;
    // Another pack bound to this one by reference copies its bytes at every launch.
    std::string user =
        capi::user_of(*m.runtime, [&](const capi::MemberRef& ref) { return ref.object == p; });
    if (!user.empty())
      throw ApiError(LOOM_ERROR_IN_USE, "loom_argpack_destroy: argpack '" + p->name + "' is " +
                                            user +
                                            "; bind another pack there or destroy that "
                                            "pack first");
    m.runtime->device->remove(p->own->data());
    m.created_packs.erase(p);  // its references and its handle go with it
  });
}

LoomResult loom_argpack_set(LoomArgpack pack, const char* path, const LoomArgument* value) {
  return guard(LOOM_ERROR_INVALID_ARGUMENT, [&] {
    ArgpackObject& p = resolve(pack, "loom_argpack_set: pack");
    need(path, "loom_argpack_set: path");
    capi::set_member(p, path, need(value, "loom_argpack_set: value"));
  });
}

LoomResult loom_argpack_get(LoomArgpack pack, const char* path, LoomArgument* out) {
  return guard(LOOM_ERROR_INVALID_ARGUMENT, [&] {
    const ArgpackObject& p = resolve(pack, "loom_argpack_get: pack");
    need(path, "loom_argpack_get: path");
    LoomArgument& o = need(out, "loom_argpack_get: out");
    o = capi::get_member(p, path);
  });
}

}  // extern "C"
