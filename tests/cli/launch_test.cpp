// `loom run` printing what kernels return, and `loom launch DOC KERNEL --arg NAME=VALUE`:
// the real binary on a small document, on the CPU and on Vulkan, and every error it reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>

#include "runtime/common/npy.h"
#include "tests/support/run_loom.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/vulkan_required.h"

namespace {

using loom::test::CliRun;
using loom::test::run_loom;
using loom::test::scratch_path;

// One kernel of each kind of return: a scalar (`triple`), a vector scaled by an argpack
// member (`scaled`), a struct over an ndarray (`stats`), a field/constant template (`bump`),
// matrices (`products`: outer(a, b), m and trace(m)); `fill` (init) writes arr[i] = i.
constexpr const char* kDocument = R"({
  "format": "loom-graph", "version": 2, "name": "cli_returns",
  "fields": [{"name": "total", "type": "i32", "shape": [1]}],
  "ndarrays": [{"name": "arr", "type": "f32", "shape": [8]}, {"name": "short", "type": "f32", "shape": [3]}],
  "argpack_types": [
    {"name": "Stats", "kind": "struct", "members": [{"name": "count", "type": "i32"}, {"name": "first", "type": "f32"}]},
    {"name": "P", "kind": "pack", "members": [{"name": "scale", "type": "f32"}]}
  ],
  "argpacks": [{"name": "params", "type": "P", "values": {"scale": 2.0}}],
  "kernels": [
    {"name": "fill", "params": [{"name": "arr", "kind": "ndarray", "type": "f32", "ndim": 1}],
     "nodes": [
       {"id": 1, "type": "shape", "params": {"ndarray": "arr", "dim": 0}},
       {"id": 2, "type": "range_for", "inputs": {"end0": "1"}, "regions": {"body": [
         {"id": 3, "type": "cast", "inputs": {"a": "2.i0"}, "params": {"type": "f32"}},
         {"id": 4, "type": "store", "inputs": {"i0": "2.i0", "value": "3"}, "params": {"ndarray": "arr"}}
       ]}}]},
    {"name": "triple", "params": [{"name": "n", "kind": "value", "type": "i32"}], "returns": ["i32"],
     "nodes": [
       {"id": 1, "type": "param", "params": {"name": "n"}},
       {"id": 2, "type": "mul", "inputs": {"a": "1", "b": 3}},
       {"id": 3, "type": "return", "inputs": {"r0": "2"}}]},
    {"name": "scaled",
     "params": [{"name": "v", "kind": "value", "type": "f32x3"}, {"name": "params", "kind": "argpack", "type": "P"}],
     "returns": ["f32x3"],
     "nodes": [
       {"id": 1, "type": "param", "params": {"name": "v"}},
       {"id": 2, "type": "member", "params": {"param": "params", "path": "scale"}},
       {"id": 3, "type": "mul", "inputs": {"a": "1", "b": "2"}},
       {"id": 4, "type": "return", "inputs": {"r0": "3"}}]},
    {"name": "stats", "params": [{"name": "arr", "kind": "ndarray", "type": "f32", "ndim": 1}], "returns": ["Stats"],
     "nodes": [
       {"id": 1, "type": "shape", "params": {"ndarray": "arr", "dim": 0}},
       {"id": 2, "type": "load", "inputs": {"i0": 1}, "params": {"ndarray": "arr"}},
       {"id": 3, "type": "return", "inputs": {"r0.count": "1", "r0.first": "2"}}]},
    {"name": "bump",
     "params": [{"name": "target", "kind": "template", "type": "field"}, {"name": "by", "kind": "template"}],
     "returns": ["i32"],
     "nodes": [
       {"id": 1, "type": "load", "inputs": {"i0": 0}, "params": {"field": "target"}},
       {"id": 2, "type": "param", "params": {"name": "by"}},
       {"id": 3, "type": "add", "inputs": {"a": "1", "b": "2"}},
       {"id": 4, "type": "store", "inputs": {"i0": 0, "value": "3"}, "params": {"field": "target"}},
       {"id": 5, "type": "return", "inputs": {"r0": "3"}}]},
    {"name": "products",
     "params": [{"name": "a", "kind": "value", "type": "f32x2"}, {"name": "b", "kind": "value", "type": "f32x3"},
                {"name": "m", "kind": "value", "type": "f32x2x2"}],
     "returns": ["f32x2x3", "f32x2x2", "f32"],
     "nodes": [
       {"id": 1, "type": "param", "params": {"name": "a"}},
       {"id": 2, "type": "param", "params": {"name": "b"}},
       {"id": 3, "type": "param", "params": {"name": "m"}},
       {"id": 4, "type": "outer", "inputs": {"a": "1", "b": "2"}},
       {"id": 5, "type": "trace", "inputs": {"a": "3"}},
       {"id": 6, "type": "return", "inputs": {"r0": "4", "r1": "3", "r2": "5"}}]}
  ],
  "pipelines": [
    {"name": "init", "launches": [{"kernel": "fill", "args": {"arr": "arr"}}]},
    {"name": "step", "launches": [
      {"kernel": "triple", "args": {"n": 5}},
      {"kernel": "scaled", "args": {"v": [1.0, 2.0, 3.5], "params": "params"}},
      {"kernel": "stats", "args": {"arr": "arr"}},
      {"kernel": "bump", "args": {"target": "total", "by": 4}}]}
  ]
})";

