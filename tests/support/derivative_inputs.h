// Inputs at which an op's derivative rule is checked against central differences: where the
// op is smooth, away from its kinks and poles (tests/passes/autodiff_test.cpp, in the
// reference interpreter; tests/e2e/derivative_rules_test.cpp, on each backend).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "compiler/ir/op.h"

namespace loom::test {

// `count` operands of `n` values each, drawn from `seed`.
inline std::vector<std::vector<double>> derivative_inputs(ir::Op op, int count, int64_t n,
                                                          uint32_t seed) {
  using ir::Op;
  std::mt19937 rng(seed);
  auto draw = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  auto away_from_zero = [&](double lo, double hi) {
    double v = draw(lo, hi);
    return rng() % 2 ? v : -v;
  };
  std::vector<std::vector<double>> x(static_cast<size_t>(count),
                                     std::vector<double>(static_cast<size_t>(n)));
  for (int j = 0; j < count; ++j)
    for (double& v : x[static_cast<size_t>(j)]) {
      switch (op) {
        case Op::Sqrt:
        case Op::Rsqrt:
        case Op::Log:
        case Op::Pow: v = draw(0.5, 2.0); break;
        case Op::Asin:
        case Op::Acos: v = draw(-0.9, 0.9); break;
        case Op::Tan: v = draw(-1.2, 1.2); break;
        case Op::Abs:
        case Op::Div:
        case Op::Atan2: v = away_from_zero(0.3, 2.0); break;
        case Op::Mod:
          v = j == 0 ? draw(0.1, 0.9) + static_cast<double>(rng() % 3) : draw(1.0, 1.3);
          break;
        default: v = draw(-2.0, 2.0);
      }
    }
  if (op == Op::Min || op == Op::Max)  // never equal: one side clearly wins
    for (int64_t i = 0; i < n; ++i)
      x[1][static_cast<size_t>(i)] = x[0][static_cast<size_t>(i)] + (i % 2 ? 0.5 : -0.5);
  return x;
}

}  // namespace loom::test
