#include "compiler/graph/literal.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace loom::graph {

Literal Literal::boolean(bool v) {
  Literal l;
  l.kind = Kind::Bool;
  l.b = v;
  return l;
}

Literal Literal::integer(int64_t v) {
  Literal l;
  l.kind = Kind::Int;
  l.i = v;
  l.f = static_cast<double>(v);
  l.spelling = std::to_string(v);
  return l;
}

Literal Literal::real(double v) {
  Literal l;
  l.kind = Kind::Float;
  l.f = v;
  return l;
}

Literal Literal::text(std::string v) {
  Literal l;
  l.kind = Kind::String;
  l.s = std::move(v);
  return l;
}

Literal Literal::list_of(std::vector<Literal> items) {
  Literal l;
  l.kind = Kind::List;
  l.list = std::move(items);
  return l;
}

std::optional<Literal> number_literal(const std::string& spelling, bool whole) {
  Literal l;
  l.spelling = spelling;
  if (!whole) {
    l.kind = Literal::Kind::Float;
    l.f = std::strtod(spelling.c_str(), nullptr);
    return l;
  }
  l.kind = Literal::Kind::Int;
  const char* begin = spelling.data();
  const char* end = begin + spelling.size();
  int64_t i = 0;
  uint64_t u = 0;
  if (auto [stop, ec] = std::from_chars(begin, end, i); ec == std::errc() && stop == end) {
    l.i = i;
  } else if (auto [ustop, uec] = std::from_chars(begin, end, u);
             uec == std::errc() && ustop == end) {
    l.i = static_cast<int64_t>(u);  // u64 literals up to 2^64-1 keep their bits
    l.above_int64 = true;
  } else {
    return std::nullopt;
  }
  l.f = l.as_double();
  return l;
}

std::string number_text(const Literal& number) {
  if (!number.spelling.empty()) return number.spelling;
  if (number.kind == Literal::Kind::Int)
    return number.above_int64 ? std::to_string(static_cast<uint64_t>(number.i))
                              : std::to_string(number.i);
  // JSON has no infinity or NaN and a bare `inf` would make the whole document unreadable.
  // Infinity is written as a number that overflows to it, so the document loads and the one
  // rule for literals (nodes.md) refuses it where it stands, naming the place; NaN, which no
  // number spells, as null, which loading refuses naming its line and column.
  if (std::isinf(number.f)) return number.f > 0 ? "1e999" : "-1e999";
  if (std::isnan(number.f)) return "null";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, number.f);
  std::string s(buf, ec == std::errc() ? end : buf);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // 2.0 stays a float
  return s;
}

}  // namespace loom::graph
