// The verifier, one broken kernel per failure it reports: each case builds the smallest IR
// with one defect and expects the verifier to name it.
#include <gtest/gtest.h>

#include <functional>

#include "compiler/ir/builder.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/verifier.h"
#include "runtime/common/error.h"

using namespace loom;
using namespace loom::ir;

namespace {

struct Case {
  const char* name;
  std::function<void(Kernel&, Builder&)> build;
  const char* expected;  // part of the message
  VerifyOptions options = {};
};

void add_field(Kernel& k, Scalar type) {
  ResourceDesc r;
  r.kind = ResourceKind::Field;
  r.dtype = type;
  r.ndim = 1;
  r.shape[0] = 8;
  r.field = "f";
  k.abi.resources.push_back(r);
}

Inst* raw(Builder& b, Op op, Scalar type, std::vector<Inst*> operands, int regions = 0) {
  auto inst = std::make_unique<Inst>(op, type);
  inst->operands = std::move(operands);
  Inst* p = b.insert(std::move(inst));
  for (int i = 0; i < regions; ++i) p->regions.push_back(std::make_unique<Block>(p));
  return p;
}

Inst* offload(Builder& b, TaskKind kind) {
  Inst* task = raw(b, Op::Offload, Scalar::Void, {}, 1);
  task->set_task_kind(kind);
  return task;
}

std::string problem_of(const Case& c) {
  Kernel k;
  k.abi.name = "broken";
  add_field(k, Scalar::F32);
  Builder b(k.body.get());
  c.build(k, b);
  return verify(k, c.options);
}

const VerifyOptions kOffloaded{.offloaded = true};
const VerifyOptions kLowered{.offloaded = true, .lowered = true};

}  // namespace

