// Conversions between the C ABI's plain enums and the runtime's types; each throws
// ApiError(LOOM_ERROR_INVALID_ARGUMENT) naming `what` for a value outside its enum.
#pragma once

#include <loom/loom.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "runtime/common/kernel_abi.h"
#include "runtime/common/scalar.h"

namespace loom::capi {

// The integer a C caller passed where loom.h declares an enum. C lets a caller pass any int
// there, and loading a value outside the enumerators as the C++ enum is undefined behaviour
// (the optimiser may then remove the very check that refuses it), so the C ABI takes enums
// it is handed by reference and reads their bytes through this before comparing.
template <typename E>
int32_t enum_int(const E& value) {
  static_assert(std::is_enum_v<E> && sizeof(E) == sizeof(int32_t));
  int32_t v;
  std::memcpy(&v, &value, sizeof v);
  return v;
}

Scalar scalar_of(const LoomDataType& dtype, const std::string& what);
LoomDataType dtype_of(Scalar s);
TextureFormat texture_format_of(const LoomTextureFormat& format, const std::string& what);
LoomTextureFormat loom_format_of(TextureFormat format);
// "f32", "i32 x 3"
std::string describe(Scalar s, int components);
// Copies `text` into a fixed char array, cut to fit.
template <size_t N>
void copy_name(char (&dst)[N], const std::string& text) {
  size_t n = text.size() < N - 1 ? text.size() : N - 1;
  text.copy(dst, n);
  dst[n] = '\0';
}

}  // namespace loom::capi
