// The `loom` command line as a user runs it: exit codes, one clear message, outputs.
#include <gtest/gtest.h>

#include "tests/support/run_loom.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/vulkan_required.h"

#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "runtime/common/npy.h"

namespace {

using loom::test::CliRun;
using loom::test::run_loom;

std::string doc(const std::string& name) {
  return std::string(LOOM_SOURCE_DIR) + "/tests/e2e/docs/" + name;
}
std::string temp(const std::string& name) { return loom::test::scratch_path(name); }

}  // namespace

TEST(Cli, HelpAndUnknownCommands) {
  CliRun help = run_loom("--help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("run DOC"), std::string::npos);
  for (const char* cmd : {"run", "check", "ir", "compile", "spirv", "bench", "fmt"}) {
    CliRun r = run_loom(std::string(cmd) + " --help");
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_NE(r.out.find(std::string("usage: loom ") + cmd), std::string::npos) << cmd;
  }
  CliRun bad = run_loom("frobnicate");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.out.find("unknown command 'frobnicate'"), std::string::npos);
  CliRun opt = run_loom("run " + doc("taichi_pipeline.loom.json") + " --speed 3");
  EXPECT_NE(opt.code, 0);
  EXPECT_NE(opt.out.find("unknown option '--speed'"), std::string::npos);
}

TEST(Cli, RunDumpsNpyAndPrintsStats) {
  std::string out = temp("arr.npy");
  std::filesystem::remove(out);
  CliRun r = run_loom("run " + doc("taichi_pipeline.loom.json") +
                      " --steps 2 --no-cache --stats --dump arr=" + out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("instantiations"), std::string::npos) << r.out;
  loom::NpyArray a = loom::read_npy(out);
  ASSERT_EQ(a.shape, std::vector<int64_t>{100});
  int32_t v;
  std::memcpy(&v, a.data.data() + 4 * 5, 4);
  EXPECT_EQ(v, 2 * (3 * 5 + 60));  // two steps of the three-launch pipeline
}

TEST(Cli, RunLoadsNpy) {
  std::string in = temp("in.npy");
  loom::NpyArray a;
  a.dtype = loom::Scalar::I32;
  a.shape = {100};
  a.data.assign(400, 0);
  int32_t seven = 7;
  std::memcpy(a.data.data(), &seven, 4);
  loom::write_npy(in, a);
  std::string out = temp("out.npy");
  CliRun r = run_loom("run " + doc("taichi_pipeline.loom.json") +
                      " --steps 1 --no-cache --load arr=" + in + " --dump arr=" + out);
  ASSERT_EQ(r.code, 0) << r.out;
  int32_t v;
  std::memcpy(&v, loom::read_npy(out).data.data(), 4);
  EXPECT_EQ(v, 7 + 60);
}

