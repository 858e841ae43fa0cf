#include "compiler/codegen_llvm/emit_math.h"

#include <vector>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include "runtime/common/error.h"

namespace loom::codegen {

using ir::Op;
using llvm::BasicBlock;
using llvm::Type;
using llvm::Value;

Type* MathEmitter::reg_type(Scalar s) {
  switch (s) {
    case Scalar::Void: return b_.getVoidTy();
    case Scalar::Bool: return b_.getInt1Ty();
    case Scalar::I8:
    case Scalar::U8: return b_.getInt8Ty();
    case Scalar::I16:
    case Scalar::U16: return b_.getInt16Ty();
    case Scalar::I32:
    case Scalar::U32: return b_.getInt32Ty();
    case Scalar::I64:
    case Scalar::U64: return b_.getInt64Ty();
    case Scalar::F32: return b_.getFloatTy();
    case Scalar::F64: return b_.getDoubleTy();
  }
  return b_.getVoidTy();
}

Value* MathEmitter::fconst(Scalar s, double v) { return llvm::ConstantFP::get(reg_type(s), v); }

Value* MathEmitter::intrinsic(llvm::Intrinsic::ID id, std::initializer_list<Value*> args) {
  std::vector<Value*> a(args);
  return b_.CreateIntrinsic(id, {a[0]->getType()}, a);
}

// A libm function ("tan" -> tanf for f32), resolved by the loader from the process.
Value* MathEmitter::libm(const std::string& base, std::initializer_list<Value*> args) {
  std::vector<Value*> a(args);
  Type* t = a[0]->getType();
  std::string name = t->isFloatTy() ? base + "f" : base;
  std::vector<Type*> params(a.size(), t);
  llvm::Module* module = b_.GetInsertBlock()->getModule();
  llvm::FunctionCallee callee =
      module->getOrInsertFunction(name, llvm::FunctionType::get(t, params, false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->setDoesNotThrow();
    f->setWillReturn();
  }
  return b_.CreateCall(callee, a);
}

Value* MathEmitter::cast(Value* v, Scalar from, Scalar to) {
  if (from == to) return v;
  Type* t = reg_type(to);
  if (to == Scalar::Bool)
    return is_float(from) ? b_.CreateFCmpUNE(v, fconst(from, 0))
                          : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  if (from == Scalar::Bool) return is_float(to) ? b_.CreateUIToFP(v, t) : b_.CreateZExt(v, t);
  if (is_float(from) && is_float(to)) return b_.CreateFPCast(v, t);
  if (is_float(from)) return is_signed_int(to) ? b_.CreateFPToSI(v, t) : b_.CreateFPToUI(v, t);
  if (is_float(to)) return is_signed_int(from) ? b_.CreateSIToFP(v, t) : b_.CreateUIToFP(v, t);
  return b_.CreateIntCast(v, t, is_signed_int(from));
}

void MathEmitter::exact_special_values() {
  llvm::FastMathFlags fmf = b_.getFastMathFlags();
  fmf.setAllowReciprocal(false);
  fmf.setApproxFunc(false);
  fmf.setNoSignedZeros(false);  // rsqrt(-0) is -inf, sqrt(-0) is -0
  b_.setFastMathFlags(fmf);
}

Value* MathEmitter::sign(Value* a, Scalar t) {
  if (is_float(t)) {
    Value* pos = b_.CreateFCmpOGT(a, fconst(t, 0));
    Value* neg = b_.CreateFCmpOLT(a, fconst(t, 0));
    return b_.CreateSelect(pos, fconst(t, 1), b_.CreateSelect(neg, fconst(t, -1), fconst(t, 0)));
  }
  Type* ty = a->getType();
  if (!is_signed_int(t))
    return b_.CreateZExt(b_.CreateICmpNE(a, llvm::ConstantInt::get(ty, 0)), ty);
  Value* pos = b_.CreateICmpSGT(a, llvm::ConstantInt::get(ty, 0));
  Value* neg = b_.CreateICmpSLT(a, llvm::ConstantInt::get(ty, 0));
  return b_.CreateSelect(
      pos, llvm::ConstantInt::get(ty, 1),
      b_.CreateSelect(neg, llvm::ConstantInt::getSigned(ty, -1), llvm::ConstantInt::get(ty, 0)));
}

Value* MathEmitter::unary(Op op, Value* a, Scalar from, Scalar t) {
  switch (op) {
    case Op::Neg: return is_float(t) ? b_.CreateFNeg(a) : b_.CreateNeg(a);
    case Op::BitNot:
    case Op::LogicNot: return b_.CreateNot(a);
    case Op::Abs:
      if (is_float(t)) return intrinsic(llvm::Intrinsic::fabs, {a});
      if (is_signed_int(t)) return intrinsic(llvm::Intrinsic::abs, {a, b_.getFalse()});
      return a;
    case Op::Sign: return sign(a, t);
    case Op::Floor: return intrinsic(llvm::Intrinsic::floor, {a});
    case Op::Ceil: return intrinsic(llvm::Intrinsic::ceil, {a});
    case Op::Round: return intrinsic(llvm::Intrinsic::round, {a});
    case Op::Sqrt: {
      // Never an estimate (afn would allow x * rsqrt(x): NaN for inf, wrong for denormals).
      llvm::IRBuilderBase::FastMathFlagGuard keep(b_);
      exact_special_values();
      return intrinsic(llvm::Intrinsic::sqrt, {a});
    }
    case Op::Rsqrt: {
      // An exact 1 / sqrt(x): with arcp/afn LLVM uses rsqrtss + a Newton step, which gives
      // NaN for ±0 and inf and is wrong for denormals. rsqrt(±0) = ±inf, rsqrt(inf) = 0.
      llvm::IRBuilderBase::FastMathFlagGuard keep(b_);
      exact_special_values();
      return b_.CreateFDiv(fconst(t, 1), intrinsic(llvm::Intrinsic::sqrt, {a}));
    }
    case Op::Sin: return intrinsic(llvm::Intrinsic::sin, {a});
    case Op::Cos: return intrinsic(llvm::Intrinsic::cos, {a});
    case Op::Tan: return libm("tan", {a});
    case Op::Asin: return libm("asin", {a});
    case Op::Acos: return libm("acos", {a});
    case Op::Atan: return libm("atan", {a});
    case Op::Exp: return intrinsic(llvm::Intrinsic::exp, {a});
    case Op::Log: return intrinsic(llvm::Intrinsic::log, {a});
    case Op::Cast: return cast(a, from, t);
    case Op::Bitcast: return b_.CreateBitCast(a, reg_type(t));
    // Not unary: the emitter sends only unary ops here.
    case Op::Const:
    case Op::ArgLoad:
    case Op::LoopIndex:
    case Op::ResourceShape:
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
    case Op::LogicOr:
    case Op::Select:
    case Op::Fma:
    case Op::Rand:
    case Op::Alloca:
    case Op::LocalLoad:
    case Op::LocalStore:
    case Op::LocalArray:
    case Op::ArrayLoad:
    case Op::ArrayStore:
    case Op::GlobalPtr:
    case Op::ElementPtr:
    case Op::GlobalLoad:
    case Op::GlobalStore:
    case Op::AtomicRMW:
    case Op::TmpLoad:
    case Op::TmpStore:
    case Op::Reduce:
    case Op::BoundsCheck:
    case Op::TexLoad:
    case Op::TexSample:
    case Op::TexStore:
    case Op::If:
    case Op::RangeFor:
    case Op::StructFor:
    case Op::While:
    case Op::Break:
    case Op::Continue:
    case Op::Return:
    case Op::Assert:
    case Op::Offload: break;
  }
  throw InternalError("codegen: unhandled unary op " + std::string(ir::op_name(op)));
}

// Integer power by squaring; a negative exponent gives 1.
Value* MathEmitter::int_pow(Value* base, Value* exp) {
  Type* ty = base->getType();
  BasicBlock* pre = b_.GetInsertBlock();
  BasicBlock* loop = BasicBlock::Create(b_.getContext(), "ipow", b_.GetInsertBlock()->getParent());
  BasicBlock* done =
      BasicBlock::Create(b_.getContext(), "ipow_done", b_.GetInsertBlock()->getParent());
  Value* zero = llvm::ConstantInt::get(ty, 0);
  Value* one = llvm::ConstantInt::get(ty, 1);
  b_.CreateCondBr(b_.CreateICmpSGT(exp, zero), loop, done);
  b_.SetInsertPoint(loop);
  llvm::PHINode* r = b_.CreatePHI(ty, 2);
  llvm::PHINode* x = b_.CreatePHI(ty, 2);
  llvm::PHINode* e = b_.CreatePHI(ty, 2);
  r->addIncoming(one, pre);
  x->addIncoming(base, pre);
  e->addIncoming(exp, pre);
  Value* odd = b_.CreateICmpNE(b_.CreateAnd(e, one), zero);
  Value* r2 = b_.CreateSelect(odd, b_.CreateMul(r, x), r);
  Value* x2 = b_.CreateMul(x, x);
  Value* e2 = b_.CreateLShr(e, one);
  r->addIncoming(r2, loop);
  x->addIncoming(x2, loop);
  e->addIncoming(e2, loop);
  b_.CreateCondBr(b_.CreateICmpNE(e2, zero), loop, done);
  b_.SetInsertPoint(done);
  llvm::PHINode* out = b_.CreatePHI(ty, 2);
  out->addIncoming(one, pre);
  out->addIncoming(r2, loop);
  return out;
}

// Integer division that cannot trap: x / 0 and x % 0 give 0, MIN / -1 wraps to MIN
// (x86 would raise SIGFPE inside the host engine's process otherwise).
Value* MathEmitter::int_div_rem(Value* a, Value* c, bool is_signed, bool rem) {
  Type* ty = a->getType();
  Value* zero = llvm::ConstantInt::get(ty, 0);
  Value* one = llvm::ConstantInt::get(ty, 1);
  Value* by_zero = b_.CreateICmpEQ(c, zero);
  Value* bad = by_zero;
  Value* minus_one = nullptr;
  if (is_signed && ty->getIntegerBitWidth() > 1) {
    minus_one = b_.CreateICmpEQ(c, llvm::ConstantInt::getSigned(ty, -1));
    bad = b_.CreateOr(bad, minus_one);
  }
  Value* safe = b_.CreateSelect(bad, one, c);
  Value* q = rem ? (is_signed ? b_.CreateSRem(a, safe) : b_.CreateURem(a, safe))
                 : (is_signed ? b_.CreateSDiv(a, safe) : b_.CreateUDiv(a, safe));
  if (minus_one) q = b_.CreateSelect(minus_one, rem ? zero : b_.CreateNeg(a), q);
  return b_.CreateSelect(by_zero, zero, q);
}

Value* MathEmitter::binary(Op op, Value* a, Value* c, Scalar t) {
  bool f = is_float(t), s = is_signed_int(t);
  Type* ty = a->getType();
  switch (op) {
    case Op::Add: return f ? b_.CreateFAdd(a, c) : b_.CreateAdd(a, c);
    case Op::Sub: return f ? b_.CreateFSub(a, c) : b_.CreateSub(a, c);
    case Op::Mul: return f ? b_.CreateFMul(a, c) : b_.CreateMul(a, c);
    case Op::Div: {
      if (!f) return int_div_rem(a, c, s, false);
      // Reciprocals only for constant divisors, where LLVM folds x / c into x * (1 / c) only
      // when 1 / c is finite and normal. Between variables arcp lets the backend share
      // 1 / d, which overflows to inf for a denormal d where x / d is finite.
      llvm::IRBuilderBase::FastMathFlagGuard keep(b_);
      if (!llvm::isa<llvm::Constant>(c)) {
        llvm::FastMathFlags fmf = b_.getFastMathFlags();
        fmf.setAllowReciprocal(false);
        b_.setFastMathFlags(fmf);
      }
      return b_.CreateFDiv(a, c);
    }
    case Op::Mod: {
      if (!f && !s) return int_div_rem(a, c, false, true);
      // Floored: a remainder whose sign differs from the divisor's moves by one divisor.
      Value* r = f ? b_.CreateFRem(a, c) : int_div_rem(a, c, true, true);
      Value* fix;
      if (f) {
        Value* nonzero = b_.CreateFCmpUNE(r, fconst(t, 0));
        Value* differ =
            b_.CreateXor(b_.CreateFCmpOLT(r, fconst(t, 0)), b_.CreateFCmpOLT(c, fconst(t, 0)));
        fix = b_.CreateAnd(nonzero, differ);
        return b_.CreateSelect(fix, b_.CreateFAdd(r, c), r);
      }
      Value* zero = llvm::ConstantInt::get(ty, 0);
      fix = b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, c), zero));
      return b_.CreateSelect(fix, b_.CreateAdd(r, c), r);
    }
    case Op::Min:
      return b_.CreateBinaryIntrinsic(f   ? llvm::Intrinsic::minnum
                                      : s ? llvm::Intrinsic::smin
                                          : llvm::Intrinsic::umin,
                                      a, c);
    case Op::Max:
      return b_.CreateBinaryIntrinsic(f   ? llvm::Intrinsic::maxnum
                                      : s ? llvm::Intrinsic::smax
                                          : llvm::Intrinsic::umax,
                                      a, c);
    case Op::Pow: return f ? intrinsic(llvm::Intrinsic::pow, {a, c}) : int_pow(a, c);
    case Op::Atan2: return libm("atan2", {a, c});
    case Op::BitAnd:
    case Op::LogicAnd: return b_.CreateAnd(a, c);
    case Op::BitOr:
    case Op::LogicOr: return b_.CreateOr(a, c);
    case Op::BitXor: return b_.CreateXor(a, c);
    case Op::Shl:
    case Op::Shr: {
      // Shift counts wrap at the width (x86 and SPIR-V agree; LLVM would give poison).
      unsigned width = ty->getIntegerBitWidth();
      Value* n = b_.CreateIntCast(c, ty, false);
      if (width > 1) n = b_.CreateAnd(n, llvm::ConstantInt::get(ty, width - 1));
      if (op == Op::Shl) return b_.CreateShl(a, n);
      return s ? b_.CreateAShr(a, n) : b_.CreateLShr(a, n);
    }
    case Op::Eq: return f ? b_.CreateFCmpOEQ(a, c) : b_.CreateICmpEQ(a, c);
    case Op::Ne: return f ? b_.CreateFCmpUNE(a, c) : b_.CreateICmpNE(a, c);
    case Op::Lt:
      return f ? b_.CreateFCmpOLT(a, c) : s ? b_.CreateICmpSLT(a, c) : b_.CreateICmpULT(a, c);
    case Op::Le:
      return f ? b_.CreateFCmpOLE(a, c) : s ? b_.CreateICmpSLE(a, c) : b_.CreateICmpULE(a, c);
    case Op::Gt:
      return f ? b_.CreateFCmpOGT(a, c) : s ? b_.CreateICmpSGT(a, c) : b_.CreateICmpUGT(a, c);
    case Op::Ge:
      return f ? b_.CreateFCmpOGE(a, c) : s ? b_.CreateICmpSGE(a, c) : b_.CreateICmpUGE(a, c);
    // Not binary: the emitter sends only binary ops here.
    case Op::Const:
    case Op::ArgLoad:
    case Op::LoopIndex:
    case Op::ResourceShape:
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
    case Op::Select:
    case Op::Fma:
    case Op::Rand:
    case Op::Alloca:
    case Op::LocalLoad:
    case Op::LocalStore:
    case Op::LocalArray:
    case Op::ArrayLoad:
    case Op::ArrayStore:
    case Op::GlobalPtr:
    case Op::ElementPtr:
    case Op::GlobalLoad:
    case Op::GlobalStore:
    case Op::AtomicRMW:
    case Op::TmpLoad:
    case Op::TmpStore:
    case Op::Reduce:
    case Op::BoundsCheck:
    case Op::TexLoad:
    case Op::TexSample:
    case Op::TexStore:
    case Op::If:
    case Op::RangeFor:
    case Op::StructFor:
    case Op::While:
    case Op::Break:
    case Op::Continue:
    case Op::Return:
    case Op::Assert:
    case Op::Offload: break;
  }
  throw InternalError("codegen: unhandled binary op " + std::string(ir::op_name(op)));
}

}  // namespace loom::codegen