const std::string& document() {
  static const std::string path = [] {
    std::string p = scratch_path("cli_returns.loom.json");
    std::ofstream(p) << kDocument;
    return p;
  }();
  return path;
}

CliRun launch(const std::string& args) {
  return run_loom("launch " + document() + " " + args + " --no-cache");
}

bool has(const CliRun& r, const std::string& text) { return r.out.find(text) != std::string::npos; }

// A failure: exit code 1 and exactly one line, holding `text`.
void expect_error(const CliRun& r, const std::string& text) {
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_TRUE(has(r, text)) << "expected: " << text << "\ngot: " << r.out;
}

}  // namespace

TEST(CliReturns, RunPrintsTheLastResultOfEachLaunch) {
  CliRun r = run_loom("run " + document() + " --steps 3 --no-cache");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r,
                  "returns of the last run of each launch:\n"
                  "  step #1 triple: r0 = 15\n"
                  "  step #2 scaled: r0 = [2, 4, 7]\n"
                  "  step #3 stats: r0.count = 8, r0.first = 1\n"
                  "  step #4 bump: r0 = 12\n"))
      << r.out;
  EXPECT_FALSE(has(r, "step 1 #")) << r.out;  // every launch only with --returns
  // The summary of resources stays as it was.
  EXPECT_TRUE(has(r, "  total            i32    [1]  min 12  max 12")) << r.out;

  CliRun every = run_loom("run " + document() + " --steps 2 --no-cache --returns");
  ASSERT_EQ(every.code, 0) << every.out;
  EXPECT_TRUE(has(every, "step 1 #4 bump: r0 = 4\n")) << every.out;
  EXPECT_TRUE(has(every, "step 2 #3 stats: r0.count = 8, r0.first = 1\n")) << every.out;
  EXPECT_TRUE(has(every, "step 2 #4 bump: r0 = 8\n")) << every.out;

  // A document whose kernels return nothing prints what it printed before.
  CliRun plain = run_loom("run " + std::string(LOOM_SOURCE_DIR) +
                          "/tests/e2e/docs/taichi_pipeline.loom.json --no-cache");
  ASSERT_EQ(plain.code, 0) << plain.out;
  EXPECT_FALSE(has(plain, "returns")) << plain.out;
}

