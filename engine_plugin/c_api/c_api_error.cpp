#include "engine_plugin/c_api/c_api_error.h"
#include "engine_plugin/c_api/types.h"

#include <exception>
#include <new>

namespace loom::capi {

namespace {

struct LastError {
  LoomResult code = LOOM_SUCCESS;
  std::string message;
};
thread_local LastError last_error;

LoomResult code_of(ErrorKind kind, LoomResult fallback) {
  switch (kind) {
    case ErrorKind::Io: return LOOM_ERROR_IO;
    case ErrorKind::Corrupt: return LOOM_ERROR_CORRUPT_MODULE;
    case ErrorKind::Version: return LOOM_ERROR_VERSION_MISMATCH;
    case ErrorKind::Capability: return LOOM_ERROR_MISSING_CAPABILITY;
    case ErrorKind::Arch: return LOOM_ERROR_WRONG_ARCH;
    case ErrorKind::General: break;
  }
  return fallback;
}

}  // namespace

void set_last_error(LoomResult code, const std::string& message) {
  last_error.code = code;
  last_error.message = message;
}

LoomResult result_of_current_exception(LoomResult fallback) {
  LoomResult code = fallback;
  std::string message;
  try {
    throw;
  } catch (const ApiError& e) {
    code = e.code();
    message = e.what();
  } catch (const InternalError& e) {
    // A bug in Loom, not in the caller's use of it: the call's own code, a message that says so.
    message = std::string(e.what()) + " (a bug in Loom, please report it)";
  } catch (const Error& e) {
    code = code_of(e.kind(), fallback);
    message = e.what();
  } catch (const std::bad_alloc&) {
    code = LOOM_ERROR_DEVICE;
    message = "out of host memory";
  } catch (const std::exception& e) {
    message = std::string("internal error: ") + e.what();
  } catch (...) {
    message = "an unknown exception";
  }
  set_last_error(code, message);
  return code;
}

}  // namespace loom::capi

using loom::capi::last_error;

extern "C" {

LoomResult loom_last_error(void) { return last_error.code; }
const char* loom_last_error_message(void) { return last_error.message.c_str(); }
void loom_clear_last_error(void) {
  last_error.code = LOOM_SUCCESS;
  last_error.message.clear();
}

const char* loom_result_name(LoomResult result) {
  switch (loom::capi::enum_int(result)) {
#define LOOM_NAME(x) \
  case x: return #x;
    LOOM_NAME(LOOM_SUCCESS)
    LOOM_NAME(LOOM_ERROR_NULL_HANDLE)
    LOOM_NAME(LOOM_ERROR_INVALID_ARGUMENT)
    LOOM_NAME(LOOM_ERROR_WRONG_TYPE)
    LOOM_NAME(LOOM_ERROR_WRONG_DTYPE)
    LOOM_NAME(LOOM_ERROR_WRONG_NDIM)
    LOOM_NAME(LOOM_ERROR_NOT_FOUND)
    LOOM_NAME(LOOM_ERROR_IO)
    LOOM_NAME(LOOM_ERROR_CORRUPT_MODULE)
    LOOM_NAME(LOOM_ERROR_VERSION_MISMATCH)
    LOOM_NAME(LOOM_ERROR_MISSING_CAPABILITY)
    LOOM_NAME(LOOM_ERROR_WRONG_ARCH)
    LOOM_NAME(LOOM_ERROR_DEVICE)
    LOOM_NAME(LOOM_ERROR_LAUNCH)
    LOOM_NAME(LOOM_ERROR_NOT_SUPPORTED)
    LOOM_NAME(LOOM_ERROR_WRONG_RUNTIME)
    LOOM_NAME(LOOM_ERROR_INVALID_HANDLE)
    LOOM_NAME(LOOM_ERROR_IN_USE)
    LOOM_NAME(LOOM_ERROR_NOT_READY)
    LOOM_NAME(LOOM_ERROR_RUNTIME_BUSY)
#undef LOOM_NAME
  }
  return "LOOM_ERROR_UNKNOWN";
}

}  // extern "C"
