#include "compiler/passes/lower_access.h"
#include "compiler/passes/demote_atomics.h"

#include "tests/passes/pass_test_util.h"

using namespace loom;
using namespace loom::ir;
using namespace loom::passes;
using namespace loom::passes::testing;

namespace {

// Reads component 1 of element [i, j] of `slot` and writes it back doubled.
std::unique_ptr<Kernel> access_kernel(const char* name, bool field, Layout layout) {
  auto k = new_kernel(name);
  add_value_param(*k, "i", Scalar::I32);
  add_value_param(*k, "j", Scalar::I32);
  int slot = field ? add_field(*k, "v", Scalar::F32, {8, 4}, 3, layout)
                   : add_ndarray(*k, "v", Scalar::F32, 2, 3, layout);
  Builder b(k->body.get());
  Inst* i = b.arg(Scalar::I32, 0);
  Inst* j = b.arg(Scalar::I32, 1);
  b.set_node(5);
  Inst* p = b.global_ptr(Scalar::F32, slot, {i, j}, 1);
  Inst* v = b.global_load(p);
  b.set_node(6);
  b.global_store(p, b.binary(Op::Add, v, v));
  return k;
}

}  // namespace

TEST(LowerAccess, FieldAoS) {
  auto k = access_kernel("field_aos", true, Layout::AoS);
  EXPECT_TRUE(lower_access(*k));
  expect_ir(*k, R"(kernel field_aos
  param p0 i: value i32
  param p1 j: value i32
  slot $0: field f32x3 shape [8, 4] field v
  %0:i64 = const 4
  %1:i64 = const 3
  %2:i64 = const 1
  %3:i32 = arg p0+0
  %4:i32 = arg p1+0
  %5:i64 = cast %3
  %6:i64 = cast %4
  %7:i64 = mul %5, %0
  %8:i64 = add %7, %6
  %9:i64 = mul %8, %1
  %10:i64 = add %9, %2
  %11:f32 = element_ptr $0 %10
  %12:f32 = global_load %11
  %13:f32 = add %12, %12
  global_store %11, %13
)",
            {.lowered = true});
}

TEST(LowerAccess, FieldSoA) {
  auto k = access_kernel("field_soa", true, Layout::SoA);
  EXPECT_TRUE(lower_access(*k));
  expect_ir(*k, R"(kernel field_soa
  param p0 i: value i32
  param p1 j: value i32
  slot $0: field f32x3 shape [8, 4] soa field v
  %0:i64 = const 4
  %1:i64 = const 1
  %2:i64 = const 32
  %3:i32 = arg p0+0
  %4:i32 = arg p1+0
  %5:i64 = cast %3
  %6:i64 = cast %4
  %7:i64 = mul %5, %0
  %8:i64 = add %7, %6
  %9:i64 = mul %1, %2
  %10:i64 = add %9, %8
  %11:f32 = element_ptr $0 %10
  %12:f32 = global_load %11
  %13:f32 = add %12, %12
  global_store %11, %13
)",
            {.lowered = true});
}

TEST(LowerAccess, NdarraySoAUsesShapes) {
  auto k = access_kernel("ndarray_soa", false, Layout::SoA);
  EXPECT_TRUE(lower_access(*k));
  expect_ir(*k, R"(kernel ndarray_soa
  param p0 i: value i32
  param p1 j: value i32
  param p2 v: ndarray f32x3 ndim 2
  slot $0: ndarray f32x3 shape [?, ?] soa from p2
  %0:i32 = shape $0.1
  %1:i64 = cast %0
  %2:i64 = const 1
  %3:i32 = shape $0.0
  %4:i64 = cast %3
  %5:i64 = mul %4, %1
  %6:i32 = arg p0+0
  %7:i32 = arg p1+0
  %8:i64 = cast %6
  %9:i64 = cast %7
  %10:i64 = mul %8, %1
  %11:i64 = add %10, %9
  %12:i64 = mul %2, %5
  %13:i64 = add %12, %11
  %14:f32 = element_ptr $0 %13
  %15:f32 = global_load %14
  %16:f32 = add %15, %15
  global_store %14, %16
)",
            {.lowered = true});
}

