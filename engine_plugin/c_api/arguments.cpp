#include "engine_plugin/c_api/arguments.h"

#include <cstring>
#include <vector>

#include "engine_plugin/c_api/c_api_error.h"
#include "engine_plugin/c_api/types.h"
#include "runtime/common/argpack_layout.h"
#include "runtime/host/scalar_traits.h"

namespace loom::capi {

namespace {

const char* kind_name(const LoomArgumentKind& k) {
  switch (enum_int(k)) {
    case LOOM_ARGUMENT_VALUE: return "a value";
    case LOOM_ARGUMENT_NDARRAY: return "an ndarray";
    case LOOM_ARGUMENT_TEXTURE: return "a texture";
    case LOOM_ARGUMENT_ARGPACK: return "an argpack";
  }
  return "an argument of unknown kind";
}

// An argument whose kind is none of LoomArgumentKind's is the caller's mistake, not a wrong
// type: refused as such before anything reads it as one kind or another.
void check_kind(const LoomArgument& a, const Place& where, const std::string& what) {
  int32_t kind = enum_int(a.kind);
  if (kind < LOOM_ARGUMENT_VALUE || kind > LOOM_ARGUMENT_ARGPACK)
    throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, where,
                   what + ": kind " + std::to_string(kind) +
                       " is not a LoomArgumentKind (1 VALUE, 2 NDARRAY, 3 TEXTURE, 4 ARGPACK)");
}

// The components of a VALUE argument as T, after checking they are exactly `type`.
template <typename T>
std::vector<T> components(const LoomArgument& a, ValueType type, const Place& where,
                          const std::string& what) {
  if (enum_int(a.kind) != LOOM_ARGUMENT_VALUE)
    throw ApiError(
        LOOM_ERROR_WRONG_TYPE, where,
        what + " takes a " + value_type_name(type) + " value, given " + kind_name(a.kind));
  Scalar given = scalar_of(a.dtype, what);
  if (given != type.scalar)
    throw ApiError(LOOM_ERROR_WRONG_DTYPE, where,
                   what + " is " + std::string(scalar_name(type.scalar)) + ", given " +
                       std::string(scalar_name(given)));
  if (a.count != static_cast<uint32_t>(type.components()))
    throw ApiError(LOOM_ERROR_WRONG_DTYPE, where,
                   what + " is a " + value_type_name(type) + " of " +
                       std::to_string(type.components()) + " component(s), given " +
                       std::to_string(a.count));
  std::vector<T> out(a.count);
  if constexpr (std::is_same_v<T, bool>) {
    for (uint32_t i = 0; i < a.count; ++i) out[i] = a.value.i32[i] != 0;
  } else {
    std::memcpy(out.data(), &a.value, sizeof(T) * a.count);
  }
  return out;
}

// A handle inside an argument, resolved; errors name the call's place and the argument.
template <typename H>
typename HandleTraits<H>::Object& handle_in(H handle, const Place& where, const std::string& what) {
  try {
    return resolve(handle, what);
  } catch (const ApiError& e) {
    throw ApiError(e.code(), where, e.message());
  }
}

const ArrayObject& ndarray_argument(const LoomArgument& a, RuntimeObject* runtime, ValueType type,
                                    int ndim, const Place& where, const std::string& what) {
  if (enum_int(a.kind) != LOOM_ARGUMENT_NDARRAY)
    throw ApiError(LOOM_ERROR_WRONG_TYPE, where,
                   what + " takes an ndarray, given " + kind_name(a.kind));
  const ArrayObject& arr = handle_in(a.value.ndarray, where, what + ": the ndarray");
  if (arr.is_field)
    throw ApiError(LOOM_ERROR_WRONG_TYPE, where,
                   what + " takes an ndarray; '" + arr.name +
                       "' is a field of the module (kernels use fields directly)");
  if (arr.runtime != runtime)
    throw ApiError(LOOM_ERROR_WRONG_RUNTIME, where,
                   what + ": the ndarray belongs to another runtime");
  const host::Ndarray& nd = *ndarray_of(arr);
  if ((type.scalar != Scalar::Void && nd.dtype() != type.scalar) ||
      nd.components() != type.components())
    throw ApiError(LOOM_ERROR_WRONG_DTYPE, where,
                   what + " takes an ndarray of " + describe(type.scalar, type.components()) +
                       ", given one of " + describe(nd.dtype(), nd.components()));
  if (ndim > 0 && nd.ndim() != ndim)
    throw ApiError(LOOM_ERROR_WRONG_NDIM, where,
                   what + " takes an ndarray of " + std::to_string(ndim) +
                       " dimension(s), given one of " + std::to_string(nd.ndim()));
  return arr;
}

const TextureObject& texture_argument(const LoomArgument& a, RuntimeObject* runtime, int ndim,
                                      const Place& where, const std::string& what) {
  if (enum_int(a.kind) != LOOM_ARGUMENT_TEXTURE)
    throw ApiError(LOOM_ERROR_WRONG_TYPE, where,
                   what + " takes a texture, given " + kind_name(a.kind));
  const TextureObject& t = handle_in(a.value.texture, where, what + ": the texture");
  if (t.runtime != runtime)
    throw ApiError(LOOM_ERROR_WRONG_RUNTIME, where,
                   what + ": the texture belongs to another runtime");
  const host::Texture& tex = texture_of(t);
  if (ndim > 0 && tex.ndim() != ndim)
    throw ApiError(LOOM_ERROR_WRONG_NDIM, where,
                   what + " takes a " + std::to_string(ndim) + "-d texture, given a " +
                       std::to_string(tex.ndim()) + "-d one");
  return t;
}

ArgpackObject& argpack_argument(const LoomArgument& a, ModuleObject& module,
                                const std::vector<ArgpackType>& types, int type, const Place& where,
                                const std::string& what) {
  if (enum_int(a.kind) != LOOM_ARGUMENT_ARGPACK)
    throw ApiError(LOOM_ERROR_WRONG_TYPE, where,
                   what + " takes an argpack, given " + kind_name(a.kind));
  ArgpackObject& p = handle_in(a.value.argpack, where, what + ": the argpack");
  if (p.module->runtime != module.runtime)
    throw ApiError(LOOM_ERROR_WRONG_RUNTIME, where,
                   what + ": the argpack belongs to another runtime");
  host::Argpack& pack = argpack_of(p);
  const ArgpackType& want = types.at(static_cast<size_t>(type));
  if (pack.type().name != want.name || pack.type().size != want.size)
    throw ApiError(LOOM_ERROR_WRONG_TYPE, where,
                   what + " takes an argpack of type '" + want.name + "', given one of type '" +
                       pack.type().name + "'");
  return p;
}

// Member `path` of `pack`, looked up in the module's type table (where the pack's type has
// the same layout: created packs are checked at every reload).
const ArgpackMember* member_of(const host::Argpack& pack, const std::vector<ArgpackType>& types,
                               const std::string& path, const Place& where) {
  uint32_t offset = 0;
  for (size_t i = 0; i < types.size(); ++i)
    if (types[i].name == pack.type().name)
      if (const ArgpackMember* m = find_member(types, static_cast<int>(i), path, &offset)) return m;
  throw ApiError(LOOM_ERROR_NOT_FOUND, where,
                 "argpack type '" + pack.type().name + "' has no member '" + path + "'");
}

// The path of the resource member whose record is at byte `offset` of a pack of `type`.
std::string member_at(const std::vector<ArgpackType>& types, int type, uint32_t offset,
                      const std::string& prefix = "") {
  for (const ArgpackMember& m : types.at(static_cast<size_t>(type)).members) {
    std::string path = prefix + m.name;
    if ((m.kind == MemberKind::Ndarray || m.kind == MemberKind::Texture) && m.offset == offset)
      return path;
    if ((m.kind == MemberKind::Struct || m.kind == MemberKind::Pack) && offset >= m.offset &&
        offset < m.offset + types.at(static_cast<size_t>(m.nested)).size) {
      std::string inner = member_at(types, m.nested, offset - m.offset, path + ".");
      if (!inner.empty()) return inner;
    }
  }
  return "";
}

// Every ndarray and texture member of `pack` that the kernel reads must be set: an unset
// record holds a null address the kernel would dereference.
void check_pack_resources(const KernelABI& abi, int param, host::Argpack& pack,
                          const std::vector<ArgpackType>& types, int type, const Place& where) {
  pack.sync();  // bound nested packs' members are read from their copies in this pack
  for (const ResourceDesc& r : abi.resources) {
    if (r.param != param || r.param_offset < 0) continue;
    auto offset = static_cast<uint32_t>(r.param_offset);
    if (pack.resource_view_at(offset).data) continue;
    std::string member = member_at(types, type, offset);
    throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, where,
                   "member '" + (member.empty() ? "at byte " + std::to_string(offset) : member) +
                       "' (" + (r.kind == ResourceKind::Texture ? "a texture" : "an ndarray") +
                       ") is not set; the kernel uses it");
  }
}

