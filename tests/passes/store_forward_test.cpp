#include "compiler/passes/store_forward.h"

#include "tests/passes/pass_test_util.h"

using namespace loom;
using namespace loom::ir;
using namespace loom::passes;
using namespace loom::passes::testing;

namespace {

std::unique_ptr<Kernel> with_out(const char* name) {
  auto k = new_kernel(name);
  add_value_param(*k, "a", Scalar::I32);
  add_value_param(*k, "c", Scalar::Bool);
  add_field(*k, "out", Scalar::I32, {8});
  return k;
}

void store_out(Builder& b, int index, Inst* value) {
  Inst* p = b.global_ptr(Scalar::I32, 0, {b.i32(index)});
  b.global_store(p, value);
}

}  // namespace

TEST(StoreForward, ForwardsIntoRegionsThatDoNotStore) {
  auto k = with_out("forward");
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::I32, 0);
  Inst* c = b.arg(Scalar::Bool, 1);
  Inst* v = b.alloca_(Scalar::I32);
  b.local_store(v, b.i32(1));  // overwritten before any read: removed
  b.local_store(v, a);
  store_out(b, 0, b.local_load(v));
  Inst* br = b.if_(c);
  b.set_insert_end(br->region(0));
  store_out(b, 1, b.local_load(v));  // the if does not store v: forwarded
  b.set_insert_end(k->body.get());
  Inst* loop = b.range_for({b.i32(0), b.i32(4)});
  b.set_insert_end(loop->region(0));
  store_out(b, 2, b.local_load(v));  // nor does the loop
  b.set_insert_end(k->body.get());
  b.local_store(v, op2(b, Op::Add, {a, b.i32(1)}));
  store_out(b, 3, b.local_load(v));
  const char* before = R"(kernel forward
  param p0 a: value i32
  param p1 c: value bool
  slot $0: field i32 shape [8] field out
  %0:i32 = arg p0+0
  %1:bool = arg p1+0
  %2:i32 = alloca
  %3:i32 = const 1
  local_store %2, %3
  local_store %2, %0
  %6:i32 = local_load %2
  %7:i32 = const 0
  %8:i32 = global_ptr $0.c0 %7
  global_store %8, %6
  if %1 {
    %11:i32 = local_load %2
    %12:i32 = const 1
    %13:i32 = global_ptr $0.c0 %12
    global_store %13, %11
  } else {
  }
  %15:i32 = const 0
  %16:i32 = const 4
  range_for %15, %16 {
    %18:i32 = local_load %2
    %19:i32 = const 2
    %20:i32 = global_ptr $0.c0 %19
    global_store %20, %18
  }
  %22:i32 = const 1
  %23:i32 = add %0, %22
  local_store %2, %23
  %25:i32 = local_load %2
  %26:i32 = const 3
  %27:i32 = global_ptr $0.c0 %26
  global_store %27, %25
)";
  EXPECT_EQ(print_kernel(*k), before);
  EXPECT_TRUE(store_forward(*k));
  expect_ir(*k, R"(kernel forward
  param p0 a: value i32
  param p1 c: value bool
  slot $0: field i32 shape [8] field out
  %0:i32 = arg p0+0
  %1:bool = arg p1+0
  %2:i32 = alloca
  %3:i32 = const 1
  local_store %2, %0
  %5:i32 = const 0
  %6:i32 = global_ptr $0.c0 %5
  global_store %6, %0
  if %1 {
    %9:i32 = const 1
    %10:i32 = global_ptr $0.c0 %9
    global_store %10, %0
  } else {
  }
  %12:i32 = const 0
  %13:i32 = const 4
  range_for %12, %13 {
    %15:i32 = const 2
    %16:i32 = global_ptr $0.c0 %15
    global_store %16, %0
  }
  %18:i32 = const 1
  %19:i32 = add %0, %18
  local_store %2, %19
  %21:i32 = const 3
  %22:i32 = global_ptr $0.c0 %21
  global_store %22, %19
)");
}