TEST(CliLaunch, PrintsWhatTheKernelReturns) {
  CliRun scalar = launch("triple --arg n=7");
  ASSERT_EQ(scalar.code, 0) << scalar.out;
  EXPECT_TRUE(has(scalar, "\n  r0 (i32) = 21\n")) << scalar.out;

  // Vector argument, argpack bound by name (the parameter's), one member set.
  CliRun vector = launch("scaled --arg v=1,2,3 --arg params.scale=0.5");
  ASSERT_EQ(vector.code, 0) << vector.out;
  EXPECT_TRUE(has(vector, "\n  r0 (f32x3) = [0.5, 1, 1.5]\n")) << vector.out;
  CliRun listed = launch("scaled --arg 'v=[-1, 0.25, 8]'");
  ASSERT_EQ(listed.code, 0) << listed.out;
  EXPECT_TRUE(has(listed, "\n  r0 (f32x3) = [-2, 0.5, 16]\n")) << listed.out;

  // Struct return; the ndarray parameter defaults to the ndarray named like it; --init fills it.
  CliRun fresh = launch("stats");
  ASSERT_EQ(fresh.code, 0) << fresh.out;
  EXPECT_TRUE(has(fresh, "\n  r0.count (i32) = 8\n  r0.first (f32) = 0\n")) << fresh.out;
  CliRun init = launch("stats --init");
  ASSERT_EQ(init.code, 0) << init.out;
  EXPECT_TRUE(has(init, "\n  r0.count (i32) = 8\n  r0.first (f32) = 1\n")) << init.out;
  CliRun other = launch("stats --arg arr=short");
  ASSERT_EQ(other.code, 0) << other.out;
  EXPECT_TRUE(has(other, "\n  r0.count (i32) = 3\n")) << other.out;

  // --load before the launch, --dump after; templates: a field and a constant.
  std::string in = scratch_path("short_in.npy"), out = scratch_path("total_out.npy");
  loom::NpyArray a;
  a.dtype = loom::Scalar::F32;
  a.shape = {3};
  a.data.assign(12, 0);
  float second = 6.5f;
  std::memcpy(a.data.data() + 4, &second, 4);
  loom::write_npy(in, a);
  CliRun loaded = launch("stats --arg arr=short --load short=" + in);
  ASSERT_EQ(loaded.code, 0) << loaded.out;
  EXPECT_TRUE(has(loaded, "\n  r0.first (f32) = 6.5\n")) << loaded.out;
  CliRun bump = launch("bump --arg target=total --arg by=10 --dump total=" + out);
  ASSERT_EQ(bump.code, 0) << bump.out;
  EXPECT_TRUE(has(bump, "\n  r0 (i32) = 10\n")) << bump.out;
  int32_t total = 0;
  std::memcpy(&total, loom::read_npy(out).data.data(), 4);
  EXPECT_EQ(total, 10);

  // Matrices: given as columns or flat (column-major), printed as lists of columns.
  CliRun columns = launch("products --arg a=1,2 --arg b=3,4,5 --arg 'm=[[1, 2], [3, 4]]'");
  ASSERT_EQ(columns.code, 0) << columns.out;
  EXPECT_TRUE(has(columns,
                  "\n  r0 (f32x2x3) = [[3, 6], [4, 8], [5, 10]]\n"
                  "  r1 (f32x2x2) = [[1, 2], [3, 4]]\n"
                  "  r2 (f32) = 5\n"))
      << columns.out;
  CliRun flat = launch("products --arg a=1 --arg b=0.5 --arg m=1,2,3,4");
  ASSERT_EQ(flat.code, 0) << flat.out;
  EXPECT_TRUE(has(flat,
                  "\n  r0 (f32x2x3) = [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]]\n"
                  "  r1 (f32x2x2) = [[1, 2], [3, 4]]\n"))
      << flat.out;

  CliRun nothing = launch("fill");
  ASSERT_EQ(nothing.code, 0) << nothing.out;
  EXPECT_TRUE(has(nothing, "fill returns nothing\n")) << nothing.out;
  EXPECT_TRUE(has(nothing, "  arr              f32    [8]  min 0  max 7")) << nothing.out;
}

TEST(CliLaunch, OnVulkan) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  CliRun vector = launch("scaled --backend vulkan --validate --arg v=1,2,3 --arg params.scale=4");
  ASSERT_EQ(vector.code, 0) << vector.out;
  EXPECT_TRUE(has(vector, "\n  r0 (f32x3) = [4, 8, 12]\n")) << vector.out;
  CliRun init = launch("stats --backend vulkan --validate --init");
  ASSERT_EQ(init.code, 0) << init.out;
  EXPECT_TRUE(has(init, "\n  r0.count (i32) = 8\n  r0.first (f32) = 1\n")) << init.out;
  CliRun run = run_loom("run " + document() + " --steps 2 --no-cache --backend vulkan --validate");
  ASSERT_EQ(run.code, 0) << run.out;
  EXPECT_TRUE(has(run, "  step #3 stats: r0.count = 8, r0.first = 1\n  step #4 bump: r0 = 8\n"))
      << run.out;
}