// A resource name --dump or --load does not know is a resource, not a "pin", and the message
// lists the program's resources.
TEST(Cli, AnUnknownDumpNamesTheResourcesThereAre) {
  CliRun r = run_loom("run " + doc("taichi_pipeline.loom.json") +
                      " --steps 1 --no-cache --dump nosuch=" + temp("nosuch.npy"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("no field, ndarray or texture 'nosuch' in the program (it has "),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("pin 'nosuch'"), std::string::npos) << r.out;
}

// 0-d fields (shape []) go out and in as NumPy 0-d arrays: 'shape': (), which np.load reads as
// a scalar array and np.save writes for np.array(x).
TEST(Cli, ZeroDimensionalFieldsDumpAndLoadAsNpyScalars) {
  std::string total = temp("total0d.npy"), count = temp("count0d.npy");
  CliRun r = run_loom("run " + doc("zero_d_fields.loom.json") +
                      " --steps 2 --no-cache --dump total=" + total + " --dump count=" + count);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("total            f32    []"), std::string::npos) << r.out;
  loom::NpyArray t = loom::read_npy(total), c = loom::read_npy(count);
  EXPECT_TRUE(t.shape.empty());
  ASSERT_EQ(t.data.size(), 4u);
  float tv;
  std::memcpy(&tv, t.data.data(), 4);
  EXPECT_EQ(tv, 0.5f + 2 * 499500.0f);  // init's 0.5, then each step adds 0 + 1 + ... + 999
  int32_t cv;
  ASSERT_EQ(c.data.size(), 4u);
  std::memcpy(&cv, c.data.data(), 4);
  EXPECT_EQ(cv, 2000);
  std::ifstream raw(total, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(raw)), {});
  EXPECT_NE(bytes.find("'shape': (), }"), std::string::npos) << bytes.substr(0, 80);

  loom::NpyArray in;
  in.dtype = loom::Scalar::F32;
  float start = 7.25f;
  in.data.resize(4);
  std::memcpy(in.data.data(), &start, 4);
  std::string in_path = temp("in0d.npy"), out_path = temp("out0d.npy");
  loom::write_npy(in_path, in);
  r = run_loom("run " + doc("zero_d_fields.loom.json") +
               " --steps 1 --no-cache --load total=" + in_path + " --dump total=" + out_path);
  ASSERT_EQ(r.code, 0) << r.out;
  std::memcpy(&tv, loom::read_npy(out_path).data.data(), 4);
  EXPECT_EQ(tv, 7.25f + 499500.0f);

  // A 1-element 1-d array is not a 0-d one: the shapes are named.
  in.shape = {1};
  loom::write_npy(in_path, in);
  r = run_loom("run " + doc("zero_d_fields.loom.json") +
               " --steps 1 --no-cache --load total=" + in_path);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("'total' has shape () but the file has (1)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("pin"), std::string::npos) << r.out;  // a resource, not a pin

  LOOM_REQUIRE_VULKAN_OR_SKIP();
  std::string vk_total = temp("total0d_vk.npy");
  r = run_loom("run " + doc("zero_d_fields.loom.json") +
               " --steps 2 --no-cache --backend vulkan --validate --dump total=" + vk_total);
  ASSERT_EQ(r.code, 0) << r.out;
  std::memcpy(&tv, loom::read_npy(vk_total).data.data(), 4);
  EXPECT_EQ(tv, 0.5f + 2 * 499500.0f);
}

TEST(Cli, IrAfterEachPass) {
  CliRun passes = run_loom("ir --list-passes");
  ASSERT_EQ(passes.code, 0);
  EXPECT_NE(passes.out.find("offload"), std::string::npos);
  EXPECT_NE(passes.out.find("full_simplify#3"), std::string::npos) << passes.out;
  CliRun second = run_loom("ir " + doc("taichi_pipeline.loom.json") +
                           " --kernel accumulate --after full_simplify#2");
  ASSERT_EQ(second.code, 0) << second.out;
  EXPECT_NE(second.out.find("range_for"), std::string::npos) << second.out;  // before offloading
  CliRun lowered =
      run_loom("ir " + doc("taichi_pipeline.loom.json") + " --kernel accumulate --after lower");
  ASSERT_EQ(lowered.code, 0) << lowered.out;
  EXPECT_NE(lowered.out.find("range_for"), std::string::npos) << lowered.out;
  EXPECT_NE(lowered.out.find("global_ptr"), std::string::npos) << lowered.out;
  CliRun final_ir = run_loom("ir " + doc("taichi_pipeline.loom.json") + " --kernel accumulate");
  ASSERT_EQ(final_ir.code, 0) << final_ir.out;
  EXPECT_NE(final_ir.out.find("offload range_for"), std::string::npos) << final_ir.out;
  EXPECT_NE(final_ir.out.find("element_ptr"), std::string::npos) << final_ir.out;
  CliRun bad =
      run_loom("ir " + doc("taichi_pipeline.loom.json") + " --kernel accumulate --after nonsense");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.out.find("unknown pass 'nonsense'"), std::string::npos) << bad.out;
}

TEST(Cli, CheckReportsThePlace) {
  CliRun ok = run_loom("check " + doc("taichi_templates.loom.json"));
  EXPECT_EQ(ok.code, 0) << ok.out;
  std::string bad = temp("bad.loom.json");
  std::ofstream(bad) << R"({"format": "loom-graph", "version": 2, "name": "bad",
  "kernels": [{"name": "k", "nodes": [{"id": 1, "type": "teleport"}]}]})";
  CliRun r = run_loom("check " + bad);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find(bad), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kernel 'k'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("node 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("teleport"), std::string::npos) << r.out;
  CliRun missing = run_loom("check " + temp("does_not_exist.loom.json"));
  EXPECT_NE(missing.code, 0);
  EXPECT_EQ(std::count(missing.out.begin(), missing.out.end(), '\n'), 1)
      << missing.out;  // one message
}

