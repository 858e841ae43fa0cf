// `loom check` warns about likely mistakes of code ported from Taichi, naming kernel and node
// (docs/porting-from-taichi.md), and keeps quiet about the same code written on purpose.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/run_loom.h"

namespace {

using loom::test::CliRun;
using loom::test::run_loom;

// One document per test and process: ctest runs tests in parallel.
std::string write_doc(const std::string& name, const std::string& kernel_nodes) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("loom_warn_" + name + "_" + std::to_string(getpid()) + ".loom.json"))
                         .string();
  std::ofstream(path) << R"({"format": "loom-graph", "version": 2, "name": ")" << name << R"(",
 "fields": [{"name": "out", "type": "f32", "shape": [8]}],
 "kernels": [{"name": "k", "nodes": [
   {"id": 1, "type": "range_for", "inputs": {"end0": 8}, "regions": {"body": [
     {"id": 2, "type": "index"},)"
                      << kernel_nodes << R"(
   ]}}]}],
 "pipelines": [{"name": "step", "launches": [{"kernel": "k"}]}]})";
  return path;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST(CheckWarnings, AnIntegerDivisionConvertedToAFloatIsNamedWithItsNodes) {
  std::string path = write_doc("div_cast", R"(
     {"id": 3, "type": "div", "inputs": {"a": "2", "b": 2}},
     {"id": 4, "type": "cast", "inputs": {"a": "3"}, "params": {"type": "f32"}},
     {"id": 5, "type": "expr", "inputs": {"a": "2"}, "params": {"expr": "a / 3 + 1.5"}},
     {"id": 6, "type": "var", "params": {"type": "i32"}},
     {"id": 7, "type": "set", "inputs": {"var": "6.ref", "value": "3"}},
     {"id": 8, "type": "get", "inputs": {"var": "6.ref"}},
     {"id": 9, "type": "cast", "inputs": {"a": "8"}, "params": {"type": "f32"}},
     {"id": 10, "type": "add", "inputs": {"a": "4", "b": "9"}},
     {"id": 11, "type": "add", "inputs": {"a": "10", "b": "5"}},
     {"id": 12, "type": "store", "inputs": {"i0": "2", "value": "11"}, "params": {"field": "out"}})");
  CliRun r = run_loom("check " + path);
  std::filesystem::remove(path);
  ASSERT_EQ(r.code, 0) << r.out;  // a warning is not an error
  EXPECT_NE(r.out.find("k: ok, 1 task"), std::string::npos) << r.out;
  EXPECT_EQ(count(r.out, "warning: "), 2u) << r.out;
  // The division node and the node converting it, for a cast node...
  EXPECT_NE(r.out.find("kernel 'k': node 3: integer division truncates"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("converted to f32 by node 4"), std::string::npos) << r.out;
  // (the quotient stored in an integer variable, then converted by node 9, is taken as meant)
  EXPECT_EQ(r.out.find("by node 9"), std::string::npos) << r.out;
  // ...and inside a formula, where an integer quotient meets a float.
  EXPECT_NE(r.out.find("kernel 'k': node 5: integer division truncates"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Taichi's `/` is true division"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(r.out.size() - 3), "ok\n") << r.out;
}

TEST(CheckWarnings, DivisionsMeantAsWrittenAreNotWarnedAbout) {
  std::string path = write_doc("div_ok", R"(
     {"id": 3, "type": "div", "inputs": {"a": "2", "b": 2}},
     {"id": 4, "type": "cast", "inputs": {"a": "2"}, "params": {"type": "f32"}},
     {"id": 5, "type": "div", "inputs": {"a": "4", "b": 2.0}},
     {"id": 6, "type": "mul", "inputs": {"a": "3", "b": 2}},
     {"id": 7, "type": "cast", "inputs": {"a": "6"}, "params": {"type": "f32"}},
     {"id": 8, "type": "add", "inputs": {"a": "5", "b": "7"}},
     {"id": 9, "type": "store", "inputs": {"i0": "3", "value": "8"}, "params": {"field": "out"}})");
  CliRun r = run_loom("check " + path);
  std::filesystem::remove(path);
  ASSERT_EQ(r.code, 0) << r.out;
  // Float division, and an integer quotient used as an index or scaled before converting
  // (the truncation happened in integer math on purpose): nothing to say.
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
}

// Taichi's `g[None] += v` is atomic; the same load, add and store in a parallel loop of Loom
// races. A kernel that no pipeline launches is checked too.
TEST(CheckWarnings, AReadModifyWriteOfOneElementInAParallelLoopIsNamed) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("loom_warn_race_" + std::to_string(getpid()) + ".loom.json"))
                         .string();
  std::ofstream(path) << R"({"format": "loom-graph", "version": 2, "name": "race",
 "fields": [{"name": "g", "type": "f32", "shape": []}, {"name": "x", "type": "f32", "shape": [8]}],
 "kernels": [
  {"name": "racy", "nodes": [
   {"id": 1, "type": "range_for", "inputs": {"end0": 1000}, "regions": {"body": [
     {"id": 2, "type": "load", "params": {"field": "g"}},
     {"id": 3, "type": "add", "inputs": {"a": "2", "b": 1.0}},
     {"id": 4, "type": "store", "inputs": {"value": "3"}, "params": {"field": "g"}},
     {"id": 5, "type": "load", "inputs": {"i0": 0}, "params": {"field": "x"}},
     {"id": 6, "type": "store", "inputs": {"i0": 0, "value": "5"}, "params": {"field": "x"}}
   ]}}]},
  {"name": "fine", "nodes": [
   {"id": 1, "type": "range_for", "inputs": {"end0": 8}, "regions": {"body": [
     {"id": 2, "type": "index"},
     {"id": 3, "type": "load", "inputs": {"i0": "2"}, "params": {"field": "x"}},
     {"id": 4, "type": "mul", "inputs": {"a": "3", "b": 2.0}},
     {"id": 5, "type": "store", "inputs": {"i0": "2", "value": "4"}, "params": {"field": "x"}},
     {"id": 6, "type": "atomic_add", "inputs": {"value": "3"}, "params": {"field": "g"}}
   ]}},
   {"id": 7, "type": "load", "params": {"field": "g"}},
   {"id": 8, "type": "add", "inputs": {"a": "7", "b": 1.0}},
   {"id": 9, "type": "store", "inputs": {"value": "8"}, "params": {"field": "g"}}]}],
 "pipelines": [{"name": "step", "launches": [{"kernel": "fine"}]}]})";
  CliRun r = run_loom("check " + path);
  std::filesystem::remove(path);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count(r.out, "warning: "), 2u) << r.out;
  EXPECT_NE(r.out.find("kernel 'racy': node 4: every thread of the parallel range_for (node 1) "
                       "reads, changes and writes back the same element of 'g'"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("kernel 'racy': node 6: every thread"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Use atomic_add"), std::string::npos) << r.out;
  // Each thread updating its own element, an atomic, and serial code after the loop: fine.
  EXPECT_EQ(r.out.find("kernel 'fine'"), std::string::npos) << r.out;
}