TEST(Verifier, NamesEveryKindOfBrokenIr) {
  const std::vector<Case> cases = {
      // operands and values
      {"operand count",
       [](Kernel&, Builder& b) {
         raw(b, Op::Neg, Scalar::I32, {b.i32(1), b.i32(2)});
       },
       "expects 1 operands, has 2"},
      {"null operand", [](Kernel&, Builder& b) { raw(b, Op::Neg, Scalar::I32, {nullptr}); },
       "null operand"},
      {"void operand",
       [](Kernel&, Builder& b) {
         Inst* s = b.global_store(b.global_ptr(Scalar::F32, 0, {b.i32(0)}), b.f32(1));
         raw(b, Op::Neg, Scalar::F32, {s});
       },
       "operand has no value"},
      {"use before definition",
       [](Kernel&, Builder& b) {
         Inst* x = b.i32(1);
         Inst* y = b.binary(Op::Add, x, x);
         b.block()->insts[1].swap(b.block()->insts[0]);
         (void)y;
       },
       "does not dominate"},
      {"wrong parent pointer", [](Kernel&, Builder& b) { b.i32(1)->parent = nullptr; },
       "parent pointer is wrong"},
      {"wrong region owner",
       [](Kernel&, Builder& b) {
         Inst* w = b.while_();
         w->regions[0]->owner = nullptr;
       },
       "region owner pointer is wrong"},
      // constants
      {"void constant", [](Kernel&, Builder& b) { raw(b, Op::Const, Scalar::Void, {}); },
       "void constant"},
      {"u8 constant out of normal form",
       [](Kernel&, Builder& b) { b.const_int(Scalar::U8, 1)->bits = 300; },
       "constant bits not in normal form (0x12c as u8)"},
      {"i8 constant not sign-extended",
       [](Kernel&, Builder& b) { b.const_int(Scalar::I8, 1)->bits = 0xff; },
       "constant bits not in normal form"},
      {"bool constant 2", [](Kernel&, Builder& b) { b.const_bool(true)->bits = 2; },
       "constant bits not in normal form"},
      {"f32 constant not a float", [](Kernel&, Builder& b) { b.f32(0)->bits = float_bits(0.1); },
       "constant bits not in normal form"},
      // unary and binary types
      {"unary result type", [](Kernel&, Builder& b) { raw(b, Op::Neg, Scalar::F32, {b.i32(1)}); },
       "unary result type differs from operand"},
      {"not of an int", [](Kernel&, Builder& b) { raw(b, Op::LogicNot, Scalar::Bool, {b.i32(1)}); },
       "not needs bool"},
      {"bit_not of a float",
       [](Kernel&, Builder& b) { raw(b, Op::BitNot, Scalar::F32, {b.f32(1)}); },
       "bit_not needs an integer"},
      {"sin of an int", [](Kernel&, Builder& b) { raw(b, Op::Sin, Scalar::I32, {b.i32(1)}); },
       "math function needs a float"},
      {"bitcast widths", [](Kernel&, Builder& b) { raw(b, Op::Bitcast, Scalar::I64, {b.f32(1)}); },
       "bitcast between widths"},
      {"cast to void", [](Kernel&, Builder& b) { raw(b, Op::Cast, Scalar::Void, {b.f32(1)}); },
       "cast to a non-value type"},
      {"mixed binary",
       [](Kernel&, Builder& b) {
         raw(b, Op::Add, Scalar::I32, {b.i32(1), b.f32(2)});
       },
       "binary operands differ in type"},
      {"binary result",
       [](Kernel&, Builder& b) {
         raw(b, Op::Add, Scalar::I64, {b.i32(1), b.i32(2)});
       },
       "binary result type differs from operands"},
      {"comparison type",
       [](Kernel&, Builder& b) {
         raw(b, Op::Lt, Scalar::I32, {b.i32(1), b.i32(2)});
       },
       "comparison must give bool"},
      {"logic of ints",
       [](Kernel&, Builder& b) {
         raw(b, Op::LogicAnd, Scalar::Bool, {b.i32(1), b.i32(2)});
       },
       "logic op needs bool"},
      {"bit_and of floats",
       [](Kernel&, Builder& b) {
         raw(b, Op::BitAnd, Scalar::F32, {b.f32(1), b.f32(2)});
       },
       "bit operation needs integers"},
      {"atan2 of ints",
       [](Kernel&, Builder& b) {
         raw(b, Op::Atan2, Scalar::I32, {b.i32(1), b.i32(2)});
       },
       "atan2 needs floats"},
      {"select condition",
       [](Kernel&, Builder& b) {
         raw(b, Op::Select, Scalar::I32, {b.i32(1), b.i32(2), b.i32(3)});
       },
       "select types"},
      {"fma types",
       [](Kernel&, Builder& b) {
         raw(b, Op::Fma, Scalar::F32, {b.f32(1), b.f32(2), b.i32(3)});
       },
       "fma types"},
      // arguments, loops, resources
      {"argument index", [](Kernel&, Builder& b) { b.arg(Scalar::F32, 3); },
       "argument index out of range"},
      {"loop_index without its loop",
       [](Kernel&, Builder& b) { raw(b, Op::LoopIndex, Scalar::I32, {}); },
       "expects 1 operands, has 0"},
      {"loop_index of a non-loop",
       [](Kernel&, Builder& b) { raw(b, Op::LoopIndex, Scalar::I32, {b.i32(0)}); },
       "loop_index of a non-loop"},
      {"loop_index outside its loop",
       [](Kernel&, Builder& b) {
         Inst* loop = b.range_for({b.i32(0), b.i32(4)});
         b.loop_index(loop, 0);
       },
       "loop_index outside its loop"},
      {"resource slot",
       [](Kernel&, Builder& b) { b.make(Op::ResourceShape, Scalar::I32, {}, 5, 0); },
       "resource slot out of range"},
      // local variables
      {"local_load of a value",
       [](Kernel&, Builder& b) { raw(b, Op::LocalLoad, Scalar::I32, {b.i32(1)}); },
       "local_load of a non-alloca"},
      {"local_load type",
       [](Kernel&, Builder& b) { raw(b, Op::LocalLoad, Scalar::I32, {b.alloca_(Scalar::F32)}); },
       "local_load type"},
      {"local_store to a value",
       [](Kernel&, Builder& b) {
         raw(b, Op::LocalStore, Scalar::Void, {b.i32(1), b.i32(2)});
       },
       "local_store to a non-alloca"},
      {"local_store type",
       [](Kernel&, Builder& b) { b.local_store(b.alloca_(Scalar::F32), b.i32(2)); },
       "local_store type"},
      // global memory
      {"global_ptr index", [](Kernel&, Builder& b) { b.global_ptr(Scalar::F32, 0, {b.f32(0)}); },
       "index is not an integer"},
      {"global_ptr after lowering",
       [](Kernel&, Builder& b) {
         Inst* task = offload(b, TaskKind::Serial);
         Builder in(task->region(0));
         in.global_ptr(Scalar::F32, 0, {in.i32(0)});
       },
       "global_ptr left after access lowering", kLowered},
      {"element_ptr index",
       [](Kernel&, Builder& b) { b.make(Op::ElementPtr, Scalar::F32, {b.f32(0)}, 0); },
       "element index is not an integer"},
      {"global_load of a value",
       [](Kernel&, Builder& b) { raw(b, Op::GlobalLoad, Scalar::F32, {b.f32(0)}); },
       "global_load of a non-pointer"},
      {"global_load type",
       [](Kernel&, Builder& b) {
         raw(b, Op::GlobalLoad, Scalar::I32, {b.global_ptr(Scalar::F32, 0, {b.i32(0)})});
       },
       "global_load type"},
      {"global_store to a value",
       [](Kernel&, Builder& b) {
         raw(b, Op::GlobalStore, Scalar::Void, {b.f32(0), b.f32(1)});
       },
       "global_store to a non-pointer"},
      {"global_store type",
       [](Kernel&, Builder& b) {
         b.global_store(b.global_ptr(Scalar::F32, 0, {b.i32(0)}), b.i32(1));
       },
       "global_store type"},
      {"atomic on a value",
       [](Kernel&, Builder& b) {
         raw(b, Op::AtomicRMW, Scalar::F32, {b.f32(0), b.f32(1)});
       },
       "atomic on a non-pointer"},
      {"atomic types",
       [](Kernel&, Builder& b) {
         b.atomic(AtomicOp::Add, b.global_ptr(Scalar::F32, 0, {b.i32(0)}), b.i32(1));
       },
       "atomic types"},
      {"bounds_check operands",
       [](Kernel&, Builder& b) { b.make(Op::BoundsCheck, Scalar::Void, {b.i32(0)}, 0); },
       "expects 2 operands, has 1"},
      {"tmp_store operands", [](Kernel&, Builder& b) { b.make(Op::TmpStore, Scalar::Void, {}); },
       "expects 1 operands, has 0"},
      // local arrays
      {"local_array of no elements",
       [](Kernel&, Builder& b) { b.make(Op::LocalArray, Scalar::F32, {}, 0, 1); },
       "local_array without elements"},
      {"array_load of a value",
       [](Kernel&, Builder& b) {
         raw(b, Op::ArrayLoad, Scalar::F32, {b.f32(0), b.i32(0)});
       },
       "array_load of a non-array"},
      {"array_store past the element",
       [](Kernel&, Builder& b) {
         Inst* a = b.make(Op::LocalArray, Scalar::F32, {}, 4, 3);
         b.make(Op::ArrayStore, Scalar::Void, {a, b.i32(0), b.f32(1)}, 3);
       },
       "array_store component outside the element"},
      {"array index type",
       [](Kernel&, Builder& b) {
         Inst* a = b.make(Op::LocalArray, Scalar::F32, {}, 4, 1);
         b.make(Op::ArrayLoad, Scalar::F32, {a, b.f32(1)});
       },
       "array index is not i32"},
      {"array_store type",
       [](Kernel&, Builder& b) {
         Inst* a = b.make(Op::LocalArray, Scalar::F32, {}, 4, 1);
         b.make(Op::ArrayStore, Scalar::Void, {a, b.i32(0), b.i32(1)});
       },
       "array_store type"},
      // regions and control flow
      {"if without else",
       [](Kernel&, Builder& b) { raw(b, Op::If, Scalar::Void, {b.const_bool(true)}, 1); },
       "if needs then and else regions"},
      {"if on an int", [](Kernel&, Builder& b) { raw(b, Op::If, Scalar::Void, {b.i32(1)}, 2); },
       "if condition is not bool"},
      {"range_for regions",
       [](Kernel&, Builder& b) {
         Inst* loop = raw(b, Op::RangeFor, Scalar::Void, {b.i32(0), b.i32(4)}, 0);
         loop->set_dims(1);
       },
       "range_for needs one region"},
      {"range_for bounds",
       [](Kernel&, Builder& b) {
         Inst* loop = raw(b, Op::RangeFor, Scalar::Void, {b.i32(0), b.i32(4)}, 1);
         loop->set_dims(2);
       },
       "range_for bounds do not match its dimensions"},
      {"struct_for slot", [](Kernel&, Builder& b) { b.struct_for(9, 1); },
       "resource slot out of range"},
      {"while regions", [](Kernel&, Builder& b) { raw(b, Op::While, Scalar::Void, {}, 2); },
       "while needs one region"},
      {"break outside a loop",
       [](Kernel&, Builder& b) {
         Inst* branch = b.if_(b.const_bool(true));
         Builder in(branch->region(0));
         in.make(Op::Break, Scalar::Void);
       },
       "break outside a loop"},
      {"continue outside a loop", [](Kernel&, Builder& b) { b.make(Op::Continue, Scalar::Void); },
       "continue outside a loop"},
      {"return inside a loop",
       [](Kernel&, Builder& b) {
         Inst* loop = b.while_();
         Builder in(loop->region(0));
         in.make(Op::Return, Scalar::Void);
       },
       "return inside a parallel or loop region"},
      {"return of a value without returns",
       [](Kernel&, Builder& b) { b.make(Op::Return, Scalar::Void, {b.i32(1)}); },
       "return of a value from a kernel without returns"},
      {"assert of an int",
       [](Kernel&, Builder& b) { b.make(Op::Assert, Scalar::Void, {b.i32(1)}); },
       "assert of a non-bool"},
      // offloaded form
      {"offload regions", [](Kernel&, Builder& b) { raw(b, Op::Offload, Scalar::Void, {}, 0); },
       "offload needs one region"},
      {"offload nested",
       [](Kernel&, Builder& b) {
         Inst* task = offload(b, TaskKind::Serial);
         Builder in(task->region(0));
         offload(in, TaskKind::Serial);
       },
       "offload task not at top level"},
      {"non-uniform top level", [](Kernel&, Builder& b) { b.alloca_(Scalar::F32); },
       "top level of an offloaded kernel holds a non-uniform instruction", kOffloaded},
      {"load at the top level",
       [](Kernel&, Builder& b) {
         b.global_load(b.make(Op::ElementPtr, Scalar::F32, {b.const_int(Scalar::I64, 0)}, 0));
       },
       "top level of an offloaded kernel holds a non-uniform instruction", kOffloaded},
      {"break in a range task",
       [](Kernel&, Builder& b) {
         Inst* begin = b.i32(0);
         Inst* end = b.i32(4);
         Inst* task = offload(b, TaskKind::RangeFor);
         task->set_dims(1);
         task->operands = {begin, end};
         Builder in(task->region(0));
         in.make(Op::Break, Scalar::Void);
       },
       "break leaves a parallel task", kOffloaded},
      {"continue in a serial task",
       [](Kernel&, Builder& b) {
         Inst* task = offload(b, TaskKind::Serial);
         Builder in(task->region(0));
         in.make(Op::Continue, Scalar::Void);
       },
       "continue outside a loop", kOffloaded},
  };
  for (const Case& c : cases) {
    std::string problem = problem_of(c);
    EXPECT_NE(problem.find(c.expected), std::string::npos)
        << c.name << ": got \"" << problem << "\"";
  }
  EXPECT_GE(cases.size(), 55u);
}

