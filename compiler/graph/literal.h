// Literals: the constant values a document holds (an input's constant, a node parameter, an
// argpack member value, a launch argument), how code makes them and how numbers are spelled.
// Everything that builds or prints a literal (document text, builder API, editor) uses these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::graph {

// A literal JSON value inside a document.
struct Literal {
  enum class Kind : uint8_t { None, Bool, Int, Float, String, List };
  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;
  // Int above INT64_MAX (2^63 .. 2^64-1, only u64 holds it): `i` holds its bits.
  bool above_int64 = false;
  double f = 0.0;
  std::string s;
  std::vector<Literal> list;
  std::string spelling;  // numbers: the token as written ("1.0" stays "1.0" on save)

  // Literals made in code, as if loaded from their canonical text.
  static Literal boolean(bool v);
  static Literal integer(int64_t v);   // spelled "3"
  static Literal real(double v);       // spelled by number_text ("2.0", "0.1")
  static Literal text(std::string v);  // a name (field, function, parameter), a type or a formula
  static Literal list_of(std::vector<Literal> items);

  bool is_number() const { return kind == Kind::Int || kind == Kind::Float; }
  double as_double() const {
    if (kind != Kind::Int) return f;
    return above_int64 ? static_cast<double>(static_cast<uint64_t>(i)) : static_cast<double>(i);
  }
};

// The number literal a JSON number token spells (`whole`: written without '.', 'e'), with
// that spelling; nullopt for a whole number outside -2^63 .. 2^64-1.
std::optional<Literal> number_literal(const std::string& spelling, bool whole);

// A number literal as documents save it and the editor shows it: its spelling when it has
// one, else the shortest text that reads back the same, with ".0" on whole floats.
std::string number_text(const Literal& number);

}  // namespace loom::graph
