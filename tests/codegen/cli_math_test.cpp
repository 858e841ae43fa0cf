// `loom` options that change how float math compiles: --no-fast-math (strict IEEE).
#include <gtest/gtest.h>

#include "tests/support/run_loom.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

using loom::test::CliRun;
using loom::test::run_loom;

// out[0] = x + 0.0 (kept only under strict math: -0.0 + 0.0 is +0.0), with an init pipeline.
std::string write_doc() {
  std::string path = (std::filesystem::temp_directory_path() / "loom_cli_math.loom.json").string();
  std::ofstream(path) << R"({
  "format": "loom-graph",
  "version": 2,
  "fields": [
    {"name": "out", "type": "f32", "shape": [1]}
  ],
  "kernels": [
    {
      "name": "k",
      "params": [
        {"name": "x", "kind": "value", "type": "f32"}
      ],
      "nodes": [
        {"id": 1, "type": "param", "params": {"name": "x"}},
        {"id": 2, "type": "expr", "inputs": {"x": "1"}, "params": {"expr": "x + 0.0"}},
        {"id": 3, "type": "store", "inputs": {"i0": 0, "value": "2"}, "params": {"field": "out"}}
      ]
    }
  ],
  "pipelines": [
    {"name": "init", "launches": [
      {"kernel": "k", "args": {"x": -0.0}}
    ]}
  ]
}
)";
  return path;
}

}  // namespace

TEST(CliMath, NoFastMathKeepsIeeeSemantics) {
  std::string doc = write_doc();
  CliRun fast = run_loom("ir " + doc + " --kernel k");
  CliRun strict = run_loom("ir " + doc + " --kernel k --no-fast-math");
  ASSERT_EQ(fast.code, 0) << fast.out;
  ASSERT_EQ(strict.code, 0) << strict.out;
  EXPECT_EQ(fast.out.find("add"), std::string::npos) << fast.out;  // x + 0.0 -> x
  EXPECT_NE(strict.out.find("add"), std::string::npos) << strict.out;
  // Run: -0.0 + 0.0 is +0.0 in IEEE arithmetic; fast math may keep -0.0.
  CliRun run_strict = run_loom("run " + doc + " --steps 0 --no-cache --no-fast-math");
  ASSERT_EQ(run_strict.code, 0) << run_strict.out;
  EXPECT_NE(run_strict.out.find("min 0  max 0"), std::string::npos) << run_strict.out;
  for (const char* cmd : {"compile --no-cache", "bench --steps 0 --no-cache", "check"}) {
    CliRun r = run_loom(std::string(cmd) + " " + doc + " --no-fast-math");
    EXPECT_EQ(r.code, 0) << cmd << ": " << r.out;
  }
  CliRun help = run_loom("run --help");
  EXPECT_NE(help.out.find("--no-fast-math"), std::string::npos);
}
