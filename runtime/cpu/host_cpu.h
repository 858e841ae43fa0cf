// The running CPU's instruction-set features, detected with cpuid and xgetbv (no LLVM), named
// as LLVM's getHostCPUFeatures names them ("sse4.2", "avx2", "avx512f", ...). A feature whose
// registers the OS does not save (AVX, AVX-512, AMX state in XCR0) counts as absent.
#pragma once

#include <string>
#include <vector>

namespace loom::cpu {

// Every feature the detector knows, sorted.
const std::vector<std::string>& known_cpu_features();
// The known features this CPU has, sorted; detected once per process.
const std::vector<std::string>& host_cpu_features();
// The features of `required` (with or without a leading '+') this CPU lacks, in order. A name
// the detector does not know counts as missing: code is never run on a CPU we cannot vouch for.
std::vector<std::string> missing_cpu_features(const std::vector<std::string>& required);
// The same against `have` (sorted feature names) instead of this CPU: for choosing among
// code compiled for several CPUs, and for testing that choice on CPUs we do not run on.
std::vector<std::string> missing_cpu_features(const std::vector<std::string>& required,
                                              const std::vector<std::string>& have);

}  // namespace loom::cpu
