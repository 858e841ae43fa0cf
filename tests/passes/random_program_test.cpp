// Property test over random structured programs (variables, ifs, loops and whiles with breaks,
// global memory, atomics): the whole pipeline must keep what the reference interpreter
// computes, in release and debug builds of the kernel.
#include <cstdio>
#include <cstdlib>
#include <random>

#include "compiler/passes/pipeline.h"
#include "compiler/passes/type_check.h"
#include "tests/passes/interpreter.h"
#include "tests/passes/pass_test_util.h"

using namespace loom;
using namespace loom::ir;
using namespace loom::passes;
using namespace loom::passes::testing;

namespace {

constexpr int kSize = 16;  // elements of every field

class ProgramGenerator {
 public:
  explicit ProgramGenerator(uint32_t seed) : rng_(seed) {}

  std::unique_ptr<Kernel> kernel() {
    auto k = new_kernel("random_program");
    k->fast_math = false;
    add_value_param(*k, "a", Scalar::I32);
    add_value_param(*k, "f", Scalar::F32);
    add_field(*k, "ints", Scalar::I32, {kSize});
    add_field(*k, "floats", Scalar::F32, {kSize});
    add_field(*k, "total", Scalar::I32, {});
    Builder b(k->body.get());
    b_ = &b;
    Scope top;
    top.ints = {b.arg(Scalar::I32, 0)};
    top.floats = {b.arg(Scalar::F32, 1)};
    block(top, 0, 6);
    return k;
  }

 private:
  struct Scope {
    std::vector<Inst*> ints, floats, int_vars, float_vars;
  };

  uint32_t pick(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }

  Inst* int_expr(Scope& s, int depth) {
    Builder& b = *b_;
    uint32_t k = depth > 2 ? pick(3) : pick(9);
    switch (k) {
      case 0: return b.i32(static_cast<int64_t>(pick(40)) - 20);
      case 1: return s.ints[pick(static_cast<uint32_t>(s.ints.size()))];
      case 2:
        if (!s.int_vars.empty())
          return b.local_load(s.int_vars[pick(static_cast<uint32_t>(s.int_vars.size()))]);
        return b.i32(3);
      case 3: return b.global_load(b.global_ptr(Scalar::I32, 0, {index(s, depth)}));
      case 4: {
        constexpr Op ops[] = {Op::Add,    Op::Sub,   Op::Mul,    Op::Min, Op::Max,
                              Op::BitAnd, Op::BitOr, Op::BitXor, Op::Shl, Op::Shr};
        Inst* x = int_expr(s, depth + 1);
        Inst* y = int_expr(s, depth + 1);
        return b.binary(ops[pick(std::size(ops))], x, y);
      }
      case 5: {
        constexpr int64_t divisors[] = {1, 2, 3, 4, 7, -3, 8};
        Inst* x = int_expr(s, depth + 1);
        Inst* d = b.i32(divisors[pick(std::size(divisors))]);
        return b.binary(pick(2) ? Op::Div : Op::Mod, x, d);
      }
      case 6: {
        Inst* c = cond(s, depth + 1);
        Inst* x = int_expr(s, depth + 1);
        Inst* y = int_expr(s, depth + 1);
        return b.select(c, x, y);
      }
      case 7: return b.cast(Scalar::I32, cond(s, depth + 1));
      default: {
        Inst* x = int_expr(s, depth + 1);
        return b.unary(pick(2) ? Op::Neg : Op::Abs, x);
      }
    }
  }

