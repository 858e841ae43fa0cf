// Errors that name the place: document, kernel, node, pin, argument.
#pragma once

#include <stdexcept>
#include <string>

namespace loom {

struct Place {
  std::string document;  // file path or "<memory>"
  std::string kernel;
  int node = -1;         // graph node id, -1 when not about one node
  std::string pin;       // input/output pin or argument name
  bool function = false; // `kernel` names a function (a sub-graph), not a kernel
  std::string to_string() const;
};

class Error : public std::runtime_error {
 public:
  Error(Place place, const std::string& message);
  explicit Error(const std::string& message) : Error(Place{}, message) {}
  const Place& place() const { return place_; }
  const std::string& message() const { return message_; }

 private:
  Place place_;
  std::string message_;
};

}  // namespace loom
