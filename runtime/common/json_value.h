// A small JSON tree (documents, AOT module metadata) that keeps what a document needs for
// byte-identical round trips: object member order and the spelling of every number. Parse errors
// name line and column.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loom {

struct JsonValue {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool b = false;
  std::string text;              // Number: the token as written; String: the decoded string
  std::vector<JsonValue> items;  // Array
  std::vector<std::pair<std::string, JsonValue>> members;  // Object, in document order
  int line = 0, column = 0;                                // where it starts

  // Special members defined in the .cpp, where std::pair<std::string, JsonValue> is complete:
  // clang with libstdc++ 12 otherwise instantiates the implicit destructor while `members`'
  // element type is still incomplete and rejects the header.
  JsonValue();
  JsonValue(const JsonValue&);
  JsonValue(JsonValue&&) noexcept;
  JsonValue& operator=(const JsonValue&);
  JsonValue& operator=(JsonValue&&) noexcept;
  ~JsonValue();

  const JsonValue* find(std::string_view key) const;
  bool is_integer() const;  // a Number without fraction or exponent
};

// Throws loom::Error{document = path} "line L, column C: ..." on malformed text.
JsonValue parse_json(std::string_view text, const std::string& path);

// JSON string literal with escapes.
std::string json_quote(std::string_view s);

}  // namespace loom
