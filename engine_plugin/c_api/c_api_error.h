// Errors across the C ABI: every entry point runs its body through guard(), which opens the
// call's CallScope (call_scope.h) and turns exceptions into a LoomResult and the thread's last
// error. Inside, ApiError carries an exact code; loom::Errors from the runtime are mapped by their
// kind, or else get the code the entry point names as its default.
#pragma once

#include <loom/loom.h>

#include <string>
#include <utility>

#include "engine_plugin/c_api/call_scope.h"
#include "runtime/common/error.h"

namespace loom::capi {

class ApiError : public Error {
 public:
  ApiError(LoomResult code, const Place& where, const std::string& message)
      : Error(where, message), code_(code) {}
  ApiError(LoomResult code, const std::string& message) : Error(message), code_(code) {}
  LoomResult code() const { return code_; }

 private:
  LoomResult code_;
};

void set_last_error(LoomResult code, const std::string& message);
LoomResult result_of_current_exception(LoomResult fallback);

// Runs `body` as the loom_* call `call` (a string literal: CallScope); exceptions become the
// thread's last error and its code.
template <typename Body>
LoomResult guard(const char* call, LoomResult fallback, Body&& body) noexcept {
  CallScope scope(call);
  try {
    std::forward<Body>(body)();
    return LOOM_SUCCESS;
  } catch (...) {
    return result_of_current_exception(fallback);
  }
}

// Throws LOOM_ERROR_NULL_HANDLE naming `what` when `p` is null.
template <typename T>
T& need(T* p, const char* what) {
  if (!p) throw ApiError(LOOM_ERROR_NULL_HANDLE, std::string(what) + " is null");
  return *p;
}
inline void need(const void* p, const char* what) {
  if (!p) throw ApiError(LOOM_ERROR_NULL_HANDLE, std::string(what) + " is null");
}

}  // namespace loom::capi
