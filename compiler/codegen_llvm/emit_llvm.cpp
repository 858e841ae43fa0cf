#include "compiler/codegen_llvm/emit_llvm.h"

#include <bit>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "compiler/codegen_llvm/emit_math.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/private_copies.h"
#include "runtime/common/error.h"

namespace loom::codegen {

namespace {

using ir::Inst;
using ir::Op;
using llvm::BasicBlock;
using llvm::Function;
using llvm::Type;
using llvm::Value;

// Field indices of the plain C structs in kernel_abi.h.
enum CtxField { kCtxParams, kCtxResources, kCtxReturns, kCtxTemps, kCtxError, kCtxSeed };
enum ErrField { kErrCode, kErrNode, kErrSlot, kErrDim, kErrIndex, kErrExtent };

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;
// Read by runtime/cpu/cpu_module.cpp; each kernel's object is loaded on its own, so one name
// serves.
constexpr const char* kAssertMessagesSymbol = "loom_assert_messages";

std::string sanitize(const std::string& name) {
  std::string s;
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s.empty() ? "kernel" : s;
}

bool contains_op(const ir::Block& block, Op op) {
  bool found = false;
  ir::walk(block, [&](const Inst& inst) { found |= inst.op == op; });
  return found;
}

constexpr int kNoCancelPoint = -2;

// Where `continue` and `break` go in the innermost loop; `brk` is null in a task's own loop,
// which runs in parallel and cannot be left.
struct LoopTarget {
  BasicBlock* cont;
  BasicBlock* brk;
};

class Emitter {
 public:
  Emitter(const ir::Kernel& kernel, llvm::LLVMContext& context, llvm::Module& module,
          const EmitOptions& options)
      : k_(kernel),
        c_(context),
        m_(module),
        opt_(options),
        b_(context),
        entry_(context),
        math_(b_) {
    i8_ = b_.getInt8Ty();
    i32_ = b_.getInt32Ty();
    i64_ = b_.getInt64Ty();
    ptr_ = llvm::PointerType::get(context, 0);
    ctx_ty_ = llvm::StructType::create(context, {ptr_, ptr_, ptr_, ptr_, ptr_, i64_},
                                       "loom.LaunchContext");
    view_ty_ = llvm::StructType::create(context, {ptr_, llvm::ArrayType::get(i64_, kMaxDims)},
                                        "loom.ResourceView");
    err_ty_ =
        llvm::StructType::create(context, {i32_, i32_, i32_, i32_, i64_, i64_}, "loom.LaunchError");
    if (options.fast_math) {
      llvm::FastMathFlags fmf;
      fmf.setAllowReassoc();
      fmf.setNoSignedZeros();
      fmf.setAllowReciprocal();
      fmf.setAllowContract(true);
      fmf.setApproxFunc();
      b_.setFastMathFlags(fmf);
    }
    report_fn_ = make_report_function();
  }

  // The assertion messages as `const char* loom_assert_messages[]`, null-terminated, so a
  // runtime without the compiler can say what failed.
  void emit_assert_messages() {
    std::vector<llvm::Constant*> entries;
    for (const std::string& text : assert_messages_) {
      auto* str = llvm::ConstantDataArray::getString(c_, text);
      auto* global = new llvm::GlobalVariable(
          m_, str->getType(), true, llvm::GlobalValue::PrivateLinkage, str, "loom.assert_message");
      entries.push_back(global);
    }
    entries.push_back(llvm::ConstantPointerNull::get(ptr_));
    auto* type = llvm::ArrayType::get(ptr_, entries.size());
    new llvm::GlobalVariable(m_, type, true, llvm::GlobalValue::ExternalLinkage,
                             llvm::ConstantArray::get(type, entries), kAssertMessagesSymbol);
  }

  // `index` counts the kernel's offloaded tasks (the IR's), which name the symbols and seed
  // their random streams; the private-copy tasks around a task are extra ABI tasks.
  void emit_task(const Inst& offload, size_t index, TaskDesc* desc) {
    ir::TaskKind kind = offload.task_kind();
    std::string sym = task_symbol(index);
    desc->kind = static_cast<uint8_t>(kind);
    task_index_ = index;
    desc->symbol = sym;
    if (kind == ir::TaskKind::RangeFor) desc->dims = static_cast<uint8_t>(offload.dims());
    if (kind == ir::TaskKind::StructFor)
      desc->dims =
          static_cast<uint8_t>(k_.abi.resources[static_cast<size_t>(offload.resource_slot())].ndim);
    if (kind != ir::TaskKind::Serial) {
      desc->extent_symbol = sym + "_extent";
      emit_extent_function(offload, desc->extent_symbol);
    }

    Function* fn = new_function(sym, b_.getVoidTy(), {ptr_, i64_, i64_});
    begin_function(fn);
    emit_uniforms();
    uses_rand_ = contains_op(*offload.region(0), Op::Rand);
    if (kind == ir::TaskKind::Serial) {
      if (uses_rand_) init_rng({});
      emit_block(*offload.region(0));
    } else {
      std::vector<Value*> lo, hi;
      task_bounds(offload, &lo, &hi);
      Value* first = b_.CreateAdd(lo[0], b_.CreateTrunc(fn->getArg(1), i32_));
      Value* last = b_.CreateAdd(lo[0], b_.CreateTrunc(fn->getArg(2), i32_));
      std::vector<PrivateRegion> regions = private_regions(offload);
      Value* use_copies = regions.empty() ? nullptr : worth_copies(offload, regions, lo, hi);
      lo[0] = first;
      hi[0] = last;
      begin_partials(offload);
      if (regions.empty()) {
        emit_nest(offload, 0, lo, hi, *offload.region(0));
      } else {
        emit_private_nests(offload, regions, use_copies, lo, hi);
      }
      if (!terminated()) combine_partials();
    }
    finish_function();
  }

  // ---------------------------------------------------------------- private copies
  // A parallel task whose element_ptrs have private copies (ir/private_copies.h) is emitted
  // twice: each chunk claims a free copy of every such slot at its start and, when it got
  // them all, runs the version that adds into its copies with plain loads and stores, then
  // marks them as holding sums; otherwise (no copy free, or too few updates for copies to
  // pay: worth_copies) it runs the version with the atomics as written. Three more tasks go
  // with it: a serial check before it (copies left by a launch that stopped early are
  // cleared), a parallel merge after it (every copy holding sums is added into the slot and
  // cleared) and a serial reset (every copy free again).
  struct PrivateRegion {
    int slot;
    Scalar type;
    ir::PrivateCopies layout;
    Value* base = nullptr;   // per chunk: the claimed copy
    Value* claim = nullptr;  // per chunk: copy * 4 + its flag before the claim, or -1
  };

  std::vector<PrivateRegion> private_regions(const Inst& offload) {
    std::vector<PrivateRegion> regions;
    std::set<int32_t> seen;  // their offsets
    ir::walk(*offload.region(0), [&](const Inst& in) {
      if (!ir::has_private_copies(in) || !seen.insert(in.temp_offset()).second) return;
      std::string problem;
      std::optional<ir::PrivateCopies> layout = ir::private_copies_of(k_, in, &problem);
      if (!layout) throw InternalError("codegen: " + problem);
      regions.push_back({in.resource_slot(), resource(in.resource_slot()).dtype, *layout});
    });
    return regions;
  }

 public:
  bool has_private_copies(const Inst& offload) {
    bool found = false;
    ir::walk(*offload.region(0), [&](const Inst& in) { found |= ir::has_private_copies(in); });
    return found;
  }

  std::string task_symbol(size_t index) const {
    return "loom_" + sanitize(k_.abi.name) + "_task" + std::to_string(index);
  }

  // Before the task: a copy not free is what a launch that stopped early (a failed check,
  // a cancel) left; its sums belong to no launch, so it is cleared. Loops over the copies at
  // run time, here and in the merge: the code does not grow with their number.
  void emit_private_check(const Inst& offload, size_t index, TaskDesc* desc) {
    desc->kind = static_cast<uint8_t>(ir::TaskKind::Serial);
    desc->symbol = task_symbol(index) + "_private_check";
    begin_function(new_function(desc->symbol, b_.getVoidTy(), {ptr_, i64_, i64_}));
    for (const PrivateRegion& r : private_regions(offload))
      counted_loop(b_.getInt32(0), copy_count(r.layout), [&](Value* k, BasicBlock*, BasicBlock*) {
        Value* flag = flag_ptr(r.layout, k);
        BasicBlock* stale = BasicBlock::Create(c_, "stale_copy", fn_);
        BasicBlock* next = BasicBlock::Create(c_, "next_copy", fn_);
        b_.CreateCondBr(b_.CreateICmpNE(b_.CreateLoad(i32_, flag), b_.getInt32(ir::kCopyFree)),
                        stale, next);
        b_.SetInsertPoint(stale);
        b_.CreateMemSet(copy_ptr(r.layout, k), b_.getInt8(0), b_.getInt64(r.layout.copy_bytes),
                        llvm::MaybeAlign(64));
        b_.CreateStore(b_.getInt32(ir::kCopyFree), flag);
        b_.CreateBr(next);
        b_.SetInsertPoint(next);
      });
    finish_function();
  }

