// loom::Tape (tape.h): gradients of whole pipelines run many steps, on the sample cannon
// (assets/graphs/cannon.loom.json: 64 projectiles fired with a speed and an angle, moved in
// place by `advance` with drag until they land, and a loss measuring how far they are from a
// target), checked against central differences of the loss, with and without a memory
// budget. The suite runs on the CPU and on Vulkan (e2e_test.vulkan).
#include <cmath>
#include <fstream>
#include <iterator>

#include "compiler/graph/document_json.h"

#include "engine_plugin/include/loom/tape.h"
#include "tests/e2e/e2e_util.h"

using namespace loom;
using namespace loom::test;

namespace {

std::string cannon() { return source_path("assets/graphs/cannon.loom.json"); }

// init, `steps` runs of step, loss: recorded when a tape is given, plain runs otherwise.
double run_cannon(Program& p, Tape* tape, int steps, const Args& fire) {
  auto run = [&](const std::string& pipeline, const Args& args) {
    if (tape) {
      tape->run_pipeline(pipeline, args);
    } else {
      p.run_pipeline(pipeline, args);
    }
  };
  run("init", fire);
  for (int s = 0; s < steps; ++s) run("step", {});
  run("loss", {});
  return element<float>(p.array("loss"), 0);
}

// d loss / d (speed, angle) by central differences of the whole forward run, in f32 kernels.
std::pair<double, double> central_differences(int steps, double speed, double angle) {
  Program p(no_cache());
  p.load_file(cannon());
  auto loss = [&](double s, double a) {
    return run_cannon(p, nullptr, steps, {{"speed", s}, {"angle", a}});
  };
  const double h = 2e-3;
  return {(loss(speed + h, angle) - loss(speed - h, angle)) / (2 * h),
          (loss(speed, angle + h) - loss(speed, angle - h)) / (2 * h)};
}

struct TapeRun {
  TapeReport report;
  double d_speed = 0, d_angle = 0;
};

TapeRun tape_run(int steps, size_t budget_copies, double speed = 1.2, double angle = 0.9) {
  Program p(no_cache());
  p.load_file(cannon());
  size_t state = p.array("x").bytes + p.array("v").bytes + p.array("loss").bytes;
  Tape tape(p, {.loss = "loss", .memory_budget = budget_copies * state});
  run_cannon(p, &tape, steps, {{"speed", speed}, {"angle", angle}});
  TapeRun r;
  r.report = tape.backward();
  r.d_speed = r.report.value_gradient("speed");
  r.d_angle = r.report.value_gradient("angle");
  return r;
}

}  // namespace

TEST(Tape, GradientsOfAWholeSimulationMatchCentralDifferences) {
  // 40 steps: 200 `advance` launches, each updating x and v in place, in flight; 200 steps:
  // every projectile has landed (the branch that puts it on the ground where its last step
  // crossed it).
  for (int landed : {0, 1}) {
    const int steps = landed ? 200 : 40;
    auto [fd_speed, fd_angle] = central_differences(steps, 1.2, 0.9);
    TapeRun r = tape_run(steps, 0);
    SCOPED_TRACE(r.report.to_string());
    EXPECT_NEAR(r.d_speed, fd_speed, 2e-2 * std::abs(fd_speed) + 1e-4) << steps;
    EXPECT_NEAR(r.d_angle, fd_angle, 2e-2 * std::abs(fd_angle) + 1e-4) << steps;
    EXPECT_GT(std::abs(fd_speed), 1e-3);  // the check means something
    EXPECT_GT(std::abs(fd_angle), 1e-3);
  }
  const int steps = 40;
  TapeRun r = tape_run(steps, 0);
  // No budget: a copy before every launch, nothing recomputed.
  EXPECT_EQ(r.report.launches, 1u + 5u * steps + 2u);
  EXPECT_EQ(r.report.checkpoints, r.report.launches);
  EXPECT_EQ(r.report.launches_recomputed, 0u);
  EXPECT_EQ(r.report.stride, 1u);
  EXPECT_EQ(r.report.state, (std::vector<std::string>{"v", "x", "loss"}));
}

