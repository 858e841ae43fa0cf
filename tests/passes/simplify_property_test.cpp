// Property test: full_simplify must not change what straight-line code computes. Values are
// compared by folding: the original and the simplified kernel both get their arguments
// replaced by the same constants and are folded; every result both fold must agree bitwise.
#include <cstdlib>
#include <random>

#include "compiler/passes/constant_fold.h"
#include "compiler/passes/full_simplify.h"
#include "tests/passes/pass_test_util.h"

using namespace loom;
using namespace loom::ir;
using namespace loom::passes;
using namespace loom::passes::testing;

namespace {

constexpr Scalar kTypes[] = {Scalar::I32, Scalar::U32, Scalar::I8,
                             Scalar::U64, Scalar::F32, Scalar::F64};
constexpr Op kBinary[] = {Op::Add,    Op::Sub,   Op::Mul,    Op::Div, Op::Mod, Op::Min, Op::Max,
                          Op::BitAnd, Op::BitOr, Op::BitXor, Op::Shl, Op::Shr, Op::Eq,  Op::Ne,
                          Op::Lt,     Op::Le,    Op::Gt,     Op::Ge,  Op::Pow};
constexpr Op kUnary[] = {Op::Neg, Op::BitNot, Op::Abs, Op::Sign, Op::Floor, Op::Sqrt, Op::Cast};
constexpr int64_t kSpecial[] = {0, 1, -1, 2, 3, 8, 64, -128, 2147483647, -2147483647 - 1};

// Integer bits sign- or zero-extended from the type's width, as constants hold them.
uint64_t normalized(Scalar t, uint64_t v) {
  int w = bit_width(t);
  if (w >= 64) return v;
  uint64_t mask = (uint64_t{1} << w) - 1;
  v &= mask;
  if (is_signed_int(t) && ((v >> (w - 1)) & 1)) v |= ~mask;
  return v;
}

class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}

  uint32_t pick(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }

  std::unique_ptr<Kernel> kernel() {
    auto k = new_kernel("random");
    k->fast_math = false;  // strict IEEE: every float rewrite must be exact
    for (Scalar t : kTypes) add_value_param(*k, std::string(scalar_name(t)), t);
    Builder b(k->body.get());
    std::vector<Inst*> values;
    for (size_t p = 0; p < std::size(kTypes); ++p)
      values.push_back(b.arg(kTypes[p], static_cast<int>(p)));
    std::vector<Inst*> results;
    for (int n = 0; n < 40; ++n) {
      Inst* a = values[pick(static_cast<uint32_t>(values.size()))];
      Scalar t = a->type == Scalar::Bool ? Scalar::I32 : a->type;
      if (a->type == Scalar::Bool) a = b.cast(t, a);
      Inst* v = nullptr;
      uint32_t kind = pick(10);
      if (kind < 6) {
        Inst* c = operand_like(b, values, t);
        Op op = kBinary[pick(std::size(kBinary))];
        bool bits = op == Op::BitAnd || op == Op::BitOr || op == Op::BitXor || op == Op::Shl ||
                    op == Op::Shr;
        if (bits && is_float(t)) op = Op::Add;
        v = pick(2) ? b.binary(op, a, c) : b.binary(op, c, a);
      } else if (kind < 8) {
        Op op = kUnary[pick(std::size(kUnary))];
        if (op == Op::Cast) {
          v = b.cast(kTypes[pick(std::size(kTypes))], a);
        } else {
          if ((op == Op::Floor || op == Op::Sqrt) && !is_float(t)) op = Op::Neg;
          if (op == Op::BitNot && is_float(t)) op = Op::Abs;
          v = b.unary(op, a);
        }
      } else {
        Inst* c = operand_like(b, values, t);
        Inst* cond = b.binary(Op::Lt, a, c);
        v = pick(2) ? b.select(cond, a, c) : b.select(b.unary(Op::LogicNot, cond), c, c);
      }
      values.push_back(v);
      results.push_back(v);
    }
    auto r = std::make_unique<Inst>(Op::Return, Scalar::Void);
    for (Inst* v : results) {
      r->operands.push_back(v);
      k->abi.returns.push_back({v->type});
    }
    b.insert(std::move(r));
    return k;
  }

  // Another value of type `t`: an existing one or a constant, often a special one.
  Inst* operand_like(Builder& b, const std::vector<Inst*>& values, Scalar t) {
    if (pick(3) == 0) {
      for (int tries = 0; tries < 8; ++tries) {
        Inst* v = values[pick(static_cast<uint32_t>(values.size()))];
        if (v->type == t) return v;
      }
    }
    int64_t c =
        pick(2) ? kSpecial[pick(std::size(kSpecial))] : static_cast<int64_t>(pick(1000)) - 500;
    if (is_float(t)) return b.const_float(t, static_cast<double>(c) / (pick(2) ? 1.0 : 4.0));
    Inst* k = b.const_int(t, c);
    k->bits = normalized(t, k->bits);
    return k;
  }

  std::vector<uint64_t> args() {
    std::vector<uint64_t> out;
    for (Scalar t : kTypes) {
      int64_t v =
          pick(2) ? kSpecial[pick(std::size(kSpecial))] : static_cast<int64_t>(pick(2000)) - 1000;
      out.push_back(is_float(t)
                        ? float_bits(t == Scalar::F32 ? static_cast<float>(v) / 8.0f : v / 8.0)
                        : normalized(t, static_cast<uint64_t>(v)));
    }
    return out;
  }

 private:
  std::mt19937 rng_;
};