  Inst* float_expr(Scope& s, int depth) {
    Builder& b = *b_;
    uint32_t k = depth > 2 ? pick(3) : pick(7);
    switch (k) {
      case 0: return b.f32(static_cast<double>(static_cast<int>(pick(40)) - 20) * 0.25);
      case 1: return s.floats[pick(static_cast<uint32_t>(s.floats.size()))];
      case 2:
        if (!s.float_vars.empty())
          return b.local_load(s.float_vars[pick(static_cast<uint32_t>(s.float_vars.size()))]);
        return b.f32(1.5);
      case 3: return b.global_load(b.global_ptr(Scalar::F32, 1, {index(s, depth)}));
      case 4: {
        constexpr Op ops[] = {Op::Add, Op::Sub, Op::Mul, Op::Div};
        Inst* x = float_expr(s, depth + 1);
        Inst* y = float_expr(s, depth + 1);
        return b.binary(ops[pick(std::size(ops))], x, y);
      }
      case 5: return b.cast(Scalar::F32, int_expr(s, depth + 1));
      default: {
        Inst* x = float_expr(s, depth + 1);
        return b.unary(pick(2) ? Op::Neg : Op::Floor, x);
      }
    }
  }

  Inst* cond(Scope& s, int depth) {
    constexpr Op ops[] = {Op::Lt, Op::Le, Op::Eq, Op::Ne, Op::Gt, Op::Ge};
    Op op = ops[pick(std::size(ops))];
    if (pick(3) == 0) {
      Inst* x = float_expr(s, depth + 1);
      Inst* y = float_expr(s, depth + 1);
      return b_->binary(op, x, y);
    }
    Inst* x = int_expr(s, depth + 1);
    Inst* y = int_expr(s, depth + 1);
    return b_->binary(op, x, y);
  }

  // An index always inside the fields: expr & 15.
  Inst* index(Scope& s, int depth) {
    Inst* x = int_expr(s, depth + 2);
    return b_->binary(Op::BitAnd, x, b_->i32(kSize - 1));
  }

  void block(Scope& outer, int depth, int count) {
    Scope s = outer;
    Builder& b = *b_;
    for (int n = 0; n < count; ++n) {
      uint32_t k = depth >= 2 ? pick(5) : pick(9);
      switch (k) {
        case 0: {
          bool is_float = pick(3) == 0;
          Inst* v = b.alloca_(is_float ? Scalar::F32 : Scalar::I32);
          if (pick(2)) b.local_store(v, is_float ? float_expr(s, 0) : int_expr(s, 0));
          (is_float ? s.float_vars : s.int_vars).push_back(v);
          break;
        }
        case 1:
          if (!s.int_vars.empty())
            b.local_store(s.int_vars[pick(static_cast<uint32_t>(s.int_vars.size()))],
                          int_expr(s, 0));
          if (!s.float_vars.empty() && pick(2))
            b.local_store(s.float_vars[pick(static_cast<uint32_t>(s.float_vars.size()))],
                          float_expr(s, 0));
          break;
        case 2: {
          Inst* v = int_expr(s, 0);
          b.global_store(b.global_ptr(Scalar::I32, 0, {index(s, 0)}), v);
          break;
        }
        case 3: {
          Inst* v = float_expr(s, 0);
          b.global_store(b.global_ptr(Scalar::F32, 1, {index(s, 0)}), v);
          break;
        }
        case 4: {
          Inst* v = int_expr(s, 0);
          if (!s.int_vars.empty() && pick(2)) {
            b.atomic(AtomicOp::Add, s.int_vars[pick(static_cast<uint32_t>(s.int_vars.size()))], v);
          } else {
            b.atomic(pick(2) ? AtomicOp::Add : AtomicOp::Max, b.global_ptr(Scalar::I32, 2, {}), v);
          }
          break;
        }
        case 5:
        case 6: {
          Inst* c = cond(s, 0);
          Inst* branch = b.if_(c);
          Block* after = b.block();
          b.set_insert_end(branch->region(0));
          block(s, depth + 1, 1 + static_cast<int>(pick(3)));
          b.set_insert_end(branch->region(1));
          if (pick(2)) block(s, depth + 1, 1 + static_cast<int>(pick(2)));
          b.set_insert_end(after);
          break;
        }
        case 7: {
          Inst* begin = b.i32(static_cast<int64_t>(pick(3)));
          Inst* end = pick(3) == 0 ? b.binary(Op::BitAnd, s.ints[0], b.i32(7))
                                   : b.i32(2 + static_cast<int64_t>(pick(6)));
          Inst* loop = b.range_for({begin, end});
          Block* after = b.block();
          b.set_insert_end(loop->region(0));
          Scope inner = s;
          inner.ints.push_back(b.loop_index(loop, 0));
          block(inner, depth + 1, 1 + static_cast<int>(pick(4)));
          if (pick(3) == 0) {  // an early break: leaves this loop only, which then runs serially
            Inst* stop = b.if_(cond(inner, 1));
            b.set_insert_end(stop->region(0));
            b.make(Op::Break, Scalar::Void);
            b.set_insert_end(loop->region(0));
            block(inner, depth + 1, 1);
          }
          b.set_insert_end(after);
          break;
        }
        default: {  // counter = 0; while { if counter >= limit break; counter += 1; ... }
          Inst* counter = b.alloca_(Scalar::I32);
          Inst* limit = b.i32(1 + static_cast<int64_t>(pick(4)));
          Inst* w = b.while_();
          Block* after = b.block();
          b.set_insert_end(w->region(0));
          Inst* c = b.local_load(counter);
          Inst* stop = b.if_(b.binary(Op::Ge, c, limit));
          b.set_insert_end(stop->region(0));
          b.make(Op::Break, Scalar::Void);
          b.set_insert_end(w->region(0));
          b.local_store(counter, b.binary(Op::Add, c, b.i32(1)));
          Scope inner = s;
          inner.ints.push_back(c);
          block(inner, depth + 1, 1 + static_cast<int>(pick(3)));
          if (pick(3) == 0) {  // an early continue
            Inst* skip = b.if_(cond(inner, 1));
            b.set_insert_end(skip->region(0));
            b.make(Op::Continue, Scalar::Void);
            b.set_insert_end(w->region(0));
            block(inner, depth + 1, 1);
          }
          b.set_insert_end(after);
          break;
        }
      }
    }
  }