TEST(Verifier, AcceptsLocalArraysAndTheirIndexChecks) {
  Kernel k;
  Builder b(k.body.get());
  Inst* a = b.make(Op::LocalArray, Scalar::I32, {}, 8, 2);
  Inst* i = b.i32(3);
  b.make(Op::BoundsCheck, Scalar::Void, {i, b.i32(8)}, -1, 0);  // slot -1: a local index
  b.make(Op::ArrayStore, Scalar::Void, {a, i, b.i32(5)}, 1);
  b.make(Op::ArrayLoad, Scalar::I32, {a, i}, 1);
  EXPECT_EQ(verify(k), "");
}

TEST(Verifier, StructureOnlyBeforeTypeCheck) {
  // Without types, mixed operand types pass; structural problems still do not.
  Case mixed{"mixed",
             [](Kernel&, Builder& b) {
               raw(b, Op::Add, Scalar::I32, {b.i32(1), b.f32(2)});
             },
             "",
             {.types = false}};
  EXPECT_EQ(problem_of(mixed), "");
  Case dominance{"dominance",
                 [](Kernel&, Builder& b) {
                   Inst* loop = b.range_for({b.i32(0), b.i32(4)});
                   b.loop_index(loop, 0);
                 },
                 "",
                 {.types = false}};
  EXPECT_NE(problem_of(dominance).find("loop_index outside its loop"), std::string::npos);
}

