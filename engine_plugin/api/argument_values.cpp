#include "engine_plugin/api/argument_values.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "compiler/graph/document.h"

namespace loom {

Arg::Arg(const std::vector<std::vector<double>>& columns) : kind_(Kind::List) {
  for (const auto& column : columns) {
    column_sizes_.push_back(column.size());
    list_.insert(list_.end(), column.begin(), column.end());
  }
}

double Arg::as_double() const {
  if (kind_ == Kind::Float) return f_;
  return uint64_ ? static_cast<double>(static_cast<uint64_t>(i_)) : static_cast<double>(i_);
}

namespace {

// One component as given: an exact integer, an integer above INT64_MAX, a float or a bool.
struct Number {
  enum class Kind : uint8_t { Int, UInt64, Float, Bool } kind = Kind::Int;
  int64_t i = 0;
  double f = 0;
};

std::string float_text(double f) {
  char buf[64];
  if (f == std::trunc(f) && std::fabs(f) < 0x1p64) {  // 3e9 reads as 3000000000
    std::snprintf(buf, sizeof buf, "%.0f", f);
    return buf;
  }
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(f);
}

std::string number_text(const Number& x) {
  switch (x.kind) {
    case Number::Kind::Int: return std::to_string(x.i);
    case Number::Kind::UInt64: return std::to_string(static_cast<uint64_t>(x.i));
    case Number::Kind::Bool: return x.i ? "true" : "false";
    case Number::Kind::Float: return float_text(x.f);
  }
  return "?";
}

Number scalar_number(const Arg& a) {
  switch (a.kind()) {
    case Arg::Kind::Int:
      return a.is_uint64() ? Number{Number::Kind::UInt64, a.as_int(), 0}
                           : Number{Number::Kind::Int, a.as_int(), 0};
    case Arg::Kind::Bool: return Number{Number::Kind::Bool, a.as_int(), 0};
    default: return Number{Number::Kind::Float, 0, a.as_double()};
  }
}

// A list component: whole numbers count as integers, so an integer type takes [1, 2, 3].
Number list_number(double f) {
  if (std::isfinite(f) && f == std::trunc(f) && std::fabs(f) < 0x1p63)
    return Number{Number::Kind::Int, static_cast<int64_t>(f), 0};
  return Number{Number::Kind::Float, 0, f};
}

// Writes `x` as scalar type `s` to `out`; false when `s` cannot hold it.
bool store(const Number& x, Scalar s, uint8_t* out) {
  auto size = static_cast<size_t>(size_of(s));
  if (s == Scalar::Bool) {
    if (x.kind == Number::Kind::Float || x.kind == Number::Kind::UInt64 || x.i < 0 || x.i > 1)
      return false;
    out[0] = static_cast<uint8_t>(x.i);
    return true;
  }
  if (is_float(s)) {
    double v = x.kind == Number::Kind::Float    ? x.f
               : x.kind == Number::Kind::UInt64 ? static_cast<double>(static_cast<uint64_t>(x.i))
                                                : static_cast<double>(x.i);
    if (s == Scalar::F64) {
      std::memcpy(out, &v, size);
      return true;
    }
    if (std::isfinite(v) && std::fabs(v) > static_cast<double>(std::numeric_limits<float>::max()))
      return false;
    auto f = static_cast<float>(v);
    std::memcpy(out, &f, size);
    return true;
  }
  int bits = bit_width(s);
  bool is_signed = is_signed_int(s);
  uint64_t raw = 0;
  if (x.kind == Number::Kind::Float) {
    if (!std::isfinite(x.f) || x.f != std::trunc(x.f)) return false;
    double lo = is_signed ? -std::ldexp(1.0, bits - 1) : 0.0;
    double hi = std::ldexp(1.0, is_signed ? bits - 1 : bits);
    if (x.f < lo || x.f >= hi) return false;
    raw = is_signed ? static_cast<uint64_t>(static_cast<int64_t>(x.f)) : static_cast<uint64_t>(x.f);
  } else if (x.kind == Number::Kind::UInt64) {
    if (s != Scalar::U64) return false;
    raw = static_cast<uint64_t>(x.i);
  } else {
    if (is_signed) {
      if (bits < 64 && (x.i < -(int64_t{1} << (bits - 1)) || x.i >= (int64_t{1} << (bits - 1))))
        return false;
    } else if (x.i < 0 || (bits < 64 && x.i >= (int64_t{1} << bits))) {
      return false;
    }
    raw = static_cast<uint64_t>(x.i);
  }
  std::memcpy(out, &raw, size);  // little-endian: the low bytes
  return true;
}

}  // namespace

std::string describe_arg(const Arg& a) {
  switch (a.kind()) {
    case Arg::Kind::Int: return "the integer " + number_text(scalar_number(a));
    case Arg::Kind::Float: return "the number " + float_text(a.as_double());
    case Arg::Kind::Bool: return a.as_int() ? "true" : "false";
    case Arg::Kind::List:
      if (!a.column_sizes().empty())
        return "a list of " + std::to_string(a.column_sizes().size()) + " columns";
      return "a list of " + std::to_string(a.list().size()) + " numbers";
    case Arg::Kind::Resource: return "'" + a.resource() + "'";
  }
  return "?";
}

std::vector<uint8_t> argument_bytes(const Arg& a, ValueType type, const Place& where,
                                    const std::string& what) {
  std::string name = what + " of type " + value_type_name(type);
  auto n = static_cast<size_t>(type.components());
  std::vector<Number> numbers;
  switch (a.kind()) {
    case Arg::Kind::Resource:
      throw Error(where, name + " cannot take the resource " + describe_arg(a));
    case Arg::Kind::List: {
      const auto& cols = a.column_sizes();
      if (!cols.empty()) {
        if (!type.is_matrix())
          throw Error(where, name + " takes a flat list of " + std::to_string(n) +
                                 " numbers, not " + describe_arg(a));
        bool shaped = cols.size() == type.cols;
        for (size_t c : cols) shaped &= c == type.rows;
        if (!shaped)
          throw Error(where, name + " takes " + std::to_string(type.cols) + " columns of " +
                                 std::to_string(type.rows) + " numbers (or a flat list of " +
                                 std::to_string(n) + ")");
      } else if (a.list().size() != n) {
        throw Error(where, name + " needs " + std::to_string(n) + " values, got " +
                               std::to_string(a.list().size()));
      }
      for (double f : a.list()) numbers.push_back(list_number(f));
      break;
    }
    default:  // a scalar splats over a vector or matrix, as in Taichi
      numbers.assign(n, scalar_number(a));
      break;
  }
  auto size = static_cast<size_t>(size_of(type.scalar));
  std::vector<uint8_t> bytes(n * size);
  for (size_t c = 0; c < n; ++c) {
    if (store(numbers[c], type.scalar, bytes.data() + c * size)) continue;
    std::string held = number_text(numbers[c]);
    if (is_int(type.scalar) && numbers[c].kind == Number::Kind::Float &&
        std::isfinite(numbers[c].f) && numbers[c].f != std::trunc(numbers[c].f))
      held += " (not an integer)";
    if (n > 1 && a.kind() == Arg::Kind::List) held += " (component " + std::to_string(c) + ")";
    throw Error(where, name + " cannot hold " + held);
  }
  return bytes;
}

Arg literal_to_arg(const graph::Literal& l, const Place& where) {
  // The rule node literals follow (nodes.md): a number beyond the largest float is an error,
  // never silently infinity. A document has no other way to write infinity or NaN, so a
  // non-finite float here is a spelling like 1e999 that overflowed.
  auto finite = [&](const graph::Literal& x) {
    if (x.kind == graph::Literal::Kind::Float && !std::isfinite(x.f))
      throw Error(where, "the number " + graph::number_text(x) +
                             " does not fit any float type (the largest magnitude is "
                             "1.7976931348623157e308, f32's 3.4028235e38)");
    return x.as_double();
  };
  auto number = [&](const graph::Literal& x) {
    if (x.kind == graph::Literal::Kind::Int &&
        (x.above_int64 || x.i > (int64_t{1} << 53) || x.i < -(int64_t{1} << 53)))
      throw Error(where, "the list component " +
                             (x.spelling.empty() ? std::to_string(x.i) : x.spelling) +
                             " is too large to be exact; list components are doubles (up to 2^53)");
    if (!x.is_number() && x.kind != graph::Literal::Kind::Bool)
      throw Error(where, "lists hold numbers (or lists of numbers: the columns of a matrix)");
    return x.kind == graph::Literal::Kind::Bool ? (x.b ? 1.0 : 0.0) : finite(x);
  };
  switch (l.kind) {
    case graph::Literal::Kind::Bool: return Arg(l.b);
    case graph::Literal::Kind::Int:
      return l.above_int64 ? Arg(static_cast<uint64_t>(l.i)) : Arg(static_cast<int64_t>(l.i));
    case graph::Literal::Kind::Float: return Arg(finite(l));
    case graph::Literal::Kind::String: return Arg(l.s);
    case graph::Literal::Kind::List: {
      bool columns = !l.list.empty() && l.list[0].kind == graph::Literal::Kind::List;
      if (!columns) {
        std::vector<double> v;
        for (const auto& item : l.list) v.push_back(number(item));
        return Arg(std::move(v));
      }
      std::vector<std::vector<double>> cols;
      for (const auto& column : l.list) {
        if (column.kind != graph::Literal::Kind::List)
          throw Error(where, "a matrix is a list of columns, each a list of numbers");
        cols.emplace_back();
        for (const auto& item : column.list) cols.back().push_back(number(item));
      }
      return Arg(cols);
    }
    case graph::Literal::Kind::None: break;
  }
  return Arg(0);
}

}  // namespace loom
