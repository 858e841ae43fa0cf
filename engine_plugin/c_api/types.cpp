#include "engine_plugin/c_api/types.h"

#include "engine_plugin/c_api/c_api_error.h"

namespace loom::capi {

Scalar scalar_of(const LoomDataType& dtype, const std::string& what) {
  switch (enum_int(dtype)) {
    case LOOM_DTYPE_BOOL: return Scalar::Bool;
    case LOOM_DTYPE_I8: return Scalar::I8;
    case LOOM_DTYPE_I16: return Scalar::I16;
    case LOOM_DTYPE_I32: return Scalar::I32;
    case LOOM_DTYPE_I64: return Scalar::I64;
    case LOOM_DTYPE_U8: return Scalar::U8;
    case LOOM_DTYPE_U16: return Scalar::U16;
    case LOOM_DTYPE_U32: return Scalar::U32;
    case LOOM_DTYPE_U64: return Scalar::U64;
    case LOOM_DTYPE_F32: return Scalar::F32;
    case LOOM_DTYPE_F64: return Scalar::F64;
  }
  throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                 what + ": " + std::to_string(enum_int(dtype)) + " is not a LoomDataType");
}

LoomDataType dtype_of(Scalar s) {
  switch (s) {
    case Scalar::Bool: return LOOM_DTYPE_BOOL;
    case Scalar::I8: return LOOM_DTYPE_I8;
    case Scalar::I16: return LOOM_DTYPE_I16;
    case Scalar::I32: return LOOM_DTYPE_I32;
    case Scalar::I64: return LOOM_DTYPE_I64;
    case Scalar::U8: return LOOM_DTYPE_U8;
    case Scalar::U16: return LOOM_DTYPE_U16;
    case Scalar::U32: return LOOM_DTYPE_U32;
    case Scalar::U64: return LOOM_DTYPE_U64;
    case Scalar::F32: return LOOM_DTYPE_F32;
    case Scalar::F64: return LOOM_DTYPE_F64;
    case Scalar::Void: break;
  }
  return static_cast<LoomDataType>(0);
}

TextureFormat texture_format_of(const LoomTextureFormat& format, const std::string& what) {
  switch (enum_int(format)) {
    case LOOM_TEXTURE_R32F: return TextureFormat::R32F;
    case LOOM_TEXTURE_RG32F: return TextureFormat::RG32F;
    case LOOM_TEXTURE_RGBA32F: return TextureFormat::RGBA32F;
    case LOOM_TEXTURE_RGBA8: return TextureFormat::RGBA8;
  }
  throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                 what + ": " + std::to_string(enum_int(format)) + " is not a LoomTextureFormat");
}

LoomTextureFormat loom_format_of(TextureFormat format) {
  switch (format) {
    case TextureFormat::R32F: return LOOM_TEXTURE_R32F;
    case TextureFormat::RG32F: return LOOM_TEXTURE_RG32F;
    case TextureFormat::RGBA32F: return LOOM_TEXTURE_RGBA32F;
    case TextureFormat::RGBA8: return LOOM_TEXTURE_RGBA8;
  }
  return LOOM_TEXTURE_RGBA32F;
}

std::string describe(Scalar s, int components) {
  std::string text(scalar_name(s));
  if (components != 1) text += " x " + std::to_string(components);
  return text;
}

}  // namespace loom::capi
