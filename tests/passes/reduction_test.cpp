// offload's parallel reductions: which loops that write a variable declared outside them
// become parallel tasks with `reduce` updates, which stay serial, and the task notes that
// say so (what `loom check` prints).
#include "compiler/passes/offload.h"

#include <functional>

#include "tests/passes/pass_test_util.h"

using namespace loom;
using namespace loom::ir;
using namespace loom::passes;
using namespace loom::passes::testing;

namespace {

// total = init; for i in 0..n: total = OP(total, x[i]) (operands swapped when `swap`);
// return total. Nodes: 1 the variable, 2 the loop, 3 the load, 4 the update.
struct Accumulation {
  std::unique_ptr<Kernel> k;
  Inst* var = nullptr;
};

Accumulation accumulate(Op op, Scalar type, bool swap = false) {
  Accumulation a{new_kernel("acc")};
  Kernel& k = *a.k;
  int x = add_field(k, "x", type, {64});
  Builder b(k.body.get());
  b.set_node(1);
  a.var = b.alloca_(type);
  b.local_store(a.var, is_float(type) ? b.const_float(type, 5) : b.const_int(type, 5));
  b.set_node(2);
  Inst* loop = b.range_for({b.i32(0), b.i32(64)});
  b.set_insert_end(loop->region(0));
  b.set_node(3);
  Inst* v = b.global_load(b.global_ptr(type, x, {b.loop_index(loop, 0)}));
  b.set_node(4);
  Inst* old = b.local_load(a.var);
  b.local_store(a.var, swap ? b.binary(op, v, old) : b.binary(op, old, v));
  b.set_insert_end(k.body.get());
  b.set_node(5);
  keep(b, k, {b.local_load(a.var)});
  return a;
}

std::string notes(const Kernel& k) {
  std::string s;
  for (const TaskNote& n : k.task_notes) s += std::to_string(n.node) + ": " + n.text + "\n";
  return s;
}

}  // namespace

TEST(Reduction, ASumIntoAnOuterVariableBecomesAParallelReduce) {
  Accumulation a = accumulate(Op::Add, Scalar::I32);
  EXPECT_TRUE(offload(*a.k));
  expect_ir(*a.k, R"(kernel acc
  slot $0: field i32 shape [64] field x
  returns i32
  %0:i32 = const 5
  %1:i32 = const 0
  %2:i32 = const 64
  offload serial {
    tmp_store @0 %0
  }
  offload range_for %1, %2 {
    %6:i32 = loop_index %5.0
    %7:i32 = global_ptr $0.c0 %6
    %8:i32 = global_load %7
    reduce add @0 %8
  }
  offload serial {
    %11:i32 = tmp_load @0
    return %11
  }
)",
            {.offloaded = true});
  EXPECT_EQ(notes(*a.k),
            "1: serial: statements outside any parallel loop\n"
            "2: range_for over 1 dim, parallel; reduction: the variable of node 1 (+, i32)\n"
            "5: serial: statements outside any parallel loop\n");
}

TEST(Reduction, ADifferenceAddsTheNegatedValue) {
  Accumulation a = accumulate(Op::Sub, Scalar::F32);
  EXPECT_TRUE(offload(*a.k));
  std::string ir = print_kernel(*a.k);
  EXPECT_NE(ir.find("    %9:f32 = neg %8\n    reduce add @0 %9\n"), std::string::npos) << ir;
  EXPECT_EQ(verify(*a.k, {.offloaded = true}), "");
}

TEST(Reduction, EveryAssociativeOperationEitherWayRound) {
  for (Op op : {Op::Mul, Op::Min, Op::Max, Op::BitAnd, Op::BitOr, Op::BitXor}) {
    for (bool swap : {false, true}) {
      Accumulation a = accumulate(op, Scalar::I64, swap);
      EXPECT_TRUE(offload(*a.k));
      std::string ir = print_kernel(*a.k);
      EXPECT_NE(ir.find("reduce " + std::string(op_name(op)) + " @0 %8\n"), std::string::npos)
          << ir;
      EXPECT_EQ(a.k->abi.temps_size, 8u);
      EXPECT_EQ(a.k->task_notes.size(), 3u);
      EXPECT_EQ(verify(*a.k, {.offloaded = true}), "");
    }
  }
}

