// Hostile sizes at the command line (issue 17): `loom check` of a document declaring
// resources bigger than any machine's memory succeeds without allocating them, `loom run`
// names the document and the resource it cannot allocate, a 10 MB name or formula gives a
// message of bounded length, and documents that once took minutes to check or compile finish
// within a CPU-time limit (a backstop: tests/passes/linear_work_test.cpp holds the work linear).
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/run_loom.h"

namespace {

using loom::test::CliRun;
using loom::test::run_command;
using loom::test::run_loom;

// One document per test and process: ctest runs tests in parallel.
std::string write_doc(const std::string& name, const std::string& text) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("loom_limits_" + name + "_" + std::to_string(getpid()) + ".loom.json"))
                         .string();
  std::ofstream(path) << text;
  return path;
}

// About 2^50 bytes each (1 PiB, more than x86-64's 2^47-byte user address space), yet inside
// the format's limits (extents below 2^31, under 2^63 bytes).
const char* kHugeResources = R"({"format": "loom-graph", "version": 2, "name": "huge",
 "fields": [{"name": "huge", "type": "f64", "shape": [2147483647, 65536]}],
 "ndarrays": [{"name": "big", "type": "f32", "shape": [2147483647, 131072]}],
 "textures": [{"name": "vol", "size": [65536, 65536, 65536], "format": "rgba32f"}],
 "kernels": [{"name": "k", "nodes": [
   {"id": 1, "type": "range_for", "inputs": {"end0": 8}, "regions": {"body": [
     {"id": 2, "type": "store", "inputs": {"i0": "1.i0", "i1": 0, "value": 1.0},
      "params": {"field": "huge"}}
   ]}}]}],
 "pipelines": [{"name": "step", "launches": [{"kernel": "k"}]}]})";

TEST(CliLimits, CheckOfResourcesBiggerThanMemoryAllocatesNothing) {
  std::string doc = write_doc("huge", kHugeResources);
  auto t0 = std::chrono::steady_clock::now();
  CliRun check = run_loom("check " + doc);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(check.code, 0) << check.out;
  EXPECT_NE(check.out.find("ok"), std::string::npos) << check.out;
  EXPECT_LT(seconds, 30.0);  // nothing zeroed (a 4 GiB field once took 33 s)

  // Running needs the memory: the error names the document and the resource.
  CliRun run = run_loom("run " + doc + " --backend cpu --steps 1");
  EXPECT_NE(run.code, 0) << run.out;
  EXPECT_NE(run.out.find(doc + ": cannot allocate 1125899906318336 bytes for field 'huge'"),
            std::string::npos)
      << run.out;
  std::filesystem::remove(doc);
}

TEST(CliLimits, CheckStillRefusesWhatCouldNeverBeAllocated) {
  // 2^62 elements of 4 bytes: more than 2^63 bytes, refused by check as by run.
  std::string doc = write_doc("too_big", R"({"format": "loom-graph", "version": 2, "name": "t",
 "ndarrays": [{"name": "big", "type": "f32", "shape": [2147483647, 2147483647, 2]}]})");
  CliRun check = run_loom("check " + doc);
  EXPECT_NE(check.code, 0) << check.out;
  EXPECT_NE(check.out.find(doc), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("ndarray 'big'"), std::string::npos) << check.out;
  std::filesystem::remove(doc);
}

constexpr size_t kHuge = size_t{10} << 20;

