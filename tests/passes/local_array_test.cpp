// Local arrays through the passes (issue 14 §2): what each pass may and may not do with
// local_array / array_load / array_store. A store to a[j] may hit a[k], so no load is
// forwarded or shared across a store; loads stay inside the loops that store; an array
// nothing reads goes, stores and all; type_check converts what is stored and the index.
#include <functional>

#include "compiler/passes/cse.h"
#include "compiler/passes/die.h"
#include "compiler/passes/drop_asserts.h"
#include "compiler/passes/licm.h"
#include "compiler/passes/pipeline.h"
#include "compiler/passes/store_forward.h"
#include "compiler/passes/type_check.h"
#include "runtime/common/error.h"
#include "tests/passes/pass_test_util.h"

using namespace loom;
using namespace loom::ir;
using namespace loom::passes;
using namespace loom::passes::testing;

namespace {

std::unique_ptr<Kernel> with_out(const char* name) {
  auto k = new_kernel(name);
  add_value_param(*k, "j", Scalar::I32);
  add_field(*k, "out", Scalar::I32, {8});
  return k;
}

void store_out(Builder& b, int index, Inst* value) {
  b.global_store(b.global_ptr(Scalar::I32, 0, {b.i32(index)}), value);
}

Inst* array(Builder& b, Scalar type, int length, int width = 1) {
  return b.make(Op::LocalArray, type, {}, length, width);
}
Inst* load(Builder& b, Inst* a, Inst* index, int component = 0) {
  return b.make(Op::ArrayLoad, a->type, {a, index}, component);
}
void store(Builder& b, Inst* a, Inst* index, Inst* value, int component = 0) {
  b.make(Op::ArrayStore, Scalar::Void, {a, index, value}, component);
}

int count(const Kernel& k, Op op) {
  int n = 0;
  walk(static_cast<const Block&>(*k.body), [&](const Inst& i) { n += i.op == op; });
  return n;
}

}  // namespace

TEST(LocalArrayPasses, StoreForwardingNeverForwardsThroughAnArray) {
  // a[0] = 1; a[j] = 2; out[0] = a[0]: 1 or 2, depending on j.
  auto k = with_out("forward");
  Builder b(k->body.get());
  Inst* j = b.arg(Scalar::I32, 0);
  Inst* a = array(b, Scalar::I32, 4);
  store(b, a, b.i32(0), b.i32(1));
  store(b, a, j, b.i32(2));
  store_out(b, 0, load(b, a, b.i32(0)));
  store_forward(*k);
  EXPECT_EQ(count(*k, Op::ArrayStore), 2);
  EXPECT_EQ(count(*k, Op::ArrayLoad), 1);
  EXPECT_EQ(verify(*k), "");
}

TEST(LocalArrayPasses, CseDoesNotShareLoadsAcrossAStore) {
  auto k = with_out("cse");
  Builder b(k->body.get());
  Inst* j = b.arg(Scalar::I32, 0);
  Inst* a = array(b, Scalar::I32, 4);
  store_out(b, 0, load(b, a, j));
  store(b, a, j, b.i32(5));
  store_out(b, 1, load(b, a, j));
  cse(*k);
  EXPECT_EQ(count(*k, Op::ArrayLoad), 2);
}

TEST(LocalArrayPasses, LicmKeepsLoadsInTheLoopThatStores) {
  // for i in range(4): a[i] = i; out[i] = a[0]: a[0] is 0 from the first iteration on, but
  // only because the loop stored it; the load must not move above the loop.
  auto k = with_out("licm");
  Builder b(k->body.get());
  Inst* a = array(b, Scalar::I32, 4);
  Inst* loop = b.range_for({b.i32(0), b.i32(4)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  store(b, a, i, i);
  Inst* x = load(b, a, b.i32(0));
  b.global_store(b.global_ptr(Scalar::I32, 0, {i}), x);
  licm(*k);
  EXPECT_EQ(x->parent, loop->region(0));
  EXPECT_EQ(verify(*k), "");
}

TEST(LocalArrayPasses, DieRemovesArraysNothingReads) {
  auto k = with_out("die");
  Builder b(k->body.get());
  Inst* j = b.arg(Scalar::I32, 0);
  Inst* unread = array(b, Scalar::F32, 16);
  store(b, unread, j, b.f32(2.5));
  Inst* read = array(b, Scalar::I32, 4);
  store(b, read, j, b.i32(3));
  load(b, read, b.i32(1));  // unused: removed, and then `read` is write-only too
  Inst* kept = array(b, Scalar::I32, 4);
  store(b, kept, j, b.i32(7));
  store_out(b, 0, load(b, kept, b.i32(1)));
  die(*k);
  EXPECT_EQ(count(*k, Op::LocalArray), 1);
  EXPECT_EQ(count(*k, Op::ArrayStore), 1);
  EXPECT_EQ(count(*k, Op::ArrayLoad), 1);
  EXPECT_EQ(verify(*k), "");
}

TEST(LocalArrayPasses, TypeCheckConvertsTheValueAndTheIndex) {
  auto k = new_kernel("types");
  add_value_param(*k, "j", Scalar::I64);
  add_field(*k, "out", Scalar::F32, {8});
  Builder b(k->body.get());
  Inst* j = b.arg(Scalar::I64, 0);
  Inst* a = array(b, Scalar::F32, 4);
  store(b, a, j, b.i32(3));  // i32 stored into f32, i64 index
  Inst* x = b.make(Op::ArrayLoad, Scalar::Void, {a, b.i32(1)});
  b.global_store(b.global_ptr(Scalar::F32, 0, {b.i32(0)}), x);
  type_check(*k);
  EXPECT_EQ(x->type, Scalar::F32);
  EXPECT_EQ(verify(*k), "");
  // Loading from a variable is not an array access.
  auto bad = new_kernel("bad");
  Builder c(bad->body.get());
  c.make(Op::ArrayLoad, Scalar::I32, {c.alloca_(Scalar::I32), c.i32(0)});
  EXPECT_THROW(type_check(*bad), Error);
}

TEST(LocalArrayPasses, LocalIndexChecksLeaveReleaseKernels) {
  auto build = [](bool debug) {
    auto k = with_out("checks");
    k->debug = debug;
    Builder b(k->body.get());
    Inst* j = b.arg(Scalar::I32, 0);
    Inst* a = array(b, Scalar::I32, 4);
    b.make(Op::BoundsCheck, Scalar::Void, {j, b.i32(4)}, -1, 0);
    store(b, a, j, b.i32(1));
    store_out(b, 0, load(b, a, b.i32(0)));
    drop_asserts(*k);
    return count(*k, Op::BoundsCheck);
  };
  EXPECT_EQ(build(false), 0);
  EXPECT_EQ(build(true), 1);
}