TEST(Verifier, VerifyOrThrowNamesThePass) {
  Kernel k;
  Builder b(k.body.get());
  b.make(Op::Break, Scalar::Void);
  try {
    verify_or_throw(k, "full_simplify/die, round 2");
    ADD_FAILURE();
  } catch (const loom::InternalError& e) {
    EXPECT_EQ(
        e.what(),
        "internal error: IR verification failed after full_simplify/die, round 2: break outside a "
        "loop: break [in " +
            e.location() + "]");
  }
}

TEST(Verifier, AFailureIsAnInternalErrorAtTheVerifier) {
  // A pass that breaks the IR is a bug in Loom, not in the user's graph: the error says so
  // and names the check that found it, with the kernel it was working on.
  Kernel k;
  k.abi.name = "broken_by_a_pass";
  Builder b(k.body.get());
  b.make(Op::Continue, Scalar::Void);
  try {
    verify_or_throw(k, "licm");
    ADD_FAILURE() << "no error";
  } catch (const loom::InternalError& e) {
    EXPECT_NE(e.location().find("verify_or_throw"), std::string::npos) << e.location();
    EXPECT_NE(e.location().find("compiler/ir/verifier.cpp:"), std::string::npos) << e.location();
    EXPECT_EQ(e.place().kernel, "broken_by_a_pass");
    EXPECT_NE(std::string(e.what()).find(
                  "internal error: IR verification failed after licm: continue outside a loop"),
              std::string::npos)
        << e.what();
  }
}

