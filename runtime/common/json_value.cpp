#include "runtime/common/json_value.h"

#include <cstdio>
#include <unordered_set>

#include "runtime/common/error.h"

namespace loom {

JsonValue::JsonValue() = default;
JsonValue::JsonValue(const JsonValue&) = default;
JsonValue::JsonValue(JsonValue&&) noexcept = default;
JsonValue& JsonValue::operator=(const JsonValue&) = default;
JsonValue& JsonValue::operator=(JsonValue&&) noexcept = default;
JsonValue::~JsonValue() = default;

const JsonValue* JsonValue::find(std::string_view key) const {
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

bool JsonValue::is_integer() const {
  return kind == Kind::Number && text.find_first_of(".eE") == std::string::npos;
}

namespace {

class Parser {
 public:
  Parser(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  JsonValue document() {
    skip_space();
    JsonValue v = value(0);
    skip_space();
    if (at_ < s_.size()) fail("unexpected text after the document");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { fail_at(line_, col_, why); }
  [[noreturn]] void fail_at(int line, int col, const std::string& why) const {
    throw Error(Place{path_}, "line " + std::to_string(line) + ", column " + std::to_string(col) +
                                  ": malformed JSON: " + why);
  }

  char peek() const { return at_ < s_.size() ? s_[at_] : '\0'; }
  char next() {
    if (at_ >= s_.size()) fail("unexpected end of text");
    char c = s_[at_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    return c;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'" + found());
    next();
  }
  std::string found() const {
    if (at_ >= s_.size()) return ", found the end of the text";
    return std::string(", found '") + s_[at_] + "'";
  }
  void skip_space() {
    while (at_ < s_.size() &&
           (s_[at_] == ' ' || s_[at_] == '\n' || s_[at_] == '\t' || s_[at_] == '\r'))
      next();
  }

  // Whether `obj` already has a member `key`. Small objects (nearly all) are scanned; a large
  // one gets a set of its keys, so an object of n members costs O(n), not O(n^2): module
  // metadata arrives from files an engine loads, and 100k members took 27 s scanning.
  // `keys` belongs to the object being read and starts empty.
  static bool is_duplicate(const JsonValue& obj, std::unordered_set<std::string>& keys,
                           const std::string& key) {
    constexpr size_t kScanned = 16;
    if (obj.members.size() < kScanned) {
      for (const auto& m : obj.members)
        if (m.first == key) return true;
      return false;
    }
    if (keys.empty())
      for (const auto& m : obj.members) keys.insert(m.first);
    return !keys.insert(key).second;
  }

  JsonValue value(int depth) {
    if (depth > 256) fail("nesting is too deep");
    JsonValue v;
    v.line = line_;
    v.column = col_;
    char c = peek();
    if (c == '{') {
      v.kind = JsonValue::Kind::Object;
      std::unordered_set<std::string> keys;
      next();
      skip_space();
      if (peek() == '}') {
        next();
        return v;
      }
      for (;;) {
        skip_space();
        if (peek() != '"') fail("expected a member name in quotes" + found());
        std::string key = string_body();
        if (is_duplicate(v, keys, key)) fail("duplicate member \"" + key + "\"");
        skip_space();
        expect(':');
        skip_space();
        v.members.emplace_back(std::move(key), value(depth + 1));
        skip_space();
        if (peek() == ',') {
          next();
          continue;
        }
        if (peek() == '}') {
          next();
          return v;
        }
        fail("expected ',' or '}'" + found());
      }
    }
    if (c == '[') {
      v.kind = JsonValue::Kind::Array;
      next();
      skip_space();
      if (peek() == ']') {
        next();
        return v;
      }
      for (;;) {
        skip_space();
        v.items.push_back(value(depth + 1));
        skip_space();
        if (peek() == ',') {
          next();
          continue;
        }
        if (peek() == ']') {
          next();
          return v;
        }
        fail("expected ',' or ']'" + found());
      }
    }
    if (c == '"') {
      v.kind = JsonValue::Kind::String;
      v.text = string_body();
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = JsonValue::Kind::Number;
      v.text = number();
      return v;
    }
    if (word("true")) {
      v.kind = JsonValue::Kind::Bool;
      v.b = true;
      return v;
    }
    if (word("false")) {
      v.kind = JsonValue::Kind::Bool;
      return v;
    }
    if (word("null")) return v;
    fail("expected a value" + found());
  }

  bool word(std::string_view w) {
    if (s_.substr(at_, w.size()) != w) return false;
    for (size_t i = 0; i < w.size(); ++i) next();
    return true;
  }

  std::string number() {
    size_t start = at_;
    if (peek() == '-') next();
    if (peek() == '0') {
      next();
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9') next();
    } else {
      fail("malformed number");
    }
    if (peek() == '.') {
      next();
      if (!(peek() >= '0' && peek() <= '9')) fail("malformed number: digits must follow '.'");
      while (peek() >= '0' && peek() <= '9') next();
    }
    if (peek() == 'e' || peek() == 'E') {
      next();
      if (peek() == '+' || peek() == '-') next();
      if (!(peek() >= '0' && peek() <= '9')) fail("malformed number exponent");
      while (peek() >= '0' && peek() <= '9') next();
    }
    return std::string(s_.substr(start, at_ - start));
  }

  void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  unsigned hex4() {
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = next();
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<unsigned>(c - 'A' + 10);
      else
        fail("bad \\u escape");
    }
    return v;
  }

  // One multi-byte UTF-8 sequence whose lead byte `lead` was just read (RFC 3629: no
  // overlong forms, no surrogates, nothing above U+10FFFF).
  void utf8_tail(unsigned char lead, int line, int col, std::string& out) {
    int more = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // range of the first continuation byte
    if (lead >= 0xC2 && lead <= 0xDF)
      more = 1;
    else if (lead == 0xE0)
      more = 2, lo = 0xA0;
    else if ((lead >= 0xE1 && lead <= 0xEC) || lead == 0xEE || lead == 0xEF)
      more = 2;
    else if (lead == 0xED)
      more = 2, hi = 0x9F;
    else if (lead == 0xF0)
      more = 3, lo = 0x90;
    else if (lead >= 0xF1 && lead <= 0xF3)
      more = 3;
    else if (lead == 0xF4)
      more = 3, hi = 0x8F;
    auto bad = [&] {
      char buf[8];
      std::snprintf(buf, sizeof buf, "0x%02X", lead);
      fail_at(line, col,
              std::string("invalid UTF-8 in a string (a sequence starting with byte ") + buf +
                  "); documents are UTF-8 text");
    };
    if (more == 0) bad();
    out += static_cast<char>(lead);
    for (int i = 0; i < more; ++i) {
      unsigned char c = static_cast<unsigned char>(peek());
      if (at_ >= s_.size() || c < lo || c > hi) bad();
      out += next();
      lo = 0x80;
      hi = 0xBF;
    }
  }

  std::string string_body() {
    expect('"');
    std::string out;
    for (;;) {
      if (at_ >= s_.size()) fail("unterminated string");
      int line = line_, col = col_;
      char c = next();
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail_at(line, col, "control character in a string");
      if (static_cast<unsigned char>(c) >= 0x80) {
        utf8_tail(static_cast<unsigned char>(c), line, col, out);
        continue;
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      char e = next();
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xDC00 && cp < 0xE000) fail_at(line, col, "unpaired surrogate in \\u escape");
          if (cp >= 0xD800 && cp < 0xDC00) {
            if (next() != '\\' || next() != 'u')
              fail_at(line, col, "unpaired surrogate in \\u escape");
            unsigned lo = hex4();
            if (lo < 0xDC00 || lo >= 0xE000) fail_at(line, col, "unpaired surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: fail(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  std::string_view s_;
  const std::string& path_;
  size_t at_ = 0;
  int line_ = 1, col_ = 1;
};

}  // namespace

JsonValue parse_json(std::string_view text, const std::string& path) {
  return Parser(text, path).document();
}

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace loom