TEST(CliLaunch, ErrorsNameTheKernelAndTheArgument) {
  std::string at = document() + ": kernel ";
  expect_error(launch("nope"), document() +
                                   ": the document has no kernel 'nope'; its kernels are: fill, "
                                   "triple, scaled, stats, bump, products");
  expect_error(run_loom("launch " + document()),
               "'loom launch' needs a kernel: loom launch DOC KERNEL (its kernels: fill, triple, "
               "scaled, stats, bump, products)");
  expect_error(launch("triple --arg m=1"),
               at + "'triple': no parameter 'm'; its parameters are: n (i32)");
  expect_error(
      launch("scaled --arg v=1 --arg w=2"),
      at + "'scaled': no parameter 'w'; its parameters are: v (f32x3), params (argpack P)");
  expect_error(launch("triple"), at + "'triple': missing argument 'n' (i32): give --arg n=VALUE");
  expect_error(launch("bump --arg target=total"),
               at + "'bump': missing argument 'by' (template): give --arg by=VALUE (a field's name "
                    "or a constant)");
  expect_error(launch("triple --arg n=7 --arg n=8"), at + "'triple': argument 'n' is given twice");
  expect_error(launch("triple --arg n"), at + "'triple': --arg expects NAME=VALUE, got 'n'");
  expect_error(launch("triple n=7"),
               "unexpected argument 'n=7' (arguments are given as --arg n=7)");
  // Values that do not parse for the type
  expect_error(launch("triple --arg n=seven"),
               at + "'triple': argument 'n' (i32): 'seven' is not an integer");
  expect_error(
      launch("triple --arg n=1.5"),
      at + "'triple': argument 'n' (i32): '1.5' is not a whole number (i32 takes integers)");
  expect_error(launch("scaled --arg v=1,2"),
               at + "'scaled': argument 'v' (f32x3): f32x3 takes 3 components (or one for all), "
                    "got 2");
  expect_error(launch("products --arg a=1 --arg b=1 --arg 'm=[[1, 2, 3], [4, 5, 6]]'"),
               at + "'products': argument 'm' (f32x2x2): '[[1, 2, 3], [4, 5, 6]]' does not fit "
                    "f32x2x2: it takes 2 columns of 2 components");
  expect_error(launch("scaled --arg v=1,x,3"),
               at + "'scaled': argument 'v' (f32x3): 'x' is not a number");
  expect_error(launch("scaled --arg v=1 --arg params.scale=big"),
               at + "'scaled': argument 'params.scale' (f32): 'big' is not a number");
  // ... or are out of its range
  expect_error(launch("triple --arg n=3000000000"),
               at + "'triple': argument 'n' (i32): 3000000000 is out of range for i32 "
                    "(-2147483648 to 2147483647)");
  expect_error(launch("scaled --arg v=1e39"),
               at + "'scaled': argument 'v' (f32x3): 1e39 is out of range for f32");
  // Resources and members that do not exist
  expect_error(launch("stats --arg arr=nope"),
               at + "'stats': argument 'arr' (ndarray of f32, 1-d): the program has no ndarray "
                    "'nope' (its ndarrays: arr, short)");
  expect_error(launch("scaled --arg v=1 --arg params.zz=1"),
               at + "'scaled': argument 'params.zz': argpack type 'P' has no member 'zz' (its "
                    "members: scale)");
  expect_error(launch("triple --arg n.x=1"),
               at + "'triple': argument 'n.x': parameter 'n' is i32, not an argpack");
  expect_error(launch("bump --arg target=nope --arg by=1"),
               at + "'bump': argument 'target' (template field): the program has no field 'nope' "
                    "(its fields: total)");
}

TEST(CliLaunch, Help) {
  CliRun top = run_loom("--help");
  EXPECT_TRUE(has(top, "launch DOC K")) << top.out;
  CliRun help = run_loom("launch --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_TRUE(has(help, "usage: loom launch DOC KERNEL [--arg NAME=VALUE ...]")) << help.out;
  CliRun run = run_loom("run --help");
  EXPECT_TRUE(has(run, "--returns")) << run.out;
}
