#include "compiler/passes/offload.h"

#include "tests/passes/pass_test_util.h"

using namespace loom;
using namespace loom::ir;
using namespace loom::passes;
using namespace loom::passes::testing;

TEST(Offload, TopLevelLoopsBecomeTasks) {
  auto k = new_kernel("tasks");
  add_value_param(*k, "a", Scalar::F32);
  int x = add_ndarray(*k, "x", Scalar::F32, 1);
  int f = add_field(*k, "f", Scalar::I32, {4, 4});
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::F32, 0);
  Inst* n = b.make(Op::ResourceShape, Scalar::I32, {}, x, 0);
  Inst* loop = b.range_for({b.i32(0), n});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* p = b.global_ptr(Scalar::F32, x, {i});
  b.global_store(p, a);
  b.set_insert_end(k->body.get());
  Inst* twice = op2(b, Op::Mul, {a, b.f32(2)});  // uniform: stays at the top level
  Inst* sf = b.struct_for(f, 2);
  b.set_insert_end(sf->region(0));
  Inst* r = b.loop_index(sf, 0);
  Inst* c = b.loop_index(sf, 1);
  Inst* pf = b.global_ptr(Scalar::I32, f, {r, c});
  b.global_store(pf, b.cast(Scalar::I32, twice));
  EXPECT_TRUE(offload(*k));
  expect_ir(*k, R"(kernel tasks
  param p0 a: value f32
  param p1 x: ndarray f32 ndim 1
  slot $0: ndarray f32 shape [?] from p1
  slot $1: field i32 shape [4, 4] field f
  %0:f32 = arg p0+0
  %1:i32 = shape $0.0
  %2:i32 = const 0
  offload range_for %2, %1 {
    %4:i32 = loop_index %3.0
    %5:f32 = global_ptr $0.c0 %4
    global_store %5, %0
  }
  %7:f32 = const 2.0
  %8:f32 = mul %0, %7
  offload struct_for $1 {
    %10:i32 = loop_index %9.0
    %11:i32 = loop_index %9.1
    %12:i32 = global_ptr $1.c0 %10, %11
    %13:i32 = cast %8
    global_store %12, %13
  }
)",
            {.offloaded = true});
  EXPECT_EQ(k->abi.temps_size, 0u);
  EXPECT_FALSE(offload(*k));
}

TEST(Offload, ValuesAndVariablesCrossTasksThroughTemporaries) {
  auto k = new_kernel("temps");
  int x = add_field(*k, "x", Scalar::F32, {64});
  int cnt = add_field(*k, "count", Scalar::I32, {});
  Builder b(k->body.get());
  Inst* p0 = b.global_ptr(Scalar::I32, cnt, {});  // a pointer: recomputed where used
  Inst* n = b.global_load(p0);                    // non-uniform: through a temporary
  Inst* total = b.alloca_(Scalar::F32);           // a variable: becomes a temporary
  b.local_store(total, b.f32(1));
  Inst* loop = b.range_for({b.i32(0), b.i32(64)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* px = b.global_ptr(Scalar::F32, x, {i});
  Inst* scaled = op2(b, Op::Mul, {b.local_load(total), b.cast(Scalar::F32, n)});
  b.global_store(px, scaled);
  b.set_insert_end(k->body.get());
  b.local_store(total, b.f32(2));
  Inst* dyn = b.range_for({b.i32(0), n});  // bounds from memory: runs serially
  b.set_insert_end(dyn->region(0));
  b.global_store(p0, b.loop_index(dyn, 0));
  EXPECT_TRUE(offload(*k));
  expect_ir(*k, R"(kernel temps
  slot $0: field f32 shape [64] field x
  slot $1: field i32 shape [] field count
  %0:f32 = const 1.0
  %1:i32 = const 0
  %2:i32 = const 64
  offload serial {
    %4:i32 = global_ptr $1.c0
    %5:i32 = global_load %4
    tmp_store @0 %5
    tmp_store @8 %0
  }
  offload range_for %1, %2 {
    %9:i32 = tmp_load @0
    %10:i32 = loop_index %8.0
    %11:f32 = global_ptr $0.c0 %10
    %12:f32 = tmp_load @8
    %13:f32 = cast %9
    %14:f32 = mul %12, %13
    global_store %11, %14
  }
  %16:f32 = const 2.0
  %17:i32 = const 0
  offload serial {
    %19:i32 = tmp_load @0
    %20:i32 = global_ptr $1.c0
    tmp_store @8 %16
    range_for %17, %19 {
      %23:i32 = loop_index %22.0
      global_store %20, %23
    }
  }
)",
            {.offloaded = true});
  EXPECT_EQ(k->abi.temps_size, 16u);
}

TEST(Offload, LoopsUpdatingOuterVariablesStaySerial) {
  auto k = new_kernel("running_sum");
  int out = add_field(*k, "out", Scalar::I32, {});
  Builder b(k->body.get());
  Inst* sum = b.alloca_(Scalar::I32);
  Inst* loop = b.range_for({b.i32(0), b.i32(8)});
  b.set_insert_end(loop->region(0));
  // The running value is read inside the loop: in parallel this would race. (An update whose
  // old value is unused is a reduction: reduction_test.cpp.)
  Inst* old = b.atomic(AtomicOp::Add, sum, b.loop_index(loop, 0));
  b.global_store(b.global_ptr(Scalar::I32, out, {}), old);
  b.set_insert_end(k->body.get());
  Inst* p = b.global_ptr(Scalar::I32, out, {});
  b.global_store(p, b.local_load(sum));
  EXPECT_TRUE(offload(*k));
  expect_ir(*k, R"(kernel running_sum
  slot $0: field i32 shape [] field out
  %0:i32 = const 0
  %1:i32 = const 8
  offload serial {
    %3:i32 = alloca
    range_for %0, %1 {
      %5:i32 = loop_index %4.0
      %6:i32 = atomic add %3, %5
      %7:i32 = global_ptr $0.c0
      global_store %7, %6
    }
    %9:i32 = global_ptr $0.c0
    %10:i32 = local_load %3
    global_store %9, %10
  }
)",
            {.offloaded = true});
}

