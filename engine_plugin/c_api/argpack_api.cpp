// Argpacks: a module's instances, packs the host creates of a module's types, members.
#include "engine_plugin/c_api/arguments.h"
#include "engine_plugin/c_api/c_api_error.h"
#include "engine_plugin/c_api/handles.h"

using namespace loom;
using loom::capi::ApiError;
using loom::capi::guard;
using loom::capi::need;

extern "C" {

LoomResult loom_module_get_argpack(LoomModule module, const char* name, LoomArgpack* out) {
  return guard(LOOM_ERROR_NOT_FOUND, [&] {
    LoomModule_T& m = need(module, "module");
    need(name, "loom_module_get_argpack: name");
    need(out, "loom_module_get_argpack: out");
    auto it = m.argpacks.find(name);
    if (it != m.argpacks.end()) {
      *out = it->second.get();
      return;
    }
    if (!m.loaded->argpack(name))
      throw ApiError(LOOM_ERROR_NOT_FOUND, Place{m.what},
                     std::string("the module has no argpack '") + name + "'");
    auto p = std::make_unique<LoomArgpack_T>();
    p->module = &m;
    p->name = name;
    *out = p.get();
    m.argpacks[name] = std::move(p);
  });
}

LoomResult loom_argpack_create(LoomModule module, const char* type_name, LoomArgpack* out) {
  return guard(LOOM_ERROR_DEVICE, [&] {
    LoomModule_T& m = need(module, "module");
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
    auto p = std::make_unique<LoomArgpack_T>();
    p->module = &m;
    p->name = type_name;
    p->own = std::make_unique<host::Argpack>(types, type);
    m.runtime->device->add_argpack(type_name, *p->own);
    *out = p.get();
    m.created_packs[p.get()] = std::move(p);
  });
}

LoomResult loom_argpack_destroy(LoomArgpack pack) {
  return guard(LOOM_ERROR_INVALID_ARGUMENT, [&] {
    if (!pack) return;
    if (!pack->own)
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, "loom_argpack_destroy: argpack '" + pack->name +
                                                      "' belongs to module " + pack->module->what +
                                                      " and goes with it");
    LoomModule_T& m = *pack->module;
    m.runtime->device->remove(pack->own->data());
    m.created_packs.erase(pack);
  });
}

LoomResult loom_argpack_set(LoomArgpack pack, const char* path, const LoomArgument* value) {
  return guard(LOOM_ERROR_INVALID_ARGUMENT, [&] {
    LoomArgpack_T& p = need(pack, "argpack");
    need(path, "loom_argpack_set: path");
    capi::set_member(p, path, need(value, "loom_argpack_set: value"));
  });
}

LoomResult loom_argpack_get(LoomArgpack pack, const char* path, LoomArgument* out) {
  return guard(LOOM_ERROR_INVALID_ARGUMENT, [&] {
    LoomArgpack_T& p = need(pack, "argpack");
    need(path, "loom_argpack_get: path");
    LoomArgument& o = need(out, "loom_argpack_get: out");
    o = capi::get_member(p, path);
  });
}

}  // extern "C"
