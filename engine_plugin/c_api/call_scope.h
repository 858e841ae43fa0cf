// One call at a time per runtime (loom.h, "Threads"): a runtime and everything made from it
// are used by one thread at a time. A call that breaks the rule is refused with
// LOOM_ERROR_RUNTIME_BUSY before it touches anything, instead of racing the call inside.
//
// guard() opens a CallScope for every loom_* call. Resolving a handle (handles.h) enters the
// runtime the handle belongs to for the rest of the call, under the handle table's lock: a
// compare-and-swap of the runtime's owner from "none" to this thread, or an error naming both
// calls. The lock makes destroying safe: an object another thread's call is destroying is
// either gone from the table or in a runtime that call holds. Calls never wait for each
// other, so a misbehaving engine thread never stalls the render thread, and nothing is
// serialised that the engine did not serialise.
//
// Callbacks into the engine (log, parallel_for, the queue lock, the memory hooks, a
// read-back's `done`) run inside the call that makes them. A call they make on that call's
// runtime is refused as well (CallbackScope names the callback): it would find the runtime
// halfway through a change (a read-back's `done` destroying the read-back being called, an
// allocation hook reading the allocator that is allocating). Calls on other runtimes work.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace loom::capi {

// Which thread, in which call, is inside a runtime (a member of RuntimeObject).
class RuntimeOwner {
 public:
  RuntimeOwner() = default;
  RuntimeOwner(const RuntimeOwner&) = delete;
  RuntimeOwner& operator=(const RuntimeOwner&) = delete;

 private:
  friend class CallScope;
  std::atomic<uintptr_t> thread_{0};  // the owning thread's token, 0 when no call is inside
  // The call inside (a string literal), for the message of a call refused: written by the call
  // that entered, read by one refused, both under the handle table's lock.
  std::atomic<const char*> call_{nullptr};
};

// One loom_* call on this thread: the runtime it entered (one at most: handles of two
// runtimes in one call are LOOM_ERROR_WRONG_RUNTIME), left when the call returns.
class CallScope {
 public:
  explicit CallScope(const char* call) noexcept;
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  // Enters `runtime` for the rest of this thread's current call. Throws ApiError:
  // LOOM_ERROR_RUNTIME_BUSY when another call is inside it (another thread's, or the one on
  // this thread whose callback is running), naming this call and that one;
  // LOOM_ERROR_WRONG_RUNTIME naming `what` when the call entered another runtime already.
  // Called under the handle table's lock; `what` names the handle ("loom_launch: kernel").
  static void enter(RuntimeOwner& runtime, const std::string& what);
  // The current call destroys `runtime`: it is not left (nor touched) afterwards.
  static void forget(RuntimeOwner& runtime) noexcept;

 private:
  const char* call_;
  CallScope* outer_;  // the call this one runs inside of (from a callback), or null
  RuntimeOwner* entered_ = nullptr;
};

// Around a callback into the engine: its name for the error of a call it makes on the
// runtime whose call runs it ("the log callback").
class CallbackScope {
 public:
  explicit CallbackScope(const char* callback) noexcept;
  ~CallbackScope();
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;

 private:
  const char* outer_;
};

}  // namespace loom::capi
