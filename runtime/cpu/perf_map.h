// Names of loaded kernels for profilers: with LOOM_PERF_MAP=1 in the environment (or
// enable_perf_map()), every task entry of a CPU kernel loaded from then on is appended to
// /tmp/perf-<pid>.map as "<start> <size> loom:<kernel>:<symbol>", the file Linux perf reads
// to name code that no ELF file on disk describes. The file only grows: perf keeps the last
// name for an address, so code loaded again at a reused address is named right.
#pragma once

#include <cstdint>
#include <string>

namespace loom::cpu {

bool perf_map_enabled();  // LOOM_PERF_MAP=1 or enable_perf_map(true)
void enable_perf_map(bool on);
std::string perf_map_path();  // /tmp/perf-<pid>.map

// Appends one line when enabled; an unwritable file is ignored (profiling is best effort and
// must never fail a load).
void perf_map_add(const void* start, uint64_t size, const std::string& kernel,
                  const std::string& symbol);

}  // namespace loom::cpu
