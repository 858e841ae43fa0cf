// Gradients through loom::Program (passes/autodiff.h): launching "K.grad" runs the adjoint of
// kernel K on the resources' NAME.grad companions (declared `needs_grad` in the document).
// The suite runs on the CPU and on Vulkan (e2e_test.vulkan).
#include <cmath>

#include "tests/e2e/e2e_util.h"

using namespace loom;
using namespace loom::test;

namespace {

// autodiff: model(a, x, w, y): y[i] = a * sin(x[i]) * x[i] + w[i]; loss += y[i]^2.
std::string document() { return doc_path("autodiff.loom.json"); }

constexpr int64_t kN = 64;

float x_at(int64_t i) { return -1.6f + 0.05f * static_cast<float>(i); }

void set(Program& p, const std::string& name, const std::vector<float>& v) {
  ArrayView view = p.array(name);
  std::memcpy(view.data, v.data(), v.size() * sizeof(float));
}

}  // namespace

TEST(Autodiff, AKernelsAdjointGivesTheGradientsOfItsResourcesAndValueParameters) {
  Program p(no_cache());
  p.load_file(document());
  std::vector<float> x(kN), w(kN);
  for (int64_t i = 0; i < kN; ++i) {
    x[static_cast<size_t>(i)] = x_at(i);
    w[static_cast<size_t>(i)] = 0.01f * static_cast<float>(i);
  }
  set(p, "xs", x);
  set(p, "ws", w);
  const float a = 1.3f;
  const Args args = {{"a", a}, {"x", "xs"}, {"w", "ws"}, {"y", "ys"}};
  p.launch("model", args);
  set(p, "loss.grad", {1.0f});  // d loss / d loss
  KernelResult r = p.launch("model.grad", args);

  double da = 0;
  ArrayView xg = p.array("xs.grad");
  ArrayView yg = p.array("ys.grad");
  for (int64_t i = 0; i < kN; ++i) {
    double xi = x[static_cast<size_t>(i)], y = a * std::sin(xi) * xi + w[static_cast<size_t>(i)];
    double dx = 2 * y * a * (std::cos(xi) * xi + std::sin(xi));
    da += 2 * y * std::sin(xi) * xi;
    EXPECT_NEAR(element<float>(xg, i), dx, 1e-4 * std::max(1.0, std::abs(dx))) << i;
    EXPECT_EQ(element<float>(yg, i), 0.0f);  // y.grad is read, not written
  }
  ASSERT_EQ(r.names, std::vector<std::string>{"a"});
  EXPECT_NEAR(r.value("a"), da, 1e-4 * std::abs(da));
  // ws has no adjoint: the kernel reads it, and nothing was made for it.
  EXPECT_NE(error_of([&] { p.array("ws.grad"); }), "");
}

// The gradient against central differences of the loss the primal kernel computes.
TEST(Autodiff, GradientsMatchCentralDifferencesOfTheLoss) {
  Program p(no_cache());
  p.load_file(document());
  std::vector<float> x(kN), w(kN, 0.0f);
  for (int64_t i = 0; i < kN; ++i) x[static_cast<size_t>(i)] = x_at(i);
  set(p, "ws", w);
  const Args args = {{"a", 0.7f}, {"x", "xs"}, {"w", "ws"}, {"y", "ys"}};
  auto loss_at = [&](const std::vector<float>& at) {
    set(p, "xs", at);
    set(p, "loss", {0.0f});
    p.launch("model", args);
    return static_cast<double>(element<float>(p.array("loss"), 0));
  };
  loss_at(x);
  set(p, "loss.grad", {1.0f});
  p.launch("model.grad", args);
  for (int64_t i : {0, 9, 31, 50, 63}) {
    const float h = 1e-2f;
    auto plus = x, minus = x;
    plus[static_cast<size_t>(i)] += h;
    minus[static_cast<size_t>(i)] -= h;
    double fd = (loss_at(plus) - loss_at(minus)) / (2.0 * h);
    double ad = element<float>(p.array("xs.grad"), i);
    EXPECT_NEAR(ad, fd, 2e-3 * std::max(1.0, std::abs(fd))) << i;
  }
}