// A texture parameter's format is compiled into the kernel.
void check_texture_format(const KernelABI& abi, int param, const host::Texture& tex,
                          const Place& where, const std::string& what) {
  for (const ResourceDesc& r : abi.resources)
    if (r.param == param && r.param_offset < 0 && r.format != tex.format())
      throw ApiError(LOOM_ERROR_WRONG_DTYPE, where,
                     what + " takes a texture of format " + texture_format_name(r.format) +
                         ", given " + texture_format_name(tex.format()));
}

bool has_prefix(const std::string& path, const std::string& prefix) {
  return path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
         path[prefix.size()] == '.';
}

// The pack that holds member `path` of `p`, following the nested packs bound by reference
// through the C ABI (as host::Argpack follows its bindings); `rest` the path inside it.
ArgpackObject& holder_of(ArgpackObject& p, const std::string& path, std::string* rest,
                         int depth = 0) {
  for (auto& [key, ref] : p.refs)
    if (ref.kind == HandleKind::Argpack && has_prefix(path, key) && depth < 16)
      return holder_of(*static_cast<ArgpackObject*>(ref.object), path.substr(key.size() + 1), rest,
                       depth + 1);
  *rest = path;
  return p;
}

// Forgets the references at `path` and below it.
void release_refs(ArgpackObject& p, const std::string& path) {
  std::erase_if(p.refs, [&](const auto& entry) {
    return entry.first == path || has_prefix(entry.first, path);
  });
}