TEST(Cli, CompileFillsTheOfflineCache) {
  std::string dir = temp("cache");
  std::filesystem::remove_all(dir);
  CliRun r =
      run_loom("compile " + doc("taichi_pipeline.loom.json") + " --cache-dir " + dir + " --stats");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("1 misses"), std::string::npos) << r.out;
  CliRun again =
      run_loom("compile " + doc("taichi_pipeline.loom.json") + " --cache-dir " + dir + " --stats");
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_NE(again.out.find("1 disk"), std::string::npos) << again.out;
}

// CPU modules: x86-64-v2 unless --cpu names levels; every level is compiled and listed.
// A module holds the kernels its pipelines launch; --kernel adds one no pipeline launches.
TEST(Cli, CompileKernelsNoPipelineLaunches) {
  CliRun help = run_loom("compile --help");
  EXPECT_NE(help.out.find("--kernel K"), std::string::npos) << help.out;
  std::string out = temp("extra.loommod");
  CliRun plain = run_loom("compile " + doc("argument_values.loom.json") + " -o " + out);
  ASSERT_EQ(plain.code, 0) << plain.out;
  EXPECT_EQ(plain.out.find("kernel wide:"), std::string::npos) << plain.out;
  CliRun extra = run_loom("compile " + doc("argument_values.loom.json") +
                          " --kernel wide --kernel pack_m -o " + out);
  ASSERT_EQ(extra.code, 0) << extra.out;
  EXPECT_NE(extra.out.find("kernel wide:"), std::string::npos) << extra.out;
  EXPECT_NE(extra.out.find("kernel pack_m:"), std::string::npos) << extra.out;
  CliRun missing =
      run_loom("compile " + doc("argument_values.loom.json") + " --kernel nope -o " + out);
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.out.find("nope"), std::string::npos) << missing.out;
}

TEST(Cli, CompileCpuLevels) {
  CliRun help = run_loom("compile --help");
  EXPECT_NE(help.out.find("--cpu LEVELS"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("Default: x86-64-v2"), std::string::npos) << help.out;
#if defined(__x86_64__)
  std::string out = temp("levels.loommod");
  CliRun def = run_loom("compile " + doc("taichi_pipeline.loom.json") + " -o " + out);
  ASSERT_EQ(def.code, 0) << def.out;
  EXPECT_NE(def.out.find("cpu (x86-64-v2) module"), std::string::npos) << def.out;
  CliRun two = run_loom("compile " + doc("taichi_pipeline.loom.json") +
                        " --cpu x86-64-v3 --cpu host,x86-64-v2 -o " + out);
  ASSERT_EQ(two.code, 0) << two.out;
  EXPECT_NE(two.out.find("cpu (x86-64-v2, "), std::string::npos) << two.out;
  CliRun empty =
      run_loom("compile " + doc("taichi_pipeline.loom.json") + " --cpu x86-64-v2, -o " + out);
  EXPECT_EQ(empty.code, 1);
  EXPECT_NE(empty.out.find("--cpu takes LEVEL[,LEVEL...], got 'x86-64-v2,'"), std::string::npos)
      << empty.out;
  CliRun unknown =
      run_loom("compile " + doc("taichi_pipeline.loom.json") + " --cpu pentium9 -o " + out);
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.out.find("'pentium9' is not a CPU LLVM knows"), std::string::npos)
      << unknown.out;
  EXPECT_EQ(std::count(unknown.out.begin(), unknown.out.end(), '\n'), 1) << unknown.out;
#endif
  CliRun vulkan = run_loom("compile " + doc("taichi_pipeline.loom.json") +
                           " --arch vulkan --cpu x86-64-v3 -o " + temp("v.loommod"));
  EXPECT_EQ(vulkan.code, 1);
  EXPECT_NE(vulkan.out.find("--cpu describes CPU modules, not --arch vulkan"), std::string::npos)
      << vulkan.out;
}

