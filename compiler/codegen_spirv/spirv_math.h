// Scalar types, constants and arithmetic of one SPIR-V module, with the semantics of the
// CPU backend (compiler/codegen_llvm/emit_math.cpp): integer division that never traps,
// floored modulo, shift counts wrapping at the width, round half away from zero, NaN-ignoring
// min/max, pow with negative bases. Records the capabilities and device requirements the
// types it hands out need.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "compiler/codegen_spirv/spirv_module.h"
#include "compiler/ir/op.h"
#include "runtime/common/scalar.h"

namespace loom::spirv {

class SpirvMath {
 public:
  // `requirements` accumulates SpirvRequirement bits; `notice` receives precision notes.
  SpirvMath(Module& m, uint32_t* requirements, std::function<void(const std::string&)> notice);

  Id type(Scalar s);         // register type (bool is OpTypeBool)
  Id memory_type(Scalar s);  // type in buffers (bool is u8)
  Id uint_type(int width);   // unsigned integer of `width` bits
  Id bits_const(Scalar s,
                uint64_t bits);  // IR constant encoding (ints two's complement, floats f64 bits)
  Id int_const(Scalar s, int64_t v);
  Id float_const(Scalar s, double v);
  Id bool_const(bool v) { return m_.constant_bool(v); }
  Id u32(uint32_t v) { return m_.constant_u32(v); }
  Id glsl();

  Id unary(ir::Op op, Id a, Scalar from, Scalar to);
  Id binary(ir::Op op, Id a, Id b, Scalar t);
  Id cast(Id v, Scalar from, Scalar to);
  Id select(Scalar t, Id cond, Id a, Id b) { return m_.op(spv::OpSelect, type(t), {cond, a, b}); }
  Id fma(Scalar t, Id a, Id b, Id c);

  // Bool <-> stored byte.
  Id to_memory(Scalar s, Id v);
  Id from_memory(Scalar s, Id v);
  // Reinterprets a register value as 32-bit words (1 or 2, low first) and back.
  std::vector<Id> to_words(Scalar s, Id v);
  Id from_words(Scalar s, const std::vector<Id>& words);

 private:
  Id ext(uint32_t instruction, Id result_type, std::initializer_list<Id> args);
  Id transcendental(uint32_t instruction, Scalar t, std::initializer_list<Id> args,
                    const char* name);
  Id int_div_rem(Id a, Id c, Scalar t, bool rem);
  Id int_pow(Id base, Id exp, Scalar t);
  Id float_pow(Id x, Id y, Scalar t);
  Id round(Id a, Scalar t);
  Id exact_fmod(Id x, Id y, Scalar t);
  Id fmod_steps(Id ax, Id ay, Scalar t);
  Id atan2(Id y, Id x, Scalar t);
  Id sign_bit(Id v, Scalar t);
  Id sign(Id a, Scalar t);
  Id compare(ir::Op op, Id a, Id b, Scalar t);

  Module& m_;
  uint32_t* requirements_;
  std::function<void(const std::string&)> notice_;
  Id glsl_ = 0;
  std::map<Scalar, Id> frexp_types_;
};

}  // namespace loom::spirv