TEST(StoreForward, NotAcrossALoopOrBranchThatStores) {
  auto k = with_out("loop_stores");
  Builder b(k->body.get());
  Inst* c = b.arg(Scalar::Bool, 1);
  Inst* v = b.alloca_(Scalar::I32);
  b.local_store(v, b.i32(5));
  Inst* loop = b.while_();
  b.set_insert_end(loop->region(0));
  Inst* n = op2(b, Op::Add, {b.local_load(v), b.i32(1)});  // sees the previous iteration
  b.local_store(v, n);
  Inst* done = b.if_(op2(b, Op::Gt, {n, b.i32(10)}));
  b.set_insert_end(done->region(0));
  b.make(Op::Break, Scalar::Void);
  b.set_insert_end(k->body.get());
  store_out(b, 0, b.local_load(v));  // after a loop that stores v: a real load
  b.local_store(v, b.i32(7));
  Inst* br = b.if_(c);
  b.set_insert_end(br->region(0));
  b.local_store(v, b.i32(8));
  b.set_insert_end(k->body.get());
  store_out(b, 1, b.local_load(v));  // after a branch that may store v: a real load
  EXPECT_FALSE(store_forward(*k));
  expect_ir(*k, R"(kernel loop_stores
  param p0 a: value i32
  param p1 c: value bool
  slot $0: field i32 shape [8] field out
  %0:bool = arg p1+0
  %1:i32 = alloca
  %2:i32 = const 5
  local_store %1, %2
  while {
    %5:i32 = local_load %1
    %6:i32 = const 1
    %7:i32 = add %5, %6
    local_store %1, %7
    %9:i32 = const 10
    %10:bool = gt %7, %9
    if %10 {
      break
    } else {
    }
  }
  %13:i32 = local_load %1
  %14:i32 = const 0
  %15:i32 = global_ptr $0.c0 %14
  global_store %15, %13
  %17:i32 = const 7
  local_store %1, %17
  if %0 {
    %20:i32 = const 8
    local_store %1, %20
  } else {
  }
  %22:i32 = local_load %1
  %23:i32 = const 1
  %24:i32 = global_ptr $0.c0 %23
  global_store %24, %22
)");
}

TEST(StoreForward, PromotesVariablesStoredOnceBeforeAllLoads) {
  auto k = with_out("promote");
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::I32, 0);
  Inst* c = b.arg(Scalar::Bool, 1);
  Inst* v = b.alloca_(Scalar::I32);
  Inst* zero_var = b.alloca_(Scalar::F32);  // never stored: reads give zero
  b.local_store(v, op2(b, Op::Mul, {a, b.i32(2)}));
  Inst* br = b.if_(c);
  b.set_insert_end(br->region(0));
  store_out(b, 0, b.local_load(v));
  b.set_insert_end(k->body.get());
  Inst* loop = b.while_();
  b.set_insert_end(loop->region(0));
  store_out(b, 1, b.local_load(v));
  b.make(Op::Break, Scalar::Void);
  b.set_insert_end(k->body.get());
  store_out(b, 2, b.cast(Scalar::I32, b.local_load(zero_var)));
  EXPECT_TRUE(store_forward(*k));
  expect_ir(*k, R"(kernel promote
  param p0 a: value i32
  param p1 c: value bool
  slot $0: field i32 shape [8] field out
  %0:i32 = arg p0+0
  %1:bool = arg p1+0
  %2:f32 = const 0.0
  %3:i32 = const 2
  %4:i32 = mul %0, %3
  if %1 {
    %6:i32 = const 0
    %7:i32 = global_ptr $0.c0 %6
    global_store %7, %4
  } else {
  }
  while {
    %10:i32 = const 1
    %11:i32 = global_ptr $0.c0 %10
    global_store %11, %4
    break
  }
  %14:i32 = cast %2
  %15:i32 = const 2
  %16:i32 = global_ptr $0.c0 %15
  global_store %16, %14
)");
}