TEST(Verifier, ReportsUsesOfErasedInstructions) {
  // A pass that erases an instruction but forgets a use: the verifier names the use, and
  // reads nothing freed (the erased instruction lives on until Kernel::free_erased).
  Kernel k;
  k.abi.name = "dangling";
  Builder b(k.body.get());
  Inst* one = b.i32(1);
  b.binary(Op::Add, one, one);
  k.erase(k.body->remove(k.body->index_of(one)));
  EXPECT_TRUE(one->erased());
  EXPECT_EQ(k.erased_count(), 1u);
  EXPECT_EQ(verify(k),
            "operand 0 (const) refers to an erased instruction: %0:i32 = add %<erased>, %<erased>");
  k.free_erased();
  EXPECT_EQ(k.erased_count(), 0u);
}

TEST(Verifier, ErasingARegionErasesWhatIsInside) {
  Kernel k;
  k.abi.name = "nested";
  Builder b(k.body.get());
  Inst* loop = b.while_();
  Builder in(loop->region(0));
  Inst* inner = in.i32(2);
  in.make(Op::Break, Scalar::Void);
  b.unary(Op::Neg, inner);  // escapes its region too; the erasure is what gets reported
  k.erase(k.body->remove(k.body->index_of(loop)));
  EXPECT_TRUE(inner->erased());
  EXPECT_NE(verify(k).find("operand 0 (const) refers to an erased instruction"), std::string::npos);
}