TEST(Tape, AMemoryBudgetKeepsFewerCopiesAndRecomputesTheRest) {
  const int steps = 40;
  TapeRun all = tape_run(steps, 0);
  for (size_t copies : {size_t{24}, size_t{6}, size_t{4}}) {
    TapeRun r = tape_run(steps, copies);
    SCOPED_TRACE(r.report.to_string());
    EXPECT_NEAR(r.d_speed, all.d_speed, 1e-5 * std::abs(all.d_speed));
    EXPECT_NEAR(r.d_angle, all.d_angle, 1e-5 * std::abs(all.d_angle));
    EXPECT_LE(r.report.peak_bytes, copies * r.report.state_bytes);
    EXPECT_LE(r.report.peak_copies, copies);
    EXPECT_GT(r.report.stride, 1u);
    EXPECT_GT(r.report.launches_recomputed, 0u);
    // Binomial checkpointing: far fewer recomputed launches than a sweep that recomputes
    // each launch from the start (n^2 / 2, 20,503 for these 203 launches).
    EXPECT_LT(r.report.launches_recomputed, 5000u);
  }
}

TEST(Tape, BackwardLeavesTheStateAsTheFirstRecordedLaunchFoundIt) {
  Program p(no_cache());
  p.load_file(cannon());
  p.run_pipeline("init", {{"speed", 1.0}, {"angle", 0.7}});
  auto floats = [&](const std::string& name) {
    ArrayView a = p.array(name);
    std::vector<float> v(a.bytes / sizeof(float));
    std::memcpy(v.data(), a.data, a.bytes);
    return v;
  };
  const std::vector<float> x0 = floats("x"), v0 = floats("v");
  Tape tape(p, {.loss = "loss", .memory_budget = size_t{4} * (512 * 2 + 4)});
  for (int s = 0; s < 10; ++s) tape.run_pipeline("step");
  tape.run_pipeline("loss");
  EXPECT_NE(floats("x"), x0);  // the projectiles moved
  const TapeReport& r = tape.backward();
  EXPECT_EQ(floats("x"), x0) << r.to_string();
  EXPECT_EQ(floats("v"), v0);
  // v.grad is d loss / d v before the first recorded launch: nudging one projectile's
  // velocity changes the loss by about that much.
  const float g = element<float>(p.array("v.grad"), 2 * 5 + 1);
  auto loss_with = [&](float dv) {
    std::memcpy(p.array("x").data, x0.data(), 512);
    std::vector<float> v = v0;
    v[2 * 5 + 1] += dv;
    std::memcpy(p.array("v").data, v.data(), 512);
    for (int s = 0; s < 10; ++s) p.run_pipeline("step");
    p.run_pipeline("loss");
    return static_cast<double>(element<float>(p.array("loss"), 0));
  };
  double fd = (loss_with(1e-2f) - loss_with(-1e-2f)) / 2e-2;
  EXPECT_NEAR(g, fd, 2e-2 * std::abs(fd) + 1e-5);
  EXPECT_GT(std::abs(fd), 1e-4);
}

