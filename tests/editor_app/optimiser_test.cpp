// The Optimise panel's engine (editor/app/optimiser.h) on the cannon sample: what can be
// tuned, gradient descent lowering the loss, ranges, Keep as one undo step, Revert, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "compiler/graph/document_json.h"
#include "editor/app/optimise_panel.h"
#include "editor/app/optimiser.h"
#include "editor/app/panels.h"
#include "editor/model/editor_document.h"
#include "editor/model/operations.h"

namespace loom::editor {
namespace {

std::string cannon_path() {
  return std::string(LOOM_SOURCE_DIR) + "/assets/graphs/cannon.loom.json";
}
graph::Document cannon() { return graph::load_document_file(cannon_path()); }

const TunableValue* find(const std::vector<TunableValue>& values, const std::string& name) {
  for (const TunableValue& v : values)
    if (v.name == name) return &v;
  return nullptr;
}

double launch_arg(const graph::Document& doc, const std::string& pipeline, size_t launch,
                  const std::string& name) {
  for (const graph::Pipeline& p : doc.pipelines)
    if (p.name == pipeline)
      for (const auto& [n, value] : p.launches.at(launch).args)
        if (n == name) return value.as_double();
  ADD_FAILURE() << "no argument " << name << " in " << pipeline << "[" << launch << "]";
  return NAN;
}

OptimiseSettings aim(double step_size = 0.02, int iterations = 30) {
  OptimiseSettings s;
  s.loss = "loss";
  s.parameters = {{"speed", 1.2, 0.2, 3.0}, {"angle", 0.9, 0.0, 1.5}};
  s.steps = 40;
  s.iterations = iterations;
  s.step_size = step_size;
  return s;
}

TEST(Optimiser, TheCannonsLaunchValuesAndLossesAreOffered) {
  graph::Document doc = cannon();
  std::vector<TunableValue> values = tunable_values(doc);
  ASSERT_NE(find(values, "speed"), nullptr);
  EXPECT_DOUBLE_EQ(find(values, "speed")->value, 1.2);
  EXPECT_TRUE(find(values, "speed")->problem.empty());
  ASSERT_EQ(find(values, "speed")->launches.size(), 1u);
  EXPECT_EQ(find(values, "speed")->launches[0], "init 1. fire");
  ASSERT_NE(find(values, "angle"), nullptr);
  // dt is passed by all five launches of `step`, the same value: one tunable value.
  ASSERT_NE(find(values, "dt"), nullptr);
  EXPECT_EQ(find(values, "dt")->launches.size(), 5u);
  EXPECT_TRUE(find(values, "dt")->problem.empty());
  // The target is a vector: tuned a component at a time, named as the tape names them.
  EXPECT_EQ(find(values, "target"), nullptr);
  ASSERT_NE(find(values, "target[1]"), nullptr);
  EXPECT_DOUBLE_EQ(find(values, "target[1]")->value, 0.25);
  EXPECT_TRUE(find(values, "target[1]")->problem.empty());
  std::vector<std::string> losses = loss_candidates(doc);
  ASSERT_FALSE(losses.empty());
  EXPECT_EQ(losses.front(), "loss");

  // Launches that pass one parameter different values: the gradient would be their sum.
  for (graph::Pipeline& p : doc.pipelines)
    if (p.name == "step") p.launches[2].args[0].second = graph::Literal::real(0.002);
  const std::vector<TunableValue> differing = tunable_values(doc);
  const TunableValue* dt = find(differing, "dt");
  ASSERT_NE(dt, nullptr);
  EXPECT_NE(dt->problem.find("different values"), std::string::npos) << dt->problem;
}

TEST(Optimiser, TheGradientMatchesFiniteDifferencesOfTheLoss) {
  graph::Document doc = cannon();
  auto loss_at = [&](double speed) {
    OptimiseSettings s = aim();
    s.parameters = {{"speed", speed, 0.0, 10.0}};
    Optimiser o(doc, s);
    return o.iterate();
  };
  OptimiseSettings s = aim();
  s.parameters = {{"speed", 1.2, 0.0, 10.0}};
  Optimiser o(doc, s);
  o.iterate();
  double g = o.progress().gradients.at(0);
  double h = 1e-2;
  double fd = (loss_at(1.2 + h) - loss_at(1.2 - h)) / (2 * h);
  EXPECT_NE(g, 0);
  EXPECT_NEAR(g, fd, 0.05 * std::fabs(fd) + 1e-4) << "tape " << g << ", differences " << fd;
}

TEST(Optimiser, GradientDescentOnTheCannonLowersTheLoss) {
  for (OptimiseSettings::Method method :
       {OptimiseSettings::Method::Adam, OptimiseSettings::Method::Gradient}) {
    OptimiseSettings s = aim(method == OptimiseSettings::Method::Adam ? 0.02 : 0.5, 40);
    s.method = method;
    Optimiser o(cannon(), s);
    for (int i = 0; i < s.iterations; ++i) o.iterate();
    OptimiseProgress p = o.progress();
    ASSERT_EQ(p.done(), s.iterations);
    EXPECT_LT(p.losses.back(), 0.2 * p.losses.front())
        << "from " << p.losses.front() << " to " << p.losses.back();
    EXPECT_NE(p.values[0], 1.2);
    EXPECT_NE(p.values[1], 0.9);
  }
}

TEST(Optimiser, ValuesStayInTheirRanges) {
  OptimiseSettings s = aim(0.5, 6);  // big steps
  s.parameters = {{"speed", 5.0, 1.0, 1.1}, {"angle", 0.9, 0.85, 0.95}};
  Optimiser o(cannon(), s);
  EXPECT_DOUBLE_EQ(o.progress().values[0], 1.1);  // the start is clamped too
  for (int i = 0; i < s.iterations; ++i) {
    o.iterate();
    OptimiseProgress p = o.progress();
    EXPECT_GE(p.values[0], 1.0);
    EXPECT_LE(p.values[0], 1.1);
    EXPECT_GE(p.values[1], 0.85);
    EXPECT_LE(p.values[1], 0.95);
  }
  // The loss pulls the values out of those ranges: at least one ends on a bound.
  OptimiseProgress p = o.progress();
  bool on_bound =
      p.values[0] == 1.0 || p.values[0] == 1.1 || p.values[1] == 0.85 || p.values[1] == 0.95;
  EXPECT_TRUE(on_bound) << p.values[0] << ", " << p.values[1];
}

// Argpack members are tuned in the pack every launch reads (tests/e2e/docs/
// argpack_gradient.loom.json: `drift` reads world's gravity, wind, shape.k, shape.m and the
// nested pack's drag): float members offered with the document's values, vectors and matrices
// a component at a time (the nested pack's members are listed under that pack's own name, as
// the parameters panel lists them, so world.inner.drag is not offered); the gradient is the
// loss's slope; Keep writes the pack.
TEST(Optimiser, ArgpackMembersAreTunedInTheirPack) {
  graph::Document doc = graph::load_document_file(std::string(LOOM_SOURCE_DIR) +
                                                  "/tests/e2e/docs/argpack_gradient.loom.json");
  std::vector<TunableValue> values = tunable_values(doc);
  ASSERT_NE(find(values, "world.gravity"), nullptr);
  EXPECT_DOUBLE_EQ(find(values, "world.gravity")->value, 1.5);
  ASSERT_NE(find(values, "world.shape.k"), nullptr);
  EXPECT_DOUBLE_EQ(find(values, "world.shape.k")->value, 0.8);
  EXPECT_TRUE(find(values, "world.shape.k")->problem.empty());
  EXPECT_EQ(find(values, "world.shape.k")->launches, std::vector<std::string>{"step 1. drift"});
  ASSERT_NE(find(values, "world.wind[1]"), nullptr);
  EXPECT_DOUBLE_EQ(find(values, "world.wind[1]")->value, -0.2);
  ASSERT_NE(find(values, "world.shape.m[2]"), nullptr);  // column 1, row 0
  EXPECT_DOUBLE_EQ(find(values, "world.shape.m[2]")->value, -0.1);
  EXPECT_EQ(find(values, "world.steps"), nullptr);  // an integer
  EXPECT_EQ(find(values, "world.inner.drag"), nullptr);
  ASSERT_NE(find(values, "dt"), nullptr);

  auto settings = [](double k, int iterations) {
    OptimiseSettings s;
    s.loss = "loss";
    s.parameters = {{"world.shape.k", k, 0.0, 2.0}};
    s.steps = 3;
    s.iterations = iterations;
    return s;
  };
  auto loss_at = [&](double k) { return Optimiser(doc, settings(k, 1)).iterate(); };
  Optimiser o(doc, settings(0.8, 20));
  o.iterate();
  double g = o.progress().gradients.at(0);
  const double h = 1e-2;
  double fd = (loss_at(0.8 + h) - loss_at(0.8 - h)) / (2 * h);
  EXPECT_NE(g, 0);
  EXPECT_NEAR(g, fd, 0.03 * std::fabs(fd) + 1e-5) << "tape " << g << ", differences " << fd;
  for (int i = 1; i < 20; ++i) o.iterate();
  OptimiseProgress p = o.progress();
  EXPECT_LT(p.losses.back(), 0.8 * p.losses.front())
      << "from " << p.losses.front() << " to " << p.losses.back();
  graph::Document kept = o.tuned(doc);
  const graph::ArgpackDecl* world = kept.argpack("world");
  ASSERT_NE(world, nullptr);
  double written = NAN;
  for (const auto& [path, literal] : world->values)
    if (path == "shape.k") written = literal.as_double();
  EXPECT_NEAR(written, p.values[0], 1e-5);
  EXPECT_NE(written, 0.8);

  // One component of a vector member and of a vector parameter: the others stay as given.
  OptimiseSettings w = settings(0.8, 1);
  w.parameters = {{"world.wind[1]", -0.2, -1.0, 1.0}};
  auto wind_loss = [&](double y) {
    OptimiseSettings at = w;
    at.parameters[0].start = y;
    return Optimiser(doc, at).iterate();
  };
  Optimiser wind(doc, w);
  wind.iterate();
  double dw = wind.progress().gradients.at(0);
  double fd_w = (wind_loss(-0.2 + h) - wind_loss(-0.2 - h)) / (2 * h);
  EXPECT_NE(dw, 0);
  EXPECT_NEAR(dw, fd_w, 0.03 * std::fabs(fd_w) + 1e-5);
  graph::Document kept_wind = with_tuned_values(doc, {{"world.wind[1]", 0.125}});
  bool wind_written = false;
  for (const auto& [path, literal] : kept_wind.argpack("world")->values) {
    if (path != "wind") continue;
    EXPECT_EQ(literal_components(literal), (std::vector<double>{0.3, 0.125}));
    wind_written = true;
  }
  EXPECT_TRUE(wind_written);
}

// The cannon's target, a vector parameter, tuned by one component: its gradient is the
// loss's slope, and Keep writes that component into the launch's list.
TEST(Optimiser, AVectorParameterIsTunedAComponentAtATime) {
  graph::Document doc = cannon();
  auto settings = [](double y) {
    OptimiseSettings s = aim(0.02, 1);
    s.parameters = {{"target[1]", y, -1.0, 1.0}};
    return s;
  };
  Optimiser o(doc, settings(0.25));
  o.iterate();
  double g = o.progress().gradients.at(0);
  const double h = 1e-2;
  double fd = (Optimiser(doc, settings(0.25 + h)).iterate() -
               Optimiser(doc, settings(0.25 - h)).iterate()) /
              (2 * h);
  EXPECT_NE(g, 0);
  EXPECT_NEAR(g, fd, 0.03 * std::fabs(fd) + 1e-5) << "tape " << g << ", differences " << fd;
  graph::Document kept = with_tuned_values(doc, {{"target[1]", 0.5}});
  bool written = false;
  for (const graph::Pipeline& p : kept.pipelines) {
    if (p.name != "loss") continue;
    for (const auto& [name, literal] : p.launches.at(1).args) {
      if (name != "target") continue;
      EXPECT_EQ(literal_components(literal), (std::vector<double>{0.8, 0.5}));
      written = true;
    }
  }
  EXPECT_TRUE(written);

  // A vector passed whole: launches that differ in another component (or in its type) make
  // every component untunable, since an iteration passes the whole vector to them all.
  graph::Document two = doc;
  for (graph::Pipeline& p : two.pipelines)
    if (p.name == "loss") p.launches.push_back(p.launches.at(1));
  for (graph::Pipeline& p : two.pipelines)
    if (p.name == "loss")
      for (auto& [name, literal] : p.launches.back().args)
        if (name == "target")
          literal =
              graph::Literal::list_of({graph::Literal::real(0.5), graph::Literal::real(0.25)});
  std::vector<TunableValue> values = tunable_values(two);
  ASSERT_NE(find(values, "target[1]"), nullptr);
  EXPECT_NE(find(values, "target[1]")->problem.find("different values"), std::string::npos);
  EXPECT_NE(find(values, "target[0]")->problem.find("different values"), std::string::npos);
}

TEST(Optimiser, KeepIsOneUndoStepAndRevertChangesNothing) {
  EditorDocument doc = EditorDocument::from_file(cannon_path());
  std::string before = doc.save_text();
  Optimiser o(doc.doc(), aim(0.02, 5));
  for (int i = 0; i < 5; ++i) o.iterate();
  OptimiseProgress p = o.progress();
  graph::Document kept = o.tuned(doc.doc());
  EXPECT_NEAR(launch_arg(kept, "init", 0, "speed"), p.values[0], 1e-5);
  EXPECT_NEAR(launch_arg(kept, "init", 0, "angle"), p.values[1], 1e-5);
  EXPECT_DOUBLE_EQ(launch_arg(kept, "step", 0, "dt"), 0.004);  // not tuned: as it was
  replace_document(doc, std::move(kept), "Optimise");
  EXPECT_NE(doc.save_text(), before);
  ASSERT_TRUE(doc.can_undo());
  doc.undo();
  EXPECT_EQ(doc.save_text(), before);  // one undo step gives back every value
  EXPECT_FALSE(doc.can_undo());

  // The panel: Keep edits once, Revert never (the live session runs the document again).
  LiveSession session(ProgramOptions{});
  session.open(doc.doc());
  session.frame();
  int edits = 0;
  PanelState state;
  state.edit = [&](graph::Document d) {
    ++edits;
    replace_document(doc, std::move(d), "Optimise");
  };
  OptimisePanel panel;
  panel.settings = aim(0.02, 3);
  auto run = [&] {
    for (OptimisePanel::Row& r : panel.rows()) r.tune = false;
    panel.start(session, doc.doc());
    for (OptimisePanel::Row& r : panel.rows())
      if (r.value.name == "speed") r.tune = true;
    panel.revert(session, doc.doc());
    panel.start(session, doc.doc());
    ASSERT_NE(panel.optimiser(), nullptr) << panel.message();
    while (panel.optimiser()->running()) session.frame();
  };
  run();
  EXPECT_EQ(panel.optimiser()->progress().done(), 3);
  panel.revert(session, doc.doc());
  EXPECT_EQ(panel.optimiser(), nullptr);
  EXPECT_EQ(edits, 0);
  EXPECT_EQ(doc.save_text(), before);
  session.frame();
  EXPECT_DOUBLE_EQ(launch_arg(session.document(), "init", 0, "speed"), 1.2);

  run();
  double tuned = panel.optimiser()->progress().values.at(0);
  panel.keep(session, state, doc.doc());
  EXPECT_EQ(edits, 1);
  EXPECT_NEAR(launch_arg(doc.doc(), "init", 0, "speed"), tuned, 1e-5);
  doc.undo();
  EXPECT_EQ(doc.save_text(), before);
}

TEST(Optimiser, StopEndsTheRunBetweenIterations) {
  OptimiseSettings s = aim(0.02, 100000);
  Optimiser o(cannon(), s);
  o.start();
  while (o.progress().done() < 2) std::this_thread::yield();
  o.stop();
  o.wait();
  OptimiseProgress p = o.progress();
  EXPECT_FALSE(p.running);
  EXPECT_TRUE(p.stopped);
  EXPECT_FALSE(p.error.has_value());
  EXPECT_LT(p.done(), s.iterations);
  EXPECT_EQ(p.values.size(), 2u);
}

TEST(Optimiser, BadSettingsAndUndifferentiableKernelsAreErrorsThatSayWhere) {
  graph::Document doc = cannon();
  auto refused = [&](const graph::Document& d, const OptimiseSettings& s) {
    try {
      Optimiser o(d, s);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  OptimiseSettings s = aim();
  s.loss = "x.grad";
  EXPECT_NE(refused(doc, s).find("'x.grad' is not a float field or ndarray declared needs_grad"),
            std::string::npos);
  s = aim();
  s.parameters[0].min = 5;
  EXPECT_NE(refused(doc, s).find("range of 'speed'"), std::string::npos);
  s = aim();
  s.parameters.push_back({"target", 0, 0, 1});  // a vector: by component, target[0]
  EXPECT_NE(refused(doc, s).find("'target' is not a float value"), std::string::npos);
  graph::Document differing = doc;  // two launches of `advance` with another dt
  for (graph::Pipeline& p : differing.pipelines)
    if (p.name == "step") p.launches[2].args[0].second = graph::Literal::real(0.002);
  s = aim();
  s.parameters.push_back({"dt", 0.004, 0, 1});
  EXPECT_NE(refused(differing, s).find("'dt' cannot be tuned"), std::string::npos);
  s = aim();
  s.parameters.clear();
  EXPECT_NE(refused(doc, s).find("no parameter"), std::string::npos);
  graph::Document no_grad = doc;
  for (FieldDesc& f : no_grad.fields) f.needs_grad = false;
  EXPECT_NE(refused(no_grad, aim()).find("no loss"), std::string::npos);

  // A random number in `advance`: reverse mode refuses it, naming the kernel and the node.
  std::string text = graph::save_document(doc);
  std::string load = R"({"id": 5, "type": "load")";
  size_t at = text.find(load);
  ASSERT_NE(at, std::string::npos);
  text.insert(at, R"({"id": 12, "type": "random"},)");
  std::string inputs = R"("inputs": {"v": "6", "t": "1", "k": "2", "g": "3"})";
  at = text.find(inputs);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, inputs.size(),
               R"("inputs": {"v": "6", "t": "1", "k": "2", "g": "3", "r": "12"})");
  std::string expr = R"("expr": "v + (vec2(0.0, -g) - k * length(v) * v) * t")";
  at = text.find(expr);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, expr.size(),
               R"j("expr": "v + (vec2(0.0, -g) - k * length(v) * v) * t * (1.0 + 0.0 * r)")j");
  graph::Document random = graph::load_document(text);
  Optimiser o(random, aim());
  try {
    o.iterate();
    FAIL() << "the random node was differentiated";
  } catch (const Error& e) {
    EXPECT_EQ(e.place().kernel, "advance") << e.what();
    EXPECT_EQ(e.place().node, 12) << e.what();
  }
  ASSERT_TRUE(o.progress().error.has_value());
  EXPECT_EQ(o.progress().error->place().kernel, "advance");
}

}  // namespace
}  // namespace loom::editor
