// Taichi's autodiff semantics: the gradients Taichi 1.7.4 computes for the cases of
// tests/e2e/taichi_autodiff_reference.py (which prints them), through Loom's tape on the
// same kernels (tests/e2e/docs/taichi_autodiff.loom.json), in f64. Besides ordinary points,
// the points where a rule must choose: abs at 0, min/max at a tie, floor, a select at its
// threshold. The suite runs on the CPU and on Vulkan (e2e_test.vulkan).
#include <cmath>
#include <map>

#include "engine_plugin/include/loom/tape.h"
#include "tests/e2e/e2e_util.h"

using namespace loom;
using namespace loom::test;

namespace {

const std::vector<double> kXs = {-1.5, -0.5, 0.0, 0.25, 0.5, 2.0};

// x.grad after a tape over `kernels` (launched in order) with x = kXs.
std::vector<double> gradients(Program& p, const std::vector<std::string>& kernels) {
  p.write_array("x", kXs.data(), kXs.size() * sizeof(double));
  const double zero[2] = {0, 0};
  p.write_array("y", zero, sizeof zero);
  p.write_array("loss", zero, sizeof(double));
  Tape tape(p, {.loss = "loss"});
  for (const std::string& k : kernels) tape.launch(k);
  tape.backward();
  std::vector<double> g;
  ArrayView x = p.array("x.grad");
  for (size_t i = 0; i < kXs.size(); ++i) g.push_back(element<double>(x, static_cast<int64_t>(i)));
  return g;
}

}  // namespace

TEST(TaichiAutodiff, BasicMathAtOrdinaryPointsAndWhereARuleMustChoose) {
  // Taichi 1.7.4, x = -1.5, -0.5, 0, 0.25, 0.5, 2 (loss = sum of the body over x).
  const std::map<std::string, std::vector<double>> taichi = {
      {"sin",
       {0.0707372016677029, 0.8775825618903728, 1.0, 0.9689124217106447, 0.8775825618903728,
        -0.4161468365471424}},
      {"exp",
       {0.22313016014842982, 0.6065306597126334, 1.0, 1.2840254166877414, 1.6487212707001282,
        7.38905609893065}},
      {"log", {-0.9230769230769231, -0.8, 0.0, 0.47058823529411764, 0.8, 0.8}},
      {"abs", {-1.0, -1.0, 0.0, 1.0, 1.0, 1.0}},
      {"max0", {0.0, 0.0, 0.0, 1.0, 1.0, 1.0}},
      {"min0", {1.0, 1.0, 0.0, 0.0, 0.0, 0.0}},
      {"floor", {-2.0, -1.0, 0.0, 0.0, 0.0, 2.0}},
      {"select", {-1.0, -1.0, -1.0, -1.0, 1.0, 4.0}},
      {"sqrt_abs",
       {-0.31622776601683794, -0.4082482904638631, 0.0, 0.4472135954999579, 0.4082482904638631,
        0.2886751345948129}},
      {"atan2", {0.2, 1.0, 2.0, 1.6, 1.0, 0.11764705882352941}},
  };
  Program p(no_cache());
  p.load_file(doc_path("taichi_autodiff.loom.json"));
  // Vulkan computes f64 sin, exp, log... at f32 precision (docs/vulkan.md: GLSL.std.450 has
  // no f64 versions).
  const double tolerance = p.backend() == Backend::Vulkan ? 1e-6 : 1e-12;
  for (const auto& [kernel, expected] : taichi) {
    std::vector<double> g = gradients(p, {kernel});
    for (size_t i = 0; i < expected.size(); ++i)
      EXPECT_NEAR(g[i], expected[i], tolerance * std::max(1.0, std::abs(expected[i])))
          << kernel << " at x = " << kXs[i];
  }
}

TEST(TaichiAutodiff, AScatterThenAGather) {
  // y[i % 2] += x[i]^2 (atomic), then loss = 3 y[0] + 5 y[1]: Taichi 1.7.4's x.grad.
  const std::vector<double> taichi = {-9.0, -5.0, 0.0, 2.5, 3.0, 20.0};
  Program p(no_cache());
  p.load_file(doc_path("taichi_autodiff.loom.json"));
  std::vector<double> g = gradients(p, {"scatter", "weigh"});
  for (size_t i = 0; i < taichi.size(); ++i) EXPECT_NEAR(g[i], taichi[i], 1e-12) << i;
}

TEST(TaichiAutodiff, ALoopCarriedValue) {
  // v = x[i]; four times v = 0.9 v + sin(v); loss += v: Taichi 1.7.4's x.grad (its autodiff
  // stack; Loom's per-thread stack, autodiff.h).
  const std::vector<double> taichi = {0.000575681438506832, 0.25756988813377657,
                                      13.032099999999998,   4.668794216503507,
                                      0.25756988813377657,  -1.3538268713712641e-05};
  Program p(no_cache());
  p.load_file(doc_path("taichi_autodiff.loom.json"));
  const double tolerance = p.backend() == Backend::Vulkan ? 1e-6 : 1e-12;
  std::vector<double> g = gradients(p, {"loop"});
  for (size_t i = 0; i < taichi.size(); ++i)
    EXPECT_NEAR(g[i], taichi[i], tolerance * std::max(1.0, std::abs(taichi[i]))) << i;
}