// The ndarrays and textures `p` refers to, through its bound packs, with their paths: what
// a struct member copied from `p` now holds the addresses of.
void collect_resources(const ArgpackObject& p, const std::string& prefix,
                       std::map<std::string, MemberRef>* out, int depth = 0) {
  for (const auto& [key, ref] : p.refs) {
    if (ref.kind != HandleKind::Argpack)
      (*out)[prefix + key] = ref;
    else if (depth < 16)
      collect_resources(*static_cast<const ArgpackObject*>(ref.object), prefix + key + ".", out,
                        depth + 1);
  }
}

// The name of the module ndarray argpack `pack` holds at member `path`, found by its storage
// (a member records the address of the ndarray set there); "" when it holds none of the
// module's there (none set, or one the engine made).
std::string module_ndarray_at(const ModuleObject& m, const host::Argpack& pack,
                              const std::string& path) {
  const uint8_t* data = pack.resource_view(path).data;
  if (!data) return "";
  for (const std::string& name : m.loaded->resource_names()) {
    const host::Ndarray* nd = m.loaded->ndarray(name);
    if (nd && nd->data() == data) return name;
  }
  return "";
}

// K.grad / K.dual given K's arguments only: each ndarray twin bound to the companion
// (NAME.grad / NAME.dual) of the module ndarray given for its parameter, or held by the
// argpack member it twins; each value twin (a tangent's direction) to 0, as Program::launch
// binds them. An argpack twin has no default.
void bind_twins(KernelObject& k, const aot::Derivation& d, const LoomArgument* args) {
  ModuleObject& m = *k.module;
  host::LaunchFrame& frame = *k.frame;
  const KernelABI& abi = frame.abi();
  const size_t all_count = aot::launch_param_count(m.loaded->kernel_info(k.index));
  const std::string suffix = aot::derivation_suffix(d.mode);
  for (const aot::Derivation::Twin& t : d.twins) {
    const ParamDesc& twin = abi.params.at(static_cast<size_t>(t.param));
    const ParamDesc& of = abi.params.at(static_cast<size_t>(t.of));
    Place where{m.what, k.name, -1, twin.name};
    if (twin.kind == ParamKind::Value) {
      host::with_scalar_type(twin.type.scalar, [&](auto zero) {
        using T = decltype(zero);
        frame.set_components<T>(t.param,
                                std::vector<T>(static_cast<size_t>(twin.type.components()), T{}));
      });
      continue;
    }
    if (twin.kind == ParamKind::Argpack)  // a tangent's direction pack: no default to take
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, where,
                     "'" + twin.name + "' is an argpack (the direction of '" + of.name +
                         "'s members), which has no default: give all " +
                         std::to_string(all_count) + " arguments, '" + twin.name + "' included");
    std::string all =
        "give all " + std::to_string(all_count) + " arguments, '" + twin.name + "' included";
    if (!t.member.empty()) {  // bind_arguments checked the argument: an argpack of the module
      const std::vector<ArgpackType>& types = m.loaded->metadata().argpack_types;
      const host::Argpack& pack = argpack_of(argpack_argument(
          args[t.of], m, types, of.argpack_type, where, "parameter '" + of.name + "'"));
      std::string held = module_ndarray_at(m, pack, t.member);
      if (held.empty())
        throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, where,
                       "member '" + t.member + "' of the argpack given for '" + of.name +
                           "' holds no ndarray of the module, so '" + twin.name +
                           "' has no companion to default to: " + all);
      host::Ndarray* nd = m.loaded->ndarray(held + suffix);
      if (!nd)
        throw ApiError(
            LOOM_ERROR_NOT_FOUND, where,
            "member '" + t.member + "' of the argpack given for '" + of.name + "' holds ndarray '" +
                held + "', and the module has no '" + held + suffix + "' for '" + twin.name +
                "' (declare '" + held + "' " +
                (d.mode == aot::Derivation::Mode::Adjoint ? "needs_grad" : "needs_dual") +
                "), or " + all);
      frame.set_ndarray(t.param, *nd);
      continue;
    }
    // bind_arguments checked the argument: an ndarray of this runtime.
    const ArrayObject& given = resolve(args[t.of].value.ndarray, "the ndarray");
    if (!given.module)
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, where,
                     "parameter '" + of.name +
                         "' is given an ndarray the engine made, which has no companion '" +
                         of.name + suffix + "' in the module: " + all);
    std::string companion = given.name + suffix;
    host::Ndarray* nd = given.module->loaded->ndarray(companion);
    if (!nd)
      throw ApiError(LOOM_ERROR_NOT_FOUND, where,
                     "parameter '" + of.name + "' is given ndarray '" + given.name +
                         "', and the module has no '" + companion + "' for '" + twin.name +
                         "' (declare '" + given.name + "' " +
                         (d.mode == aot::Derivation::Mode::Adjoint ? "needs_grad" : "needs_dual") +
                         "), or " + all);
    if (nd->dtype() != twin.type.scalar || nd->components() != twin.type.components() ||
        nd->ndim() != twin.ndim)
      throw ApiError(LOOM_ERROR_WRONG_DTYPE, where,
                     "'" + companion + "' is an ndarray of " +
                         describe(nd->dtype(), nd->components()) + " with " +
                         std::to_string(nd->ndim()) + " dimension(s); '" + twin.name + "' takes " +
                         describe(twin.type.scalar, twin.type.components()) + " with " +
                         std::to_string(twin.ndim));
    frame.set_ndarray(t.param, *nd);
  }
}

}  // namespace

