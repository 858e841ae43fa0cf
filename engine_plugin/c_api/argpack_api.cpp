// Argpacks: a module's instances, packs the host creates of a module's types, members.
#include "engine_plugin/c_api/arguments.h"
#include "engine_plugin/c_api/c_api_error.h"
#include "engine_plugin/c_api/handles.h"
#include "engine_plugin/c_api/info_structs.h"
#include "engine_plugin/c_api/types.h"

using namespace loom;
using loom::capi::ApiError;
using loom::capi::ArgpackObject;
using loom::capi::guard;
using loom::capi::ModuleObject;
using loom::capi::need;
using loom::capi::resolve;

namespace {

// A type of the module by name (packs and structs alike), or a NOT_FOUND naming the types.
const ArgpackType& type_named(const ModuleObject& m, const char* type_name, const char* call) {
  const std::vector<ArgpackType>& types = m.loaded->metadata().argpack_types;
  std::string names;
  for (const ArgpackType& t : types) {
    if (t.name == type_name) return t;
    names += (names.empty() ? "" : ", ") + t.name;
  }
  throw ApiError(LOOM_ERROR_NOT_FOUND, Place{m.what},
                 std::string(call) + ": the module has no argpack or struct type '" + type_name +
                     "'" + (names.empty() ? " (it has none)" : "; it has " + names));
}

LoomMemberKind member_kind_of(MemberKind k) {
  switch (k) {
    case MemberKind::Value: return LOOM_MEMBER_VALUE;
    case MemberKind::Struct: return LOOM_MEMBER_STRUCT;
    case MemberKind::Pack: return LOOM_MEMBER_PACK;
    case MemberKind::Ndarray: return LOOM_MEMBER_NDARRAY;
    case MemberKind::Texture: return LOOM_MEMBER_TEXTURE;
  }
  return LOOM_MEMBER_VALUE;
}

}  // namespace

extern "C" {

LoomResult loom_module_get_argpack_type(LoomModule module, const char* type_name, uint32_t* size,
                                        uint32_t* member_count) {
  return guard("loom_module_get_argpack_type", LOOM_ERROR_NOT_FOUND, [&] {
    const char* call = "loom_module_get_argpack_type";
    ModuleObject& m = resolve(module, "loom_module_get_argpack_type: module");
    need(type_name, "loom_module_get_argpack_type: type_name");
    uint32_t& bytes = need(size, "loom_module_get_argpack_type: size");
    uint32_t& count = need(member_count, "loom_module_get_argpack_type: member_count");
    const ArgpackType& t = type_named(m, type_name, call);
    bytes = t.size;
    count = static_cast<uint32_t>(t.members.size());
  });
}

LoomResult loom_module_get_argpack_member(LoomModule module, const char* type_name, uint32_t index,
                                          LoomArgpackMemberInfo* out) {
  return guard("loom_module_get_argpack_member", LOOM_ERROR_NOT_FOUND, [&] {
    const char* call = "loom_module_get_argpack_member";
    ModuleObject& m = resolve(module, "loom_module_get_argpack_member: module");
    need(type_name, "loom_module_get_argpack_member: type_name");
    capi::check_out(out, "loom_module_get_argpack_member: out");
    LoomArgpackMemberInfo info{};
    const ArgpackType& t = type_named(m, type_name, call);
    if (index >= t.members.size())
      throw ApiError(LOOM_ERROR_NOT_FOUND, Place{m.what},
                     std::string(call) + ": index " + std::to_string(index) + " is past type '" +
                         t.name + "''s " + std::to_string(t.members.size()) + " member(s)");
    const ArgpackMember& a = t.members[index];
    const std::vector<ArgpackType>& types = m.loaded->metadata().argpack_types;
    capi::copy_name(info.name, a.name);
    info.kind = member_kind_of(a.kind);
    if (a.kind == MemberKind::Value || a.kind == MemberKind::Ndarray) {
      info.dtype = capi::dtype_of(a.type.scalar);
      info.rows = a.type.rows;
      info.cols = a.type.cols;
    }
    info.ndim = static_cast<uint32_t>(a.ndim);
    if (a.kind == MemberKind::Texture) info.format = capi::loom_format_of(a.format);
    if ((a.kind == MemberKind::Struct || a.kind == MemberKind::Pack) && a.nested >= 0 &&
        static_cast<size_t>(a.nested) < types.size())
      capi::copy_name(info.nested_type, types[static_cast<size_t>(a.nested)].name);
    info.offset = a.offset;
    capi::write_out(out, info);
  });
}

LoomResult loom_module_get_argpack(LoomModule module, const char* name, LoomArgpack* out) {
  return guard("loom_module_get_argpack", LOOM_ERROR_NOT_FOUND, [&] {
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
  return guard("loom_argpack_create", LOOM_ERROR_DEVICE, [&] {
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
  return guard("loom_argpack_destroy", LOOM_ERROR_INVALID_ARGUMENT, [&] {
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
  return guard("loom_argpack_set", LOOM_ERROR_INVALID_ARGUMENT, [&] {
    ArgpackObject& p = resolve(pack, "loom_argpack_set: pack");
    need(path, "loom_argpack_set: path");
    capi::set_member(p, path, need(value, "loom_argpack_set: value"));
    p.host_set.insert(path);
  });
}

LoomResult loom_argpack_get(LoomArgpack pack, const char* path, LoomArgument* out) {
  return guard("loom_argpack_get", LOOM_ERROR_INVALID_ARGUMENT, [&] {
    const ArgpackObject& p = resolve(pack, "loom_argpack_get: pack");
    need(path, "loom_argpack_get: path");
    LoomArgument& o = need(out, "loom_argpack_get: out");
    o = capi::get_member(p, path);
  });
}

}  // extern "C"
