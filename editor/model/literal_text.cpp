#include "editor/model/literal_text.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "compiler/graph/json_value.h"
#include "runtime/common/error.h"

namespace loom::editor {

using graph::Literal;

std::string literal_text(const Literal& l) {
  switch (l.kind) {
    case Literal::Kind::Bool:
      return l.b ? "true" : "false";
    case Literal::Kind::Int:
    case Literal::Kind::Float: {
      if (!l.spelling.empty()) return l.spelling;
      if (l.kind == Literal::Kind::Int)
        return l.above_int64 ? std::to_string(static_cast<uint64_t>(l.i)) : std::to_string(l.i);
      char buf[32];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, l.f);
      std::string s(buf, ec == std::errc() ? end : buf);
      if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
      return s;
    }
    case Literal::Kind::String:
      return l.s;
    case Literal::Kind::List: {
      std::string s = "[";
      for (size_t i = 0; i < l.list.size(); ++i) s += (i ? ", " : "") + literal_text(l.list[i]);
      return s + "]";
    }
    case Literal::Kind::None:
      break;
  }
  return "";
}

namespace {

bool to_literal(const graph::JsonValue& v, Literal& out, std::string* error) {
  using Kind = graph::JsonValue::Kind;
  switch (v.kind) {
    case Kind::Bool:
      out.kind = Literal::Kind::Bool;
      out.b = v.b;
      return true;
    case Kind::Number: {
      out.spelling = v.text;
      if (v.is_integer()) {
        out.kind = Literal::Kind::Int;
        const char* b = v.text.data();
        const char* e = b + v.text.size();
        int64_t i = 0;
        uint64_t u = 0;
        if (std::from_chars(b, e, i).ec == std::errc()) {
          out.i = i;
        } else if (std::from_chars(b, e, u).ec == std::errc()) {
          out.i = static_cast<int64_t>(u);
          out.above_int64 = true;
        } else {
          if (error)
            *error = v.text + " is out of range (-9223372036854775808 to 18446744073709551615)";
          return false;
        }
        out.f = out.as_double();
        return true;
      }
      out.kind = Literal::Kind::Float;
      out.f = std::strtod(v.text.c_str(), nullptr);
      return true;
    }
    case Kind::String:
      out.kind = Literal::Kind::String;
      out.s = v.text;
      return true;
    case Kind::Array:
      out.kind = Literal::Kind::List;
      for (const graph::JsonValue& item : v.items) {
        Literal x;
        if (!to_literal(item, x, error)) return false;
        out.list.push_back(std::move(x));
      }
      return true;
    default:
      if (error) *error = "expected a number, a bool, a list or text";
      return false;
  }
}

}  // namespace

std::optional<Literal> parse_literal_text(const std::string& text, bool text_ok,
                                          std::string* error) {
  if (error) error->clear();
  size_t b = text.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return std::nullopt;
  std::string trimmed = text.substr(b, text.find_last_not_of(" \t\r\n") - b + 1);
  if (text_ok) {  // names and formulas: as typed (quotes, if any, are not part of them)
    if (trimmed.size() >= 2 && trimmed.front() == '"' && trimmed.back() == '"')
      trimmed = trimmed.substr(1, trimmed.size() - 2);
    Literal l;
    l.kind = Literal::Kind::String;
    l.s = trimmed;
    return l;
  }
  try {
    graph::JsonValue v = graph::parse_json(trimmed, "<value>");
    Literal l;
    if (to_literal(v, l, error)) return l;
    return std::nullopt;
  } catch (const Error&) {
    if (error)
      *error =
          "'" + trimmed + "' is not a value (a number, true or false, or a list like [1, 0, 0])";
    return std::nullopt;
  }
}

bool is_text_param(const std::string& name) {
  for (const char* p : {"name", "field", "ndarray", "texture", "function", "expr", "message",
                        "filter", "wrap", "param", "path", "type"})
    if (name == p) return true;
  return false;
}

graph::Literal text_literal(const std::string& s) {
  graph::Literal l;
  l.kind = graph::Literal::Kind::String;
  l.s = s;
  return l;
}

}  // namespace loom::editor