  // After the task: scalars [begin, end) of every slot, plus the same scalars of every copy
  // holding sums, which are cleared. No rows at all when no copy holds sums.
  void emit_private_merge(const Inst& offload, size_t index, TaskDesc* desc) {
    std::vector<PrivateRegion> regions = private_regions(offload);
    desc->kind = static_cast<uint8_t>(ir::TaskKind::RangeFor);
    desc->dims = 1;
    desc->symbol = task_symbol(index) + "_private_merge";
    desc->extent_symbol = desc->symbol + "_extent";

    Function* extent = new_function(desc->extent_symbol, i64_, {ptr_, ptr_});
    begin_function(extent);
    uint64_t rows = 0;
    Value* any = entry_alloca(b_.getInt1Ty());
    b_.CreateStore(b_.getFalse(), any);
    for (const PrivateRegion& r : regions) {
      rows = std::max(rows, r.layout.scalars);
      counted_loop(b_.getInt32(0), copy_count(r.layout), [&](Value* k, BasicBlock*, BasicBlock*) {
        b_.CreateStore(b_.CreateOr(b_.CreateLoad(b_.getInt1Ty(), any), holds_sums(r.layout, k)),
                       any);
      });
    }
    b_.CreateStore(b_.getInt64(1), extent->getArg(1));
    b_.CreateRet(
        b_.CreateSelect(b_.CreateLoad(b_.getInt1Ty(), any), b_.getInt64(rows), b_.getInt64(0)));

    Function* fn = new_function(desc->symbol, b_.getVoidTy(), {ptr_, i64_, i64_});
    begin_function(fn);
    for (const PrivateRegion& r : regions) {
      // [begin, end) within this slot's scalars; i32 is enough (the region fits in 2^31).
      Value* n = b_.getInt64(r.layout.scalars);
      Value* lo =
          b_.CreateTrunc(b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, fn->getArg(1), n), i32_);
      Value* hi =
          b_.CreateTrunc(b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, fn->getArg(2), n), i32_);
      Type* t = mem_type(r.type);
      Value* slot_data = data(r.slot);
      counted_loop(b_.getInt32(0), copy_count(r.layout), [&](Value* k, BasicBlock*, BasicBlock*) {
        BasicBlock* add = BasicBlock::Create(c_, "merge_copy", fn_);
        BasicBlock* next = BasicBlock::Create(c_, "next_copy", fn_);
        b_.CreateCondBr(holds_sums(r.layout, k), add, next);
        b_.SetInsertPoint(add);
        Value* copy = copy_ptr(r.layout, k);
        counted_loop(lo, hi, [&](Value* iv, BasicBlock*, BasicBlock*) {
          Value* i = b_.CreateZExt(iv, i64_);
          Value* to = b_.CreateInBoundsGEP(t, slot_data, i);
          Value* from = b_.CreateInBoundsGEP(t, copy, i);
          Value* sum = math_.binary(Op::Add, b_.CreateLoad(t, to), b_.CreateLoad(t, from), r.type);
          b_.CreateStore(sum, to);
          b_.CreateStore(llvm::Constant::getNullValue(t), from);
        });
        b_.CreateBr(next);
        b_.SetInsertPoint(next);
      });
    }
    finish_function();
  }

  // After the merge: every copy free (and zero: the merge cleared what it added).
  void emit_private_reset(const Inst& offload, size_t index, TaskDesc* desc) {
    static_assert(ir::kCopyFree == 0, "the flags are reset by a memset");
    desc->kind = static_cast<uint8_t>(ir::TaskKind::Serial);
    desc->symbol = task_symbol(index) + "_private_reset";
    begin_function(new_function(desc->symbol, b_.getVoidTy(), {ptr_, i64_, i64_}));
    for (const PrivateRegion& r : private_regions(offload))
      b_.CreateMemSet(temp_ptr(r.layout.offset), b_.getInt8(0),
                      b_.getInt64(4 * static_cast<uint64_t>(r.layout.copies)),
                      llvm::MaybeAlign(64));
    finish_function();
  }

 private:
  Value* temp_ptr(uint64_t offset) {
    return b_.CreateGEP(i8_, ctx_field(kCtxTemps), b_.getInt64(offset));
  }

  Value* copy_count(const ir::PrivateCopies& layout) {
    return b_.getInt32(static_cast<uint32_t>(layout.copies));
  }

  // Flag and storage of copy `k` (i32, below the copy count).
  Value* flag_ptr(const ir::PrivateCopies& layout, Value* k) {
    return b_.CreateInBoundsGEP(i32_, temp_ptr(layout.offset), b_.CreateZExt(k, i64_));
  }
  Value* copy_ptr(const ir::PrivateCopies& layout, Value* k) {
    return b_.CreateInBoundsGEP(
        i8_, temp_ptr(layout.first),
        b_.CreateMul(b_.CreateZExt(k, i64_), b_.getInt64(layout.stride), "", true, true));
  }

  Value* holds_sums(const ir::PrivateCopies& layout, Value* k) {
    return b_.CreateICmpEQ(b_.CreateLoad(i32_, flag_ptr(layout, k)),
                           b_.getInt32(ir::kCopyHoldsSums));
  }