// Forward mode: "model.dual" runs the kernel and, beside it, the tangents along the direction
// the .dual arguments give (xs.dual bound by default, the value parameter's a.dual 0 unless
// given): y.dual = dy/dx * x.dual + dy/da * a.dual, loss.dual = sum of 2 y * y.dual.
TEST(Autodiff, ATangentLaunchGivesDirectionalDerivatives) {
  Program p(no_cache());
  p.load_file(document());
  std::vector<float> x(kN), d(kN), w(kN, 0.25f);
  for (int64_t i = 0; i < kN; ++i) {
    x[static_cast<size_t>(i)] = x_at(i);
    d[static_cast<size_t>(i)] = std::cos(0.3f * static_cast<float>(i));
  }
  set(p, "xs", x);
  set(p, "ws", w);
  set(p, "xs.dual", d);
  const float a = 0.9f;
  p.launch("model.dual", {{"a", a}, {"x", "xs"}, {"w", "ws"}, {"y", "ys"}, {"a.dual", 0.5f}});
  double loss_dual = 0;
  for (int64_t i = 0; i < kN; ++i) {
    auto u = static_cast<size_t>(i);
    double xi = x[u], y = a * std::sin(xi) * xi + w[u];
    double yd = a * (std::cos(xi) * xi + std::sin(xi)) * d[u] + std::sin(xi) * xi * 0.5;
    loss_dual += 2 * y * yd;
    EXPECT_NEAR(element<float>(p.array("ys.dual"), i), yd, 1e-4 * std::max(1.0, std::abs(yd))) << i;
    EXPECT_NEAR(element<float>(p.array("ys"), i), y, 1e-5 * std::max(1.0, std::abs(y))) << i;
  }
  EXPECT_NEAR(element<float>(p.array("loss.dual"), 0), loss_dual, 1e-4 * std::abs(loss_dual));
  // A tangent argument of a parameter the kernel lacks, or of an integer one, is refused.
  EXPECT_NE(
      error_of([&] {
        p.launch("model.dual", {{"a", a}, {"x", "xs"}, {"w", "ws"}, {"y", "ys"}, {"b.dual", 1.0f}});
      }).find("has no parameter 'b.dual'"),
      std::string::npos);
}

// An adjoint launch of a kernel the document lacks, or with an argument the kernel does not
// take, fails naming it; a PARAM.grad argument binds the adjoint explicitly.
TEST(Autodiff, AdjointLaunchesNameWhatIsWrong) {
  Program p(no_cache());
  p.load_file(document());
  EXPECT_NE(error_of([&] { p.launch("nothing.grad"); }).find("no kernel 'nothing.grad'"),
            std::string::npos);
  const Args args = {{"a", 1.0f}, {"x", "xs"}, {"w", "ws"}, {"y", "ys"}, {"w.grad", "nope"}};
  EXPECT_NE(error_of([&] { p.launch("model.grad", args); }).find("'nope' is not an ndarray"),
            std::string::npos);
  EXPECT_NE(error_of([&] { p.launch("model", args); }).find("has no parameter 'w.grad'"),
            std::string::npos);
}

// A pipeline that descends a gradient: seed the loss's adjoint, zero x's, the loss, its
// adjoint ("distance.grad"), then x -= rate * x.grad. With loss = sum (x - t)^2 and rate 0.1
// each step scales x - t by 0.8 exactly as plain arithmetic does.
TEST(Autodiff, APipelineDescendsAGradient) {
  Program p(no_cache());
  p.load_file(doc_path("autodiff_descent.loom.json"));
  std::vector<float> x(kN), t(kN);
  for (int64_t i = 0; i < kN; ++i) {
    x[static_cast<size_t>(i)] = x_at(i);
    t[static_cast<size_t>(i)] = 0.5f - 0.01f * static_cast<float>(i);
  }
  set(p, "xs", x);
  set(p, "ts", t);
  std::vector<float> expected = x;
  double last_loss = 0;  // the loss the last step measured, before its descent
  for (int step = 0; step < 20; ++step) {
    p.run_pipeline("step");
    last_loss = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      last_loss += (expected[i] - t[i]) * (expected[i] - t[i]);
      expected[i] = expected[i] - 0.1f * (2.0f * (expected[i] - t[i]));
    }
  }
  for (int64_t i = 0; i < kN; ++i) {
    auto u = static_cast<size_t>(i);
    EXPECT_NEAR(element<float>(p.array("xs"), i), expected[u], 1e-5) << i;
    EXPECT_NEAR(expected[u] - t[u], (x[u] - t[u]) * std::pow(0.8, 20), 1e-5) << i;
  }
  EXPECT_NEAR(element<float>(p.array("loss"), 0), last_loss, 1e-5);
}