void bind_arguments(KernelObject& k, uint32_t count, const LoomArgument* args) {
  ModuleObject& m = *k.module;
  host::LaunchFrame& frame = *k.frame;
  const KernelABI& abi = frame.abi();
  const aot::Derivation& derived = m.loaded->kernel_info(k.index).derived;
  // A debug adjoint's shadows, its last parameters, are bound by the module at launch.
  const size_t all = aot::launch_param_count(m.loaded->kernel_info(k.index));
  const size_t own = all - derived.twins.size();
  const bool twins_bound_here = !derived.twins.empty() && count == own;
  if (count != all && !twins_bound_here) {
    std::string names;
    for (size_t i = 0; i < all; ++i) names += (names.empty() ? "" : ", ") + abi.params[i].name;
    throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, Place{m.what, k.name},
                   "the kernel takes " + std::to_string(all) + " argument(s) (" + names + ")" +
                       (derived.twins.empty() ? std::string()
                                              : ", or the first " + std::to_string(own) +
                                                    " (its twins then bound to the companions)") +
                       ", given " + std::to_string(count));
  }
  if (count && !args) throw ApiError(LOOM_ERROR_NULL_HANDLE, Place{m.what, k.name}, "args is null");
  for (uint32_t i = 0; i < count; ++i) {
    const ParamDesc& p = abi.params[i];
    const LoomArgument& a = args[i];
    Place where{m.what, k.name, -1, p.name};
    std::string what = "parameter '" + p.name + "' (argument " + std::to_string(i) + ")";
    int param = static_cast<int>(i);
    check_kind(a, where, what);
    switch (p.kind) {
      case ParamKind::Value:
        if (p.type.scalar == Scalar::Bool) {
          frame.set_value<bool>(param, components<bool>(a, p.type, where, what).at(0));
          break;
        }
        host::with_scalar_type(p.type.scalar, [&](auto zero) {
          using T = decltype(zero);
          frame.set_components<T>(param, components<T>(a, p.type, where, what));
        });
        break;
      case ParamKind::Ndarray:
        frame.set_ndarray(param,
                          *ndarray_of(ndarray_argument(a, m.runtime, p.type, p.ndim, where, what)));
        break;
      case ParamKind::Texture: {
        const host::Texture& tex = texture_of(texture_argument(a, m.runtime, p.ndim, where, what));
        check_texture_format(abi, param, tex, where, what);
        frame.set_texture(param, tex);
        break;
      }
      case ParamKind::Argpack: {
        const std::vector<ArgpackType>& types = m.loaded->metadata().argpack_types;
        host::Argpack& pack =
            argpack_of(argpack_argument(a, m, types, p.argpack_type, where, what));
        check_pack_resources(abi, param, pack, types, p.argpack_type, where);
        frame.set_argpack(param, pack);
        break;
      }
    }
  }
  if (twins_bound_here) bind_twins(k, derived, args);
}