  // Copies pay when the task makes at least as many updates as a merge adds scalars: its
  // iterations (all chunks') times the updates in its body, against the copies' scalars.
  Value* worth_copies(const Inst& offload, const std::vector<PrivateRegion>& regions,
                      const std::vector<Value*>& lo, const std::vector<Value*>& hi) {
    int updates = 0;
    ir::walk(*offload.region(0), [&](const Inst& in) {
      updates += in.op == Op::AtomicRMW && ir::has_private_copies(*in.operand(0));
    });
    uint64_t scalars = 0;
    for (const PrivateRegion& r : regions) scalars += r.layout.scalars;
    Value* trips = llvm::ConstantFP::get(b_.getDoubleTy(), static_cast<double>(updates));
    for (size_t d = 0; d < lo.size(); ++d) {
      Value* n = b_.CreateSub(b_.CreateSExt(hi[d], i64_), b_.CreateSExt(lo[d], i64_));
      n = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, n, b_.getInt64(0));
      trips = b_.CreateFMul(trips, b_.CreateSIToFP(n, b_.getDoubleTy()));
    }
    return b_.CreateFCmpOGE(trips,
                            llvm::ConstantFP::get(b_.getDoubleTy(), static_cast<double>(scalars)));
  }

  // i32 loom.claim_copy(ptr flags, i32 copies): the first copy not taken, taken now
  // (acquire: the sums a chunk left in it are visible), as copy * 4 + its flag before; -1
  // when every copy is taken.
  Function* claim_function() {
    if (claim_fn_) return claim_fn_;
    auto* fn = Function::Create(llvm::FunctionType::get(i32_, {ptr_, i32_}, false),
                                Function::InternalLinkage, "loom.claim_copy", m_);
    fn->setDoesNotThrow();
    llvm::IRBuilder<> r(BasicBlock::Create(c_, "entry", fn));
    BasicBlock* head = BasicBlock::Create(c_, "copy", fn);
    BasicBlock* look = BasicBlock::Create(c_, "look", fn);
    BasicBlock* take = BasicBlock::Create(c_, "take", fn);
    BasicBlock* next = BasicBlock::Create(c_, "next", fn);
    BasicBlock* taken = BasicBlock::Create(c_, "taken", fn);
    BasicBlock* none = BasicBlock::Create(c_, "none", fn);
    r.CreateBr(head);
    r.SetInsertPoint(head);
    llvm::PHINode* k = r.CreatePHI(i32_, 2, "k");
    k->addIncoming(r.getInt32(0), &fn->getEntryBlock());
    r.CreateCondBr(r.CreateICmpSLT(k, fn->getArg(1)), look, none);
    r.SetInsertPoint(look);
    Value* flag = r.CreateInBoundsGEP(i32_, fn->getArg(0), k);
    auto* seen = r.CreateAlignedLoad(i32_, flag, llvm::MaybeAlign(4));
    seen->setAtomic(llvm::AtomicOrdering::Monotonic);
    r.CreateCondBr(r.CreateICmpEQ(seen, r.getInt32(ir::kCopyTaken)), next, take);
    r.SetInsertPoint(take);
    Value* pair =
        r.CreateAtomicCmpXchg(flag, seen, r.getInt32(ir::kCopyTaken), llvm::MaybeAlign(4),
                              llvm::AtomicOrdering::Acquire, llvm::AtomicOrdering::Monotonic);
    r.CreateCondBr(r.CreateExtractValue(pair, 1), taken, next);
    r.SetInsertPoint(next);
    k->addIncoming(r.CreateAdd(k, r.getInt32(1)), next);
    r.CreateBr(head);
    r.SetInsertPoint(taken);
    r.CreateRet(r.CreateAdd(r.CreateShl(k, 2), seen));
    r.SetInsertPoint(none);
    r.CreateRet(r.getInt32(-1));
    return claim_fn_ = fn;
  }

  // Sets the flag of a claimed copy (release: the sums added to it are visible to the next
  // claim and to the merge).
  void release_copy(const PrivateRegion& r, Value* flag_value) {
    Value* k = b_.CreateAShr(r.claim, 2);
    Value* flag = b_.CreateInBoundsGEP(i32_, temp_ptr(r.layout.offset), k);
    auto* st = b_.CreateAlignedStore(flag_value, flag, llvm::MaybeAlign(4));
    st->setAtomic(llvm::AtomicOrdering::Release);
  }

  void emit_private_nests(const Inst& offload, std::vector<PrivateRegion>& regions,
                          Value* use_copies, const std::vector<Value*>& lo,
                          const std::vector<Value*>& hi) {
    BasicBlock* claim = BasicBlock::Create(c_, "claim_copies", fn_);
    BasicBlock* with = BasicBlock::Create(c_, "with_copies", fn_);
    BasicBlock* without = BasicBlock::Create(c_, "with_atomics", fn_);
    BasicBlock* join = BasicBlock::Create(c_, "chunk_done", fn_);
    b_.CreateCondBr(use_copies, claim, without);
    b_.SetInsertPoint(claim);
    Value* all = b_.getTrue();
    for (PrivateRegion& r : regions) {
      r.claim = b_.CreateCall(
          claim_function(),
          {temp_ptr(r.layout.offset), b_.getInt32(static_cast<uint32_t>(r.layout.copies))});
      Value* got = b_.CreateICmpSGE(r.claim, b_.getInt32(0));
      all = b_.CreateAnd(all, got);
      Value* k = b_.CreateZExt(b_.CreateAShr(r.claim, 2), i64_);
      r.base = b_.CreateGEP(
          i8_, temp_ptr(r.layout.first),
          b_.CreateMul(k, b_.getInt64(r.layout.stride)));  // meaningless when none was free
    }
    BasicBlock* some_missing = BasicBlock::Create(c_, "give_back_copies", fn_);
    b_.CreateCondBr(all, with, some_missing);
    // Not every slot got a copy: the ones claimed go back as they were; atomics it is.
    b_.SetInsertPoint(some_missing);
    for (const PrivateRegion& r : regions) {
      BasicBlock* back = BasicBlock::Create(c_, "give_back", fn_);
      BasicBlock* next = BasicBlock::Create(c_, "given_back", fn_);
      b_.CreateCondBr(b_.CreateICmpSGE(r.claim, b_.getInt32(0)), back, next);
      b_.SetInsertPoint(back);
      release_copy(r, b_.CreateAnd(r.claim, b_.getInt32(3)));
      b_.CreateBr(next);
      b_.SetInsertPoint(next);
    }
    b_.CreateBr(without);

    b_.SetInsertPoint(with);
    private_bases_.clear();
    for (const PrivateRegion& r : regions) private_bases_[r.layout.offset] = r.base;
    emit_nest(offload, 0, lo, hi, *offload.region(0));
    private_bases_.clear();
    if (!terminated()) {
      for (const PrivateRegion& r : regions) release_copy(r, b_.getInt32(ir::kCopyHoldsSums));
      b_.CreateBr(join);
    }

    b_.SetInsertPoint(without);
    emit_nest(offload, 0, lo, hi, *offload.region(0));
    if (!terminated()) b_.CreateBr(join);
    b_.SetInsertPoint(join);
  }

  // An atomic add or sub through a claimed copy: the chunk owns the copy, so a plain load
  // and store do (the old value is never read: the verifier sees to it).
  Value* private_update(const Inst& in) {
    Value* ptr = value(in.operand(0));
    Type* t = mem_type(in.type);
    Value* old = b_.CreateLoad(t, ptr);
    Op op = in.atomic_op() == ir::AtomicOp::Sub ? Op::Sub : Op::Add;
    b_.CreateStore(math_.binary(op, old, value(in.operand(1)), in.type), ptr);
    return old;
  }

 private:
  // ---------------------------------------------------------------- types and helpers
  Type* reg_type(Scalar s) { return math_.reg_type(s); }
  Type* mem_type(Scalar s) { return s == Scalar::Bool ? i8_ : reg_type(s); }

  Value* load_mem(Value* ptr, Scalar s) {
    Value* v = b_.CreateLoad(mem_type(s), ptr);
    return s == Scalar::Bool ? b_.CreateICmpNE(v, b_.getInt8(0)) : v;
  }
  void store_mem(Value* ptr, Value* v, Scalar s) {
    if (s == Scalar::Bool) v = b_.CreateZExt(v, i8_);
    b_.CreateStore(v, ptr);
  }

  Value* fconst(Scalar s, double v) { return math_.fconst(s, v); }
  Value* intrinsic(llvm::Intrinsic::ID id, std::initializer_list<Value*> args) {
    return math_.intrinsic(id, args);
  }
  Value* cast(Value* v, Scalar from, Scalar to) { return math_.cast(v, from, to); }

  Function* new_function(const std::string& name, Type* ret, const std::vector<Type*>& params) {
    auto* fn = Function::Create(llvm::FunctionType::get(ret, params, false),
                                Function::ExternalLinkage, name, m_);
    fn->setDoesNotThrow();
    if (!opt_.cpu.empty()) fn->addFnAttr("target-cpu", opt_.cpu);
    if (!opt_.features.empty()) fn->addFnAttr("target-features", opt_.features);
    return fn;
  }

  void begin_function(Function* fn) {
    fn_ = fn;
    values_.clear();
    loop_index_.clear();
    data_.clear();
    shapes_.clear();
    args_.clear();
    ctx_fields_.clear();
    loops_.clear();
    partials_.clear();
    rng_ = nullptr;
    ctx_ = fn->getArg(0);
    BasicBlock* entry = BasicBlock::Create(c_, "entry", fn);
    BasicBlock* body = BasicBlock::Create(c_, "body", fn);
    llvm::BranchInst* br = llvm::BranchInst::Create(body, entry);
    entry_.SetInsertPoint(br);
    if (fn->getReturnType()->isVoidTy()) {
      ret_bb_ = BasicBlock::Create(c_, "return", fn);
      llvm::ReturnInst::Create(c_, ret_bb_);
    } else {
      ret_bb_ = nullptr;
    }
    b_.SetInsertPoint(body);
  }

  void finish_function() {
    if (!b_.GetInsertBlock()->getTerminator()) b_.CreateBr(ret_bb_);
    // Blocks opened after a terminator (dead code) may be left empty.
    for (BasicBlock& bb : *fn_)
      if (!bb.getTerminator()) {
        llvm::IRBuilder<> t(&bb);
        t.CreateUnreachable();
      }
  }

  bool terminated() const { return b_.GetInsertBlock()->getTerminator() != nullptr; }
  void ensure_open_block() {
    if (terminated()) b_.SetInsertPoint(BasicBlock::Create(c_, "dead", fn_));
  }

  // ---------------------------------------------------------------- values hoisted to entry
  Value* ctx_field(CtxField f) {
    auto it = ctx_fields_.find(f);
    if (it != ctx_fields_.end()) return it->second;
    Value* p = entry_.CreateStructGEP(ctx_ty_, ctx_, f);
    Value* v = entry_.CreateLoad(f == kCtxSeed ? static_cast<Type*>(i64_) : ptr_, p);
    ctx_fields_[f] = v;
    return v;
  }

  Value* view_field(int slot, int field, int dim) {
    Value* views = ctx_field(kCtxResources);
    Value* view = entry_.CreateGEP(view_ty_, views, entry_.getInt64(static_cast<uint64_t>(slot)));
    if (field == 0) return entry_.CreateLoad(ptr_, entry_.CreateStructGEP(view_ty_, view, 0));
    Value* p = entry_.CreateInBoundsGEP(
        view_ty_, view,
        {entry_.getInt32(0), entry_.getInt32(1), entry_.getInt32(static_cast<uint32_t>(dim))});
    return entry_.CreateLoad(i64_, p);
  }

  const ResourceDesc& resource(int slot) {
    if (slot < 0 || static_cast<size_t>(slot) >= k_.abi.resources.size())
      throw InternalError("codegen: resource slot " + std::to_string(slot) + " out of range");
    return k_.abi.resources[static_cast<size_t>(slot)];
  }

  Value* data(int slot) {
    auto it = data_.find(slot);
    if (it != data_.end()) return it->second;
    resource(slot);
    return data_[slot] = view_field(slot, 0, 0);
  }

  // Extent of `slot` along `dim` as i32 (fields: a constant).
  Value* shape(int slot, int dim) {
    auto key = std::make_pair(slot, dim);
    auto it = shapes_.find(key);
    if (it != shapes_.end()) return it->second;
    const ResourceDesc& r = resource(slot);
    if (dim < 0 || dim >= kMaxDims) throw InternalError("codegen: shape dimension out of range");
    Value* v;
    if (r.kind == ResourceKind::Field) {
      v = b_.getInt32(static_cast<uint32_t>(r.shape[static_cast<size_t>(dim)]));
    } else {
      v = entry_.CreateTrunc(view_field(slot, 1, dim), i32_);
    }
    return shapes_[key] = v;
  }

  Value* arg_load(const Inst& in) {
    auto key = std::make_tuple(in.param_index(), in.byte_offset(), static_cast<int>(in.type));
    auto it = args_.find(key);
    if (it != args_.end()) return it->second;
    if (in.param_index() < 0 || static_cast<size_t>(in.param_index()) >= k_.abi.params.size())
      throw InternalError("codegen: argument index out of range");
    Value* params = ctx_field(kCtxParams);
    Value* base = entry_.CreateLoad(
        ptr_,
        entry_.CreateGEP(ptr_, params, entry_.getInt64(static_cast<uint64_t>(in.param_index()))));
    Value* p =
        entry_.CreateGEP(i8_, base, entry_.getInt64(static_cast<uint64_t>(in.byte_offset())));
    Value* v = entry_.CreateLoad(mem_type(in.type), p);
    // Bool: one byte for value parameters, a 32-bit 0/1 in argpacks; the low byte tells.
    if (in.type == Scalar::Bool) v = entry_.CreateICmpNE(v, entry_.getInt8(0));
    return args_[key] = v;
  }

  Value* entry_alloca(Type* t) {
    llvm::IRBuilder<> a(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    return a.CreateAlloca(t);
  }

  // ---------------------------------------------------------------- error reporting
  Function* make_report_function() {
    auto* fn = Function::Create(
        llvm::FunctionType::get(b_.getVoidTy(), {ptr_, i32_, i32_, i32_, i32_, i64_, i64_}, false),
        Function::InternalLinkage, "loom.report_error", m_);
    fn->addFnAttr(llvm::Attribute::NoInline);
    fn->addFnAttr(llvm::Attribute::Cold);
    fn->setDoesNotThrow();
    llvm::IRBuilder<> r(BasicBlock::Create(c_, "entry", fn));
    BasicBlock* has = BasicBlock::Create(c_, "has_error_record", fn);
    BasicBlock* won = BasicBlock::Create(c_, "first_failure", fn);
    BasicBlock* done = BasicBlock::Create(c_, "done", fn);
    Value* err = r.CreateLoad(ptr_, r.CreateStructGEP(ctx_ty_, fn->getArg(0), kCtxError));
    r.CreateCondBr(r.CreateIsNull(err), done, has);
    r.SetInsertPoint(has);
    Value* code_ptr = r.CreateStructGEP(err_ty_, err, kErrCode);
    Value* pair = r.CreateAtomicCmpXchg(code_ptr, r.getInt32(0), fn->getArg(1), llvm::MaybeAlign(4),
                                        llvm::AtomicOrdering::SequentiallyConsistent,
                                        llvm::AtomicOrdering::SequentiallyConsistent);
    r.CreateCondBr(r.CreateExtractValue(pair, 1), won, done);
    r.SetInsertPoint(won);
    r.CreateStore(fn->getArg(2), r.CreateStructGEP(err_ty_, err, kErrNode));
    r.CreateStore(fn->getArg(3), r.CreateStructGEP(err_ty_, err, kErrSlot));
    r.CreateStore(fn->getArg(4), r.CreateStructGEP(err_ty_, err, kErrDim));
    r.CreateStore(fn->getArg(5), r.CreateStructGEP(err_ty_, err, kErrIndex));
    r.CreateStore(fn->getArg(6), r.CreateStructGEP(err_ty_, err, kErrExtent));
    r.CreateBr(done);
    r.SetInsertPoint(done);
    r.CreateRetVoid();
    return fn;
  }

  // Component `component()` of element operand 1 of a local array. The index is clamped into
  // the array: the array lives on the stack, so no index may address anything else.
  Value* array_element(const Inst& in) {
    const Inst& array = *in.operand(0);
    Value* i = value(in.operand(1));
    i = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, i, b_.getInt32(0));
    i = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, i,
                                 b_.getInt32(static_cast<uint32_t>(array.length() - 1)));
    Value* flat = b_.CreateAdd(
        b_.CreateMul(i, b_.getInt32(static_cast<uint32_t>(array.width())), "", true, true),
        b_.getInt32(static_cast<uint32_t>(in.component())), "", true, true);
    return b_.CreateInBoundsGEP(mem_type(array.type), value(&array), b_.CreateZExt(flat, i64_));
  }

  // Branches to a failure path when `failed`; the path reports and ends the task.
  void check(Value* failed, int code, int node, int slot, int dim, Value* index, Value* extent) {
    BasicBlock* fail = BasicBlock::Create(c_, "check_failed", fn_);
    BasicBlock* ok = BasicBlock::Create(c_, "check_ok", fn_);
    llvm::MDBuilder md(c_);
    b_.CreateCondBr(failed, fail, ok, md.createBranchWeights(1, 1u << 20));
    b_.SetInsertPoint(fail);
    b_.CreateCall(report_fn_, {ctx_, b_.getInt32(static_cast<uint32_t>(code)),
                               b_.getInt32(static_cast<uint32_t>(node)),
                               b_.getInt32(static_cast<uint32_t>(slot)),
                               b_.getInt32(static_cast<uint32_t>(dim)), index, extent});
    b_.CreateBr(ret_bb_);
    b_.SetInsertPoint(ok);
  }

  // ---------------------------------------------------------------- random numbers
  Value* mix64(Value* z) {
    z = b_.CreateMul(b_.CreateXor(z, b_.CreateLShr(z, 30)), b_.getInt64(0xBF58476D1CE4E5B9ull));
    z = b_.CreateMul(b_.CreateXor(z, b_.CreateLShr(z, 27)), b_.getInt64(0x94D049BB133111EBull));
    return b_.CreateXor(z, b_.CreateLShr(z, 31));
  }

  // Counter-based: the state of an iteration is a hash of the seed and its indices.
  void init_rng(const std::vector<Value*>& indices) {
    if (!rng_) rng_ = entry_alloca(i64_);
    // The task index keeps two tasks of one launch on different streams.
    Value* h = mix64(b_.CreateAdd(ctx_field(kCtxSeed), b_.getInt64(kGolden * (task_index_ + 1))));
    for (Value* i : indices)
      h = mix64(b_.CreateAdd(b_.CreateXor(h, b_.CreateZExt(i, i64_)), b_.getInt64(kGolden)));
    b_.CreateStore(h, rng_);
  }

  Value* rand(Scalar t) {
    if (!rng_) init_rng({});
    Value* s = b_.CreateAdd(b_.CreateLoad(i64_, rng_), b_.getInt64(kGolden));
    b_.CreateStore(s, rng_);
    Value* z = mix64(s);
    switch (t) {
      case Scalar::F32:
        return b_.CreateFMul(b_.CreateUIToFP(b_.CreateLShr(z, 40), b_.getFloatTy()),
                             fconst(t, 1.0 / 16777216.0));
      case Scalar::F64:
        return b_.CreateFMul(b_.CreateUIToFP(b_.CreateLShr(z, 11), b_.getDoubleTy()),
                             fconst(t, 1.0 / 9007199254740992.0));
      default: return b_.CreateTrunc(z, reg_type(t));
    }
  }

  // ---------------------------------------------------------------- loops
  using BodyFn = std::function<void(Value* iv, BasicBlock* latch, BasicBlock* exit)>;

  // for (iv = lo; iv < hi; ++iv) over i32, the shape LLVM vectorises.
  void counted_loop(Value* lo, Value* hi, const BodyFn& body, int cancel_node = kNoCancelPoint) {
    BasicBlock* pre = b_.GetInsertBlock();
    BasicBlock* header = BasicBlock::Create(c_, "loop", fn_);
    BasicBlock* inner = BasicBlock::Create(c_, "loop_body", fn_);
    BasicBlock* latch = BasicBlock::Create(c_, "loop_latch", fn_);
    BasicBlock* exit = BasicBlock::Create(c_, "loop_exit", fn_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* iv = b_.CreatePHI(i32_, 2, "i");
    iv->addIncoming(lo, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(iv, hi), inner, exit);
    b_.SetInsertPoint(inner);
    body(iv, latch, exit);
    if (!terminated()) b_.CreateBr(latch);
    b_.SetInsertPoint(latch);
    if (cancel_node != kNoCancelPoint) cancel_point(cancel_node);
    Value* next = b_.CreateAdd(iv, b_.getInt32(1), "i.next", false, true);  // iv < hi: no overflow
    iv->addIncoming(next, b_.GetInsertBlock());
    b_.CreateBr(header);
    b_.SetInsertPoint(exit);
  }

  Value* to_i32(Value* v, Scalar s) {
    return s == Scalar::I32 || s == Scalar::U32 ? v : b_.CreateIntCast(v, i32_, is_signed_int(s));
  }

  // Nested counted loops over dims [d, lo.size()); the body runs in the innermost one. A
  // break in the body leaves the whole nest (`brk`: the outermost loop's exit; none in a task).
  void emit_nest(const Inst& loop, size_t d, const std::vector<Value*>& lo,
                 const std::vector<Value*>& hi, const ir::Block& body, BasicBlock* brk = nullptr) {
    counted_loop(
        lo[d], hi[d],
        [&](Value* iv, BasicBlock* latch, BasicBlock* exit) {
          if (d == 0 && loop.op != Op::Offload) brk = exit;
          loop_index_[{&loop, static_cast<int>(d)}] = iv;
          if (d + 1 < lo.size()) {
            emit_nest(loop, d + 1, lo, hi, body, brk);
            return;
          }
          if (loop.op == Op::Offload && uses_rand_) {
            std::vector<Value*> idx;
            for (size_t i = 0; i < lo.size(); ++i)
              idx.push_back(loop_index_[{&loop, static_cast<int>(i)}]);
            init_rng(idx);
          }
          loops_.push_back({latch, brk});
          emit_block(body);
          loops_.pop_back();
        },
        cancel_at(loop, d + 1 == lo.size(), body));
  }

  // A nested (serial) for loop polls at its back-edge when another loop runs inside it; an
  // innermost one is bounded by its 32-bit range and stays free of the poll, so it vectorises.
  int cancel_at(const Inst& loop, bool innermost_dim, const ir::Block& body) const {
    if (!opt_.cancel_checks || loop.op == Op::Offload) return kNoCancelPoint;
    if (!innermost_dim) return loop.node;
    bool has_loop = false;
    ir::walk(body, [&](const Inst& inst) {
      has_loop |= inst.op == Op::While || inst.op == Op::RangeFor || inst.op == Op::StructFor;
    });
    return has_loop ? loop.node : kNoCancelPoint;
  }

  // The editor's cancellation point (EmitOptions::cancel_checks): a volatile read of the
  // launch's error code, which the runtime sets from another thread; a non-zero code (a
  // cancel, or a failed check in another chunk) ends the task, and the first loop to see a
  // cancel records its node so the editor can mark it.
  void cancel_point(int node) {
    if (!opt_.cancel_checks) return;
    Value* err = ctx_field(kCtxError);
    BasicBlock* has = BasicBlock::Create(c_, "cancel_check", fn_);
    BasicBlock* stop = BasicBlock::Create(c_, "cancelled", fn_);
    BasicBlock* go = BasicBlock::Create(c_, "not_cancelled", fn_);
    llvm::MDBuilder md(c_);
    b_.CreateCondBr(b_.CreateIsNull(err), go, has, md.createBranchWeights(1, 1u << 20));
    b_.SetInsertPoint(has);
    auto* code = b_.CreateAlignedLoad(i32_, b_.CreateStructGEP(err_ty_, err, kErrCode),
                                      llvm::MaybeAlign(4), true, "cancel_code");
    b_.CreateCondBr(b_.CreateICmpNE(code, b_.getInt32(0)), stop, go,
                    md.createBranchWeights(1, 1u << 20));
    b_.SetInsertPoint(stop);
    if (node >= 0) {
      Value* node_ptr = b_.CreateStructGEP(err_ty_, err, kErrNode);
      auto* seen = b_.CreateAlignedLoad(i32_, node_ptr, llvm::MaybeAlign(4));
      seen->setAtomic(llvm::AtomicOrdering::Monotonic);
      BasicBlock* mark = BasicBlock::Create(c_, "cancel_mark", fn_);
      b_.CreateCondBr(b_.CreateICmpSLT(seen, b_.getInt32(0)), mark, ret_bb_);
      b_.SetInsertPoint(mark);
      auto* st = b_.CreateAlignedStore(b_.getInt32(static_cast<uint32_t>(node)), node_ptr,
                                       llvm::MaybeAlign(4));
      st->setAtomic(llvm::AtomicOrdering::Monotonic);
    }
    b_.CreateBr(ret_bb_);
    b_.SetInsertPoint(go);
  }

  // Iteration bounds of a range/struct loop (Offload or nested RangeFor/StructFor).
  void task_bounds(const Inst& loop, std::vector<Value*>* lo, std::vector<Value*>* hi) {
    bool is_struct = loop.op == Op::StructFor ||
                     (loop.op == Op::Offload && loop.task_kind() == ir::TaskKind::StructFor);
    if (is_struct) {
      int slot = loop.resource_slot();
      int dims = loop.op == Op::StructFor && loop.dims() > 0 ? loop.dims() : resource(slot).ndim;
      for (int d = 0; d < dims; ++d) {
        lo->push_back(b_.getInt32(0));
        hi->push_back(shape(slot, d));
      }
      return;
    }
    if (loop.operands.size() % 2 != 0 || loop.operands.empty())
      throw InternalError("codegen: range loop without begin/end pairs");
    for (size_t i = 0; i < loop.operands.size(); i += 2) {
      lo->push_back(to_i32(value(loop.operand(i)), loop.operand(i)->type));
      hi->push_back(to_i32(value(loop.operand(i + 1)), loop.operand(i + 1)->type));
    }
  }

  // int64_t extent(LaunchContext*, int64_t* row_work): rows of the outermost dimension, and
  // iterations per row (the inner extents' product, capped at kTaskRowWorkCap) so the
  // runtime can size chunks of multi-d tasks by their total work.
  void emit_extent_function(const Inst& offload, const std::string& name) {
    Function* fn = new_function(name, i64_, {ptr_, ptr_});
    begin_function(fn);
    emit_uniforms();
    std::vector<Value*> lo, hi;
    task_bounds(offload, &lo, &hi);
    auto extent = [&](size_t d) {
      Value* n = b_.CreateSub(b_.CreateSExt(hi[d], i64_), b_.CreateSExt(lo[d], i64_));
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, n, b_.getInt64(0));
    };
    Value* row_work = b_.getInt64(1);
    for (size_t d = 1; d < lo.size(); ++d)  // capped product < 2^31 * 2^32: no overflow
      row_work = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateMul(row_work, extent(d)),
                                          b_.getInt64(kTaskRowWorkCap));
    b_.CreateStore(row_work, fn->getArg(1));
    b_.CreateRet(extent(0));
  }

  // ---------------------------------------------------------------- instructions
  Value* value(const Inst* inst) {
    auto it = values_.find(inst);
    if (it == values_.end())
      throw InternalError("codegen: operand used before it is defined (" +
                          std::string(ir::op_name(inst->op)) + ")");
    return it->second;
  }

  void emit_uniforms() {
    for (auto& inst : k_.body->insts)
      if (inst->op != Op::Offload) emit_inst(*inst);
  }

  void emit_block(const ir::Block& block) {
    for (const auto& inst : block.insts) {
      ensure_open_block();
      emit_inst(*inst);
    }
  }

  void emit_inst(const Inst& in) {
    Value* v = nullptr;
    if (ir::is_unary(in.op)) {
      v = math_.unary(in.op, value(in.operand(0)), in.operand(0)->type, in.type);
    } else if (ir::is_binary(in.op)) {
      v = math_.binary(in.op, value(in.operand(0)), value(in.operand(1)), in.operand(0)->type);
    } else {
      v = other(in);
    }
    if (v) values_[&in] = v;
  }

  Value* constant(const Inst& in) {
    Type* t = reg_type(in.type);
    if (is_float(in.type)) return llvm::ConstantFP::get(t, in.float_value());
    if (in.type == Scalar::Bool) return b_.getInt1(in.bits != 0);
    return llvm::ConstantInt::get(t, in.bits, is_signed_int(in.type));
  }

  Value* atomic(const Inst& in) {
    Value* ptr = value(in.operand(0));
    Value* v = value(in.operand(1));
    Scalar t = in.type;
    ir::AtomicOp op = in.atomic_op();
    using RMW = llvm::AtomicRMWInst;
    auto rmw = [&](RMW::BinOp bop, Value* val) {
      auto align = llvm::MaybeAlign(static_cast<uint64_t>(size_of(t)));
      return b_.CreateAtomicRMW(bop, ptr, val, align, llvm::AtomicOrdering::Monotonic);
    };
    if (is_float(t)) {
      switch (op) {
        case ir::AtomicOp::Add: return rmw(RMW::FAdd, v);
        case ir::AtomicOp::Sub: return rmw(RMW::FSub, v);
        case ir::AtomicOp::Min: return rmw(RMW::FMin, v);
        case ir::AtomicOp::Max: return rmw(RMW::FMax, v);
        case ir::AtomicOp::And:
        case ir::AtomicOp::Or:
        case ir::AtomicOp::Xor: {  // on the bits
          Type* it = b_.getIntNTy(static_cast<unsigned>(bit_width(t)));
          RMW::BinOp bop = op == ir::AtomicOp::And  ? RMW::And
                           : op == ir::AtomicOp::Or ? RMW::Or
                                                    : RMW::Xor;
          return b_.CreateBitCast(rmw(bop, b_.CreateBitCast(v, it)), v->getType());
        }
      }
    }
    bool s = is_signed_int(t);
    if (t == Scalar::Bool) v = b_.CreateZExt(v, i8_);
    RMW::BinOp bop = RMW::Add;
    switch (op) {
      case ir::AtomicOp::Add: bop = RMW::Add; break;
      case ir::AtomicOp::Sub: bop = RMW::Sub; break;
      case ir::AtomicOp::Min: bop = s ? RMW::Min : RMW::UMin; break;
      case ir::AtomicOp::Max: bop = s ? RMW::Max : RMW::UMax; break;
      case ir::AtomicOp::And: bop = RMW::And; break;
      case ir::AtomicOp::Or: bop = RMW::Or; break;
      case ir::AtomicOp::Xor: bop = RMW::Xor; break;
    }
    Value* old = rmw(bop, v);
    return t == Scalar::Bool ? b_.CreateICmpNE(old, b_.getInt8(0)) : old;
  }

  // ---------------------------------------------------------------- reductions
  // A parallel task keeps one partial result per reduced temporary in a local that starts
  // at the operation's identity; `reduce` combines into it (a register after mem2reg, so the
  // loop vectorises like a hand-written sum), and the chunk combines it into the temporary
  // once at its end: one compare-and-swap per chunk, not per element.
  void begin_partials(const Inst& offload) {
    ir::walk(*offload.region(0), [&](const Inst& in) {
      if (in.op != Op::Reduce || partials_.count(in.temp_offset())) return;
      Scalar t = in.operand(0)->type;
      Value* p = entry_alloca(reg_type(t));
      uint64_t bits = ir::combine_identity_bits(in.combine_op(), t);
      Value* start = is_float(t)
                         ? fconst(t, std::bit_cast<double>(bits))
                         : static_cast<Value*>(llvm::ConstantInt::get(reg_type(t), bits, false));
      b_.CreateStore(start, p);
      partials_[in.temp_offset()] = {p, &in};
    });
  }

  void reduce(const Inst& in) {
    auto it = partials_.find(in.temp_offset());
    if (it == partials_.end()) throw InternalError("codegen: reduce outside a parallel task");
    Scalar t = in.operand(0)->type;
    Value* p = it->second.first;
    Value* old = b_.CreateLoad(reg_type(t), p);
    b_.CreateStore(math_.binary(in.combine_op(), old, value(in.operand(0)), t), p);
  }

  // temp = temp OP partial, atomically: a compare-and-swap loop on the bits serves every
  // operation and type alike (LLVM has no atomic multiply or integer-bits float min).
  void combine_partials() {
    for (auto& [offset, entry] : partials_) {
      auto [p, in] = entry;
      Scalar t = in->operand(0)->type;
      Type* rt = reg_type(t);
      Type* bits_t = b_.getIntNTy(static_cast<unsigned>(bit_width(t)));
      auto align = llvm::Align(static_cast<uint64_t>(size_of(t)));
      Value* partial = b_.CreateLoad(rt, p);
      Value* temp =
          b_.CreateGEP(i8_, ctx_field(kCtxTemps), b_.getInt64(static_cast<uint64_t>(offset)));
      auto* first = b_.CreateAlignedLoad(bits_t, temp, align);
      first->setAtomic(llvm::AtomicOrdering::Monotonic);
      BasicBlock* before = b_.GetInsertBlock();
      BasicBlock* retry = BasicBlock::Create(c_, "reduce_combine", fn_);
      BasicBlock* done = BasicBlock::Create(c_, "reduce_done", fn_);
      b_.CreateBr(retry);
      b_.SetInsertPoint(retry);
      llvm::PHINode* old = b_.CreatePHI(bits_t, 2);
      old->addIncoming(first, before);
      Value* updated = math_.binary(in->combine_op(), b_.CreateBitCast(old, rt), partial, t);
      Value* pair =
          b_.CreateAtomicCmpXchg(temp, old, b_.CreateBitCast(updated, bits_t), align,
                                 llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
      old->addIncoming(b_.CreateExtractValue(pair, 0), b_.GetInsertBlock());
      b_.CreateCondBr(b_.CreateExtractValue(pair, 1), done, retry);
      b_.SetInsertPoint(done);
    }
  }

  // ---------------------------------------------------------------- textures
  // Channel `channel` of texel (x, y, z) (i32, in range; y/z null below 2-d/3-d).
  Value* texel(int slot, Value* x, Value* y, Value* z, int channel) {
    const ResourceDesc& r = resource(slot);
    int nc = texture_channels(r.format);
    if (channel >= nc) return fconst(Scalar::F32, channel == 3 ? 1.0 : 0.0);
    Value* i = b_.CreateSExt(x, i64_);
    Value* w = b_.CreateSExt(shape(slot, 0), i64_);
    if (y) i = b_.CreateAdd(i, b_.CreateMul(b_.CreateSExt(y, i64_), w));
    if (z)
      i = b_.CreateAdd(i, b_.CreateMul(b_.CreateSExt(z, i64_),
                                       b_.CreateMul(w, b_.CreateSExt(shape(slot, 1), i64_))));
    Value* at = b_.CreateAdd(b_.CreateMul(i, b_.getInt64(static_cast<uint64_t>(nc))),
                             b_.getInt64(static_cast<uint64_t>(channel)));
    if (r.format == TextureFormat::RGBA8) {
      Value* byte = b_.CreateLoad(i8_, b_.CreateInBoundsGEP(i8_, data(slot), at));
      return b_.CreateFMul(b_.CreateUIToFP(byte, b_.getFloatTy()),
                           fconst(Scalar::F32, 1.0 / 255.0));
    }
    return b_.CreateLoad(b_.getFloatTy(), b_.CreateInBoundsGEP(b_.getFloatTy(), data(slot), at));
  }

  Value* clamp_i32(Value* v, Value* n) {
    Value* hi = b_.CreateSub(n, b_.getInt32(1));
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax,
                                    b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, v, hi),
                                    b_.getInt32(0));
  }

  // A texel coordinate from a floored float coordinate `fl` for extent n (float nf).
  Value* wrap(Value* fl, Value* n, Value* nf, bool repeat) {
    Value* zero = fconst(Scalar::F32, 0);
    Value* top = b_.CreateFSub(nf, fconst(Scalar::F32, 1));
    if (repeat)
      fl = b_.CreateFSub(
          fl, b_.CreateFMul(nf, intrinsic(llvm::Intrinsic::floor, {b_.CreateFDiv(fl, nf)})));
    Value* c = b_.CreateBinaryIntrinsic(
        llvm::Intrinsic::minnum, b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, fl, zero), top);
    return clamp_i32(b_.CreateFPToSI(c, i32_), n);
  }

  Value* tex_sample(const Inst& in) {
    int slot = in.resource_slot();
    size_t dims = in.operands.size();
    if (dims < 1 || dims > 3) throw InternalError("codegen: tex_sample needs 1 to 3 coordinates");
    bool linear = in.bits & ir::kSampleLinear, repeat = in.bits & ir::kSampleRepeat;
    std::vector<Value*> i0(3, nullptr), i1(3, nullptr), frac(3, nullptr);
    for (size_t d = 0; d < dims; ++d) {
      Value* n = shape(slot, static_cast<int>(d));
      Value* nf = b_.CreateSIToFP(n, b_.getFloatTy());
      Value* t = b_.CreateFMul(cast(value(in.operand(d)), in.operand(d)->type, Scalar::F32), nf);
      if (!linear) {
        i0[d] = wrap(intrinsic(llvm::Intrinsic::floor, {t}), n, nf, repeat);
        continue;
      }
      t = b_.CreateFSub(t, fconst(Scalar::F32, 0.5));
      Value* fl = intrinsic(llvm::Intrinsic::floor, {t});
      frac[d] = b_.CreateFSub(t, fl);
      i0[d] = wrap(fl, n, nf, repeat);
      i1[d] = wrap(b_.CreateFAdd(fl, fconst(Scalar::F32, 1)), n, nf, repeat);
    }
    int ch = in.channel();
    if (!linear) return texel(slot, i0[0], i0[1], i0[2], ch);
    auto lerp = [&](Value* a, Value* c, Value* w) {
      return b_.CreateFAdd(a, b_.CreateFMul(b_.CreateFSub(c, a), w));
    };
    // Interpolate along x, then y, then z.
    std::function<Value*(size_t, std::vector<Value*>&)> sample =
        [&](size_t d, std::vector<Value*>& at) -> Value* {
      if (d == 0) {
        Value* a = texel(slot, i0[0], at[1], at[2], ch);
        Value* c = texel(slot, i1[0], at[1], at[2], ch);
        return lerp(a, c, frac[0]);
      }
      at[d] = i0[d];
      Value* a = sample(d - 1, at);
      at[d] = i1[d];
      Value* c = sample(d - 1, at);
      return lerp(a, c, frac[d]);
    };
    std::vector<Value*> at(3, nullptr);
    return sample(dims - 1, at);
  }

  Value* tex_load(const Inst& in) {
    int slot = in.resource_slot();
    std::vector<Value*> c(3, nullptr);
    for (size_t d = 0; d < in.operands.size() && d < 3; ++d)
      c[d] = clamp_i32(to_i32(value(in.operand(d)), in.operand(d)->type),
                       shape(slot, static_cast<int>(d)));
    return texel(slot, c[0], c[1], c[2], in.channel());
  }

  void tex_store(const Inst& in) {
    int slot = in.resource_slot();
    const ResourceDesc& r = resource(slot);
    auto dims =
        static_cast<size_t>(in.dims() > 0 ? in.dims() : static_cast<int>(in.operands.size()) - 4);
    if (in.operands.size() != dims + 4)
      throw InternalError("codegen: tex_store needs coordinates and 4 channels");
    std::vector<Value*> c(3, nullptr);
    Value* inside = b_.getTrue();
    for (size_t d = 0; d < dims && d < 3; ++d) {
      c[d] = to_i32(value(in.operand(d)), in.operand(d)->type);
      inside = b_.CreateAnd(inside, b_.CreateICmpULT(c[d], shape(slot, static_cast<int>(d))));
    }
    // Stores outside the texture are dropped.
    BasicBlock* write = BasicBlock::Create(c_, "tex_store", fn_);
    BasicBlock* done = BasicBlock::Create(c_, "tex_store_done", fn_);
    b_.CreateCondBr(inside, write, done);
    b_.SetInsertPoint(write);
    int nc = texture_channels(r.format);
    Value* i = b_.CreateSExt(c[0], i64_);
    Value* w = b_.CreateSExt(shape(slot, 0), i64_);
    if (c[1]) i = b_.CreateAdd(i, b_.CreateMul(b_.CreateSExt(c[1], i64_), w));
    if (c[2])
      i = b_.CreateAdd(i, b_.CreateMul(b_.CreateSExt(c[2], i64_),
                                       b_.CreateMul(w, b_.CreateSExt(shape(slot, 1), i64_))));
    for (int ch = 0; ch < nc; ++ch) {
      const Inst* src = in.operand(dims + static_cast<size_t>(ch));
      Value* v = cast(value(src), src->type, Scalar::F32);
      Value* at = b_.CreateAdd(b_.CreateMul(i, b_.getInt64(static_cast<uint64_t>(nc))),
                               b_.getInt64(static_cast<uint64_t>(ch)));
      if (r.format == TextureFormat::RGBA8) {
        Value* cl = b_.CreateBinaryIntrinsic(
            llvm::Intrinsic::minnum,
            b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, v, fconst(Scalar::F32, 0)),
            fconst(Scalar::F32, 1));
        Value* byte = b_.CreateFPToUI(
            b_.CreateFAdd(b_.CreateFMul(cl, fconst(Scalar::F32, 255)), fconst(Scalar::F32, 0.5)),
            i8_);
        b_.CreateStore(byte, b_.CreateInBoundsGEP(i8_, data(slot), at));
      } else {
        b_.CreateStore(v, b_.CreateInBoundsGEP(b_.getFloatTy(), data(slot), at));
      }
    }
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }

  // ---------------------------------------------------------------- everything else
  const LoopTarget& innermost(bool is_break) {
    if (loops_.empty())
      throw InternalError(is_break ? "codegen: break outside a loop"
                                   : "codegen: continue outside a loop");
    if (is_break && !loops_.back().brk)
      throw InternalError("codegen: break leaves a parallel task");
    return loops_.back();
  }

  Value* other(const Inst& in) {
    switch (in.op) {
      case Op::Const: return constant(in);
      case Op::ArgLoad: return arg_load(in);
      case Op::ResourceShape: return shape(in.resource_slot(), in.dimension());
      case Op::LoopIndex: {
        auto it = loop_index_.find({in.operand(0), in.dimension()});
        if (it == loop_index_.end()) throw InternalError("codegen: loop_index outside its loop");
        return it->second;
      }
      case Op::Select:
        return b_.CreateSelect(value(in.operand(0)), value(in.operand(1)), value(in.operand(2)));
      case Op::Fma: {
        Value* a = value(in.operand(0));
        Value* c = value(in.operand(1));
        Value* d = value(in.operand(2));
        if (is_float(in.type))
          return b_.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()}, {a, c, d});
        return b_.CreateAdd(b_.CreateMul(a, c), d);
      }
      case Op::Rand: return rand(in.type);
      case Op::Alloca: {
        Value* p = entry_alloca(mem_type(in.type));
        store_mem(p, llvm::Constant::getNullValue(reg_type(in.type)), in.type);
        return p;
      }
      case Op::LocalLoad: return load_mem(value(in.operand(0)), in.type);
      case Op::LocalStore:
        store_mem(value(in.operand(0)), value(in.operand(1)), in.operand(1)->type);
        return nullptr;
      case Op::LocalArray: {
        // One alloca in the entry block, zeroed where the array is declared: declared in a
        // loop body, every iteration starts from a zeroed array.
        uint64_t n = static_cast<uint64_t>(in.length()) * static_cast<uint64_t>(in.width());
        uint64_t bytes =
            in.type == Scalar::Bool ? 1 : static_cast<uint64_t>(bit_width(in.type) / 8);
        Value* p = entry_alloca(llvm::ArrayType::get(mem_type(in.type), n));
        b_.CreateMemSet(p, b_.getInt8(0), b_.getInt64(n * bytes), llvm::MaybeAlign(bytes));
        return p;
      }
      case Op::ArrayLoad: return load_mem(array_element(in), in.type);
      case Op::ArrayStore:
        store_mem(array_element(in), value(in.operand(2)), in.operand(2)->type);
        return nullptr;
      case Op::ElementPtr: {
        Value* idx = value(in.operand(0));
        idx = b_.CreateIntCast(idx, i64_, is_signed_int(in.operand(0)->type));
        Value* base = data(in.resource_slot());
        if (ir::has_private_copies(in) && !private_bases_.empty())
          base = private_bases_.at(static_cast<uint32_t>(in.temp_offset()));
        return b_.CreateInBoundsGEP(mem_type(in.type), base, idx);
      }
      case Op::GlobalLoad: return load_mem(value(in.operand(0)), in.type);
      case Op::GlobalStore:
        store_mem(value(in.operand(0)), value(in.operand(1)), in.operand(1)->type);
        return nullptr;
      case Op::AtomicRMW:
        if (ir::has_private_copies(*in.operand(0)) && !private_bases_.empty())
          return private_update(in);
        return atomic(in);
      case Op::TmpLoad:
        return load_mem(b_.CreateGEP(i8_, ctx_field(kCtxTemps),
                                     b_.getInt64(static_cast<uint64_t>(in.temp_offset()))),
                        in.type);
      case Op::TmpStore:
        store_mem(b_.CreateGEP(i8_, ctx_field(kCtxTemps),
                               b_.getInt64(static_cast<uint64_t>(in.temp_offset()))),
                  value(in.operand(0)), in.operand(0)->type);
        return nullptr;
      case Op::Reduce: reduce(in); return nullptr;
      case Op::BoundsCheck: {
        Value* idx =
            b_.CreateIntCast(value(in.operand(0)), i64_, is_signed_int(in.operand(0)->type));
        Value* ext =
            b_.CreateIntCast(value(in.operand(1)), i64_, is_signed_int(in.operand(1)->type));
        check(b_.CreateICmpUGE(idx, ext), 1, in.node, in.resource_slot(), in.dimension(), idx, ext);
        return nullptr;
      }
      case Op::Assert: {
        int node = in.assert_node() == 0 && in.node >= 0 ? in.node : in.assert_node();
        // The failure's index names the message in the object's message table.
        auto message = static_cast<uint64_t>(assert_messages_.size());
        assert_messages_.push_back(in.message());
        check(b_.CreateNot(value(in.operand(0))), 2, node, -1, -1, b_.getInt64(message),
              b_.getInt64(0));
        return nullptr;
      }
      case Op::TexLoad: return tex_load(in);
      case Op::TexSample: return tex_sample(in);
      case Op::TexStore: tex_store(in); return nullptr;
      case Op::If: {
        BasicBlock* then_bb = BasicBlock::Create(c_, "then", fn_);
        BasicBlock* else_bb = BasicBlock::Create(c_, "else", fn_);
        BasicBlock* merge = BasicBlock::Create(c_, "endif", fn_);
        b_.CreateCondBr(value(in.operand(0)), then_bb, else_bb);
        b_.SetInsertPoint(then_bb);
        emit_block(*in.region(0));
        if (!terminated()) b_.CreateBr(merge);
        b_.SetInsertPoint(else_bb);
        emit_block(*in.region(1));
        if (!terminated()) b_.CreateBr(merge);
        b_.SetInsertPoint(merge);
        return nullptr;
      }
      case Op::While: {
        BasicBlock* head = BasicBlock::Create(c_, "while", fn_);
        BasicBlock* exit = BasicBlock::Create(c_, "while_exit", fn_);
        b_.CreateBr(head);
        b_.SetInsertPoint(head);
        cancel_point(in.node);  // at the head: `continue` jumps here too
        loops_.push_back({head, exit});
        emit_block(*in.region(0));
        loops_.pop_back();
        if (!terminated()) b_.CreateBr(head);
        b_.SetInsertPoint(exit);
        return nullptr;
      }
      case Op::RangeFor:
      case Op::StructFor: {
        std::vector<Value*> lo, hi;
        task_bounds(in, &lo, &hi);
        emit_nest(in, 0, lo, hi, *in.region(0));
        return nullptr;
      }
      case Op::Break: b_.CreateBr(innermost(true).brk); return nullptr;
      case Op::Continue: b_.CreateBr(innermost(false).cont); return nullptr;
      case Op::Return: {
        std::vector<uint32_t> offsets = return_offsets(k_.abi);
        if (in.operands.size() > offsets.size())
          throw InternalError("codegen: return of more values than the kernel returns");
        for (size_t i = 0; i < in.operands.size(); ++i) {
          Value* p = b_.CreateGEP(i8_, ctx_field(kCtxReturns), b_.getInt64(offsets[i]));
          store_mem(p, value(in.operand(i)), in.operand(i)->type);
        }
        b_.CreateBr(ret_bb_);
        return nullptr;
      }
      case Op::GlobalPtr: throw InternalError("codegen: global_ptr left in lowered IR");
      case Op::Offload: throw InternalError("codegen: offload nested in a task");
      // Unary and binary ops: emit_inst hands them to the math emitter.
      case Op::Neg:
      case Op::BitNot:
      case Op::LogicNot:
      case Op::Abs:
      case Op::Sign:
      case Op::Floor:
      case Op::Ceil:
      case Op::Round:
      case Op::Sqrt:
      case Op::Rsqrt:
      case Op::Sin:
      case Op::Cos:
      case Op::Tan:
      case Op::Asin:
      case Op::Acos:
      case Op::Atan:
      case Op::Exp:
      case Op::Log:
      case Op::Cast:
      case Op::Bitcast:
      case Op::Add:
      case Op::Sub:
      case Op::Mul:
      case Op::Div:
      case Op::Mod:
      case Op::Min:
      case Op::Max:
      case Op::Pow:
      case Op::Atan2:
      case Op::BitAnd:
      case Op::BitOr:
      case Op::BitXor:
      case Op::Shl:
      case Op::Shr:
      case Op::Eq:
      case Op::Ne:
      case Op::Lt:
      case Op::Le:
      case Op::Gt:
      case Op::Ge:
      case Op::LogicAnd:
      case Op::LogicOr: break;
    }
    throw InternalError("codegen: unhandled op " + std::string(ir::op_name(in.op)));
  }

  const ir::Kernel& k_;
  llvm::LLVMContext& c_;
  llvm::Module& m_;
  EmitOptions opt_;
  llvm::IRBuilder<> b_;
  llvm::IRBuilder<> entry_;  // inserts before the entry block's branch: hoisted loads
  MathEmitter math_;
  Type* i8_;
  Type* i32_;
  Type* i64_;
  llvm::PointerType* ptr_;
  llvm::StructType* ctx_ty_;
  llvm::StructType* view_ty_;
  llvm::StructType* err_ty_;
  Function* report_fn_ = nullptr;
  Function* claim_fn_ = nullptr;

  // Per function.
  Function* fn_ = nullptr;
  Value* ctx_ = nullptr;
  BasicBlock* ret_bb_ = nullptr;
  Value* rng_ = nullptr;
  bool uses_rand_ = false;
  uint64_t task_index_ = 0;
  std::unordered_map<const Inst*, Value*> values_;
  std::map<std::pair<const Inst*, int>, Value*> loop_index_;
  std::map<int, Value*> data_;
  std::map<std::pair<int, int>, Value*> shapes_;
  std::map<std::tuple<int, int, int>, Value*> args_;
  std::map<int, Value*> ctx_fields_;
  std::vector<LoopTarget> loops_;
  std::map<int32_t, std::pair<Value*, const Inst*>> partials_;  // temp offset -> partial, a reduce
  std::map<uint32_t, Value*> private_bases_;  // region -> the chunk's copy, in the copies' nest
  std::vector<std::string> assert_messages_;  // whole module
};

}  // namespace