TEST(StoreForward, GlobalStoreToLoadInOneBlock) {
  auto k = with_out("globals");
  add_field(*k, "other", Scalar::I32, {8});
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::I32, 0);
  Inst* p = b.global_ptr(Scalar::I32, 0, {a});
  Inst* q = b.global_ptr(Scalar::I32, 1, {a});
  b.global_store(p, b.i32(3));
  Inst* l1 = b.global_load(p);  // 3
  Inst* l2 = b.global_load(q);
  Inst* l3 = b.global_load(q);  // same as l2
  b.global_store(q, l1);        // may alias p
  Inst* l4 = b.global_load(p);  // stays
  b.atomic(AtomicOp::Add, q, l2);
  Inst* l5 = b.global_load(q);  // after an atomic: stays
  keep(b, *k, {l1, l2, l3, l4, l5});
  EXPECT_TRUE(store_forward(*k));
  expect_ir(*k, R"(kernel globals
  param p0 a: value i32
  param p1 c: value bool
  slot $0: field i32 shape [8] field out
  slot $1: field i32 shape [8] field other
  returns i32
  returns i32
  returns i32
  returns i32
  returns i32
  %0:i32 = arg p0+0
  %1:i32 = global_ptr $0.c0 %0
  %2:i32 = global_ptr $1.c0 %0
  %3:i32 = const 3
  global_store %1, %3
  %5:i32 = global_load %2
  global_store %2, %3
  %7:i32 = global_load %1
  %8:i32 = atomic add %2, %5
  %9:i32 = global_load %2
  return %3, %5, %5, %7, %9
)");
}

TEST(StoreForward, AtomicOnAVariableEndsWhatIsKnown) {
  auto k = with_out("atomic_var");
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::I32, 0);
  Inst* v = b.alloca_(Scalar::I32);
  b.local_store(v, a);
  b.local_store(v, a);                   // the first store is overwritten unread
  b.atomic(AtomicOp::Add, v, b.i32(1));  // reads and writes v
  store_out(b, 0, b.local_load(v));      // a real load
  EXPECT_TRUE(store_forward(*k));
  expect_ir(*k, R"(kernel atomic_var
  param p0 a: value i32
  param p1 c: value bool
  slot $0: field i32 shape [8] field out
  %0:i32 = arg p0+0
  %1:i32 = alloca
  local_store %1, %0
  %3:i32 = const 1
  %4:i32 = atomic add %1, %3
  %5:i32 = local_load %1
  %6:i32 = const 0
  %7:i32 = global_ptr $0.c0 %6
  global_store %7, %5
)");
}

TEST(StoreForward, StoresAfterAJumpDoNotKillStoresBeforeIt) {
  // while { v = 1; break; v = 2 }: the loop leaves with v == 1.
  auto k = with_out("jump");
  Builder b(k->body.get());
  Inst* v = b.alloca_(Scalar::I32);
  Inst* c = b.arg(Scalar::Bool, 1);
  Inst* loop = b.while_();
  b.set_insert_end(loop->region(0));
  Inst* br = b.if_(c);  // a second store keeps v from being promoted
  b.set_insert_end(br->region(0));
  b.local_store(v, b.i32(7));
  b.set_insert_end(loop->region(0));
  b.local_store(v, b.i32(1));
  b.make(Op::Break, Scalar::Void);
  b.local_store(v, b.i32(2));
  b.set_insert_end(k->body.get());
  store_out(b, 0, b.local_load(v));
  store_forward(*k);
  int stores_of_1 = 0;
  walk(*k->body, [&](Inst& i) {
    stores_of_1 +=
        i.op == Op::LocalStore && i.operand(1)->is_const() && i.operand(1)->int_value() == 1;
  });
  EXPECT_EQ(stores_of_1, 1) << print_kernel(*k);
  EXPECT_EQ(verify(*k), "");
}

TEST(StoreForward, AnIfMadeConstantByForwardingKeepsItsTakenBranch) {
  auto k = with_out("known_if");
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::I32, 0);
  Inst* v = b.alloca_(Scalar::I32);
  b.local_store(v, b.i32(3));
  Inst* br = b.if_(op2(b, Op::Gt, {b.local_load(v), b.i32(2)}));  // 3 > 2, known while forwarding
  b.set_insert_end(br->region(0));
  b.local_store(v, a);
  b.set_insert_end(br->region(1));
  b.local_store(v, b.i32(0));
  b.set_insert_end(k->body.get());
  store_out(b, 0, b.local_load(v));
  EXPECT_TRUE(store_forward(*k));
  expect_ir(*k, R"(kernel known_if
  param p0 a: value i32
  param p1 c: value bool
  slot $0: field i32 shape [8] field out
  %0:i32 = arg p0+0
  %1:i32 = alloca
  %2:i32 = const 3
  %3:i32 = const 2
  %4:bool = gt %2, %3
  local_store %1, %0
  %6:i32 = const 0
  %7:i32 = global_ptr $0.c0 %6
  global_store %7, %0
)");
}