TEST(CliLimits, MessagesQuotingA10MbNameOrFormulaStayShort) {
  std::string name(kHuge, 'n');
  std::string unknown_field = write_doc("name", R"({"format": "loom-graph", "version": 2,
 "name": "n", "fields": [{"name": "x", "type": "f32", "shape": [8]}],
 "kernels": [{"name": "k", "nodes": [
   {"id": 1, "type": "range_for", "inputs": {"end0": 8}, "regions": {"body": [
     {"id": 2, "type": "store", "inputs": {"i0": "1.i0", "value": 1.0},
      "params": {"field": ")" + name + R"("}}
   ]}}]}],
 "pipelines": [{"name": "step", "launches": [{"kernel": "k"}]}]})");
  CliRun r = run_loom("check " + unknown_field);
  EXPECT_NE(r.code, 0);
  EXPECT_LT(r.out.size(), 2000u) << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find("(10485760 characters)"), std::string::npos) << r.out.substr(0, 2000);
  std::filesystem::remove(unknown_field);

  std::string formula = "a + " + std::string(kHuge, 'q');  // an unknown 10 MB identifier
  std::string bad_formula = write_doc("formula", R"({"format": "loom-graph", "version": 2,
 "name": "f", "fields": [{"name": "x", "type": "f32", "shape": [8]}],
 "kernels": [{"name": "k", "nodes": [
   {"id": 1, "type": "range_for", "inputs": {"end0": 8}, "regions": {"body": [
     {"id": 3, "type": "expr", "inputs": {"a": 1.0}, "params": {"expr": ")" +
                                                     formula + R"("}},
     {"id": 2, "type": "store", "inputs": {"i0": "1.i0", "value": "3"}, "params": {"field": "x"}}
   ]}}]}],
 "pipelines": [{"name": "step", "launches": [{"kernel": "k"}]}]})");
  r = run_loom("check " + bad_formula);
  EXPECT_NE(r.code, 0);
  EXPECT_LT(r.out.size(), 2000u) << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find("node 3"), std::string::npos) << r.out.substr(0, 2000);
  std::filesystem::remove(bad_formula);
}

// What check and compile print on success names kernels too: a 10 MB kernel name once made
// `loom check` print 20 MB (its "ok" line and a warning).
TEST(CliLimits, ReportsOfA10MbKernelNameStayShort) {
  std::string name(kHuge, 'k');
  std::string doc = write_doc("kernel_name", R"({"format": "loom-graph", "version": 2,
 "name": "n", "fields": [{"name": "x", "type": "i32", "shape": [8]}],
 "kernels": [{"name": ")" + name + R"(", "nodes": [
   {"id": 1, "type": "range_for", "inputs": {"end0": 8}, "regions": {"body": [
     {"id": 2, "type": "load", "inputs": {"i0": 0}, "params": {"field": "x"}},
     {"id": 3, "type": "add", "inputs": {"a": "2", "b": 1}},
     {"id": 4, "type": "store", "inputs": {"i0": 0, "value": "3"}, "params": {"field": "x"}}
   ]}}]}],
 "pipelines": [{"name": "step", "launches": [{"kernel": ")" +
                                                 name + R"("}]}]})");
  CliRun r = run_loom("check " + doc);
  EXPECT_EQ(r.code, 0) << r.out.substr(0, 2000);
  EXPECT_LT(r.out.size(), 4000u) << r.out.substr(0, 4000);
  EXPECT_NE(r.out.find("(10485760 characters)...kkkkkkkkkkkkkkkk: ok, 1 task"), std::string::npos)
      << r.out.substr(0, 4000);
  EXPECT_NE(r.out.find("warning: "), std::string::npos) << r.out.substr(0, 4000);  // the race
  r = run_loom("compile --no-cache " + doc);
  EXPECT_EQ(r.code, 0) << r.out.substr(0, 2000);
  EXPECT_LT(r.out.size(), 2000u) << r.out.substr(0, 2000);
  std::filesystem::remove(doc);
}

// Runs `loom ARGS` with at most `seconds` of CPU time (ulimit -t: the kernel stops it with
// SIGXCPU, and the exit code says so). Each document below takes a second or two now; before
// the linear-time work of issue 17 each took from 35 s to minutes.
CliRun run_loom_within(int seconds, const std::string& args) {
  return run_command("ulimit -t " + std::to_string(seconds) + "; exec " + LOOM_CLI + " " + args);
}