aot::PipelineArgument pipeline_argument(ModuleObject& m, const KernelABI& abi, int param,
                                        const LoomArgument& a, const Place& where,
                                        const std::string& what) {
  const ParamDesc& p = abi.params.at(static_cast<size_t>(param));
  check_kind(a, where, what);
  switch (p.kind) {
    case ParamKind::Value: {
      if (p.type.scalar == Scalar::Bool) {
        uint8_t b = components<bool>(a, p.type, where, what).at(0) ? 1 : 0;
        return aot::PipelineArgument::value(p.type, &b);
      }
      aot::PipelineArgument out;
      host::with_scalar_type(p.type.scalar, [&](auto zero) {
        using T = decltype(zero);
        out = aot::PipelineArgument::value(p.type, components<T>(a, p.type, where, what).data());
      });
      return out;
    }
    case ParamKind::Ndarray:
      return aot::PipelineArgument::of(
          *ndarray_of(ndarray_argument(a, m.runtime, p.type, p.ndim, where, what)));
    case ParamKind::Texture: {
      const host::Texture& tex = texture_of(texture_argument(a, m.runtime, p.ndim, where, what));
      check_texture_format(abi, param, tex, where, what);
      return aot::PipelineArgument::of(tex);
    }
    case ParamKind::Argpack: {
      const std::vector<ArgpackType>& types = m.loaded->metadata().argpack_types;
      host::Argpack& pack = argpack_of(argpack_argument(a, m, types, p.argpack_type, where, what));
      check_pack_resources(abi, param, pack, types, p.argpack_type, where);
      return aot::PipelineArgument::of(pack);
    }
  }
  throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, where, what + " is of an unknown kind");
}

