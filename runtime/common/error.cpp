#include "runtime/common/error.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "runtime/common/bounded_message.h"

namespace loom {

std::string Place::to_string() const {
  std::string s;
  auto add = [&](const std::string& part) {
    if (!s.empty()) s += ": ";
    s += part;
  };
  if (!document.empty()) add(document);
  if (!kernel.empty()) add((function ? "function '" : "kernel '") + kernel + "'");
  if (node >= 0) add("node " + std::to_string(node));
  if (!pin.empty()) add("pin '" + pin + "'");
  return s;
}

namespace {

constexpr size_t kRunMax = 200;       // one name, path, number or formula without spaces
constexpr size_t kRunKept = 80;       // of it: this much of its start
constexpr size_t kTailKept = 16;      // and of its end
constexpr size_t kMessageMax = 8192;  // the whole message

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

// `n`, moved back so that text[0, n) does not end inside a UTF-8 sequence.
size_t utf8_prefix(std::string_view text, size_t n) {
  if (n >= text.size()) return text.size();
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return n;
}

}  // namespace

std::string bounded_message(const std::string& text) {
  std::string out;
  std::string_view s = text;
  for (size_t i = 0; i < s.size();) {
    size_t end = i;
    while (end < s.size() && !is_space(s[end])) ++end;
    std::string_view run = s.substr(i, end - i);
    if (run.size() <= kRunMax) {
      out += run;
    } else {
      // The quotes and punctuation around the text stay whole ("'", "':"), and the length
      // counted is the text's own; both ends are cut on a character boundary.
      size_t lead = 0, trail = 0;
      while (lead < 4 && std::string_view("'\"`([{<").find(run[lead]) != std::string_view::npos)
        ++lead;
      while (trail < 4 && std::string_view("'\"`)]}>:;,.").find(run[run.size() - 1 - trail]) !=
                              std::string_view::npos)
        ++trail;
      std::string_view core = run.substr(lead, run.size() - lead - trail);
      size_t tail = core.size() - utf8_prefix(core, core.size() - kTailKept);
      out += run.substr(0, lead);
      out += core.substr(0, utf8_prefix(core, kRunKept));
      out += "...(" + std::to_string(core.size()) + " characters)...";
      out += core.substr(core.size() - tail);
      out += run.substr(run.size() - trail);
    }
    size_t next = end;
    while (next < s.size() && is_space(s[next])) ++next;
    out += s.substr(end, next - end);
    i = next;
    if (out.size() > kMessageMax) break;
  }
  if (out.size() > kMessageMax)
    out = out.substr(0, utf8_prefix(out, kMessageMax)) +
          "... (message cut: " + std::to_string(text.size()) + " characters in all)";
  return out;
}

static std::string format(const Place& place, const std::string& message) {
  std::string where = place.to_string();
  return where.empty() ? message : where + ": " + message;
}

Error::Error(Place place, const std::string& message, ErrorKind kind)
    : std::runtime_error(bounded_message(format(place, message))),
      place_(std::move(place)),
      message_(bounded_message(message)),
      kind_(kind) {}

namespace {

// The path from the repository root: __FILE__ may be absolute.
std::string source_path(const char* file) {
  std::string path = file;
  size_t first = std::string::npos;
  for (const char* top :
       {"/compiler/", "/runtime/", "/engine_plugin/", "/tools/", "/editor/", "/tests/"})
    first = std::min(first, path.find(top));
  return first == std::string::npos ? path : path.substr(first + 1);
}

std::string location_of(const SourceLocation& where) {
  return std::string(where.function_name()) + " (" + source_path(where.file_name()) + ":" +
         std::to_string(where.line()) + ")";
}

}  // namespace

InternalError::InternalError(Place place, const std::string& message, SourceLocation where)
    : Error(std::move(place), "internal error: " + message + " [in " + location_of(where) + "]"),
      location_(location_of(where)) {}

}  // namespace loom