// Storage that cannot be allocated used to pass and then crash the first launch.
// Lines Loom wrote: under AddressSanitizer (the sanitizer build) an allocation that fails
// also makes the sanitizer's runtime print "==PID==WARNING: AddressSanitizer failed to
// allocate ...", which is not Loom's output.
static long lines_of_loom(const std::string& out) {
  long lines = 0;
  size_t start = 0;
  for (size_t end; (end = out.find('\n', start)) != std::string::npos; start = end + 1)
    if (out.substr(start, end - start).find("WARNING: AddressSanitizer failed to allocate") ==
        std::string::npos)
      ++lines;
  return lines;
}

TEST(Cli, StorageTooLargeToAllocateIsOneClearMessage) {
  std::string path = temp("huge.loom.json");
  std::ofstream(path) << R"({"format": "loom-graph", "version": 2, "name": "huge",
  "fields": [{"name": "rho", "type": "f32", "shape": [1000000, 1000000, 1000000]}],
  "kernels": [{"name": "k", "nodes": [{"id": 1, "type": "store", "inputs": {"i0": 0, "i1": 0, "i2": 0, "value": 1.0},
               "params": {"field": "rho"}}]}],
  "pipelines": [{"name": "step", "launches": [{"kernel": "k"}]}]})";
  CliRun r = run_loom("run " + path + " --steps 1 --no-cache");
  EXPECT_GT(r.code, 0) << r.out;  // an exit code, not a signal
  EXPECT_NE(r.out.find("'rho'"), std::string::npos) << r.out;
  EXPECT_EQ(lines_of_loom(r.out), 1) << r.out;
}

TEST(Cli, BackendsAndDevices) {
  CliRun bad = run_loom("run " + doc("taichi_pipeline.loom.json") + " --backend metal");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.out.find("unknown backend 'metal' (choose cpu, vulkan or auto)"), std::string::npos)
      << bad.out;
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  CliRun nodev = run_loom("run " + doc("taichi_pipeline.loom.json") +
                          " --backend vulkan --device no-such-gpu");
  EXPECT_NE(nodev.code, 0);
  EXPECT_NE(nodev.out.find("no Vulkan device matches 'no-such-gpu'; devices are:"),
            std::string::npos)
      << nodev.out;
  CliRun devices = run_loom("devices");
  ASSERT_EQ(devices.code, 0) << devices.out;
  EXPECT_NE(devices.out.find("0: "), std::string::npos) << devices.out;

  std::string cpu_out = temp("backend_cpu.npy"), vk_out = temp("backend_vulkan.npy");
  CliRun cpu =
      run_loom("run " + doc("taichi_pipeline.loom.json") + " --no-cache --dump arr=" + cpu_out);
  ASSERT_EQ(cpu.code, 0) << cpu.out;
  CliRun vk = run_loom("run " + doc("taichi_pipeline.loom.json") +
                       " --no-cache --backend vulkan --validate --stats --dump arr=" + vk_out);
  ASSERT_EQ(vk.code, 0) << vk.out;
  EXPECT_NE(vk.out.find("vulkan: "), std::string::npos) << vk.out;
  std::ifstream a(cpu_out, std::ios::binary), b(vk_out, std::ios::binary);
  std::string ca((std::istreambuf_iterator<char>(a)), {}),
      cb((std::istreambuf_iterator<char>(b)), {});
  EXPECT_FALSE(ca.empty());
  EXPECT_EQ(ca, cb);  // integers: the same bytes on both devices
}

TEST(Cli, SpirvPrintsValidatedDisassembly) {
  CliRun r = run_loom("spirv " + doc("taichi_pipeline.loom.json") + " --kernel accumulate");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("; task 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("OpEntryPoint GLCompute"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("OpAtomic"), std::string::npos) << r.out;
  CliRun missing = run_loom("spirv " + doc("taichi_pipeline.loom.json"));
  EXPECT_NE(missing.code, 0);
  EXPECT_NE(missing.out.find("needs --kernel"), std::string::npos) << missing.out;
}
