#include "runtime/cpu/host_cpu.h"

#include <algorithm>
#include <cstdint>
#include <string_view>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define LOOM_X86 1
#endif

namespace loom::cpu {

namespace {

enum Reg : uint8_t { kEax, kEbx, kEcx, kEdx };
// Register state the OS must save on context switches (XCR0) for the feature to be usable.
enum class State : uint8_t { None, Avx, Avx512, Amx };

struct FeatureBit {
  const char* name;
  uint32_t leaf;
  uint32_t subleaf;
  Reg reg;
  uint8_t bit;
  State state = State::None;
};

// From the Intel SDM and AMD APM cpuid tables, in LLVM's names; LLVM reports xsave,
// xsaveopt, xsavec and xsaves only when AVX state is saved, and crc32 with sse4.2.
constexpr FeatureBit kFeatures[] = {
    {"cx8", 1, 0, kEdx, 8},
    {"cmov", 1, 0, kEdx, 15},
    {"mmx", 1, 0, kEdx, 23},
    {"fxsr", 1, 0, kEdx, 24},
    {"sse", 1, 0, kEdx, 25},
    {"sse2", 1, 0, kEdx, 26},
    {"sse3", 1, 0, kEcx, 0},
    {"pclmul", 1, 0, kEcx, 1},
    {"ssse3", 1, 0, kEcx, 9},
    {"fma", 1, 0, kEcx, 12, State::Avx},
    {"cx16", 1, 0, kEcx, 13},
    {"sse4.1", 1, 0, kEcx, 19},
    {"sse4.2", 1, 0, kEcx, 20},
    {"crc32", 1, 0, kEcx, 20},
    {"movbe", 1, 0, kEcx, 22},
    {"popcnt", 1, 0, kEcx, 23},
    {"aes", 1, 0, kEcx, 25},
    {"xsave", 1, 0, kEcx, 26, State::Avx},
    {"avx", 1, 0, kEcx, 28, State::Avx},
    {"f16c", 1, 0, kEcx, 29, State::Avx},
    {"rdrnd", 1, 0, kEcx, 30},
    {"fsgsbase", 7, 0, kEbx, 0},
    {"sgx", 7, 0, kEbx, 2},
    {"bmi", 7, 0, kEbx, 3},
    {"avx2", 7, 0, kEbx, 5, State::Avx},
    {"bmi2", 7, 0, kEbx, 8},
    {"invpcid", 7, 0, kEbx, 10},
    {"rtm", 7, 0, kEbx, 11},
    {"avx512f", 7, 0, kEbx, 16, State::Avx512},
    {"avx512dq", 7, 0, kEbx, 17, State::Avx512},
    {"rdseed", 7, 0, kEbx, 18},
    {"adx", 7, 0, kEbx, 19},
    {"avx512ifma", 7, 0, kEbx, 21, State::Avx512},
    {"clflushopt", 7, 0, kEbx, 23},
    {"clwb", 7, 0, kEbx, 24},
    {"avx512pf", 7, 0, kEbx, 26, State::Avx512},
    {"avx512er", 7, 0, kEbx, 27, State::Avx512},
    {"avx512cd", 7, 0, kEbx, 28, State::Avx512},
    {"sha", 7, 0, kEbx, 29},
    {"avx512bw", 7, 0, kEbx, 30, State::Avx512},
    {"avx512vl", 7, 0, kEbx, 31, State::Avx512},
    {"prefetchwt1", 7, 0, kEcx, 0},
    {"avx512vbmi", 7, 0, kEcx, 1, State::Avx512},
    {"pku", 7, 0, kEcx, 4},
    {"waitpkg", 7, 0, kEcx, 5},
    {"avx512vbmi2", 7, 0, kEcx, 6, State::Avx512},
    {"shstk", 7, 0, kEcx, 7},
    {"gfni", 7, 0, kEcx, 8},
    {"vaes", 7, 0, kEcx, 9, State::Avx},
    {"vpclmulqdq", 7, 0, kEcx, 10, State::Avx},
    {"avx512vnni", 7, 0, kEcx, 11, State::Avx512},
    {"avx512bitalg", 7, 0, kEcx, 12, State::Avx512},
    {"avx512vpopcntdq", 7, 0, kEcx, 14, State::Avx512},
    {"rdpid", 7, 0, kEcx, 22},
    {"kl", 7, 0, kEcx, 23},
    {"cldemote", 7, 0, kEcx, 25},
    {"movdiri", 7, 0, kEcx, 27},
    {"movdir64b", 7, 0, kEcx, 28},
    {"enqcmd", 7, 0, kEcx, 29},
    {"uintr", 7, 0, kEdx, 5},
    {"avx512vp2intersect", 7, 0, kEdx, 8, State::Avx512},
    {"serialize", 7, 0, kEdx, 14},
    {"tsxldtrk", 7, 0, kEdx, 16},
    {"pconfig", 7, 0, kEdx, 18},
    {"amx-bf16", 7, 0, kEdx, 22, State::Amx},
    {"avx512fp16", 7, 0, kEdx, 23, State::Avx512},
    {"amx-tile", 7, 0, kEdx, 24, State::Amx},
    {"amx-int8", 7, 0, kEdx, 25, State::Amx},
    {"avxvnni", 7, 1, kEax, 4, State::Avx},
    {"avx512bf16", 7, 1, kEax, 5, State::Avx512},
    {"hreset", 7, 1, kEax, 22},
    {"xsaveopt", 0xd, 1, kEax, 0, State::Avx},
    {"xsavec", 0xd, 1, kEax, 1, State::Avx},
    {"xsaves", 0xd, 1, kEax, 3, State::Avx},
    {"ptwrite", 0x14, 0, kEbx, 4},
    {"widekl", 0x19, 0, kEbx, 2},
    {"sahf", 0x80000001, 0, kEcx, 0},
    {"lzcnt", 0x80000001, 0, kEcx, 5},
    {"sse4a", 0x80000001, 0, kEcx, 6},
    {"prfchw", 0x80000001, 0, kEcx, 8},
    {"xop", 0x80000001, 0, kEcx, 11, State::Avx},
    {"lwp", 0x80000001, 0, kEcx, 15},
    {"fma4", 0x80000001, 0, kEcx, 16, State::Avx},
    {"tbm", 0x80000001, 0, kEcx, 21},
    {"mwaitx", 0x80000001, 0, kEcx, 29},
    {"64bit", 0x80000001, 0, kEdx, 29},
    {"clzero", 0x80000008, 0, kEbx, 0},
    {"rdpru", 0x80000008, 0, kEbx, 4},
    {"wbnoinvd", 0x80000008, 0, kEbx, 9},
};

#ifdef LOOM_X86
struct Regs {
  uint32_t r[4] = {0, 0, 0, 0};
};

// cpuid, or zeros for a leaf or subleaf the CPU does not have.
Regs cpuid(uint32_t leaf, uint32_t subleaf) {
  Regs out;
  uint32_t max = __get_cpuid_max(leaf & 0x80000000u, nullptr);
  if (max == 0 || leaf > max) return out;
  if (leaf == 7 && subleaf > 0) {
    Regs base = cpuid(7, 0);
    if (base.r[kEax] < subleaf) return out;  // EAX of subleaf 0: the last subleaf
  }
  __cpuid_count(leaf, subleaf, out.r[kEax], out.r[kEbx], out.r[kEcx], out.r[kEdx]);
  return out;
}

std::vector<std::string> detect() {
  Regs leaf1 = cpuid(1, 0);
  bool osxsave = (leaf1.r[kEcx] >> 27) & 1;
  uint64_t xcr0 = 0;
  if (osxsave) {  // xgetbv faults unless the OS enabled XSAVE
    uint32_t lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (uint64_t{hi} << 32) | lo;
  }
  bool avx = osxsave && ((leaf1.r[kEcx] >> 28) & 1) && (xcr0 & 0x6) == 0x6;  // XMM, YMM
  bool avx512 = avx && (xcr0 & 0xe0) == 0xe0;                                // opmask, ZMM
  bool amx = osxsave && (xcr0 & 0x60000) == 0x60000;                         // TILECFG, TILEDATA
  std::vector<std::string> found;
  uint32_t cached_leaf = ~0u, cached_subleaf = ~0u;
  Regs regs;
  for (const FeatureBit& f : kFeatures) {
    if (f.leaf != cached_leaf || f.subleaf != cached_subleaf) {
      regs = cpuid(f.leaf, f.subleaf);
      cached_leaf = f.leaf;
      cached_subleaf = f.subleaf;
    }
    bool on = (regs.r[f.reg] >> f.bit) & 1;
    switch (f.state) {
      case State::None: break;
      case State::Avx: on = on && avx; break;
      case State::Avx512: on = on && avx512; break;
      case State::Amx: on = on && amx; break;
    }
    if (on) found.emplace_back(f.name);
  }
  std::sort(found.begin(), found.end());
  return found;
}
#else
std::vector<std::string> detect() { return {}; }
#endif

}  // namespace

const std::vector<std::string>& known_cpu_features() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const FeatureBit& f : kFeatures) out.emplace_back(f.name);
    std::sort(out.begin(), out.end());
    return out;
  }();
  return names;
}

const std::vector<std::string>& host_cpu_features() {
  static const std::vector<std::string> features = detect();
  return features;
}

std::vector<std::string> missing_cpu_features(const std::vector<std::string>& required) {
  return missing_cpu_features(required, host_cpu_features());
}

std::vector<std::string> missing_cpu_features(const std::vector<std::string>& required,
                                              const std::vector<std::string>& have) {
  std::vector<std::string> missing;
  for (const std::string& r : required) {
    std::string_view name = r;
    if (name.starts_with('+')) name.remove_prefix(1);
    if (name.empty()) continue;
    if (!std::binary_search(have.begin(), have.end(), name, std::less<>()))
      missing.emplace_back(name);
  }
  return missing;
}

}  // namespace loom::cpu
