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

const host::Ndarray& ndarray_argument(const LoomArgument& a, LoomRuntime_T* runtime, ValueType type,
                                      int ndim, const Place& where, const std::string& what) {
  if (enum_int(a.kind) != LOOM_ARGUMENT_NDARRAY)
    throw ApiError(LOOM_ERROR_WRONG_TYPE, where,
                   what + " takes an ndarray, given " + kind_name(a.kind));
  const LoomArray_T& arr = need(a.value.ndarray, (what + ": the ndarray").c_str());
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
  return nd;
}

const host::Texture& texture_argument(const LoomArgument& a, LoomRuntime_T* runtime, int ndim,
                                      const Place& where, const std::string& what) {
  if (enum_int(a.kind) != LOOM_ARGUMENT_TEXTURE)
    throw ApiError(LOOM_ERROR_WRONG_TYPE, where,
                   what + " takes a texture, given " + kind_name(a.kind));
  const LoomTexture_T& t = need(a.value.texture, (what + ": the texture").c_str());
  if (t.runtime != runtime)
    throw ApiError(LOOM_ERROR_WRONG_RUNTIME, where,
                   what + ": the texture belongs to another runtime");
  const host::Texture& tex = texture_of(t);
  if (ndim > 0 && tex.ndim() != ndim)
    throw ApiError(LOOM_ERROR_WRONG_NDIM, where,
                   what + " takes a " + std::to_string(ndim) + "-d texture, given a " +
                       std::to_string(tex.ndim()) + "-d one");
  return tex;
}

host::Argpack& argpack_argument(const LoomArgument& a, LoomModule_T& module,
                                const std::vector<ArgpackType>& types, int type, const Place& where,
                                const std::string& what) {
  if (enum_int(a.kind) != LOOM_ARGUMENT_ARGPACK)
    throw ApiError(LOOM_ERROR_WRONG_TYPE, where,
                   what + " takes an argpack, given " + kind_name(a.kind));
  LoomArgpack_T& p = need(a.value.argpack, (what + ": the argpack").c_str());
  if (p.module->runtime != module.runtime)
    throw ApiError(LOOM_ERROR_WRONG_RUNTIME, where,
                   what + ": the argpack belongs to another runtime");
  host::Argpack& pack = argpack_of(p);
  const ArgpackType& want = types.at(static_cast<size_t>(type));
  if (pack.type().name != want.name || pack.type().size != want.size)
    throw ApiError(LOOM_ERROR_WRONG_TYPE, where,
                   what + " takes an argpack of type '" + want.name + "', given one of type '" +
                       pack.type().name + "'");
  return pack;
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

}  // namespace

void bind_arguments(LoomKernel_T& k, uint32_t count, const LoomArgument* args) {
  LoomModule_T& m = *k.module;
  host::LaunchFrame& frame = *k.frame;
  const KernelABI& abi = frame.abi();
  if (count != abi.params.size()) {
    std::string names;
    for (const ParamDesc& p : abi.params) names += (names.empty() ? "" : ", ") + p.name;
    throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, Place{m.what, k.name},
                   "the kernel takes " + std::to_string(abi.params.size()) + " argument(s) (" +
                       names + "), given " + std::to_string(count));
  }
  if (count && !args) throw ApiError(LOOM_ERROR_NULL_HANDLE, Place{m.what, k.name}, "args is null");
  for (uint32_t i = 0; i < count; ++i) {
    const ParamDesc& p = abi.params[i];
    const LoomArgument& a = args[i];
    Place where{m.what, k.name, -1, p.name};
    std::string what = "parameter '" + p.name + "' (argument " + std::to_string(i) + ")";
    int param = static_cast<int>(i);
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
        frame.set_ndarray(param, ndarray_argument(a, m.runtime, p.type, p.ndim, where, what));
        break;
      case ParamKind::Texture: {
        const host::Texture& tex = texture_argument(a, m.runtime, p.ndim, where, what);
        for (const ResourceDesc& r : abi.resources)
          if (r.param == param && r.param_offset < 0 && r.format != tex.format())
            throw ApiError(LOOM_ERROR_WRONG_DTYPE, where,
                           what + " takes a texture of format " + texture_format_name(r.format) +
                               ", given " + texture_format_name(tex.format()));
        frame.set_texture(param, tex);
        break;
      }
      case ParamKind::Argpack:
        frame.set_argpack(param, argpack_argument(a, m, m.loaded->metadata().argpack_types,
                                                  p.argpack_type, where, what));
        break;
    }
  }
}

void set_member(LoomArgpack_T& p, const std::string& path, const LoomArgument& a) {
  host::Argpack& pack = argpack_of(p);
  LoomModule_T& m = *p.module;
  Place where{m.what, "", -1, pack.type().name + "." + path};
  const std::vector<ArgpackType>& types = m.loaded->metadata().argpack_types;
  const ArgpackMember* member = member_of(pack, types, path, where);
  std::string what = "member '" + path + "'";
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
    case MemberKind::Ndarray:
      pack.set_ndarray(path,
                       ndarray_argument(a, m.runtime, member->type, member->ndim, where, what));
      break;
    case MemberKind::Texture: {
      const host::Texture& tex = texture_argument(a, m.runtime, member->ndim, where, what);
      if (tex.format() != member->format)
        throw ApiError(LOOM_ERROR_WRONG_DTYPE, where,
                       what + " holds " + texture_format_name(member->format) +
                           " textures, given " + texture_format_name(tex.format()));
      pack.set_texture(path, tex);
      break;
    }
    case MemberKind::Pack:
    case MemberKind::Struct: {
      host::Argpack& nested = argpack_argument(a, m, types, member->nested, where, what);
      if (&nested == &pack)
        throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, where, what + ": a pack cannot hold itself");
      pack.set_pack(path, nested);
      break;
    }
  }
}

LoomArgument get_member(const LoomArgpack_T& p, const std::string& path) {
  const host::Argpack& pack = argpack_of(p);
  const LoomModule_T& m = *p.module;
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
