#include "runtime/cpu/gdb_jit.h"

#include <pthread.h>

#include <utility>

// The descriptor must be one per process: GDB looks __jit_debug_descriptor and
// __jit_debug_register_code up by name in each loaded file. They have default visibility, so
// where several definitions are exported (libLLVM exports its own; an executable linking
// this library statically exports ours when a library it links defines them too), the
// dynamic linker binds every reference to the first one and all copies share one list. The
// lock has default visibility for the same reason: copies sharing the descriptor can share
// it. libloom.so's version script keeps all three local, so each loaded copy of libloom.so
// keeps its own list, which GDB (10 and later) reads per library from its symbol table.
extern "C" {

[[gnu::used, gnu::visibility("default")]] jit_descriptor __jit_debug_descriptor = {
    1, JIT_NOACTION, nullptr, nullptr};

// GDB's breakpoint: it must stay a real, out-of-line call that the optimiser cannot drop.
[[gnu::used, gnu::noinline, gnu::visibility("default")]] void __jit_debug_register_code() {
  asm volatile("" ::: "memory");
}

[[gnu::used, gnu::visibility("default")]] pthread_mutex_t loom_jit_debug_mutex =
    PTHREAD_MUTEX_INITIALIZER;
}

namespace loom::cpu {

GdbJitLock::GdbJitLock() { pthread_mutex_lock(&loom_jit_debug_mutex); }
GdbJitLock::~GdbJitLock() { pthread_mutex_unlock(&loom_jit_debug_mutex); }

GdbJitEntry::GdbJitEntry(std::vector<uint8_t> symfile) : symfile_(std::move(symfile)) {
  entry_.symfile_addr = reinterpret_cast<const char*>(symfile_.data());
  entry_.symfile_size = symfile_.size();
  GdbJitLock lock;
  entry_.next_entry = __jit_debug_descriptor.first_entry;
  if (entry_.next_entry) entry_.next_entry->prev_entry = &entry_;
  __jit_debug_descriptor.first_entry = &entry_;
  __jit_debug_descriptor.relevant_entry = &entry_;
  __jit_debug_descriptor.action_flag = JIT_REGISTER_FN;
  __jit_debug_register_code();
}

GdbJitEntry::~GdbJitEntry() {
  GdbJitLock lock;
  if (entry_.prev_entry) {
    entry_.prev_entry->next_entry = entry_.next_entry;
  } else {
    __jit_debug_descriptor.first_entry = entry_.next_entry;
  }
  if (entry_.next_entry) entry_.next_entry->prev_entry = entry_.prev_entry;
  __jit_debug_descriptor.relevant_entry = &entry_;
  __jit_debug_descriptor.action_flag = JIT_UNREGISTER_FN;
  __jit_debug_register_code();
  // The entry is about to be freed: leave no pointer to it behind.
  __jit_debug_descriptor.relevant_entry = nullptr;
  __jit_debug_descriptor.action_flag = JIT_NOACTION;
}

}  // namespace loom::cpu
