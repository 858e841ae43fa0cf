#include "editor/model/literal_text.h"

#include "compiler/graph/json_value.h"
#include "runtime/common/error.h"

namespace loom::editor {

using graph::Literal;

std::string literal_text(const Literal& l) {
  switch (l.kind) {
    case Literal::Kind::Bool: return l.b ? "true" : "false";
    case Literal::Kind::Int:
    case Literal::Kind::Float: return graph::number_text(l);
    case Literal::Kind::String: return l.s;
    case Literal::Kind::List: {
      std::string s = "[";
      for (size_t i = 0; i < l.list.size(); ++i) s += (i ? ", " : "") + literal_text(l.list[i]);
      return s + "]";
    }
    case Literal::Kind::None: break;
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
      std::optional<Literal> number = graph::number_literal(v.text, v.is_integer());
      if (!number) {
        if (error)
          *error = v.text + " is out of range (-9223372036854775808 to 18446744073709551615)";
        return false;
      }
      out = std::move(*number);
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
    return Literal::text(trimmed);
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

}  // namespace loom::editor
