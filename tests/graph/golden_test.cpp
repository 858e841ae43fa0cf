// Golden IR of the sample graphs (assets/graphs): every kernel after lowering and after the
// whole pipeline, as `loom ir --after lower` and `loom ir` print them (first instantiation a
// pipeline launches; default options: release, fast math). The goldens are files under
// tests/graph/golden/; run with LOOM_UPDATE_GOLDEN=1 to rewrite them after an intended change,
// then review the diff like any other change.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "engine_plugin/include/loom/program.h"

using namespace loom;

namespace {

const char* const kSamples[] = {"cloth", "heat", "julia", "life", "mpm88", "nbody"};

std::string source(const std::string& relative) {
  return std::string(LOOM_SOURCE_DIR) + "/" + relative;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Arg to_arg(const graph::Literal& l) {
  switch (l.kind) {
    case graph::Literal::Kind::String: return Arg(l.s);
    case graph::Literal::Kind::Int: return Arg(l.i);
    case graph::Literal::Kind::Bool: return Arg(l.b);
    case graph::Literal::Kind::List: {
      std::vector<double> v;
      for (const graph::Literal& x : l.list) v.push_back(x.as_double());
      return Arg(v);
    }
    default: return Arg(l.as_double());
  }
}

// The arguments of the first launch of `kernel` in the document's pipelines.
Args first_launch_args(const graph::Document& doc, const std::string& kernel) {
  for (const graph::Pipeline& p : doc.pipelines)
    for (const graph::Launch& l : p.launches)
      if (l.kernel == kernel) {
        Args args;
        for (const auto& [name, value] : l.args) args.emplace_back(name, to_arg(value));
        return args;
      }
  return {};
}

// Compares `actual` with the golden file, or rewrites it under LOOM_UPDATE_GOLDEN=1.
void expect_golden(const std::string& name, const std::string& actual) {
  std::string path = source("tests/graph/golden/" + name);
  const char* update = std::getenv("LOOM_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path))
      << "no golden " << path << " (run with LOOM_UPDATE_GOLDEN=1 to create it)";
  std::string golden = read(path);
  EXPECT_EQ(golden, actual) << "the IR differs from the golden tests/graph/golden/" << name
                            << "\n(- golden, + now; if the change is intended, rerun with "
                               "LOOM_UPDATE_GOLDEN=1 and review "
                               "the diff of the golden files)";
}

class SampleGolden : public ::testing::TestWithParam<const char*> {};

}  // namespace

TEST_P(SampleGolden, EveryKernelAfterLoweringAndAfterThePipeline) {
  std::string sample = GetParam();
  ProgramOptions options;
  options.offline_cache = false;
  options.threads = 4;  // the per-thread copies of privatize_scatter: the same on every machine
  Program p(options);
  p.load_file(source("assets/graphs/" + sample + ".loom.json"));
  for (const graph::KernelDecl& k : p.document().kernels) {
    Args args = first_launch_args(p.document(), k.name);
    SCOPED_TRACE(sample + " kernel " + k.name);
    expect_golden(sample + "." + k.name + ".lower.ir", p.ir_text(k.name, "lower", args));
    expect_golden(sample + "." + k.name + ".final.ir", p.ir_text(k.name, "", args));
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, SampleGolden, ::testing::ValuesIn(kSamples),
                         [](const auto& info) { return std::string(info.param); });
