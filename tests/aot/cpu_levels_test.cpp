// CPU modules with several CPU levels: compiled once per level, the best level the CPU has
// run at load (or the one forced), a level the CPU lacks refused naming what it lacks, and
// modules written before levels still read. `loom compile` targets x86-64-v2 by default.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>

#include "engine_plugin/include/loom/aot_module.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/aot/loaded_module.h"
#include "runtime/aot/module_device.h"
#include "runtime/aot/module_files.h"
#include "runtime/common/error.h"
#include "runtime/cpu/host_cpu.h"
#include "runtime/device/device.h"
#include "runtime/host/field.h"
#include "runtime/host/ndarray.h"

namespace loom {
namespace {

std::string source(const std::string& rel) { return std::string(LOOM_SOURCE_DIR) + "/" + rel; }

aot::Module cpu_module(const std::string& doc, std::vector<std::string> levels) {
  ProgramOptions po;
  po.backend = Backend::Cpu;
  po.offline_cache = false;
  Program program(po);
  program.load_file(doc);
  AotOptions ao;
  ao.arch = Backend::Cpu;
  ao.cpu_levels = std::move(levels);
  AotModule m(program, ao);
  m.add_document();
  return m.module();
}

Error error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  return Error("no error");
}

bool host_has(const aot::CpuLevel& level) {
  return cpu::missing_cpu_features(level.features).empty();
}

std::vector<uint8_t> field_bytes(aot::LoadedModule& m, const std::string& name) {
  host::Field* f = m.field(name);
  if (!f) return {};
  m.device().read_back(f->data());
  return std::vector<uint8_t>(f->data(), f->data() + f->bytes());
}

std::vector<uint8_t> jit_bytes(const std::string& doc, const std::string& name, int steps) {
  ProgramOptions po;
  po.backend = Backend::Cpu;
  po.offline_cache = false;
  Program jit(po);
  jit.load_file(doc);
  jit.run_pipeline("init");
  for (int s = 0; s < steps; ++s) jit.run_pipeline("step");
  jit.synchronize();
  ArrayView v = jit.array(name);
  return std::vector<uint8_t>(v.data, v.data + v.bytes);
}

std::vector<uint8_t> run_module(aot::LoadedModule& m, const std::string& name, int steps) {
  m.run_pipeline("init");
  for (int s = 0; s < steps; ++s) m.run_pipeline("step");
  m.device().synchronize();
  return field_bytes(m, name);
}

// Float results of code for another CPU level differ from the JIT's (compiled for this CPU)
// in the last bits: fast math contracts a*b+c into one FMA only where the level has FMA.
bool close_f32(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  if (a.size() != b.size() || a.empty()) return false;
  for (size_t i = 0; i + 4 <= a.size(); i += 4) {
    float x, y;
    std::memcpy(&x, a.data() + i, 4);
    std::memcpy(&y, b.data() + i, 4);
    if (std::fabs(x - y) > 1e-5f * std::max(1.0f, std::fabs(y))) return false;
  }
  return true;
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

#if defined(__x86_64__)

TEST(CpuLevels, AModuleCarriesEveryLevelFewestFeaturesFirst) {
  // Asked for out of order: stored from fewest features to most.
  aot::Module m = cpu_module(source("assets/graphs/heat.loom.json"), {"x86-64-v3", "x86-64-v2"});
  const auto& levels = m.meta.needs.cpu_levels;
  ASSERT_EQ(levels.size(), 2u);
  EXPECT_EQ(levels[0].cpu, "x86-64-v2");
  EXPECT_EQ(levels[1].cpu, "x86-64-v3");
  auto has = [](const aot::CpuLevel& l, const char* f) {
    return std::find(l.features.begin(), l.features.end(), f) != l.features.end();
  };
  EXPECT_TRUE(has(levels[0], "sse4.2"));
  EXPECT_FALSE(has(levels[0], "avx"));
  for (const char* f : {"avx", "avx2", "fma", "bmi2", "sse4.2"})
    EXPECT_TRUE(has(levels[1], f)) << f;
  EXPECT_FALSE(has(levels[1], "avx512f"));
  for (const aot::KernelInfo& k : m.meta.kernels) {
    ASSERT_EQ(k.objects.size(), 2u) << k.name;
    EXPECT_NE(k.objects[0], k.objects[1]);
    EXPECT_NE(k.objects[1].find("x86-64-v3"), std::string::npos) << k.objects[1];
    // Different code per level: v3's is compiled with AVX.
    EXPECT_NE(m.blobs.at(k.objects[0]), m.blobs.at(k.objects[1])) << k.name;
  }
  // The same level twice, a CPU LLVM does not know, an empty name: errors naming it.
  EXPECT_NE(error_of([&] {
              cpu_module(source("assets/graphs/heat.loom.json"), {"x86-64-v2", "x86-64-v2"});
            })
                .message()
                .find("CPU level 'x86-64-v2' is asked for twice"),
            std::string::npos);
  std::string msg = error_of([&] {
                      cpu_module(source("assets/graphs/heat.loom.json"), {"x86-64-v9"});
                    }).message();
  EXPECT_NE(msg.find("'x86-64-v9' is not a CPU LLVM knows"), std::string::npos) << msg;
}

TEST(CpuLevels, TheBestLevelTheCpuHasRunsAndEveryLevelGivesTheJitsResults) {
  std::string heat = source("assets/graphs/heat.loom.json");
  std::string life = source("assets/graphs/life.loom.json");
  aot::Module heat_module = cpu_module(heat, {"x86-64-v2", "x86-64-v3"});
  aot::Module life_module = cpu_module(life, {"x86-64-v2", "x86-64-v3"});
  // lavapipe machines have AVX2 and FMA: they run v3; a CPU without runs v2.
  int expected = host_has(heat_module.meta.needs.cpu_levels[1]) ? 1 : 0;
  auto device = make_cpu_device();

  std::vector<uint8_t> heat_jit = jit_bytes(heat, "temperature", 5);
  std::vector<uint8_t> life_jit = jit_bytes(life, "cells", 5);
  for (const char* forced : {"", "x86-64-v2", "x86-64-v3"}) {
    if (std::string(forced) == "x86-64-v3" && expected == 0) continue;  // this CPU lacks it
    aot::LoadOptions options;
    options.cpu_level = forced;
    aot::LoadedModule h(heat_module, *device, "heat.loommod", options);
    aot::LoadedModule l(life_module, *device, "life.loommod", options);
    int want = *forced ? (std::string(forced) == "x86-64-v2" ? 0 : 1) : expected;
    EXPECT_EQ(h.cpu_level(), want) << "forced '" << forced << "'";
    EXPECT_EQ(l.cpu_level(), want) << "forced '" << forced << "'";
    std::vector<uint8_t> got = run_module(h, "temperature", 5);
    EXPECT_TRUE(close_f32(got, heat_jit)) << "heat at level " << forced;
    // Integer cells: every level gives the JIT's bytes exactly.
    EXPECT_TRUE(run_module(l, "cells", 5) == life_jit) << "life at level " << forced;
  }

  // LOOM_CPU_LEVEL forces a level as the load options do; the options win over it.
  {
    ScopedEnv env(aot::kCpuLevelVariable, "x86-64-v2");
    aot::LoadedModule h(heat_module, *device, "heat.loommod");
    EXPECT_EQ(h.cpu_level(), 0);
    aot::LoadOptions options;
    options.cpu_level = expected == 1 ? "x86-64-v3" : "x86-64-v2";
    aot::LoadedModule o(heat_module, *device, "heat.loommod", options);
    EXPECT_EQ(o.cpu_level(), expected);
  }
  // A level the module lacks: an error listing the ones it has.
  aot::LoadOptions none;
  none.cpu_level = "skylake";
  Error e = error_of([&] { aot::LoadedModule h(heat_module, *device, "heat.loommod", none); });
  EXPECT_EQ(e.kind(), ErrorKind::Capability);
  EXPECT_NE(std::string(e.what()).find("heat.loommod"), std::string::npos) << e.what();
  EXPECT_NE(e.message().find("the module has no CPU level 'skylake' (forced by LOOM_CPU_LEVEL or "
                             "the load options); its levels are 'x86-64-v2', 'x86-64-v3'"),
            std::string::npos)
      << e.message();
}

// The first of these CPUs that has a feature this machine lacks (x86-64-v4: AVX-512; the
// others add AMX, AVX-512 FP16 or AMD's SSE4a and CLZERO), with the features it lacks.
struct LackedLevel {
  aot::Module module;
  std::vector<std::string> missing;
};
std::optional<LackedLevel> a_level_this_cpu_lacks(const std::string& doc) {
  for (const char* cpu : {"x86-64-v4", "sapphirerapids", "znver3", "znver1"}) {
    aot::Module m = cpu_module(doc, {cpu});
    std::vector<std::string> missing =
        cpu::missing_cpu_features(m.meta.needs.cpu_levels.at(0).features);
    if (!missing.empty()) return LackedLevel{std::move(m), std::move(missing)};
  }
  return std::nullopt;
}

TEST(CpuLevels, ALevelTheCpuLacksIsRefusedNamingWhatItLacks) {
  std::string doc = source("assets/graphs/heat.loom.json");
  std::optional<LackedLevel> lacked = a_level_this_cpu_lacks(doc);
  if (!lacked)
    GTEST_SKIP() << "this CPU has every feature of x86-64-v4, sapphirerapids, znver3 and znver1 "
                    "(both AVX-512 with AMX and AMD's own features): no level to refuse";
  const std::string name = lacked->module.meta.needs.cpu_levels[0].cpu;
  auto device = make_cpu_device();

  // A module of that level alone: refused, every missing feature named.
  Error e = error_of([&] { aot::LoadedModule m(lacked->module, *device, "lacking.loommod"); });
  EXPECT_EQ(e.kind(), ErrorKind::Capability);
  std::string msg = e.what();
  EXPECT_NE(msg.find("lacking.loommod"), std::string::npos) << msg;
  EXPECT_NE(
      msg.find("this CPU lacks features the module's code uses (compiled for '" + name + "')"),
      std::string::npos)
      << msg;
  for (const std::string& f : lacked->missing) EXPECT_NE(msg.find(f), std::string::npos) << f;

  // With x86-64-v2 beside it: v2 runs; forcing the other level is refused the same way.
  aot::Module both = cpu_module(doc, {"x86-64-v2", name});
  ASSERT_EQ(both.meta.needs.cpu_levels.back().cpu, name);
  aot::LoadedModule m(both, *device, "both.loommod");
  EXPECT_EQ(m.cpu_level(), 0);
  aot::LoadOptions options;
  options.cpu_level = name;
  msg = error_of([&] { aot::LoadedModule f(both, *device, "both.loommod", options); }).what();
  EXPECT_NE(msg.find("compiled for '" + name + "', the level forced by LOOM_CPU_LEVEL"),
            std::string::npos)
      << msg;
  for (const std::string& f : lacked->missing) EXPECT_NE(msg.find(f), std::string::npos) << f;
}

TEST(CpuLevels, TheDefaultIsThePortableBaseline) {
  aot::Module m = cpu_module(source("assets/graphs/heat.loom.json"), {});
  ASSERT_EQ(m.meta.needs.cpu_levels.size(), 1u);
  EXPECT_EQ(m.meta.needs.cpu_levels[0].cpu, "x86-64-v2");
  // `loom compile --arch cpu` without --cpu: the same, in the metadata of the file it writes.
  std::string path = testing::TempDir() + "/loom_cpu_default.loommod";
  std::string cmd = std::string(LOOM_CLI) + " compile " + source("assets/graphs/heat.loom.json") +
                    " --arch cpu -o " + path + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  aot::Module file = aot::read_module_path(path);
  ASSERT_EQ(file.meta.needs.cpu_levels.size(), 1u);
  EXPECT_EQ(file.meta.needs.cpu_levels[0].cpu, "x86-64-v2");
  std::string json = aot::metadata_to_json(file.meta);
  EXPECT_NE(json.find("\"cpu\": \"x86-64-v2\""), std::string::npos);
  EXPECT_EQ(json.find("avx"), std::string::npos) << "x86-64-v2 code may use no AVX";
}

#endif  // __x86_64__

// The rule alone, on CPUs this machine is not: the last level whose features the CPU has.
TEST(CpuLevels, TheChoiceFollowsTheFeaturesTheCpuHas) {
  std::vector<aot::CpuLevel> levels = {
      {"base", {"sse2", "sse4.2"}},
      {"mid", {"avx", "avx2", "sse2", "sse4.2"}},
      {"top", {"avx", "avx2", "avx512f", "sse2", "sse4.2"}},
  };
  EXPECT_EQ(aot::select_cpu_level(levels, {"avx", "avx2", "sse2", "sse4.2"}, "", "m"), 1u);
  EXPECT_EQ(aot::select_cpu_level(levels, {"avx", "avx2", "avx512f", "sse2", "sse4.2"}, "", "m"),
            2u);
  EXPECT_EQ(aot::select_cpu_level(levels, {"avx512f", "sse2", "sse4.2"}, "", "m"), 0u);
  EXPECT_EQ(aot::select_cpu_level(levels, {"avx", "avx2", "sse2", "sse4.2"}, "base", "m"), 0u);
  Error e = error_of([&] { aot::select_cpu_level(levels, {"sse2"}, "", "m.loommod"); });
  EXPECT_EQ(e.kind(), ErrorKind::Capability);
  EXPECT_NE(std::string(e.what()).find(
                "m.loommod: this CPU lacks features the module's code uses (compiled for "
                "'base', the lowest of its levels 'base', 'mid', 'top'): sse4.2; compile"),
            std::string::npos)
      << e.what();
  e = error_of([&] { aot::select_cpu_level(levels, {"sse2", "sse4.2"}, "top", "m"); });
  EXPECT_NE(e.message().find("(compiled for 'top', the level forced by LOOM_CPU_LEVEL or the "
                             "load options): avx, avx2, avx512f"),
            std::string::npos)
      << e.message();
  e = error_of([&] { aot::select_cpu_level({}, {"sse2"}, "", "m"); });
  EXPECT_NE(e.message().find("names no CPU level"), std::string::npos) << e.message();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

std::string metadata_error(const std::string& text) {
  try {
    aot::metadata_from_json(text, "edited.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Several levels in metadata.json; one level in exactly the keys modules before levels have,
// so they read as before, and a runtime before levels reads a module of several as its lowest.
TEST(CpuLevels, MetadataHoldsTheLevelsAndModulesBeforeLevelsStillLoad) {
  aot::ModuleMetadata m;
  m.name = "levels";
  m.producer = "loom test";
  m.needs.cpu_levels = {{"x86-64-v2", {"sse4.2"}}, {"x86-64-v3", {"avx2", "sse4.2"}}};
  aot::KernelInfo k;
  k.name = "k";
  k.objects = {"0.k.x86-64-v2.o", "0.k.x86-64-v3.o"};
  m.kernels.push_back(k);
  std::string json = aot::metadata_to_json(m);
  EXPECT_NE(json.find("\"cpu\": \"x86-64-v2\",\n    \"cpu_features\": [\"sse4.2\"],\n    "
                      "\"cpu_levels\": [\n"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"object\": \"0.k.x86-64-v2.o\",\n      \"objects\": [\"0.k.x86-64-v2.o\", "
                      "\"0.k.x86-64-v3.o\"]"),
            std::string::npos)
      << json;
  aot::ModuleMetadata back = aot::metadata_from_json(json, "levels.json");
  ASSERT_EQ(back.needs.cpu_levels.size(), 2u);
  EXPECT_EQ(back.needs.cpu_levels[1].cpu, "x86-64-v3");
  EXPECT_EQ(back.needs.cpu_levels[1].features, (std::vector<std::string>{"avx2", "sse4.2"}));
  EXPECT_EQ(back.kernels.at(0).objects, k.objects);
  EXPECT_EQ(aot::metadata_to_json(back), json);

  // Edits that make the two descriptions disagree are named.
  std::string msg = metadata_error(
      replaced(json, "\"objects\": [\"0.k.x86-64-v2.o\", ", "\"objects\": [\"0.k.x86-64-v3.o\", "));
  EXPECT_NE(msg.find("kernels[0].objects[0] is not the object of kernels[0].object"),
            std::string::npos)
      << msg;
  msg = metadata_error(replaced(json, ", \"0.k.x86-64-v3.o\"]", "]"));
  EXPECT_NE(msg.find("kernels[0].objects has 1 objects; the module has 2 CPU levels"),
            std::string::npos)
      << msg;
  msg = metadata_error(replaced(json, "\"cpu\": \"x86-64-v2\",\n    \"cpu_features\"",
                                "\"cpu\": \"x86-64-v3\",\n    \"cpu_features\""));
  EXPECT_NE(msg.find("requires.cpu_levels[0] is not the level of requires.cpu and cpu_features"),
            std::string::npos)
      << msg;

  // One level: no "cpu_levels" and no "objects", as modules were written before levels.
  m.needs.cpu_levels.resize(1);
  m.kernels[0].objects.resize(1);
  std::string one = aot::metadata_to_json(m);
  EXPECT_EQ(one.find("cpu_levels"), std::string::npos) << one;
  EXPECT_EQ(one.find("\"objects\""), std::string::npos) << one;

  // metadata.json as a build before levels wrote it (tests/aot/data): one level.
  std::ifstream in(source("tests/aot/data/metadata_cpu.json"), std::ios::binary);
  std::string golden((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(golden.empty());
  aot::ModuleMetadata old = aot::metadata_from_json(golden, "metadata_cpu.json");
  ASSERT_EQ(old.needs.cpu_levels.size(), 1u);
  EXPECT_EQ(old.needs.cpu_levels[0].cpu, "skylake");
  EXPECT_EQ(old.needs.cpu_levels[0].features, (std::vector<std::string>{"+avx2", "+fma"}));
  EXPECT_EQ(old.kernels.at(0).objects, std::vector<std::string>{"sample.o"});
}

#if defined(__x86_64__)

// A real module of two levels cut down to what a runtime before levels reads (the keys
// "cpu_levels" and "objects" dropped) loads and runs its lowest level.
TEST(CpuLevels, AModuleOfSeveralLevelsReadsAsItsLowestWithoutTheNewKeys) {
  std::string doc = source("assets/graphs/life.loom.json");
  aot::Module m = cpu_module(doc, {"x86-64-v2", "x86-64-v3"});
  std::string dir = testing::TempDir() + "/loom_cpu_levels_old";
  std::filesystem::remove_all(dir);
  aot::save_module_folder(m, dir);
  std::string meta_path = dir + "/metadata.json";
  std::string text;
  {
    std::ifstream in(meta_path, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // Drops `,\n<indent>"key": [...]` (the comma before it, the array with what it nests).
  auto drop = [&](const std::string& key) {
    for (size_t k; (k = text.find("\"" + key + "\": [")) != std::string::npos;) {
      size_t from = text.rfind(",\n", k);
      size_t end = text.find('[', k);
      for (int depth = 0; end < text.size(); ++end) {
        if (text[end] == '[') ++depth;
        if (text[end] == ']' && --depth == 0) break;
      }
      text.erase(from, end + 1 - from);
    }
  };
  drop("cpu_levels");
  drop("objects");
  ASSERT_EQ(text.find("cpu_levels"), std::string::npos) << text;
  ASSERT_EQ(text.find("\"objects\""), std::string::npos) << text;
  {
    std::ofstream out(meta_path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  aot::Module old = aot::read_module_path(dir);
  ASSERT_EQ(old.meta.needs.cpu_levels.size(), 1u);
  EXPECT_EQ(old.meta.needs.cpu_levels[0].cpu, "x86-64-v2");
  auto device = make_cpu_device();
  aot::LoadedModule loaded(std::move(old), *device, dir);
  EXPECT_EQ(loaded.cpu_level(), 0);
  EXPECT_TRUE(run_module(loaded, "cells", 5) == jit_bytes(doc, "cells", 5));
}

std::string capture(const std::string& cmd, int* code) {
  FILE* pipe = popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  int status = pclose(pipe);
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST(CpuLevels, TheModuleToolPrintsTheLevelsAndRunsOneOnRequest) {
  std::string path = testing::TempDir() + "/loom_cpu_levels.loommod";
  int code = 0;
  std::string out =
      capture(std::string(LOOM_CLI) + " compile " + source("assets/graphs/heat.loom.json") +
                  " --arch cpu --cpu x86-64-v3,x86-64-v2 -o " + path,
              &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("cpu (x86-64-v2, x86-64-v3) module"), std::string::npos) << out;
  aot::Module m = aot::read_module_path(path);
  bool v3 = host_has(m.meta.needs.cpu_levels.at(1));

  out = capture(std::string(LOOM_MODULE_CLI) + " info " + path, &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("needs: x86_64-linux, 2 CPU level(s), fewest features first"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("cpu level x86-64-v2: 15 feature(s): 64bit cmov crc32"), std::string::npos)
      << out;
  EXPECT_NE(out.find("cpu level x86-64-v3: "), std::string::npos) << out;
  EXPECT_NE(out.find(" avx2 "), std::string::npos) << out;
  EXPECT_NE(out.find(std::string("this CPU runs level ") + (v3 ? "x86-64-v3" : "x86-64-v2")),
            std::string::npos)
      << out;
  out =
      capture(std::string("LOOM_CPU_LEVEL=x86-64-v2 ") + LOOM_MODULE_CLI + " info " + path, &code);
  EXPECT_NE(out.find("this CPU runs level x86-64-v2 (forced by LOOM_CPU_LEVEL)"), std::string::npos)
      << out;
  out = capture(std::string(LOOM_MODULE_CLI) + " run " + path + " --cpu-level x86-64-v2", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("(CPU level x86-64-v2): init + 1 step(s)"), std::string::npos) << out;
  out = capture(std::string(LOOM_MODULE_CLI) + " run " + path + " --cpu-level znver9", &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("the module has no CPU level 'znver9'"), std::string::npos) << out;

  out = capture(std::string(LOOM_CLI) + " compile " + source("assets/graphs/heat.loom.json") +
                    " --arch cpu --cpu x86-64-v2,nonsense -o " + path,
                &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("'nonsense' is not a CPU LLVM knows"), std::string::npos) << out;
}

#endif  // __x86_64__

}  // namespace
}  // namespace loom
