// The runtime's CPU feature detection (no LLVM) against LLVM's own, on this machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include <llvm/ADT/StringMap.h>
#include <llvm/Support/Host.h>

#include "runtime/cpu/host_cpu.h"

using namespace loom;

TEST(HostCpu, AgreesWithLlvmOnEveryFeatureItDetects) {
  llvm::StringMap<bool> llvm_features;
  ASSERT_TRUE(llvm::sys::getHostCPUFeatures(llvm_features));
  const std::vector<std::string>& known = cpu::known_cpu_features();
  const std::vector<std::string>& host = cpu::host_cpu_features();
  std::set<std::string> ours(host.begin(), host.end());
  int compared = 0;
  for (const std::string& name : known) {
    auto it = llvm_features.find(name);
    if (it == llvm_features.end()) continue;  // a feature this LLVM version does not detect
    EXPECT_EQ(ours.count(name) == 1, it->second) << name;
    ++compared;
  }
  EXPECT_GE(compared, 80);
  // Every feature LLVM finds here is one the runtime knows, so objects compiled for this CPU
  // (which record LLVM's names) load on it.
  for (const auto& kv : llvm_features) {
    if (kv.second) {
      EXPECT_TRUE(std::binary_search(known.begin(), known.end(), kv.first().str()))
          << kv.first().str();
    }
  }
  std::string list;
  for (const std::string& f : host) list += " " + f;
  std::printf("host CPU features:%s\n", list.c_str());
}

TEST(HostCpu, MissingFeaturesNameTheUnknownAndTheAbsent) {
  // x86-64 always has SSE2; no CPU has a feature the detector does not know.
  EXPECT_EQ(cpu::missing_cpu_features({"+sse2", "sse2", "+64bit", "+cx8", ""}),
            std::vector<std::string>{});
  EXPECT_EQ(cpu::missing_cpu_features({"+loom-imaginary", "+sse2", "avx9000"}),
            (std::vector<std::string>{"loom-imaginary", "avx9000"}));
  // A known feature this CPU lacks, if any, is missing.
  const std::vector<std::string>& host = cpu::host_cpu_features();
  for (const std::string& name : cpu::known_cpu_features()) {
    bool has = std::binary_search(host.begin(), host.end(), name);
    EXPECT_EQ(cpu::missing_cpu_features({"+" + name}).empty(), has) << name;
  }
  // AVX-512 implies AVX2 implies AVX, as the OS-state checks require.
  auto has = [&](const char* f) {
    return std::binary_search(host.begin(), host.end(), std::string(f));
  };
  EXPECT_TRUE(!has("avx512f") || has("avx2"));
  EXPECT_TRUE(!has("avx2") || has("avx"));
}
