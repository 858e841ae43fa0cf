#include "runtime/common/error.h"

#include <algorithm>
#include <utility>

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

static std::string format(const Place& place, const std::string& message) {
  std::string where = place.to_string();
  return where.empty() ? message : where + ": " + message;
}

Error::Error(Place place, const std::string& message, ErrorKind kind)
    : std::runtime_error(format(place, message)),
      place_(std::move(place)),
      message_(message),
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