TEST(LowerAccess, DebugAddsBoundsChecksBeforeEachAccess) {
  auto k = access_kernel("checked", false, Layout::AoS);
  k->debug = true;
  EXPECT_TRUE(lower_access(*k));
  expect_ir(*k, R"(kernel checked
  param p0 i: value i32
  param p1 j: value i32
  param p2 v: ndarray f32x3 ndim 2
  slot $0: ndarray f32x3 shape [?, ?] from p2
  %0:i32 = shape $0.0
  %1:i32 = shape $0.1
  %2:i64 = cast %1
  %3:i64 = const 3
  %4:i64 = const 1
  %5:i32 = arg p0+0
  %6:i32 = arg p1+0
  %7:i64 = cast %5
  %8:i64 = cast %6
  %9:i64 = mul %7, %2
  %10:i64 = add %9, %8
  %11:i64 = mul %10, %3
  %12:i64 = add %11, %4
  %13:f32 = element_ptr $0 %12
  bounds_check $0.0 %5, %0
  bounds_check $0.1 %6, %1
  %16:f32 = global_load %13
  %17:f32 = add %16, %16
  bounds_check $0.0 %5, %0
  bounds_check $0.1 %6, %1
  global_store %13, %17
)",
            {.lowered = true});
  EXPECT_FALSE(lower_access(*k));
  std::vector<int> nodes;
  walk(*k->body, [&](Inst& inst) {
    if (inst.op == Op::BoundsCheck) nodes.push_back(inst.node);
  });
  EXPECT_EQ(nodes, (std::vector<int>{5, 5, 6, 6}));  // the node of each access
}

TEST(DemoteAtomics, LocalAndSerialAtomicsBecomeLoadOpStore) {
  auto k = new_kernel("atomics");
  int x = add_field(*k, "x", Scalar::I32, {8});
  Builder b(k->body.get());
  Inst* zero = b.i32(0);
  Inst* eight = b.i32(8);
  Inst* serial = b.make(Op::Offload, Scalar::Void, {}, static_cast<int>(TaskKind::Serial));
  serial->regions.push_back(std::make_unique<Block>(serial));
  Inst* range =
      b.make(Op::Offload, Scalar::Void, {zero, eight}, static_cast<int>(TaskKind::RangeFor), 1);
  range->regions.push_back(std::make_unique<Block>(range));
  Builder s(serial->region(0));
  Inst* var = s.alloca_(Scalar::I32);
  Inst* old = s.atomic(AtomicOp::Max, var, zero);
  Inst* p = s.global_ptr(Scalar::I32, x, {zero});
  s.atomic(AtomicOp::Xor, p, old);
  Builder r(range->region(0));
  Inst* i = r.loop_index(range, 0);
  Inst* pi = r.global_ptr(Scalar::I32, x, {i});
  r.atomic(AtomicOp::Sub, pi, i);  // parallel: stays atomic
  EXPECT_TRUE(demote_atomics(*k));
  expect_ir(*k, R"(kernel atomics
  slot $0: field i32 shape [8] field x
  %0:i32 = const 0
  %1:i32 = const 8
  offload serial {
    %3:i32 = alloca
    %4:i32 = local_load %3
    %5:i32 = max %4, %0
    local_store %3, %5
    %7:i32 = global_ptr $0.c0 %0
    %8:i32 = global_load %7
    %9:i32 = bit_xor %8, %4
    global_store %7, %9
  }
  offload range_for %0, %1 {
    %12:i32 = loop_index %11.0
    %13:i32 = global_ptr $0.c0 %12
    %14:i32 = atomic sub %13, %12
  }
)",
            {.offloaded = true});
  EXPECT_FALSE(demote_atomics(*k));
}