TEST(Reduction, AnUpdateThatIsNoReductionKeepsTheLoopSerialAndSaysWhy) {
  // total = total * 2 + x[i]: the loaded variable feeds a mul whose result is not stored.
  auto k = new_kernel("acc");
  int x = add_field(*k, "x", Scalar::I32, {64});
  Builder b(k->body.get());
  b.set_node(1);
  Inst* var = b.alloca_(Scalar::I32);
  b.set_node(2);
  Inst* loop = b.range_for({b.i32(0), b.i32(64)});
  b.set_insert_end(loop->region(0));
  b.set_node(7);
  Inst* v = b.global_load(b.global_ptr(Scalar::I32, x, {b.loop_index(loop, 0)}));
  Inst* twice = b.binary(Op::Mul, b.local_load(var), b.i32(2));
  b.local_store(var, b.binary(Op::Add, twice, v));
  EXPECT_TRUE(offload(*k));
  EXPECT_EQ(k->body->insts.back()->task_kind(), TaskKind::Serial);
  EXPECT_EQ(notes(*k),
            "2: serial: the loop combines the variable of node 1 with both * and + (node 7): a "
            "reduction takes one operation, so the loop runs in order\n");
}

TEST(Reduction, OtherReadsMixedOperationsAndNarrowTypesStaySerial) {
  struct Case {
    const char* name;
    std::function<void(Builder&, Inst* var, Inst* v)> body;
    Scalar type;
    std::string reason;
  };
  std::vector<Case> cases = {
      {"a read besides the update",
       [](Builder& b, Inst* var, Inst* v) {
         b.set_node(8);
         b.local_load(var);
         b.set_node(9);
         b.local_store(var, b.binary(Op::Add, b.local_load(var), v));
       },
       Scalar::I32,
       "node 8 reads the running value of the variable of node 1 inside the loop: only `v = v "
       "OP e` may read it"},
      {"+ and * into one variable",
       [](Builder& b, Inst* var, Inst* v) {
         b.set_node(8);
         b.local_store(var, b.binary(Op::Add, b.local_load(var), v));
         b.set_node(9);
         b.local_store(var, b.binary(Op::Mul, b.local_load(var), v));
       },
       Scalar::I32,
       "the loop combines the variable of node 1 with both + (node 8) and * (node 9): a "
       "reduction takes one operation"},
      {"two reads before two writes",
       [](Builder& b, Inst* var, Inst* v) {
         b.set_node(8);
         Inst* r1 = b.local_load(var);
         Inst* r2 = b.local_load(var);
         b.local_store(var, b.binary(Op::Add, r1, v));
         b.local_store(var, b.binary(Op::Add, r2, v));
       },
       Scalar::I32, "node 8 writes the variable of node 1"},
      {"a u8 sum",
       [](Builder& b, Inst* var, Inst* v) {
         b.set_node(8);
         b.local_store(var, b.binary(Op::Add, b.local_load(var), b.cast(Scalar::U8, v)));
       },
       Scalar::U8, "node 8 accumulates into the variable of node 1 of type u8 with `+`"},
      {"the old value of an atomic",
       [](Builder& b, Inst* var, Inst* v) {
         b.set_node(8);
         Inst* old = b.atomic(AtomicOp::Add, var, v);
         b.set_node(9);
         b.local_store(b.alloca_(Scalar::I32), old);
       },
       Scalar::I32, "node 8 uses the old value of an atomic update of the variable of node 1"},
  };
  for (const Case& c : cases) {
    auto k = new_kernel("acc");
    int x = add_field(*k, "x", Scalar::I32, {64});
    Builder b(k->body.get());
    b.set_node(1);
    Inst* var = b.alloca_(c.type);
    b.set_node(2);
    Inst* loop = b.range_for({b.i32(0), b.i32(64)});
    b.set_insert_end(loop->region(0));
    Inst* v = b.global_load(b.global_ptr(Scalar::I32, x, {b.loop_index(loop, 0)}));
    c.body(b, var, v);
    EXPECT_TRUE(offload(*k)) << c.name;
    ASSERT_EQ(k->task_notes.size(), 1u) << c.name;
    EXPECT_EQ(k->task_notes[0].text.rfind("serial: " + c.reason, 0), 0u)
        << c.name << ": " << k->task_notes[0].text;
    std::string ir = print_kernel(*k);
    EXPECT_EQ(ir.find("reduce"), std::string::npos) << c.name << "\n" << ir;
  }
}

