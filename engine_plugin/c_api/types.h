// Conversions between the C ABI's plain enums and the runtime's types; each throws
// ApiError(LOOM_ERROR_INVALID_ARGUMENT) naming `what` for a value outside its enum.
#pragma once

#include <loom/loom.h>

#include <string>

#include "runtime/common/kernel_abi.h"
#include "runtime/common/scalar.h"

namespace loom::capi {

Scalar scalar_of(LoomDataType dtype, const std::string& what);
LoomDataType dtype_of(Scalar s);
TextureFormat texture_format_of(LoomTextureFormat format, const std::string& what);
LoomTextureFormat loom_format_of(TextureFormat format);
// The VkFormat of Loom's images of `format`, and back (VK_FORMAT_UNDEFINED / false for others).
VkFormat vk_format_of(TextureFormat format);
bool texture_format_of(VkFormat format, TextureFormat* out);
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
