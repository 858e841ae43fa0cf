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

// What kind of failure, where a caller acts on it (the engine plugin's error codes); most
// errors are General.
enum class ErrorKind : uint8_t {
  General,
  Io,          // a file cannot be opened, read or written
  Corrupt,     // a module that is not one, truncated or failing its hashes
  Version,     // a module format version this build does not read
  Capability,  // the device lacks what a module or kernel needs
  Arch,        // a module for another arch
};

class Error : public std::runtime_error {
 public:
  Error(Place place, const std::string& message, ErrorKind kind = ErrorKind::General);
  explicit Error(const std::string& message) : Error(Place{}, message) {}
  const Place& place() const { return place_; }
  const std::string& message() const { return message_; }
  ErrorKind kind() const { return kind_; }

 private:
  Place place_;
  std::string message_;
  ErrorKind kind_;
};

}  // namespace loom