TEST(Reduction, AnAtomicUpdateOfTheVariableIsAReductionToo) {
  auto k = new_kernel("acc");
  int x = add_field(*k, "x", Scalar::F32, {4, 8});
  Builder b(k->body.get());
  b.set_node(1);
  Inst* var = b.alloca_(Scalar::F32);
  b.set_node(2);
  Inst* sf = b.struct_for(x, 2);
  b.set_insert_end(sf->region(0));
  Inst* v = b.global_load(b.global_ptr(Scalar::F32, x, {b.loop_index(sf, 0), b.loop_index(sf, 1)}));
  b.atomic(AtomicOp::Max, var, v);
  EXPECT_TRUE(offload(*k));
  std::string ir = print_kernel(*k);
  EXPECT_NE(ir.find("reduce max @0 %"), std::string::npos) << ir;
  EXPECT_EQ(
      notes(*k),
      "1: serial: statements outside any parallel loop\n"
      "2: struct_for over field x (2 dims), parallel; reduction: the variable of node 1 (max, "
      "f32)\n");
  EXPECT_EQ(verify(*k, {.offloaded = true}), "");
}

TEST(Reduction, TheVerifierKeepsReduceInParallelTasks) {
  auto k = new_kernel("bad");
  Builder b(k->body.get());
  auto task = std::make_unique<Inst>(Op::Offload, Scalar::Void);
  task->set_task_kind(TaskKind::Serial);
  task->regions.push_back(std::make_unique<Block>(task.get()));
  Inst* serial = b.insert(std::move(task));
  b.set_insert_end(serial->region(0));
  Inst* r = b.make(Op::Reduce, Scalar::Void, {b.i32(1)});
  r->set_combine_op(Op::Add);
  EXPECT_NE(verify(*k, {.offloaded = true}).find("reduce outside a parallel task"),
            std::string::npos);
  r->set_combine_op(Op::Sub);
  EXPECT_NE(verify(*k, {.offloaded = true}).find("no reduction"), std::string::npos);
}

// A chain of one operation whose one leaf is the running value (Taichi's `total += x[i] + 1`)
// is reassociated into `total OP (the rest)`.
TEST(Reduction, AChainOfOneOperationIsReassociated) {
  struct Case {
    const char* name;
    Op op;
    std::function<Inst*(Builder&, Inst* t, Inst* x)> update;
    std::string reduce;  // the IR from the first new instruction to the reduce
  };
  std::vector<Case> cases = {
      {"t + x + 1", Op::Add,
       [](Builder& b, Inst* t, Inst* x) {
         return b.binary(Op::Add, b.binary(Op::Add, t, x), b.i32(1));
       },
       "%10:i32 = add %8, %9\n    reduce add @0 %10\n"},
      {"x + t - 1", Op::Add,
       [](Builder& b, Inst* t, Inst* x) {
         return b.binary(Op::Sub, b.binary(Op::Add, x, t), b.i32(1));
       },
       "%10:i32 = sub %8, %9\n    reduce add @0 %10\n"},
      {"t - x - x", Op::Add,
       [](Builder& b, Inst* t, Inst* x) { return b.binary(Op::Sub, b.binary(Op::Sub, t, x), x); },
       "%9:i32 = neg %8\n    %10:i32 = sub %9, %8\n    reduce add @0 %10\n"},
      {"max(3, max(x, t))", Op::Max,
       [](Builder& b, Inst* t, Inst* x) {
         return b.binary(Op::Max, b.i32(3), b.binary(Op::Max, x, t));
       },
       "%10:i32 = max %9, %8\n    reduce max @0 %10\n"},
  };
  for (const Case& c : cases) {
    auto k = new_kernel("acc");
    int xf = add_field(*k, "x", Scalar::I32, {64});
    Builder b(k->body.get());
    b.set_node(1);
    Inst* var = b.alloca_(Scalar::I32);
    b.set_node(2);
    Inst* loop = b.range_for({b.i32(0), b.i32(64)});
    b.set_insert_end(loop->region(0));
    b.set_node(3);
    Inst* x = b.global_load(b.global_ptr(Scalar::I32, xf, {b.loop_index(loop, 0)}));
    b.set_node(4);
    b.local_store(var, c.update(b, b.local_load(var), x));
    EXPECT_TRUE(offload(*k)) << c.name;
    std::string ir = print_kernel(*k);
    EXPECT_NE(ir.find(c.reduce), std::string::npos) << c.name << "\n" << ir;
    EXPECT_EQ(ir.find("local_load"), std::string::npos) << c.name << "\n" << ir;
    ASSERT_EQ(k->task_notes.size(), 2u) << c.name;
    EXPECT_TRUE(k->task_notes[1].parallel) << c.name;
    EXPECT_EQ(k->task_notes[1].text,
              "range_for over 1 dim, parallel; reduction: the variable of node 1 (" +
                  std::string(c.op == Op::Add ? "+" : "max") + ", i32)")
        << c.name;
    EXPECT_EQ(verify(*k, {.offloaded = true}), "") << c.name;
  }
}

