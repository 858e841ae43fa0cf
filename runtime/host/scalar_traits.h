// The Scalar that stores a C++ type, for typed accessors.
#pragma once

#include <cstdint>

#include "runtime/common/scalar.h"

namespace loom::host {

template <typename T>
constexpr Scalar scalar_of();
template <> constexpr Scalar scalar_of<bool>() { return Scalar::Bool; }
template <> constexpr Scalar scalar_of<int8_t>() { return Scalar::I8; }
template <> constexpr Scalar scalar_of<int16_t>() { return Scalar::I16; }
template <> constexpr Scalar scalar_of<int32_t>() { return Scalar::I32; }
template <> constexpr Scalar scalar_of<int64_t>() { return Scalar::I64; }
template <> constexpr Scalar scalar_of<uint8_t>() { return Scalar::U8; }
template <> constexpr Scalar scalar_of<uint16_t>() { return Scalar::U16; }
template <> constexpr Scalar scalar_of<uint32_t>() { return Scalar::U32; }
template <> constexpr Scalar scalar_of<uint64_t>() { return Scalar::U64; }
template <> constexpr Scalar scalar_of<float>() { return Scalar::F32; }
template <> constexpr Scalar scalar_of<double>() { return Scalar::F64; }

}  // namespace loom::host