std::string one_kernel(const std::string& fields, const std::string& nodes) {
  return R"({"format": "loom-graph", "version": 2, "name": "big", "fields": [)" + fields +
         R"(], "kernels": [{"name": "k", "nodes": [)" + nodes +
         R"(]}], "pipelines": [{"name": "step", "launches": [{"kernel": "k"}]}]})";
}

TEST(CliLimits, HostileDocumentsCheckAndCompileWithinACpuTimeLimit) {
  constexpr int kCpuSeconds = 30;
  // A formula over 1 MB of distinct names (233 s to check; every name was looked for with a
  // scan of the node's inputs).
  std::string formula, inputs;
  for (int k = 0; formula.size() < (size_t{1} << 20); ++k) {
    formula += (k ? "+a" : "a") + std::to_string(k);
    inputs += (k ? ", \"a" : "\"a") + std::to_string(k) + "\": 1.0";
  }
  std::string names =
      write_doc("names", one_kernel(R"({"name": "x", "type": "f32", "shape": [1]})",
                                    R"({"id": 1, "type": "expr", "inputs": {)" + inputs +
                                        R"(}, "params": {"expr": ")" + formula + R"("}},
       {"id": 2, "type": "store", "inputs": {"i0": 0, "value": "1"}, "params": {"field": "x"}})"));
  CliRun r = run_loom_within(kCpuSeconds, "check " + names);
  EXPECT_EQ(r.code, 0) << r.out.substr(0, 2000);
  std::filesystem::remove(names);

  // 32 adds each reading the one before twice, indexing a read-modify-write in a parallel
  // loop: the porting warning's walk took one step per path, 2^32 (it gave up 33 deep).
  std::string body = R"({"id": 2, "type": "add", "inputs": {"a": 1, "b": 2}})";
  for (int k = 3; k <= 33; ++k)
    body += R"(, {"id": )" + std::to_string(k) + R"(, "type": "add", "inputs": {"a": ")" +
            std::to_string(k - 1) + R"(", "b": ")" + std::to_string(k - 1) + R"("}})";
  body += R"(, {"id": 34, "type": "and", "inputs": {"a": "33", "b": 63}},
     {"id": 35, "type": "load", "inputs": {"i0": "34"}, "params": {"field": "x"}},
     {"id": 36, "type": "add", "inputs": {"a": "35", "b": 1.0}},
     {"id": 37, "type": "store", "inputs": {"i0": "34", "value": "36"}, "params": {"field": "x"}})";
  std::string dag = write_doc(
      "dag", one_kernel(R"({"name": "x", "type": "f32", "shape": [64]})",
                        R"({"id": 1, "type": "range_for", "inputs": {"end0": 64}, "regions":
                          {"body": [)" +
                            body + "]}}"));
  r = run_loom_within(kCpuSeconds, "check " + dag);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("warning: "), std::string::npos) << r.out;  // the race is still found
  std::filesystem::remove(dag);

  // A loop body of 4,000 stores (LLVM's loop dependence analysis compared every pair: 35 s;
  // now skipped for such a loop, with a note).
  std::string stores;
  for (int k = 0; k < 4000; ++k)
    stores += std::string(k ? ", " : "") + R"({"id": )" + std::to_string(k + 2) +
              R"(, "type": "store", "inputs": {"i0": "1.i0", "i1": )" + std::to_string(k) +
              R"(, "value": "1.i0"}, "params": {"field": "x"}})";
  std::string loop = write_doc(
      "loop", one_kernel(R"({"name": "x", "type": "i32", "shape": [4, 4000]})",
                         R"({"id": 1, "type": "range_for", "inputs": {"end0": 4}, "regions":
                           {"body": [)" +
                             stores + "]}}"));
  r = run_loom_within(kCpuSeconds, "compile --no-cache " + loop);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("note: kernel 'k', task 0 (node 1): a loop with 4000 loads and stores"),
            std::string::npos)
      << r.out;
  std::filesystem::remove(loop);
}

}  // namespace
