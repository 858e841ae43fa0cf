// Scalar arithmetic of the kernel IR as LLVM IR (internal to the CPU backend): casts, unary
// and binary ops with the semantics ops.def documents.
#pragma once

#include <initializer_list>
#include <string>

#include <llvm/IR/IRBuilder.h>

#include "compiler/ir/op.h"
#include "runtime/common/scalar.h"

namespace loom::codegen {

class MathEmitter {
 public:
  explicit MathEmitter(llvm::IRBuilder<>& builder) : b_(builder) {}

  // The register type of a scalar (Bool is i1).
  llvm::Type* reg_type(Scalar s);
  llvm::Value* fconst(Scalar s, double v);
  llvm::Value* intrinsic(llvm::Intrinsic::ID id, std::initializer_list<llvm::Value*> args);

  llvm::Value* cast(llvm::Value* v, Scalar from, Scalar to);
  // `from`: the operand's type; `type`: the result's.
  llvm::Value* unary(ir::Op op, llvm::Value* a, Scalar from, Scalar type);
  // `type`: the operands' type (comparisons give i1).
  llvm::Value* binary(ir::Op op, llvm::Value* a, llvm::Value* c, Scalar type);

 private:
  llvm::Value* libm(const std::string& base, std::initializer_list<llvm::Value*> args);
  // Clears the builder's arcp, afn and nsz (callers restore them with a FastMathFlagGuard).
  void exact_special_values();
  llvm::Value* sign(llvm::Value* a, Scalar t);
  llvm::Value* int_pow(llvm::Value* base, llvm::Value* exp);
  llvm::Value* int_div_rem(llvm::Value* a, llvm::Value* c, bool is_signed, bool rem);

  llvm::IRBuilder<>& b_;
};

}  // namespace loom::codegen
