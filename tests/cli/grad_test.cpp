// `loom grad` as a user runs it: the gradient of the sample cannon's loss over a whole run,
// checked against central differences of the losses `loom grad` itself prints; the tape's
// report; errors naming what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "runtime/common/npy.h"
#include "tests/support/run_loom.h"
#include "tests/support/scratch_dir.h"

namespace {

using loom::test::CliRun;
using loom::test::run_loom;

std::string cannon() { return std::string(LOOM_SOURCE_DIR) + "/assets/graphs/cannon.loom.json"; }

// The number after `label` in the output.
double number_after(const std::string& out, const std::string& label) {
  size_t at = out.find(label);
  if (at == std::string::npos) throw std::runtime_error("no '" + label + "' in:\n" + out);
  return std::stod(out.substr(at + label.size()));
}

CliRun grad(const std::string& options) {
  return run_loom("grad " + cannon() + " --loss loss --no-cache --steps 20 " + options);
}

}  // namespace

TEST(CliGrad, PrintsTheGradientsOfTheLossOverTheWholeRun) {
  std::string out = loom::test::scratch_path("v_grad.npy");
  CliRun r = grad("--wrt speed --wrt angle --wrt v --dump v.grad=" + out);
  ASSERT_EQ(r.code, 0) << r.out;
  double d_speed = number_after(r.out, "d loss / d speed = ");
  double d_angle = number_after(r.out, "d loss / d angle = ");
  EXPECT_NE(r.out.find("d loss / d v: norm "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tape: 103 launches"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 launches recomputed"), std::string::npos) << r.out;
  EXPECT_EQ(loom::read_npy(out).shape, (std::vector<int64_t>{64, 2}));
  // Central differences of the loss `loom grad` prints, moving the pipeline argument.
  auto loss = [&](double speed, double angle) {
    CliRun at = grad("--wrt speed --arg speed=" + std::to_string(speed) +
                     " --arg angle=" + std::to_string(angle));
    EXPECT_EQ(at.code, 0) << at.out;
    return number_after(at.out, "loss loss = ");
  };
  const double h = 2e-3;
  double fd_speed = (loss(1.2 + h, 0.9) - loss(1.2 - h, 0.9)) / (2 * h);
  double fd_angle = (loss(1.2, 0.9 + h) - loss(1.2, 0.9 - h)) / (2 * h);
  EXPECT_NEAR(d_speed, fd_speed, 2e-2 * std::abs(fd_speed) + 1e-4);
  EXPECT_NEAR(d_angle, fd_angle, 2e-2 * std::abs(fd_angle) + 1e-4);
}

TEST(CliGrad, AMemoryBudgetGivesTheSameGradientsAndSaysWhatItRecomputed) {
  CliRun all = grad("--wrt angle");
  CliRun budget = grad("--wrt angle --memory-budget 5K");
  ASSERT_EQ(all.code, 0) << all.out;
  ASSERT_EQ(budget.code, 0) << budget.out;
  double a = number_after(all.out, "d loss / d angle = ");
  double b = number_after(budget.out, "d loss / d angle = ");
  EXPECT_NEAR(a, b, 1e-5 * std::abs(a));
  EXPECT_GT(number_after(budget.out, "copies held ("), 0) << budget.out;
  EXPECT_EQ(budget.out.find(" 0 launches recomputed"), std::string::npos) << budget.out;
}

TEST(CliGrad, MistakesAreNamed) {
  struct Case {
    std::string options, message;
  };
  for (const Case& c : std::vector<Case>{
           {"--wrt speed --memory-budget 100",
            "a memory budget of 100 bytes cannot hold one copy of the state"},
           {"--wrt speed --memory-budget lots", "--memory-budget expects a number of bytes"},
           {"--wrt spead", "--wrt spead: neither a resource nor a float value parameter"},
           {"--wrt speed --arg sped=2", "--arg sped: no launch of the pipelines takes it"},
           {"", "needs at least one --wrt NAME"},
       }) {
    CliRun r = grad(c.options);
    EXPECT_NE(r.code, 0) << c.options;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.options << "\n" << r.out;
  }
  CliRun no_grad = run_loom("grad " + std::string(LOOM_SOURCE_DIR) +
                            "/tests/e2e/docs/autodiff_descent.loom.json --loss loss --wrt ts");
  EXPECT_NE(no_grad.code, 0);
  EXPECT_NE(no_grad.out.find("--wrt ts: 'ts' has no gradient: declare it \"needs_grad\""),
            std::string::npos)
      << no_grad.out;
}