  std::mt19937 rng_;
  Builder* b_ = nullptr;
};

}  // namespace

TEST(RandomPrograms, PipelineKeepsInterpretedResults) {
  uint32_t seeds = std::getenv("LOOM_PROPERTY_SEEDS")
                       ? static_cast<uint32_t>(std::atoi(std::getenv("LOOM_PROPERTY_SEEDS")))
                       : 150;
  for (uint32_t seed = 1; seed <= seeds; ++seed) {
    for (bool debug : {false, true}) {
      ProgramGenerator gen(seed);
      auto k = gen.kernel();
      k->private_copies = seed % 2 ? 8 : 0;  // privatize_scatter's rules and the verifier's
      ASSERT_EQ(verify(*k), "") << "seed " << seed;
      auto before = k->clone();
      type_check(*before);
      Memory m0 = make_memory(*before, {}, [&](int slot, int64_t i) {
        int64_t v = (i * 7 + slot * 5 + seed) % 11 - 5;
        return slot == 1 ? float_bits(static_cast<double>(v) * 0.5)
                         : make_const_int(Scalar::I32, v)->bits;
      });
      m0.args = {make_const_int(Scalar::I32, static_cast<int64_t>(seed % 9) - 4)->bits,
                 float_bits(1.25)};
      Memory m1 = m0;
      Interpreter(*before, m0).run();
      std::string original = print_kernel(*before);
      try {
        run_pipeline(*k, {.debug = debug});
      } catch (const std::exception& e) {
        FAIL() << "seed " << seed << ": " << e.what() << "\n" << original;
      }
      Interpreter(*k, m1).run();
      bool same = m0.slots == m1.slots && m0.errors == m1.errors;
      if (std::getenv("LOOM_SHOW_IR") && seed == 5 && !debug)  // for reading a sample
        std::printf("%s\nafter:\n%s\n", original.c_str(), print_kernel(*k).c_str());
      EXPECT_TRUE(same) << "seed " << seed << (debug ? " debug" : "") << "\n"
                        << original << "\nafter the pipeline:\n"
                        << print_kernel(*k);
      if (!same || ::testing::Test::HasFailure()) return;
    }
  }
}
