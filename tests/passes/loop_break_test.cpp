// `break` and `continue` in serial range loops (issue 14): a break leaves the innermost loop
// (a while, a nested range_for or struct_for, all dimensions of a multi-dimensional one),
// never a parallel task. The passes must keep what such kernels compute (the reference
// interpreter before and after the pipeline) and offloading must keep a loop that breaks
// serial, even one that simplification brought to the top level.
#include <string>

#include "compiler/passes/offload.h"
#include "compiler/passes/pipeline.h"
#include "compiler/passes/type_check.h"
#include "tests/passes/interpreter.h"
#include "tests/passes/pass_test_util.h"

using namespace loom;
using namespace loom::ir;
using namespace loom::passes;
using namespace loom::passes::testing;

namespace {

// Small integers, different per slot and element.
uint64_t fill_value(int slot, int64_t i) {
  return make_const_int(Scalar::I32, (i * 37 + slot * 11) % 23 - 7)->bits;
}

// Runs `k` in the interpreter before (type-checked only) and after the whole pipeline and
// expects the same memory and returns; gives the memory after, for checks of its own.
Memory expect_same_results(std::unique_ptr<Kernel> k, const std::vector<uint64_t>& args) {
  auto before = k->clone();
  type_check(*before);
  Memory m0 = make_memory(*before, {}, fill_value);
  for (size_t i = 0; i < args.size(); ++i) m0.args[i] = args[i];
  Memory m1 = m0;
  Interpreter(*before, m0).run();
  run_pipeline(*k, {});
  Interpreter(*k, m1).run();
  std::string ir = print_kernel(*k);
  EXPECT_EQ(m0.slots, m1.slots) << ir;
  EXPECT_EQ(m0.returns, m1.returns) << ir;
  EXPECT_EQ(m1.errors, 0) << ir;
  return m1;
}

Inst* at(Builder& b, int slot, std::initializer_list<Inst*> idx) {
  return b.global_ptr(Scalar::I32, slot, idx);
}

int32_t value_at(const Memory& m, int slot, size_t i) {
  return static_cast<int32_t>(m.slots[static_cast<size_t>(slot)][i]);
}

// `if c { break }` at the builder's insertion point; the builder stays after it.
void break_if(Builder& b, Inst* c) {
  Block* after = b.block();
  Inst* branch = b.if_(c);
  b.set_insert_end(branch->region(0));
  b.make(Op::Break, Scalar::Void);
  b.set_insert_end(after);
}

}  // namespace

TEST(LoopBreakPasses, VerifierKnowsWhichLoopABreakLeaves) {
  auto k = new_kernel("where");
  Builder b(k->body.get());
  b.make(Op::Break, Scalar::Void);
  EXPECT_NE(verify(*k).find("break outside a loop"), std::string::npos);
  // A nested range loop may break (before offloading, a top-level one too).
  auto ok = new_kernel("nested");
  Builder c(ok->body.get());
  Inst* loop = c.range_for({c.i32(0), c.i32(4)});
  Builder in(loop->region(0));
  in.make(Op::Break, Scalar::Void);
  EXPECT_EQ(verify(*ok), "");
  // A range task's own loop runs in parallel: nothing to leave.
  auto task = new_kernel("task");
  Builder t(task->body.get());
  auto off = std::make_unique<Inst>(Op::Offload, Scalar::Void);
  off->set_task_kind(TaskKind::RangeFor);
  off->set_dims(1);
  off->operands = {t.i32(0), t.i32(4)};
  off->regions.push_back(std::make_unique<Block>(off.get()));
  Inst* o = t.insert(std::move(off));
  Builder body(o->region(0));
  body.make(Op::Break, Scalar::Void);
  EXPECT_NE(verify(*task, {.offloaded = true}).find("break leaves a parallel task"),
            std::string::npos)
      << verify(*task, {.offloaded = true});
}