TEST(Tape, WhatATapeCannotRecordIsAnErrorNamingTheLaunch) {
  Program p(no_cache());
  p.load_file(cannon());
  EXPECT_NE(error_of([&] { Tape t(p, {.loss = "lost"}); }).find("'lost' is not a resource"),
            std::string::npos);
  Tape tape(p, {.loss = "loss"});
  std::string e = error_of([&] {
    tape.launch("advance.grad", {{"dt", 0.1}, {"drag", 0.0}, {"gravity", 1.0}});
  });
  EXPECT_NE(e.find("launch #0 runs 'advance.grad', itself a derivative"), std::string::npos) << e;
  // A budget smaller than one copy of the state (x, v: 1,024 bytes).
  Tape small(p, {.loss = "loss", .memory_budget = 100});
  e = error_of([&] { small.run_pipeline("init", {{"speed", 1.0}, {"angle", 0.5}}); });
  EXPECT_NE(e.find("a memory budget of 100 bytes cannot hold one copy of the state"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("x, v") == std::string::npos ? e.find("v, x") : 0, std::string::npos) << e;
}

TEST(Tape, ALossWithoutAnAdjointIsRefused) {
  Program p(no_cache());
  p.load_file(doc_path("autodiff_descent.loom.json"));
  std::string e = error_of([&] { Tape t(p, {.loss = "ts"}); });
  EXPECT_NE(e.find("the loss 'ts' has no adjoint: declare it \"needs_grad\""), std::string::npos)
      << e;
}

// mpm88's P2G / grid / G2P (tests/e2e/docs/mpm_gradient.loom.json: the sample with every
// field needs_grad, the stiffness E, gravity and the initial velocity as arguments, and a
// loss of the particles' final heights): scatters by float atomics, 3x3 stencils of
// quadratic weights, integer base cells, state updated in place; 83 launches.
TEST(Tape, MpmParticleToGridGradientsMatchCentralDifferences) {
  const std::string doc = doc_path("mpm_gradient.loom.json");
  const int steps = 10;
  // The loss with one pipeline argument moved (in `init` or in `step`, whichever takes it).
  auto loss = [&](const std::string& pipeline, const Args& args) {
    Program p(no_cache());
    p.load_file(doc);
    p.run_pipeline("init", pipeline == "init" ? args : Args{});
    for (int s = 0; s < steps; ++s) p.run_pipeline("step", pipeline == "step" ? args : Args{});
    p.run_pipeline("loss");
    return static_cast<double>(element<float>(p.array("loss"), 0));
  };
  Program p(no_cache());
  p.load_file(doc);
  Tape tape(p, {.loss = "loss"});
  tape.run_pipeline("init");
  for (int s = 0; s < steps; ++s) tape.run_pipeline("step");
  tape.run_pipeline("loss");
  const TapeReport& r = tape.backward();
  SCOPED_TRACE(r.to_string());
  struct Parameter {
    const char* pipeline;
    const char* pipeline_arg;
    double at, h;
  };
  for (const Parameter& q :
       {Parameter{"step", "E", 400.0, 20.0}, Parameter{"init", "vx", 0.5, 0.05},
        Parameter{"step", "gravity", 9.8, 2.0}}) {
    double fd = (loss(q.pipeline, {{q.pipeline_arg, q.at + q.h}}) -
                 loss(q.pipeline, {{q.pipeline_arg, q.at - q.h}})) /
                (2 * q.h);
    double g = r.value_gradient(q.pipeline_arg);
    EXPECT_NEAR(g, fd, 3e-2 * std::abs(fd)) << q.pipeline_arg;
    EXPECT_NE(fd, 0.0) << q.pipeline_arg;
  }
}

// Gradients with respect to argpack members (tests/e2e/docs/argpack_gradient.loom.json: a
// pack `world` holding a scalar, a vector, a struct with a scalar and a 2x2 matrix, a nested
// pack, and an integer and a bool, read by a kernel that moves 32 points three times), each
// component against central differences of the loss, the argpack member moved by
// set_argpack. The tape names them by the argpack the launches pass ("world.wind[1]").
TEST(Tape, ArgpackMemberGradientsMatchCentralDifferences) {
  const std::string doc = doc_path("argpack_gradient.loom.json");
  const int steps = 3;
  auto start = [](Program& p) {
    std::vector<float> x(64);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * std::sin(0.37f * static_cast<float>(i));
    std::memcpy(p.array("x").data, x.data(), x.size() * sizeof(float));
  };
  auto loss_of = [&](Program& p) {
    start(p);
    for (int s = 0; s < steps; ++s) p.run_pipeline("step");
    p.run_pipeline("loss");
    return static_cast<double>(element<float>(p.array("loss"), 0));
  };
  Program p(no_cache());
  p.load_file(doc);
  start(p);
  Tape tape(p, {.loss = "loss"});
  for (int s = 0; s < steps; ++s) tape.run_pipeline("step");
  std::vector<LaunchReturns> returned = tape.run_pipeline("loss");
  ASSERT_EQ(returned.size(), 1u);  // `report`, the third launch, returns the loss
  EXPECT_EQ(returned[0].launch, 2u);
  EXPECT_EQ(returned[0].kernel, "report");
  EXPECT_EQ(returned[0].result.value("r0"), element<float>(p.array("loss"), 0));
  const TapeReport& r = tape.backward();
  SCOPED_TRACE(r.to_string());
  std::vector<std::string> names;
  for (const auto& [name, g] : r.value_gradients) names.push_back(name);
  // Every float member in layout order, then dt; the integer and the bool have none.
  EXPECT_EQ(names, (std::vector<std::string>{"world.gravity", "world.wind[0]", "world.wind[1]",
                                             "world.shape.k", "world.shape.m[0]",
                                             "world.shape.m[1]", "world.shape.m[2]",
                                             "world.shape.m[3]", "world.inner.drag", "dt"}));
  struct Member {
    std::string path;
    int components;
  };
  for (const Member& m : {Member{"gravity", 1}, Member{"wind", 2}, Member{"shape.k", 1},
                          Member{"shape.m", 4}, Member{"inner.drag", 1}}) {
    for (int c = 0; c < m.components; ++c) {
      Program q(no_cache());
      q.load_file(doc);
      std::vector<double> v;
      for (int k = 0; k < m.components; ++k) v.push_back(q.get_argpack("world", m.path, k));
      auto loss_at = [&](double d) {
        std::vector<double> w = v;
        w[static_cast<size_t>(c)] += d;
        q.set_argpack("world", m.path, m.components == 1 ? Arg(w[0]) : Arg(w));
        return loss_of(q);
      };
      const double h = 1e-2;
      double fd = (loss_at(h) - loss_at(-h)) / (2 * h);
      std::string name = "world." + m.path;
      if (m.components > 1) name += "[" + std::to_string(c) + "]";
      EXPECT_NEAR(r.value_gradient(name), fd, 2e-2 * std::abs(fd) + 2e-4) << name;
      if (m.path != "gravity") {
        EXPECT_GT(std::abs(fd), 1e-3) << name;  // the check means something
      }
    }
  }
  // The adjoint on its own names them by the kernel's parameter, as loom.h returns them.
  p.run_pipeline("step");
  KernelResult k = p.launch("drift.grad", {{"w", "world"}, {"dt", 0.1}});
  EXPECT_EQ(k.names, (std::vector<std::string>{"w.gravity", "w.wind", "w.shape.k", "w.shape.m",
                                               "w.inner.drag", "dt"}));
}

// Forward mode: `K.dual` given an argpack for `w.dual` takes the direction of each float
// member from it (here gravity, wind, shape.k and shape.m of `direction`), and x.dual gets
// the directional derivative, checked against central differences along that direction.
// Without `w.dual` the members have no tangent.
TEST(Tape, ArgpackMemberTangentsMatchCentralDifferences) {
  const std::string doc = doc_path("argpack_gradient.loom.json");
  auto start = [](Program& p) {
    std::vector<float> x(64);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * std::sin(0.37f * static_cast<float>(i));
    std::memcpy(p.array("x").data, x.data(), x.size() * sizeof(float));
  };
  auto floats = [](Program& p, const std::string& name) {
    ArrayView a = p.array(name);
    std::vector<float> v(a.bytes / sizeof(float));
    std::memcpy(v.data(), a.data, a.bytes);
    return v;
  };
  const Args args = {{"w", "world"}, {"dt", 0.1}};
  Program p(no_cache());
  p.load_file(doc);
  start(p);
  Args with_direction = args;
  with_direction.emplace_back("w.dual", "direction");
  p.launch("drift.dual", with_direction);
  std::vector<float> tangent = floats(p, "x.dual");

  const std::vector<std::pair<std::string, int>> members = {
      {"gravity", 1}, {"wind", 2}, {"shape.k", 1}, {"shape.m", 4}};
  auto x_along = [&](double t) {
    Program q(no_cache());
    q.load_file(doc);
    for (const auto& [path, n] : members) {
      std::vector<double> v;
      for (int c = 0; c < n; ++c)
        v.push_back(q.get_argpack("world", path, c) + t * q.get_argpack("direction", path, c));
      q.set_argpack("world", path, n == 1 ? Arg(v[0]) : Arg(v));
    }
    start(q);
    q.launch("drift", args);
    return floats(q, "x");
  };
  const double h = 1e-2;
  std::vector<float> plus = x_along(h), minus = x_along(-h);
  double largest = 0;
  for (size_t i = 0; i < tangent.size(); ++i) {
    double fd = (plus[i] - minus[i]) / (2 * h);
    EXPECT_NEAR(tangent[i], fd, 1e-3 * std::max(1.0, std::abs(fd))) << i;
    largest = std::max(largest, std::abs(fd));
  }
  EXPECT_GT(largest, 1e-2);  // the check means something

  Program none(no_cache());
  none.load_file(doc);
  start(none);
  none.launch("drift.dual", args);  // no w.dual: x.dual stays 0 (x.dual's own direction)
  for (float t : floats(none, "x.dual")) EXPECT_EQ(t, 0.0f);
}

// The ndarrays an argpack holds get gradients too
// (tests/e2e/docs/argpack_ndarray_adjoint.loom.json: a pack `body` holding `pos` directly, `coef`
// in a struct and `weights` through a nested pack `inner`, all needs_grad; `advance` moves pos in
// place through the pack three times and `energy` sums w * |pos|^2). The adjoint's twins
// PARAM.PATH.grad are bound to the .grad of the ndarray each member holds; each element against
// central differences of the loss.
TEST(Tape, ArgpackNdarrayGradientsMatchCentralDifferences) {
  const std::string doc = doc_path("argpack_ndarray_adjoint.loom.json");
  const int steps = 3;
  auto floats = [](Program& p, const std::string& name) {
    ArrayView a = p.array(name);
    std::vector<float> v(a.bytes / sizeof(float));
    std::memcpy(v.data(), a.data, a.bytes);
    return v;
  };
  Program p(no_cache());
  p.load_file(doc);
  p.run_pipeline("init");
  Tape tape(p, {.loss = "loss"});
  for (int s = 0; s < steps; ++s) tape.run_pipeline("step");
  tape.run_pipeline("loss");
  const TapeReport& r = tape.backward();
  SCOPED_TRACE(r.to_string());
  EXPECT_NE(r.value_gradient("body.k"), 0.0);
  for (const char* name : {"pos", "weights", "coef"}) {
    std::vector<float> grad = floats(p, std::string(name) + ".grad");
    double largest = 0;
    for (size_t e = 0; e < grad.size(); e += 3) {  // every third element keeps the test short
      Program q(no_cache());
      q.load_file(doc);
      auto loss_at = [&](double d) {
        q.run_pipeline("init");
        std::vector<float> v = floats(q, name);
        v[e] += static_cast<float>(d);
        q.write_array(name, v.data(), v.size() * sizeof(float));
        for (int s = 0; s < steps; ++s) q.run_pipeline("step");
        q.run_pipeline("loss");
        return static_cast<double>(element<float>(q.array("loss"), 0));
      };
      const double h = 1e-2;
      double fd = (loss_at(h) - loss_at(-h)) / (2 * h);
      EXPECT_NEAR(grad[e], fd, 2e-2 * std::abs(fd) + 5e-4) << name << "[" << e << "]";
      largest = std::max(largest, std::abs(fd));
    }
    EXPECT_GT(largest, 1e-2) << name;  // the check means something
  }
  // K.grad on its own, its twin for b.pos given: the gradient goes there, not into pos.grad.
  p.create_ndarray("elsewhere", ValueType{Scalar::F32, 2, 1}, {16});
  std::vector<float> before = floats(p, "pos.grad");
  std::vector<float> one = {1.0f};
  p.write_array("loss.grad", one.data(), sizeof(float));
  p.launch("energy.grad", {{"b", "body"}, {"b.pos.grad", "elsewhere"}});
  EXPECT_EQ(floats(p, "pos.grad"), before);
  std::vector<float> elsewhere = floats(p, "elsewhere");
  EXPECT_TRUE(std::any_of(elsewhere.begin(), elsewhere.end(), [](float g) { return g != 0; }));
  EXPECT_NE(error_of([&] {
              p.launch("energy.grad", {{"b", "body"}, {"b.k.grad", "elsewhere"}});
            }).find("kernel 'energy' has no parameter 'b.k.grad'"),
            std::string::npos);
}

// Forward mode through an argpack's ndarrays: advance.dual binds b.pos.dual to pos.dual and
// b.inner.w.dual to weights.dual (coef has no tangent: constant), and pos.dual becomes the
// derivative along (pos.dual, weights.dual), checked against central differences.
TEST(Tape, ArgpackNdarrayTangentsMatchCentralDifferences) {
  const std::string doc = doc_path("argpack_ndarray_adjoint.loom.json");
  auto floats = [](Program& p, const std::string& name) {
    ArrayView a = p.array(name);
    std::vector<float> v(a.bytes / sizeof(float));
    std::memcpy(v.data(), a.data, a.bytes);
    return v;
  };
  std::vector<float> dpos(32), dw(16);
  for (size_t i = 0; i < dpos.size(); ++i) dpos[i] = std::cos(0.7f * static_cast<float>(i));
  for (size_t i = 0; i < dw.size(); ++i) dw[i] = 0.5f - 0.1f * static_cast<float>(i % 5);
  const Args args = {{"b", "body"}, {"dt", 0.1}};
  Program p(no_cache());
  p.load_file(doc);
  p.run_pipeline("init");
  p.write_array("pos.dual", dpos.data(), dpos.size() * sizeof(float));
  p.write_array("weights.dual", dw.data(), dw.size() * sizeof(float));
  p.launch("advance.dual", args);
  std::vector<float> tangent = floats(p, "pos.dual");
  auto pos_along = [&](double t) {
    Program q(no_cache());
    q.load_file(doc);
    q.run_pipeline("init");
    std::vector<float> pos = floats(q, "pos"), w = floats(q, "weights");
    for (size_t i = 0; i < pos.size(); ++i) pos[i] += static_cast<float>(t) * dpos[i];
    for (size_t i = 0; i < w.size(); ++i) w[i] += static_cast<float>(t) * dw[i];
    q.write_array("pos", pos.data(), pos.size() * sizeof(float));
    q.write_array("weights", w.data(), w.size() * sizeof(float));
    q.launch("advance", args);
    return floats(q, "pos");
  };
  const double h = 1e-2;
  std::vector<float> plus = pos_along(h), minus = pos_along(-h);
  for (size_t i = 0; i < tangent.size(); ++i) {
    double fd = (plus[i] - minus[i]) / (2 * h);
    EXPECT_NEAR(tangent[i], fd, 1e-3 * std::max(1.0, std::abs(fd))) << i;
  }
}

// Pipelines may launch K.grad and K.dual with the twins of an argpack's ndarrays
// (PARAM.PATH.grad / .dual, an ndarray's name) and K.dual with an argpack twin (P.dual, an
// argpack's name); a twin of anything else is refused when the document loads, naming it.
TEST(Tape, PipelinesGiveArgpackTwins) {
  std::ifstream in(doc_path("argpack_ndarray_adjoint.loom.json"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto with_pipeline = [&](const std::string& launch) {
    std::string t = text;
    t.replace(t.find("\"pipelines\": ["), 14,
              "\"pipelines\": [{\"name\": \"extra\", \"launches\": [" + launch + "]},");
    Program p(no_cache());
    p.load(graph::load_document(t, "twins.loom.json"));
    p.run_pipeline("init");
    p.run_pipeline("extra");
  };
  auto error_with = [&](const std::string& launch) {
    return error_of([&] { with_pipeline(launch); });
  };
  EXPECT_EQ(error_with(
                R"({"kernel": "energy.grad", "args": {"b": "body", "b.inner.w.grad": "coef.grad"}},
         {"kernel": "advance.dual", "args": {"b": "body", "dt": 0.1, "b.dual": "body",
                                             "b.pos.dual": "pos.dual"}})"),
            "");
  std::string e =
      error_with(R"({"kernel": "energy.grad", "args": {"b": "body", "b.k.grad": "coef"}})");
  EXPECT_NE(e.find("pipeline 'extra': argpack parameter 'b' of kernel 'energy' has no float "
                   "ndarray member 'k' to have a 'grad' twin"),
            std::string::npos)
      << e;
  e = error_with(R"({"kernel": "energy.grad", "args": {"b": "body", "b.pos.grad": 1.5}})");
  EXPECT_NE(e.find("argument 'b.pos.grad' of 'energy.grad' must be the name of an ndarray"),
            std::string::npos)
      << e;
  e = error_with(R"({"kernel": "energy.grad", "args": {"b": "body", "b.grad": "body"}})");
  EXPECT_NE(e.find("parameter 'b' of kernel 'energy' has no 'grad' twin"), std::string::npos) << e;
  e = error_with(R"({"kernel": "energy.grad", "args": {"b": "body", "b.pos.grad": "coef.grad"}})");
  EXPECT_NE(e.find("argument 'b.pos.grad' of 'energy.grad' takes an ndarray of f32x2 with 1 "
                   "dimensions; 'coef.grad' has f32 with 1"),
            std::string::npos)
      << e;
  e = error_with(R"({"kernel": "energy.grad", "args": {"b": "body", "b.pos.grad": "nothing"}})");
  EXPECT_NE(e.find("'nothing' is none of the program's"), std::string::npos) << e;
  e = error_with(
      R"({"kernel": "advance.dual", "args": {"b": "body", "dt": 0.1, "b.dual": "inner"}})");
  EXPECT_NE(e.find("must be an argpack of type 'Body'; 'inner' is not one"), std::string::npos)
      << e;
  e = error_with(R"({"kernel": "advance.dual", "args": {"b": "body", "dt": 0.1, "b.dual": 2}})");
  EXPECT_NE(e.find("argument 'b.dual' of 'advance.dual' must be the name of an argpack"),
            std::string::npos)
      << e;
}

// A member set through a nested pack lands in that pack (`body` sets inner.w, so `inner`
// holds weights2 from then on, for `body2` too): a twin binds the companion of what the pack
// really holds. A twin of another shape than what it twins is refused before anything runs.
TEST(Tape, ATwinFollowsWhatANestedPackHoldsAndHasItsShape) {
  std::ifstream in(doc_path("argpack_ndarray_adjoint.loom.json"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto replace = [&](const std::string& from, const std::string& to) {
    size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace(R"({"name": "coef", "type": "f32", "shape": [16], "needs_grad": true})",
          R"({"name": "coef", "type": "f32", "shape": [16], "needs_grad": true},
             {"name": "weights2", "type": "f32", "shape": [16], "needs_grad": true})");
  replace(R"("inner": "inner", "k": 0.7}})",
          R"("inner": "inner", "inner.w": "weights2", "k": 0.7}},
             {"name": "body2", "type": "Body", "values": {"pos": "pos", "lens.c": "coef",
                                                          "inner": "inner"}})");
  Program p(no_cache());
  p.load(graph::load_document(text, "nested.loom.json"));
  p.run_pipeline("init");  // through body: pos, weights2 (inner.w), coef
  std::vector<float> one = {1.0f};
  p.write_array("loss.grad", one.data(), sizeof(float));
  p.launch("energy.grad", {{"b", "body2"}});
  ArrayView w = p.array("weights.grad"), w2 = p.array("weights2.grad"), pos = p.array("pos");
  for (int64_t i = 0; i < 16; ++i) {
    float x = element<float>(pos, 2 * i), y = element<float>(pos, 2 * i + 1);
    EXPECT_EQ(element<float>(w, i), 0.0f) << i;
    EXPECT_NEAR(element<float>(w2, i), x * x + y * y, 1e-6f) << i;
  }
  p.create_ndarray("small", ValueType{Scalar::F32, 2, 1}, {2});
  std::string e = error_of([&] {
    p.launch("energy.grad", {{"b", "body"}, {"b.pos.grad", "small"}});
  });
  EXPECT_NE(e.find("the ndarray given for 'b.pos.grad' has the shape [2], the one given for "
                   "'b.pos' [16]"),
            std::string::npos)
      << e;
}
