#include "runtime/common/scalar.h"

#include <charconv>

namespace loom {

namespace {
struct NamedScalar {
  Scalar scalar;
  std::string_view name;
};
constexpr NamedScalar kNames[] = {
    {Scalar::Void, "void"}, {Scalar::Bool, "bool"}, {Scalar::I8, "i8"},   {Scalar::I16, "i16"},
    {Scalar::I32, "i32"},   {Scalar::I64, "i64"},   {Scalar::U8, "u8"},   {Scalar::U16, "u16"},
    {Scalar::U32, "u32"},   {Scalar::U64, "u64"},   {Scalar::F32, "f32"}, {Scalar::F64, "f64"},
};

std::optional<int> parse_small_int(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}
}  // namespace

std::string_view scalar_name(Scalar s) {
  for (const auto& n : kNames)
    if (n.scalar == s) return n.name;
  return "?";
}

std::optional<Scalar> parse_scalar(std::string_view name) {
  for (const auto& n : kNames)
    if (n.name == name) return n.scalar;
  return std::nullopt;
}

std::string value_type_name(ValueType t) {
  std::string s(scalar_name(t.scalar));
  if (t.is_scalar()) return s;
  s += "x" + std::to_string(t.rows);
  if (t.cols > 1) s += "x" + std::to_string(t.cols);
  return s;
}

// Accepts "f32", "f32x3" (vector), "f32x3x3" (matrix, rows x cols), dimensions 2..4.
std::optional<ValueType> parse_value_type(std::string_view name) {
  auto x = name.find('x');
  auto scalar = parse_scalar(name.substr(0, x));
  if (!scalar || *scalar == Scalar::Void) return std::nullopt;
  ValueType t{*scalar, 1, 1};
  if (x == std::string_view::npos) return t;
  std::string_view rest = name.substr(x + 1);
  auto x2 = rest.find('x');
  auto rows = parse_small_int(rest.substr(0, x2));
  if (!rows || *rows < 2 || *rows > 4) return std::nullopt;
  t.rows = static_cast<uint8_t>(*rows);
  if (x2 == std::string_view::npos) return t;
  auto cols = parse_small_int(rest.substr(x2 + 1));
  if (!cols || *cols < 2 || *cols > 4) return std::nullopt;
  t.cols = static_cast<uint8_t>(*cols);
  return t;
}

}  // namespace loom