std::unique_ptr<llvm::Module> emit_kernel_module(const ir::Kernel& kernel,
                                                 llvm::LLVMContext& context,
                                                 const EmitOptions& options,
                                                 std::vector<TaskDesc>* tasks,
                                                 std::vector<size_t>* ir_tasks) {
  auto module = std::make_unique<llvm::Module>("loom_" + sanitize(kernel.abi.name), context);
  if (!options.triple.empty()) module->setTargetTriple(options.triple);
  if (!options.data_layout.empty()) module->setDataLayout(options.data_layout);
  Emitter emitter(kernel, context, *module, options);
  tasks->clear();
  if (ir_tasks) ir_tasks->clear();
  size_t index = 0;
  auto add = [&](const TaskDesc& desc) {
    tasks->push_back(desc);
    if (ir_tasks) ir_tasks->push_back(index);
  };
  for (auto& inst : kernel.body->insts) {
    if (inst->op != Op::Offload) continue;
    bool copies = emitter.has_private_copies(*inst);
    TaskDesc desc;
    if (copies) {
      emitter.emit_private_check(*inst, index, &desc);
      add(desc);
      desc = TaskDesc{};
    }
    emitter.emit_task(*inst, index, &desc);
    add(desc);
    if (copies) {
      desc = TaskDesc{};
      emitter.emit_private_merge(*inst, index, &desc);
      add(desc);
      desc = TaskDesc{};
      emitter.emit_private_reset(*inst, index, &desc);
      add(desc);
    }
    ++index;
  }
  emitter.emit_assert_messages();
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os))
    throw InternalError("codegen: LLVM module verification failed: " + os.str());
  return module;
}

}  // namespace loom::codegen
