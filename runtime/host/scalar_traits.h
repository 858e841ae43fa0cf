// The Scalar that stores a C++ type, and the C++ type that stores a Scalar, for typed accessors.
#pragma once

#include <cstdint>

#include "runtime/common/scalar.h"

namespace loom::host {

template <typename T>
constexpr Scalar scalar_of();
template <>
constexpr Scalar scalar_of<bool>() {
  return Scalar::Bool;
}
template <>
constexpr Scalar scalar_of<int8_t>() {
  return Scalar::I8;
}
template <>
constexpr Scalar scalar_of<int16_t>() {
  return Scalar::I16;
}
template <>
constexpr Scalar scalar_of<int32_t>() {
  return Scalar::I32;
}
template <>
constexpr Scalar scalar_of<int64_t>() {
  return Scalar::I64;
}
template <>
constexpr Scalar scalar_of<uint8_t>() {
  return Scalar::U8;
}
template <>
constexpr Scalar scalar_of<uint16_t>() {
  return Scalar::U16;
}
template <>
constexpr Scalar scalar_of<uint32_t>() {
  return Scalar::U32;
}
template <>
constexpr Scalar scalar_of<uint64_t>() {
  return Scalar::U64;
}
template <>
constexpr Scalar scalar_of<float>() {
  return Scalar::F32;
}
template <>
constexpr Scalar scalar_of<double>() {
  return Scalar::F64;
}

// Calls fn(T{}) with the C++ type that stores scalar type `s`: uint8_t for Bool (callers that
// treat bools apart test for it first); nothing for Void.
template <typename F>
void with_scalar_type(Scalar s, F&& fn) {
  switch (s) {
    case Scalar::Bool: fn(uint8_t{}); return;
    case Scalar::I8: fn(int8_t{}); return;
    case Scalar::I16: fn(int16_t{}); return;
    case Scalar::I32: fn(int32_t{}); return;
    case Scalar::I64: fn(int64_t{}); return;
    case Scalar::U8: fn(uint8_t{}); return;
    case Scalar::U16: fn(uint16_t{}); return;
    case Scalar::U32: fn(uint32_t{}); return;
    case Scalar::U64: fn(uint64_t{}); return;
    case Scalar::F32: fn(float{}); return;
    case Scalar::F64: fn(double{}); return;
    case Scalar::Void: return;
  }
}

}  // namespace loom::host
