#include "runtime/common/error.h"

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
    : std::runtime_error(format(place, message)), place_(std::move(place)), message_(message), kind_(kind) {}

}  // namespace loom
