#include "engine_plugin/c_api/call_scope.h"

#include "engine_plugin/c_api/c_api_error.h"

namespace loom::capi {

namespace {

thread_local CallScope* current_call = nullptr;
thread_local const char* current_callback = nullptr;

// Tells live threads apart: the address of a thread-local object.
uintptr_t this_thread_token() {
  static thread_local char token;
  return reinterpret_cast<uintptr_t>(&token);
}

}  // namespace

CallScope::CallScope(const char* call) noexcept : call_(call), outer_(current_call) {
  current_call = this;
}

CallScope::~CallScope() {
  // Release: the next call on the runtime, on any thread, sees what this one did.
  if (entered_) entered_->thread_.store(0, std::memory_order_release);
  current_call = outer_;
}

void CallScope::enter(RuntimeOwner& runtime, const std::string& what) {
  CallScope* scope = current_call;
  if (!scope) throw InternalError("a handle resolved outside a loom_* call (" + what + ")");
  if (scope->entered_ == &runtime) return;
  if (scope->entered_)
    throw ApiError(LOOM_ERROR_WRONG_RUNTIME, what + " belongs to another runtime");
  const uintptr_t self = this_thread_token();
  uintptr_t inside = 0;
  if (runtime.thread_.compare_exchange_strong(inside, self, std::memory_order_acquire,
                                              std::memory_order_relaxed)) {
    runtime.call_.store(scope->call_, std::memory_order_relaxed);
    scope->entered_ = &runtime;
    return;
  }
  const char* other = runtime.call_.load(std::memory_order_relaxed);
  const std::string inside_call = other ? other : "another call";
  if (inside == self)
    throw ApiError(LOOM_ERROR_RUNTIME_BUSY,
                   std::string(scope->call_) + ": called from " +
                       (current_callback ? current_callback : "a callback") + " of " + inside_call +
                       " on the same runtime; a callback may call Loom on other runtimes only "
                       "(loom.h, \"Threads\"), so this call did nothing");
  throw ApiError(LOOM_ERROR_RUNTIME_BUSY,
                 std::string(scope->call_) + ": the runtime is in use by another thread (inside " +
                     inside_call +
                     "); a runtime and everything made from it are used by one thread at a "
                     "time (loom.h, \"Threads\"; docs/engine-plugin.md), so this call did "
                     "nothing");
}

void CallScope::forget(RuntimeOwner& runtime) noexcept {
  if (current_call && current_call->entered_ == &runtime) current_call->entered_ = nullptr;
}

CallbackScope::CallbackScope(const char* callback) noexcept : outer_(current_callback) {
  current_callback = callback;
}

CallbackScope::~CallbackScope() { current_callback = outer_; }

}  // namespace loom::capi