TEST(LoopBreakPasses, OffloadKeepsATopLevelLoopThatBreaksSerial) {
  // for i in range(16): out[i] = i; if i >= 5: break   (at the top level, as an `if` on a
  // constant leaves it once simplified): only out[0..5] change, in order.
  auto k = new_kernel("stop_early");
  int out = add_field(*k, "out", Scalar::I32, {16});
  Builder b(k->body.get());
  Inst* go = b.if_(b.const_bool(true));
  b.set_insert_end(go->region(0));
  Inst* loop = b.range_for({b.i32(0), b.i32(16)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  b.global_store(at(b, out, {i}), b.binary(Op::Mul, i, b.i32(10)));
  break_if(b, b.binary(Op::Ge, i, b.i32(5)));
  auto copy = k->clone();
  Memory m = expect_same_results(std::move(k), {});
  for (size_t e = 0; e < 16; ++e)
    EXPECT_EQ(value_at(m, out, e),
              e <= 5 ? static_cast<int32_t>(e) * 10 : static_cast<int32_t>(fill_value(out, e)))
        << e;
  run_pipeline(*copy, {});
  std::string ir = print_kernel(*copy);
  EXPECT_NE(ir.find("offload serial"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("offload range_for"), std::string::npos) << ir;
}

TEST(LoopBreakPasses, OffloadStillParallelisesALoopWhoseInnerLoopBreaks) {
  // for i in range(8) (parallel): for j in range(n) (serial): if a[j] > i: break; out[i] = j
  auto k = new_kernel("inner");
  add_value_param(*k, "n", Scalar::I32);
  int a = add_field(*k, "a", Scalar::I32, {12});
  int out = add_field(*k, "out", Scalar::I32, {8});
  Builder b(k->body.get());
  Inst* n = b.arg(Scalar::I32, 0);
  Inst* outer = b.range_for({b.i32(0), b.i32(8)});
  b.set_insert_end(outer->region(0));
  Inst* i = b.loop_index(outer, 0);
  Inst* last = b.alloca_(Scalar::I32);
  b.local_store(last, b.i32(-1));
  Inst* inner = b.range_for({b.i32(0), n});
  b.set_insert_end(inner->region(0));
  Inst* j = b.loop_index(inner, 0);
  break_if(b, b.binary(Op::Gt, b.global_load(at(b, a, {j})), i));
  b.local_store(last, j);
  b.set_insert_end(outer->region(0));
  b.global_store(at(b, out, {i}), b.local_load(last));
  auto copy = k->clone();
  Memory m = expect_same_results(std::move(k), {make_const_int(Scalar::I32, 12)->bits});
  for (int e = 0; e < 8; ++e) {
    int expect = -1;
    for (int q = 0; q < 12; ++q) {
      if (static_cast<int32_t>(fill_value(a, q)) > e) break;
      expect = q;
    }
    EXPECT_EQ(value_at(m, out, static_cast<size_t>(e)), expect) << e;
  }
  run_pipeline(*copy, {});
  std::string ir = print_kernel(*copy);
  EXPECT_NE(ir.find("offload range_for"), std::string::npos) << ir;
}

TEST(LoopBreakPasses, PassesKeepBreaksOfNestedAndMultiDimensionalLoops) {
  // Per i (parallel): a 2-d serial loop counting until a*4 + b reaches t (a break leaves both
  // dimensions), then a while whose range loop breaks (leaving only the range loop), with
  // variables the passes forward, promote and hoist around the jumps.
  auto k = new_kernel("nest");
  add_value_param(*k, "t", Scalar::I32);
  int out = add_field(*k, "out", Scalar::I32, {6, 3});
  Builder b(k->body.get());
  Inst* t = b.arg(Scalar::I32, 0);
  Inst* outer = b.range_for({b.i32(0), b.i32(6)});
  b.set_insert_end(outer->region(0));
  Inst* i = b.loop_index(outer, 0);
  Inst* count = b.alloca_(Scalar::I32);
  Inst* seen = b.alloca_(Scalar::I32);
  b.local_store(seen, b.i32(-1));
  Inst* limit = b.binary(Op::Add, t, i);
  Inst* nest = b.range_for({b.i32(0), b.i32(5), b.i32(0), b.i32(4)});
  b.set_insert_end(nest->region(0));
  Inst* flat =
      b.binary(Op::Add, b.binary(Op::Mul, b.loop_index(nest, 0), b.i32(4)), b.loop_index(nest, 1));
  b.local_store(count, b.binary(Op::Add, b.local_load(count), b.i32(1)));
  b.local_store(seen, flat);
  break_if(b, b.binary(Op::Ge, flat, limit));
  b.local_store(seen, b.binary(Op::Add, flat, b.i32(100)));  // only when not leaving
  b.set_insert_end(outer->region(0));
  b.global_store(at(b, out, {i, b.i32(0)}), b.local_load(count));
  b.global_store(at(b, out, {i, b.i32(1)}), b.local_load(seen));
  // while: rounds r = 0, 1, ... until r == 4; each sums j over range(10) until j > r + i.
  Inst* total = b.alloca_(Scalar::I32);
  Inst* round = b.alloca_(Scalar::I32);
  Inst* w = b.while_();
  b.set_insert_end(w->region(0));
  Inst* r = b.local_load(round);
  break_if(b, b.binary(Op::Ge, r, b.i32(4)));
  b.local_store(round, b.binary(Op::Add, r, b.i32(1)));
  Inst* sum = b.range_for({b.i32(0), b.i32(10)});
  b.set_insert_end(sum->region(0));
  Inst* j = b.loop_index(sum, 0);
  break_if(b, b.binary(Op::Gt, j, b.binary(Op::Add, r, i)));
  b.local_store(total, b.binary(Op::Add, b.local_load(total), j));
  b.set_insert_end(outer->region(0));
  b.global_store(at(b, out, {i, b.i32(2)}), b.local_load(total));
  Memory m = expect_same_results(std::move(k), {make_const_int(Scalar::I32, 3)->bits});
  for (int e = 0; e < 6; ++e) {
    int c = 0, s = -1, tot = 0;
    bool left = false;
    for (int x = 0; x < 5 && !left; ++x)
      for (int y = 0; y < 4; ++y) {
        ++c;
        s = x * 4 + y;
        if (s >= 3 + e) {
          left = true;
          break;
        }
        s += 100;
      }
    for (int q = 0; q < 4; ++q)
      for (int y = 0; y < 10 && y <= q + e; ++y) tot += y;
    auto row = static_cast<size_t>(e) * 3;
    EXPECT_EQ(value_at(m, out, row), c) << e;
    EXPECT_EQ(value_at(m, out, row + 1), s) << e;
    EXPECT_EQ(value_at(m, out, row + 2), tot) << e;
  }
}