// Loops the adjoint reverses with its per-thread stack (autodiff_loops.loom.json): "orbit" a
// while loop with loop-carried values inside a parallel loop, breaking after it updated them;
// "horner" nested range loops inside a parallel loop with an if whose branches read the
// variable the loops overwrite; "chain" a top-level loop handing a variable from one element
// to the next. Each gradient against central differences of the loss the forward launch
// computes.
TEST(Autodiff, GradientsThroughSerialAndWhileLoopsMatchCentralDifferences) {
  for (const char* kernel : {"orbit", "horner", "chain"}) {
    SCOPED_TRACE(kernel);
    Program p(no_cache());
    p.load_file(doc_path("autodiff_loops.loom.json"));
    std::vector<float> x(kN);
    for (int64_t i = 0; i < kN; ++i)
      x[static_cast<size_t>(i)] = 0.4f + 0.015f * static_cast<float>(i);
    const Args args = {{"x", "xs"}, {"y", "ys"}};
    auto loss_at = [&](const std::vector<float>& at) {
      set(p, "xs", at);
      set(p, "loss", {0.0f});
      p.launch(kernel, args);
      return static_cast<double>(element<float>(p.array("loss"), 0));
    };
    loss_at(x);
    set(p, "loss.grad", {1.0f});
    set(p, "xs.grad", std::vector<float>(kN, 0.0f));
    set(p, "ys.grad", std::vector<float>(kN, 0.0f));
    p.launch(std::string(kernel) + ".grad", args);
    std::vector<float> grad(kN);
    for (int64_t i = 0; i < kN; ++i)
      grad[static_cast<size_t>(i)] = element<float>(p.array("xs.grad"), i);
    double norm = 0;
    for (float g : grad) norm = std::max(norm, static_cast<double>(std::abs(g)));
    EXPECT_GT(norm, 1e-3) << "no gradient at all";
    for (int64_t i : {0, 7, 31, 50, 63}) {
      const float h = 1e-2f;
      auto plus = x, minus = x;
      plus[static_cast<size_t>(i)] += h;
      minus[static_cast<size_t>(i)] -= h;
      double fd = (loss_at(plus) - loss_at(minus)) / (2.0 * h);
      double ad = grad[static_cast<size_t>(i)];
      EXPECT_NEAR(ad, fd, 3e-3 * std::max(1.0, std::abs(fd))) << i;
    }
  }
}

// A loop running more iterations than ProgramOptions::ad_stack_size fails the adjoint launch
// with an error naming the kernel and the loop's node, without --debug; the same loop fits a
// stack of its size.
TEST(Autodiff, AnOverflowingAutodiffStackIsAnErrorNamingKernelAndNode) {
  for (int size : {4, 6}) {
    ProgramOptions options = no_cache();
    options.ad_stack_size = size;
    Program p(options);
    p.load_file(doc_path("autodiff_loops.loom.json"));
    set(p, "xs", std::vector<float>(kN, 0.5f));
    set(p, "loss.grad", {1.0f});
    const Args args = {{"x", "xs"}, {"y", "ys"}};
    p.launch("orbit", args);
    std::string error = error_of([&] { p.launch("orbit.grad", args); });
    if (size == 6) {  // six iterations: n = 0..5, the last one breaking
      EXPECT_EQ(error, "");
      continue;
    }
    EXPECT_NE(error.find("kernel 'orbit.grad'"), std::string::npos) << error;
    EXPECT_NE(error.find("node 4"), std::string::npos) << error;
    EXPECT_NE(error.find("autodiff stack of 4 entries overflowed"), std::string::npos) << error;
    EXPECT_NE(error.find("ad_stack_size"), std::string::npos) << error;
  }
}