// element_ptr with private copies (compiler/ir/private_copies.h): a region inside the
// temporaries, in a parallel task, the target of atomic adds and subs whose old value nothing
// reads.
TEST(Verifier, PrivateCopiesOfAnElementPtr) {
  struct PrivateCase {
    const char* name;
    std::function<void(Kernel&, Builder&, Inst* ptr)> use;  // after the element_ptr
    const char* expected;                                   // "" for none
    TaskKind kind = TaskKind::RangeFor;
    uint32_t temps = 64 + 4 * 64;  // flags, then 4 copies of the 8-float field
  };
  const std::vector<PrivateCase> cases = {
      {"an atomic add", [](Kernel&, Builder& b, Inst* p) { b.atomic(AtomicOp::Add, p, b.f32(1)); },
       ""},
      {"an atomic sub", [](Kernel&, Builder& b, Inst* p) { b.atomic(AtomicOp::Sub, p, b.f32(1)); },
       ""},
      {"an atomic max", [](Kernel&, Builder& b, Inst* p) { b.atomic(AtomicOp::Max, p, b.f32(1)); },
       "an element_ptr with private copies used but by an atomic add"},
      {"a load", [](Kernel&, Builder& b, Inst* p) { b.global_load(p); },
       "an element_ptr with private copies used but by an atomic add"},
      {"the old value read",
       [](Kernel&, Builder& b, Inst* p) { b.unary(Op::Neg, b.atomic(AtomicOp::Add, p, b.f32(1))); },
       "reads the old value of an atomic through private copies"},
      {"outside the temporaries",
       [](Kernel&, Builder& b, Inst* p) { b.atomic(AtomicOp::Add, p, b.f32(1)); },
       "private copies outside the temporaries", TaskKind::RangeFor, 64 + 3 * 64},
      {"in a serial task",
       [](Kernel&, Builder& b, Inst* p) { b.atomic(AtomicOp::Add, p, b.f32(1)); },
       "private copies outside a parallel task", TaskKind::Serial},
      {"of an ndarray",
       [](Kernel& k, Builder& b, Inst* p) {
         k.abi.resources[0].kind = ResourceKind::Ndarray;
         b.atomic(AtomicOp::Add, p, b.f32(1));
       },
       "private copies of a resource without a fixed numeric shape"},
      {"beside a plain element_ptr of the same slot",
       [](Kernel&, Builder& b, Inst* p) {
         b.atomic(AtomicOp::Add, p, b.f32(1));
         Inst* plain = b.make(Op::ElementPtr, Scalar::F32, {b.const_int(Scalar::I64, 5)}, 0, 0);
         b.atomic(AtomicOp::Add, plain, b.f32(1));
       },
       "an element_ptr of a slot with private copies in this task has other ones"},
      {"a temporary inside the copies",
       [](Kernel&, Builder& b, Inst* p) {
         b.atomic(AtomicOp::Add, p, b.f32(1));
         b.make(Op::TmpStore, Scalar::Void, {b.f32(2)}, 100);
       },
       "a temporary inside private copies"},
      {"a temporary after them",
       [](Kernel&, Builder& b, Inst* p) {
         b.atomic(AtomicOp::Add, p, b.f32(1));
         b.make(Op::TmpStore, Scalar::Void, {b.f32(2)}, 64 + 4 * 64);
       },
       "", TaskKind::RangeFor, 64 + 4 * 64 + 4},
      {"copies of two slots overlapping",
       [](Kernel& k, Builder& b, Inst* p) {
         b.atomic(AtomicOp::Add, p, b.f32(1));
         add_field(k, Scalar::F32);
         Inst* other = b.make(Op::ElementPtr, Scalar::F32, {b.const_int(Scalar::I64, 1)}, 1, 64);
         other->bits = 4;
         b.atomic(AtomicOp::Add, other, b.f32(1));
       },
       "private copies overlap those of another slot", TaskKind::RangeFor, 64 + 64 + 4 * 64},
  };
  for (const PrivateCase& c : cases) {
    Kernel k;
    k.abi.name = "scatter";
    add_field(k, Scalar::F32);
    k.abi.temps_size = c.temps;
    Builder b(k.body.get());
    Inst* begin = b.i32(0);
    Inst* end = b.i32(100);
    Inst* task = offload(b, c.kind);
    if (c.kind == TaskKind::RangeFor) {
      task->set_dims(1);
      task->operands = {begin, end};
    }
    Builder in(task->region(0));
    Inst* p = in.make(Op::ElementPtr, Scalar::F32, {in.const_int(Scalar::I64, 3)}, 0, 0);
    p->bits = 4;
    c.use(k, in, p);
    std::string problem = verify(k, kLowered);
    if (*c.expected == 0)
      EXPECT_EQ(problem, "") << c.name;
    else
      EXPECT_NE(problem.find(c.expected), std::string::npos)
          << c.name << ": got \"" << problem << "\"";
  }
}
