#include "compiler/codegen_llvm/emit_llvm.h"

#include <bit>
#include <cctype>
#include <functional>
#include <map>
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

  void emit_task(const Inst& offload, size_t index, TaskDesc* desc) {
    ir::TaskKind kind = offload.task_kind();
    std::string sym = "loom_" + sanitize(k_.abi.name) + "_task" + std::to_string(index);
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
      lo[0] = first;
      hi[0] = last;
      begin_partials(offload);
      emit_nest(offload, 0, lo, hi, *offload.region(0));
      if (!terminated()) combine_partials();
    }
    finish_function();
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
        return b_.CreateInBoundsGEP(mem_type(in.type), data(in.resource_slot()), idx);
      }
      case Op::GlobalLoad: return load_mem(value(in.operand(0)), in.type);
      case Op::GlobalStore:
        store_mem(value(in.operand(0)), value(in.operand(1)), in.operand(1)->type);
        return nullptr;
      case Op::AtomicRMW: return atomic(in);
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
  std::vector<std::string> assert_messages_;                    // whole module
};

}  // namespace

std::unique_ptr<llvm::Module> emit_kernel_module(const ir::Kernel& kernel,
                                                 llvm::LLVMContext& context,
                                                 const EmitOptions& options,
                                                 std::vector<TaskDesc>* tasks) {
  auto module = std::make_unique<llvm::Module>("loom_" + sanitize(kernel.abi.name), context);
  if (!options.triple.empty()) module->setTargetTriple(options.triple);
  if (!options.data_layout.empty()) module->setDataLayout(options.data_layout);
  Emitter emitter(kernel, context, *module, options);
  tasks->clear();
  for (auto& inst : kernel.body->insts) {
    if (inst->op != Op::Offload) continue;
    TaskDesc desc;
    emitter.emit_task(*inst, tasks->size(), &desc);
    tasks->push_back(desc);
  }
  emitter.emit_assert_messages();
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os))
    throw InternalError("codegen: LLVM module verification failed: " + os.str());
  return module;
}

}  // namespace loom::codegen
