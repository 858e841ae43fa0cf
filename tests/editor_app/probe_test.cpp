// Probes: a pin's value for every thread of its kernel, as a field, computed by a copy of the
// kernel that writes nothing else. Checked against the values the kernel's own formula gives.
#include "editor/model/probe.h"

#include "editor/app/probe_runner.h"

#include <gtest/gtest.h>

#include <functional>

#include "compiler/graph/document_json.h"
#include "compiler/graph/validate.h"
#include "engine_plugin/include/loom/program.h"

namespace loom::editor {
namespace {

graph::Document sample(const std::string& name) {
  return graph::load_document_file(std::string(LOOM_SOURCE_DIR) + "/assets/graphs/" + name +
                                   ".loom.json");
}

ProgramOptions cpu() {
  ProgramOptions o;
  o.backend = Backend::Cpu;
  o.offline_cache = false;
  return o;
}

TEST(Probe, TheStencilFormulaOfHeatForEveryCell) {
  graph::Document doc = sample("heat");
  std::string why;
  std::optional<ProbePlan> plan = plan_probe(doc, "diffuse", PinRef{12, "out"}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  EXPECT_EQ(plan->shape, (std::vector<int64_t>{254, 254}));  // the loop runs 1..254
  EXPECT_EQ(value_type_name(plan->type), "f32");
  ASSERT_NO_THROW(graph::validate_document(plan->document));

  Program p(cpu());
  p.load(plan->document);
  p.run_pipeline("init");
  p.run_pipeline("step");
  std::vector<double> temperature, scratch;
  for (int64_t i = 0; i < 256 * 256; ++i) {
    temperature.push_back(p.array("temperature").component(i, 0));
    scratch.push_back(p.array("scratch").component(i, 0));
  }
  p.run_pipeline(kProbePipeline);
  // The probe wrote nothing but its field.
  for (int64_t i = 0; i < 256 * 256; i += 97) {
    EXPECT_EQ(p.array("temperature").component(i, 0), temperature[static_cast<size_t>(i)]);
    EXPECT_EQ(p.array("scratch").component(i, 0), scratch[static_cast<size_t>(i)]);
  }
  // Its first launch reads temperature: c + k * (n + s + w + e - 4c) at every cell.
  auto t = [&](int i, int j) { return temperature[static_cast<size_t>(i * 256 + j)]; };
  ArrayView probe = p.array(kProbeField);
  int checked = 0;
  for (int i = 1; i < 255; i += 11)
    for (int j = 1; j < 255; j += 7) {
      double c = t(i, j);
      double want = c + 0.2 * (t(i - 1, j) + t(i + 1, j) + t(i, j - 1) + t(i, j + 1) - 4.0 * c);
      EXPECT_NEAR(probe.component((i - 1) * 254 + (j - 1), 0), want, 1e-5) << i << "," << j;
      ++checked;
    }
  EXPECT_GT(checked, 500);
}

TEST(Probe, ALoopIndexOutsideAnyLoopAndBadPins) {
  graph::Document doc = sample("heat");
  std::string why;
  // The loop's own index: inside its body.
  std::optional<ProbePlan> plan = plan_probe(doc, "init", PinRef{1, "i1"}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  EXPECT_EQ(value_type_name(plan->type), "i32");
  Program p(cpu());
  p.load(plan->document);
  p.run_pipeline(kProbePipeline);
  EXPECT_EQ(p.array(kProbeField).component(3 * 256 + 17, 0), 17);
  // A value outside any loop: one element.
  plan = plan_probe(doc, "diffuse", PinRef{1, "out"}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  EXPECT_EQ(plan->shape, std::vector<int64_t>{1});
  Program q(cpu());
  q.load(plan->document);
  q.run_pipeline(kProbePipeline);
  EXPECT_FLOAT_EQ(static_cast<float>(q.array(kProbeField).component(0, 0)), 0.2f);
  // No such node, no such kernel, a pin that is no value.
  EXPECT_FALSE(plan_probe(doc, "diffuse", PinRef{99, "out"}, &why));
  EXPECT_NE(why.find("no node 99"), std::string::npos);
  EXPECT_FALSE(plan_probe(doc, "nope", PinRef{1, "out"}, &why));
  EXPECT_FALSE(plan_probe(doc, "diffuse", PinRef{13, "out"}, &why));  // a store has none
}

TEST(Probe, AtomicsReadInsteadOfWriting) {
  graph::Document doc = sample("mpm88");
  std::string why;
  int atomic = -1;
  std::string kernel;
  for (const graph::KernelDecl& k : doc.kernels) {
    std::function<void(const std::vector<graph::Node>&)> walk =
        [&](const std::vector<graph::Node>& nodes) {
          for (const graph::Node& n : nodes) {
            if (atomic < 0 && n.type.rfind("atomic_", 0) == 0) atomic = n.id, kernel = k.name;
            for (const graph::Region& r : n.regions) walk(r.nodes);
          }
        };
    walk(k.nodes);
  }
  ASSERT_GE(atomic, 0);
  std::optional<ProbePlan> plan = plan_probe(doc, kernel, PinRef{atomic, "out"}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  ASSERT_NO_THROW(graph::validate_document(plan->document));
  std::string text = graph::save_document(plan->document);
  std::string probe_kernel = text.substr(text.find("\"name\": \"" + plan->kernel + "\""));
  probe_kernel = probe_kernel.substr(0, probe_kernel.find("\n    }"));
  EXPECT_EQ(probe_kernel.find("atomic_"), std::string::npos);
  EXPECT_EQ(probe_kernel.find("\"type\": \"store\", \"inputs\""),
            probe_kernel.rfind("\"type\": \"store\""));
}

// The runner: the probe on the live program's data, which it only reads; a second run
// after a step shows the new values; a bad pin says why.
TEST(Probe, TheRunnerShowsTheLiveProgramsValuesAndLeavesThemAlone) {
  graph::Document doc = sample("heat");
  Program live(cpu());
  live.load(doc);
  live.run_pipeline("init");
  live.run_pipeline("step");
  ProbeRunner runner;
  const ProbeValues& v = runner.run(doc, live, "diffuse", PinRef{7, "out"});  // the centre load
  ASSERT_EQ(v.error, "");
  EXPECT_EQ(v.shape, (std::vector<int64_t>{254, 254}));
  ASSERT_EQ(v.values.size(), 254u * 254u);
  ArrayView t = live.array("temperature");
  for (int i = 1; i < 255; i += 17)
    for (int j = 1; j < 255; j += 13)
      EXPECT_EQ(v.values[static_cast<size_t>((i - 1) * 254 + (j - 1))],
                t.component(static_cast<size_t>(i * 256 + j), 0));
  double before = t.component(96 * 256 + 100, 0);
  live.run_pipeline("step");
  const ProbeValues& w = runner.run(doc, live, "diffuse", PinRef{7, "out"});
  EXPECT_EQ(w.values[static_cast<size_t>(95 * 254 + 99)],
            live.array("temperature").component(96 * 256 + 100, 0));
  EXPECT_NE(live.array("temperature").component(96 * 256 + 100, 0), before);
  EXPECT_NE(runner.run(doc, live, "diffuse", PinRef{13, "out"}).error, "");
}

}  // namespace
}  // namespace loom::editor