void set_member(ArgpackObject& p, const std::string& path, const LoomArgument& a) {
  host::Argpack& pack = argpack_of(p);
  ModuleObject& m = *p.module;
  Place where{m.what, "", -1, pack.type().name + "." + path};
  const std::vector<ArgpackType>& types = m.loaded->metadata().argpack_types;
  const ArgpackMember* member = member_of(pack, types, path, where);
  std::string what = "member '" + path + "'";
  check_kind(a, where, what);
  std::string rest;
  ArgpackObject& holder = holder_of(p, path, &rest);
  switch (member->kind) {
    case MemberKind::Value:
      if (member->type.scalar == Scalar::Bool) {
        pack.set<bool>(path, components<bool>(a, member->type, where, what).at(0));
        break;
      }
      host::with_scalar_type(member->type.scalar, [&](auto zero) {
        using T = decltype(zero);
        pack.set_components<T>(path, components<T>(a, member->type, where, what));
      });
      break;
    case MemberKind::Ndarray: {
      const ArrayObject& arr =
          ndarray_argument(a, m.runtime, member->type, member->ndim, where, what);
      pack.set_ndarray(path, *ndarray_of(arr));
      holder.refs[rest] = MemberRef{HandleKind::Array, const_cast<ArrayObject*>(&arr)};
      break;
    }
    case MemberKind::Texture: {
      const TextureObject& t = texture_argument(a, m.runtime, member->ndim, where, what);
      const host::Texture& tex = texture_of(t);
      if (tex.format() != member->format)
        throw ApiError(LOOM_ERROR_WRONG_DTYPE, where,
                       what + " holds " + texture_format_name(member->format) +
                           " textures, given " + texture_format_name(tex.format()));
      pack.set_texture(path, tex);
      holder.refs[rest] = MemberRef{HandleKind::Texture, const_cast<TextureObject*>(&t)};
      break;
    }
    case MemberKind::Pack:
    case MemberKind::Struct: {
      ArgpackObject& nested_object = argpack_argument(a, m, types, member->nested, where, what);
      host::Argpack& nested = argpack_of(nested_object);
      if (&nested == &pack || &nested_object == &holder)
        throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, where, what + ": a pack cannot hold itself");
      pack.set_pack(path, nested);
      release_refs(holder, rest);
      if (member->kind == MemberKind::Pack) {
        holder.refs[rest] = MemberRef{HandleKind::Argpack, &nested_object};
        break;
      }
      // A struct member is a copy: it holds the addresses the copied pack held.
      std::map<std::string, MemberRef> copied;
      collect_resources(nested_object, rest + ".", &copied);
      holder.refs.insert(copied.begin(), copied.end());
      break;
    }
  }
}

LoomArgument get_member(const ArgpackObject& p, const std::string& path) {
  const host::Argpack& pack = argpack_of(p);
  const ModuleObject& m = *p.module;
  Place where{m.what, "", -1, pack.type().name + "." + path};
  const ArgpackMember* member = member_of(pack, m.loaded->metadata().argpack_types, path, where);
  if (member->kind != MemberKind::Value)
    throw ApiError(LOOM_ERROR_NOT_SUPPORTED, where,
                   "member '" + path + "' is not a value; only value members are read back");
  LoomArgument out{};
  out.kind = LOOM_ARGUMENT_VALUE;
  out.dtype = dtype_of(member->type.scalar);
  out.count = static_cast<uint32_t>(member->type.components());
  if (member->type.scalar == Scalar::Bool) {
    out.value.i32[0] = pack.get<bool>(path) ? 1 : 0;
    return out;
  }
  host::with_scalar_type(member->type.scalar, [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> values = pack.get_components<T>(path, member->type.components());
    std::memcpy(&out.value, values.data(), sizeof(T) * values.size());
  });
  return out;
}

}  // namespace loom::capi