TEST(Offload, AReturnInOneTaskSkipsEveryLaterTask) {
  // if c > 0: return c; then a parallel loop and a serial store that must not run
  auto k = new_kernel("early_return");
  add_value_param(*k, "c", Scalar::I32);
  int g = add_field(*k, "g", Scalar::I32, {4});
  int h = add_field(*k, "h", Scalar::I32, {1});
  k->abi.returns.push_back({Scalar::I32});
  Builder b(k->body.get());
  Inst* c = b.arg(Scalar::I32, 0);
  Inst* pos = op2(b, Op::Gt, {c, b.i32(0)});
  Inst* branch = b.if_(pos);
  b.set_insert_end(branch->region(0));
  auto ret = std::make_unique<Inst>(Op::Return, Scalar::Void);
  ret->operands = {c};
  b.insert(std::move(ret));
  b.set_insert_end(k->body.get());
  Inst* loop = b.range_for({b.i32(0), b.i32(4)});
  b.set_insert_end(loop->region(0));
  // One instruction a statement, in the order the expected IR has, whatever order a compiler
  // evaluates call arguments in.
  Inst* ninety_nine = b.i32(99);
  Inst* i = b.loop_index(loop, 0);
  b.global_store(b.global_ptr(Scalar::I32, g, {i}), ninety_nine);
  b.set_insert_end(k->body.get());
  Inst* fifty_five = b.i32(55);
  Inst* zero = b.i32(0);
  b.global_store(b.global_ptr(Scalar::I32, h, {zero}), fifty_five);
  EXPECT_TRUE(offload(*k));
  expect_ir(*k, R"(kernel early_return
  param p0 c: value i32
  slot $0: field i32 shape [4] field g
  slot $1: field i32 shape [1] field h
  returns i32
  %0:i32 = arg p0+0
  %1:i32 = const 0
  %2:bool = gt %0, %1
  %3:i32 = const 0
  %4:i32 = const 4
  %5:bool = const false
  %6:bool = const true
  offload serial {
    tmp_store @0 %5
    if %2 {
      tmp_store @0 %6
      return %0
    } else {
    }
  }
  offload range_for %3, %4 {
    %13:bool = tmp_load @0
    if %13 {
      continue
    } else {
    }
    %16:i32 = const 99
    %17:i32 = loop_index %12.0
    %18:i32 = global_ptr $0.c0 %17
    global_store %18, %16
  }
  %20:i32 = const 55
  %21:i32 = const 0
  offload serial {
    %23:bool = tmp_load @0
    if %23 {
      return
    } else {
    }
    %26:i32 = global_ptr $1.c0 %21
    global_store %26, %20
  }
)",
            {.offloaded = true});
  EXPECT_EQ(k->abi.temps_size, 8u);
}

TEST(Offload, AReturnInTheLastTaskNeedsNoFlag) {
  auto k = new_kernel("last_return");
  add_value_param(*k, "c", Scalar::I32);
  int g = add_field(*k, "g", Scalar::I32, {4});
  k->abi.returns.push_back({Scalar::I32});
  Builder b(k->body.get());
  Inst* c = b.arg(Scalar::I32, 0);
  Inst* loop = b.range_for({b.i32(0), b.i32(4)});
  b.set_insert_end(loop->region(0));
  b.global_store(b.global_ptr(Scalar::I32, g, {b.loop_index(loop, 0)}), c);
  b.set_insert_end(k->body.get());
  Inst* v = b.global_load(b.global_ptr(Scalar::I32, g, {b.i32(1)}));
  auto ret = std::make_unique<Inst>(Op::Return, Scalar::Void);
  ret->operands = {v};
  b.insert(std::move(ret));
  EXPECT_TRUE(offload(*k));
  EXPECT_EQ(k->abi.temps_size, 0u);
  std::string text = ir::print_kernel(*k);
  EXPECT_EQ(text.find("tmp_"), std::string::npos) << text;
}