// The note blames what really keeps the loop serial: a read of the running value elsewhere
// (not the update that reads it too), or two operations in one chain.
TEST(Reduction, SerialReasonsNameTheRealCause) {
  struct Case {
    const char* name;
    std::function<void(Builder&, Inst* var, Inst* x, Inst* out)> body;
    std::string reason;
  };
  std::vector<Case> cases = {
      {"the running value also stored elsewhere",
       [](Builder& b, Inst* var, Inst* x, Inst* out) {
         b.set_node(21);
         Inst* s = b.local_load(var);
         b.set_node(22);
         b.global_store(out, s);
         b.set_node(24);
         b.local_store(var, b.binary(Op::Add, s, x));
       },
       "serial: node 22 reads the running value of the variable of node 1 inside the loop: only "
       "`v = v OP e` may read it, so the loop runs in order"},
      {"(v + x) * x",
       [](Builder& b, Inst* var, Inst* x, Inst*) {
         b.set_node(10);
         Inst* sum = b.binary(Op::Add, b.local_load(var), x);
         b.set_node(13);
         b.local_store(var, b.binary(Op::Mul, sum, x));
       },
       "serial: the loop combines the variable of node 1 with both + (node 10) and * (node 13): "
       "a reduction takes one operation, so the loop runs in order"},
      {"the updated value read after the update",
       [](Builder& b, Inst* var, Inst* x, Inst* out) {
         b.set_node(10);
         Inst* sum = b.binary(Op::Add, b.local_load(var), x);
         b.set_node(11);
         b.local_store(var, sum);
         b.set_node(12);
         b.global_store(out, sum);
       },
       "serial: node 12 reads the running value of the variable of node 1"},
  };
  for (const Case& c : cases) {
    auto k = new_kernel("acc");
    int xf = add_field(*k, "x", Scalar::I32, {64});
    int of = add_field(*k, "out", Scalar::I32, {64});
    Builder b(k->body.get());
    b.set_node(1);
    Inst* var = b.alloca_(Scalar::I32);
    b.set_node(2);
    Inst* loop = b.range_for({b.i32(0), b.i32(64)});
    b.set_insert_end(loop->region(0));
    Inst* i = b.loop_index(loop, 0);
    Inst* x = b.global_load(b.global_ptr(Scalar::I32, xf, {i}));
    c.body(b, var, x, b.global_ptr(Scalar::I32, of, {i}));
    EXPECT_TRUE(offload(*k)) << c.name;
    ASSERT_EQ(k->task_notes.size(), 1u) << c.name;
    EXPECT_FALSE(k->task_notes[0].parallel) << c.name;
    EXPECT_EQ(k->task_notes[0].text.rfind(c.reason, 0), 0u)
        << c.name << ": " << k->task_notes[0].text;
  }
}

// A vector variable is one variable per component after lowering: its reduction is listed
// once, with the vector's type.
TEST(Reduction, AVectorVariableIsListedOnce) {
  auto k = new_kernel("acc");
  int xf = add_field(*k, "x", Scalar::F32, {64});
  Builder b(k->body.get());
  b.set_node(2);
  std::vector<Inst*> parts = {b.alloca_(Scalar::F32), b.alloca_(Scalar::F32),
                              b.alloca_(Scalar::F32)};
  b.set_node(3);
  Inst* loop = b.range_for({b.i32(0), b.i32(64)});
  b.set_insert_end(loop->region(0));
  Inst* x = b.global_load(b.global_ptr(Scalar::F32, xf, {b.loop_index(loop, 0)}));
  b.set_node(5);
  for (Inst* p : parts) b.local_store(p, b.binary(Op::Add, b.local_load(p), x));
  EXPECT_TRUE(offload(*k));
  ASSERT_EQ(k->task_notes.size(), 2u);
  EXPECT_EQ(k->task_notes[1].text,
            "range_for over 1 dim, parallel; reduction: the variable of node 2 (+, f32x3)");
}
