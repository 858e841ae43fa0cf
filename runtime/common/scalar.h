// Scalar and element types shared by the compiler and the runtime.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace loom {

enum class Scalar : uint8_t { Void, Bool, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64 };

constexpr bool is_float(Scalar s) { return s == Scalar::F32 || s == Scalar::F64; }
constexpr bool is_signed_int(Scalar s) {
  return s == Scalar::I8 || s == Scalar::I16 || s == Scalar::I32 || s == Scalar::I64;
}
constexpr bool is_unsigned_int(Scalar s) {
  return s == Scalar::U8 || s == Scalar::U16 || s == Scalar::U32 || s == Scalar::U64;
}
constexpr bool is_int(Scalar s) { return is_signed_int(s) || is_unsigned_int(s); }
constexpr bool is_numeric(Scalar s) { return is_int(s) || is_float(s); }

// Width in bits; Bool is 1 in registers but stored as one byte (see size_of).
constexpr int bit_width(Scalar s) {
  switch (s) {
    case Scalar::Void: return 0;
    case Scalar::Bool: return 1;
    case Scalar::I8:
    case Scalar::U8: return 8;
    case Scalar::I16:
    case Scalar::U16: return 16;
    case Scalar::I32:
    case Scalar::U32:
    case Scalar::F32: return 32;
    case Scalar::I64:
    case Scalar::U64:
    case Scalar::F64: return 64;
  }
  return 0;
}
constexpr int size_of(Scalar s) { return s == Scalar::Bool ? 1 : bit_width(s) / 8; }

std::string_view scalar_name(Scalar s);
std::optional<Scalar> parse_scalar(std::string_view name);

// A value type of the front end: scalar, vector (rows x 1) or matrix (rows x cols).
// The IR is scalar-only; lowering splits vectors and matrices into components.
struct ValueType {
  Scalar scalar = Scalar::Void;
  uint8_t rows = 1;
  uint8_t cols = 1;

  constexpr int components() const { return rows * cols; }
  constexpr bool is_scalar() const { return rows == 1 && cols == 1; }
  constexpr bool is_vector() const { return rows > 1 && cols == 1; }
  constexpr bool is_matrix() const { return cols > 1; }
  friend constexpr bool operator==(ValueType, ValueType) = default;
};

// "f32", "vec3<f32>" style spelling: f32, vec3f? We print "f32", "f32x3", "f32x3x3".
std::string value_type_name(ValueType t);
std::optional<ValueType> parse_value_type(std::string_view name);

}  // namespace loom
