#include "runtime/cpu/perf_map.h"

#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace loom::cpu {

namespace {

std::atomic<int>& forced() {
  static std::atomic<int> state{-1};  // -1: as the environment says
  return state;
}

bool from_environment() {
  const char* v = std::getenv("LOOM_PERF_MAP");
  return v && std::strcmp(v, "1") == 0;
}

}  // namespace

bool perf_map_enabled() {
  int f = forced().load();
  return f < 0 ? from_environment() : f == 1;
}

void enable_perf_map(bool on) { forced().store(on ? 1 : 0); }

std::string perf_map_path() { return "/tmp/perf-" + std::to_string(getpid()) + ".map"; }

void perf_map_add(const void* start, uint64_t size, const std::string& kernel,
                  const std::string& symbol) {
  if (!perf_map_enabled()) return;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::FILE* f = std::fopen(perf_map_path().c_str(), "a");
  if (!f) return;
  std::fprintf(f, "%" PRIxPTR " %" PRIx64 " loom:%s:%s\n", reinterpret_cast<uintptr_t>(start), size,
               kernel.c_str(), symbol.c_str());
  std::fclose(f);
}

}  // namespace loom::cpu