// The returned values with arguments bound to `args`, folded; nullopt where not constant.
std::vector<std::optional<uint64_t>> evaluate(const Kernel& kernel,
                                              const std::vector<uint64_t>& args) {
  auto k = kernel.clone();
  walk(*k->body, [&](Inst& inst) {
    if (inst.op != Op::ArgLoad) return;
    uint64_t bits = args[static_cast<size_t>(inst.param_index())];
    inst.morph(Op::Const);
    inst.bits = bits;
  });
  while (constant_fold(*k)) {
  }
  std::vector<std::optional<uint64_t>> out;
  const Inst& ret = *k->body->insts.back();
  for (const Inst* v : ret.operands) {
    if (!v->is_const()) {
      out.emplace_back();
      continue;
    }
    bool nan = is_float(v->type) && v->float_value() != v->float_value();
    out.push_back(nan ? std::optional<uint64_t>(~uint64_t{0}) : v->bits);  // any NaN equals any NaN
  }
  return out;
}

}  // namespace

TEST(SimplifyProperty, FullSimplifyPreservesFoldedValues) {
  int compared = 0;
  uint32_t seeds = std::getenv("LOOM_PROPERTY_SEEDS")
                       ? static_cast<uint32_t>(std::atoi(std::getenv("LOOM_PROPERTY_SEEDS")))
                       : 300;
  for (uint32_t seed = 1; seed <= seeds; ++seed) {
    Generator gen(seed);
    auto original = gen.kernel();
    ASSERT_EQ(verify(*original), "") << "seed " << seed;
    auto simplified = original->clone();
    full_simplify(*simplified);
    ASSERT_EQ(verify(*simplified), "") << "seed " << seed;
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<uint64_t> args = gen.args();
      auto want = evaluate(*original, args);
      auto got = evaluate(*simplified, args);
      ASSERT_EQ(want.size(), got.size());
      for (size_t i = 0; i < want.size(); ++i) {
        if (!want[i] || !got[i]) continue;
        ++compared;
        EXPECT_EQ(*want[i], *got[i])
            << "seed " << seed << " trial " << trial << " result " << i << "\n"
            << print_kernel(*original) << "\nsimplified:\n"
            << print_kernel(*simplified);
        if (*want[i] != *got[i]) return;
      }
    }
  }
  EXPECT_GT(compared, 10000);
}
