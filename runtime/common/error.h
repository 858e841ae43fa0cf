// Errors that name the place: document, kernel, node, pin, argument. A user's mistake is an
// Error; a broken invariant of Loom itself is an InternalError.
#pragma once

#include <cstdint>
#include <source_location>
#include <stdexcept>
#include <string>

namespace loom {

#if defined(__cpp_lib_source_location)
using SourceLocation = std::source_location;
#else
// libstdc++ 12 defines std::source_location only for compilers with
// __builtin_source_location (gcc; clang from 15). Clang 14 (the sanitizer build, clang-tidy)
// gets this stand-in with the same members, built from the older builtins.
class SourceLocation {
 public:
  static constexpr SourceLocation current(const char* file = __builtin_FILE(),
                                          std::uint_least32_t line = __builtin_LINE(),
                                          const char* function = __builtin_FUNCTION()) noexcept {
    SourceLocation where;
    where.file_ = file;
    where.line_ = line;
    where.function_ = function;
    return where;
  }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr std::uint_least32_t line() const noexcept { return line_; }
  constexpr const char* function_name() const noexcept { return function_; }

 private:
  const char* file_ = "";
  std::uint_least32_t line_ = 0;
  const char* function_ = "";
};
#endif

struct Place {
  std::string document;  // file path or "<memory>"
  std::string kernel;
  int node = -1;          // graph node id, -1 when not about one node
  std::string pin;        // input/output pin or argument name
  bool function = false;  // `kernel` names a function (a sub-graph), not a kernel
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

// An invariant of Loom failed: a bug in Loom, never a problem with the user's input. Its
// message says "internal error" and names the check's function, file and line (and the place
// being worked on, when known), so top-level handlers can report it as a bug and tests can
// tell it from the errors a user can fix.
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& message,
                         SourceLocation where = SourceLocation::current())
      : InternalError(Place{}, message, where) {}
  InternalError(Place place, const std::string& message,
                SourceLocation where = SourceLocation::current());
  // "loom::ir::verify (compiler/ir/verifier.cpp:187)"
  const std::string& location() const { return location_; }

 private:
  std::string location_;
};

}  // namespace loom