// `loom launch DOC K.grad` runs an adjoint with K's arguments; --ad-stack sizes the stack of a
// serial loop's reverse sweep, and an overflow names the kernel, the loop's node and the option.
TEST(CliGrad, LaunchRunsAnAdjointAndAdStackSizesItsStack) {
  std::string doc = std::string(LOOM_SOURCE_DIR) + "/tests/e2e/docs/autodiff_loops.loom.json";
  std::string launch = "launch " + doc + " orbit.grad --arg x=xs --arg y=ys --no-cache";
  CliRun small = run_loom(launch + " --ad-stack 4");
  EXPECT_NE(small.code, 0);
  EXPECT_NE(small.out.find("kernel 'orbit.grad': node 4"), std::string::npos) << small.out;
  EXPECT_NE(small.out.find("the autodiff stack of 4 entries overflowed"), std::string::npos)
      << small.out;
  EXPECT_NE(small.out.find("loom --ad-stack N"), std::string::npos) << small.out;
  CliRun enough = run_loom(launch + " --ad-stack 100");
  EXPECT_EQ(enough.code, 0) << enough.out;
  EXPECT_NE(enough.out.find("orbit.grad returns nothing"), std::string::npos) << enough.out;
  CliRun zero = run_loom(launch + " --ad-stack 0");
  EXPECT_NE(zero.code, 0);
  EXPECT_NE(zero.out.find("--ad-stack takes a positive number"), std::string::npos) << zero.out;
}

// --wrt an argpack prints each float member's gradient, named by the argpack; --wrt one
// member prints that one; a member that does not exist lists those that do.
TEST(CliGrad, ArgpackMembersByPackOrByMember) {
  std::string doc = std::string(LOOM_SOURCE_DIR) + "/tests/e2e/docs/argpack_gradient.loom.json";
  std::string run = "grad " + doc + " --loss loss --no-cache --steps 3 ";
  CliRun pack = run_loom(run + "--wrt world");
  ASSERT_EQ(pack.code, 0) << pack.out;
  for (const char* name : {"world.gravity", "world.wind[0]", "world.wind[1]", "world.shape.k",
                           "world.shape.m[3]", "world.inner.drag"})
    EXPECT_NE(pack.out.find(std::string("d loss / d ") + name + " = "), std::string::npos)
        << name << "\n"
        << pack.out;
  EXPECT_EQ(pack.out.find("world.steps"), std::string::npos) << pack.out;  // an integer
  CliRun member = run_loom(run + "--wrt world.shape.k");
  ASSERT_EQ(member.code, 0) << member.out;
  EXPECT_DOUBLE_EQ(number_after(member.out, "d loss / d world.shape.k = "),
                   number_after(pack.out, "d loss / d world.shape.k = "));
  EXPECT_EQ(member.out.find("world.gravity"), std::string::npos) << member.out;
  CliRun shape = run_loom(run + "--wrt world.shape");  // a struct: each float member in it
  ASSERT_EQ(shape.code, 0) << shape.out;
  EXPECT_NE(shape.out.find("d loss / d world.shape.k = "), std::string::npos) << shape.out;
  EXPECT_NE(shape.out.find("d loss / d world.shape.m[2] = "), std::string::npos) << shape.out;
  EXPECT_EQ(shape.out.find("world.gravity"), std::string::npos) << shape.out;
  CliRun wrong = run_loom(run + "--wrt world.shape.q");
  EXPECT_NE(wrong.code, 0);
  EXPECT_NE(wrong.out.find("--wrt world.shape.q: neither a resource nor a float value parameter "
                           "or argpack member"),
            std::string::npos)
      << wrong.out;
  EXPECT_NE(wrong.out.find("world.shape.k"), std::string::npos) << wrong.out;
}
