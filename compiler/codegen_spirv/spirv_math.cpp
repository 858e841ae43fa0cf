#include "compiler/codegen_spirv/spirv_math.h"

#include <spirv/unified1/GLSL.std.450.h>

#include <cstring>
#include <limits>
#include <utility>

#include "runtime/common/error.h"
#include "runtime/common/spirv_kernel.h"

namespace loom::spirv {

using ir::Op;

SpirvMath::SpirvMath(Module& m, uint32_t* requirements,
                     std::function<void(const std::string&)> notice)
    : m_(m), requirements_(requirements), notice_(std::move(notice)) {}

Id SpirvMath::glsl() {
  if (!glsl_) glsl_ = m_.ext_inst_import("GLSL.std.450");
  return glsl_;
}

Id SpirvMath::type(Scalar s) {
  switch (s) {
    case Scalar::Void: return m_.type_void();
    case Scalar::Bool: return m_.type_bool();
    case Scalar::I8:
    case Scalar::U8:
      m_.capability(spv::CapabilityInt8);
      *requirements_ |= kNeedInt8;
      return m_.type_int(8, s == Scalar::I8);
    case Scalar::I16:
    case Scalar::U16:
      m_.capability(spv::CapabilityInt16);
      *requirements_ |= kNeedInt16;
      return m_.type_int(16, s == Scalar::I16);
    case Scalar::I32: return m_.type_int(32, true);
    case Scalar::U32: return m_.type_int(32, false);
    case Scalar::I64:
    case Scalar::U64:
      m_.capability(spv::CapabilityInt64);
      *requirements_ |= kNeedInt64;
      return m_.type_int(64, s == Scalar::I64);
    case Scalar::F32: return m_.type_float(32);
    case Scalar::F64:
      m_.capability(spv::CapabilityFloat64);
      *requirements_ |= kNeedFloat64;
      return m_.type_float(64);
  }
  return m_.type_void();
}

Id SpirvMath::memory_type(Scalar s) { return type(s == Scalar::Bool ? Scalar::U8 : s); }

Id SpirvMath::uint_type(int width) {
  switch (width) {
    case 8: return type(Scalar::U8);
    case 16: return type(Scalar::U16);
    case 64: return type(Scalar::U64);
    default: return type(Scalar::U32);
  }
}

Id SpirvMath::bits_const(Scalar s, uint64_t bits) {
  if (s == Scalar::Bool) return m_.constant_bool(bits != 0);
  Id t = type(s);
  if (s == Scalar::F32) {
    double d;
    std::memcpy(&d, &bits, 8);
    auto f = static_cast<float>(d);
    uint32_t w;
    std::memcpy(&w, &f, 4);
    return m_.constant(t, {w});
  }
  if (bit_width(s) == 64)
    return m_.constant(t, {static_cast<uint32_t>(bits), static_cast<uint32_t>(bits >> 32)});
  int width = bit_width(s);
  uint64_t v = bits;
  if (width < 32) {
    v &= (1ull << width) - 1;
    // Narrow signed literals are sign-extended to the word, unsigned ones zero-extended.
    if (is_signed_int(s) && (v >> (width - 1)) & 1) v |= ~((1ull << width) - 1);
  }
  return m_.constant(t, {static_cast<uint32_t>(v)});
}

Id SpirvMath::int_const(Scalar s, int64_t v) {
  if (is_float(s)) return float_const(s, static_cast<double>(v));
  return bits_const(s, static_cast<uint64_t>(v));
}

Id SpirvMath::float_const(Scalar s, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  return bits_const(s, bits);
}

Id SpirvMath::ext(uint32_t instruction, Id result_type, std::initializer_list<Id> args) {
  std::vector<uint32_t> ops = {glsl(), instruction};
  ops.insert(ops.end(), args.begin(), args.end());
  return m_.op(spv::OpExtInst, result_type, ops);
}

// GLSL.std.450's transcendental functions take 16- and 32-bit floats only: f64 goes through
// f32, and the kernel's compile notes say so.
Id SpirvMath::transcendental(uint32_t instruction, Scalar t, std::initializer_list<Id> args,
                             const char* name) {
  if (t != Scalar::F64) return ext(instruction, type(t), args);
  notice_(std::string("f64 ") + name + " is computed at f32 precision on Vulkan");
  Id f32 = type(Scalar::F32);
  std::vector<Id> narrow;
  for (Id a : args) narrow.push_back(m_.op(spv::OpFConvert, f32, {a}));
  std::vector<uint32_t> ops = {glsl(), instruction};
  ops.insert(ops.end(), narrow.begin(), narrow.end());
  Id r = m_.op(spv::OpExtInst, f32, ops);
  return m_.op(spv::OpFConvert, type(t), {r});
}

Id SpirvMath::cast(Id v, Scalar from, Scalar to) {
  if (from == to) return v;
  Id t = type(to);
  if (to == Scalar::Bool) {
    if (is_float(from)) return m_.op(spv::OpFUnordNotEqual, t, {v, float_const(from, 0)});
    return m_.op(spv::OpINotEqual, t, {v, int_const(from, 0)});
  }
  if (from == Scalar::Bool) return select(to, v, int_const(to, 1), int_const(to, 0));
  if (is_float(from) && is_float(to)) return m_.op(spv::OpFConvert, t, {v});
  if (is_float(from))
    return m_.op(is_signed_int(to) ? spv::OpConvertFToS : spv::OpConvertFToU, t, {v});
  if (is_float(to))
    return m_.op(is_signed_int(from) ? spv::OpConvertSToF : spv::OpConvertUToF, t, {v});
  if (bit_width(from) == bit_width(to)) return m_.op(spv::OpBitcast, t, {v});
  if (is_signed_int(from)) return m_.op(spv::OpSConvert, t, {v});
  Id u = m_.op(spv::OpUConvert, uint_type(bit_width(to)), {v});
  return is_signed_int(to) ? m_.op(spv::OpBitcast, t, {u}) : u;
}

Id SpirvMath::sign(Id a, Scalar t) {
  Id bt = type(Scalar::Bool);
  Id zero = int_const(t, 0), one = int_const(t, 1);
  if (is_unsigned_int(t)) return select(t, m_.op(spv::OpINotEqual, bt, {a, zero}), one, zero);
  bool f = is_float(t);
  Id pos = m_.op(f ? spv::OpFOrdGreaterThan : spv::OpSGreaterThan, bt, {a, zero});
  Id neg = m_.op(f ? spv::OpFOrdLessThan : spv::OpSLessThan, bt, {a, zero});
  return select(t, pos, one, select(t, neg, int_const(t, -1), zero));
}

// Half away from zero, like C's round(): trunc, then one step away when |fraction| >= 0.5.
Id SpirvMath::round(Id a, Scalar t) {
  Id ft = type(t);
  Id tr = ext(GLSLstd450Trunc, ft, {a});
  Id frac = m_.op(spv::OpFSub, ft, {a, tr});
  Id away = m_.op(spv::OpFOrdGreaterThanEqual, type(Scalar::Bool),
                  {ext(GLSLstd450FAbs, ft, {frac}), float_const(t, 0.5)});
  return select(t, away, m_.op(spv::OpFAdd, ft, {tr, sign(a, t)}), tr);
}

// True when the sign bit is set (-0.0 included), from the top word of the value.
Id SpirvMath::sign_bit(Id v, Scalar t) {
  std::vector<Id> words = to_words(t, v);
  Id top = words.back();
  return m_.op(spv::OpINotEqual, type(Scalar::Bool),
               {m_.op(spv::OpBitwiseAnd, type(Scalar::U32), {top, u32(0x80000000u)}), u32(0)});
}

// |x| mod |y| for finite x >= 0 and normal y > 0: subtracts y scaled by powers of two (each
// step exact, by Sterbenz's lemma) until less than y is left. At most one step per binade
// between them; the count is bounded anyway, and a step that comes out zero (a device
// flushing denormals) ends the loop rather than spinning.
Id SpirvMath::fmod_steps(Id ax, Id ay, Scalar t) {
  Id ft = type(t), bt = type(Scalar::Bool), it = type(Scalar::I32);
  Id r = m_.local_variable(m_.type_pointer(spv::StorageClassFunction, ft));
  Id n = m_.local_variable(m_.type_pointer(spv::StorageClassFunction, it));
  m_.op_void(spv::OpStore, {r, ax});
  m_.op_void(spv::OpStore, {n, m_.constant_i32(t == Scalar::F64 ? 2200 : 300)});
  if (!frexp_types_.count(t)) frexp_types_[t] = m_.type_struct({ft, it});
  Id fr = frexp_types_[t];
  Id header = m_.fresh_id(), body = m_.fresh_id(), cont = m_.fresh_id(), merge = m_.fresh_id();
  m_.op_void(spv::OpBranch, {header});
  m_.label(header);
  Id rv = m_.op(spv::OpLoad, ft, {r});
  Id left = m_.op(spv::OpLoad, it, {n});
  Id more = m_.op(spv::OpLogicalAnd, bt,
                  {m_.op(spv::OpFOrdGreaterThanEqual, bt, {rv, ay}),
                   m_.op(spv::OpSGreaterThan, bt, {left, m_.constant_i32(0)})});
  m_.op_void(spv::OpLoopMerge, {merge, cont, spv::LoopControlMaskNone});
  m_.op_void(spv::OpBranchConditional, {more, body, merge});
  m_.label(body);
  Id er = m_.op(spv::OpCompositeExtract, it, {ext(GLSLstd450FrexpStruct, fr, {rv}), 1});
  Id ey = m_.op(spv::OpCompositeExtract, it, {ext(GLSLstd450FrexpStruct, fr, {ay}), 1});
  Id scaled = ext(GLSLstd450Ldexp, ft, {ay, m_.op(spv::OpISub, it, {er, ey})});
  Id step = select(t, m_.op(spv::OpFOrdGreaterThan, bt, {scaled, rv}),
                   m_.op(spv::OpFMul, ft, {scaled, float_const(t, 0.5)}), scaled);
  Id stuck =
      m_.op(spv::OpLogicalNot, bt, {m_.op(spv::OpFOrdGreaterThan, bt, {step, float_const(t, 0)})});
  m_.op_void(spv::OpStore, {r, m_.op(spv::OpFSub, ft, {rv, step})});
  m_.op_void(spv::OpStore, {n, select(Scalar::I32, stuck, m_.constant_i32(0),
                                      m_.op(spv::OpISub, it, {left, m_.constant_i32(1)}))});
  m_.op_void(spv::OpBranch, {cont});
  m_.label(cont);
  m_.op_void(spv::OpBranch, {header});
  m_.label(merge);
  return m_.op(spv::OpLoad, ft, {r});
}

// C's fmod, exactly: GLSL's x - y * trunc(x / y) loses the remainder once the quotient has
// more bits than the mantissa. A subnormal |y| is made normal by scaling with S (2^24 for
// f32, 2^53 for f64) after a first reduction by y * S, which keeps |x| * S from overflowing:
// fmod(x, y) = fmod(fmod(x, yS) * S, yS) / S, every scaling exact.
Id SpirvMath::exact_fmod(Id x, Id y, Scalar t) {
  Id ft = type(t), bt = type(Scalar::Bool);
  Id ax = ext(GLSLstd450FAbs, ft, {x}), ay = ext(GLSLstd450FAbs, ft, {y});
  Id inf = float_const(t, std::numeric_limits<double>::infinity());
  Id bad = m_.op(
      spv::OpLogicalOr, bt,
      {m_.op(spv::OpLogicalNot, bt, {m_.op(spv::OpFOrdLessThan, bt, {ax, inf})}),
       m_.op(spv::OpLogicalNot, bt, {m_.op(spv::OpFOrdGreaterThan, bt, {ay, float_const(t, 0)})})});
  Id y_inf = m_.op(spv::OpFOrdEqual, bt, {ay, inf});
  Id skip = m_.op(spv::OpLogicalOr, bt, {bad, y_inf});
  double scale = t == Scalar::F64 ? 9007199254740992.0 : 16777216.0;
  double min_normal =
      t == Scalar::F64 ? std::numeric_limits<double>::min() : std::numeric_limits<float>::min();
  Id subnormal_y = m_.op(spv::OpFOrdLessThan, bt, {ay, float_const(t, min_normal)});
  Id ay_scaled = m_.op(spv::OpFMul, ft, {ay, float_const(t, scale)});
  Id divisor = select(t, subnormal_y, ay_scaled, ay);
  // Skipped inputs (non-finite, zero divisor) run no steps.
  Id first = fmod_steps(select(t, skip, float_const(t, 0), ax),
                        select(t, skip, float_const(t, 1), divisor), t);
  Id second_in = select(t, subnormal_y, m_.op(spv::OpFMul, ft, {first, float_const(t, scale)}),
                        float_const(t, 0));
  Id second = fmod_steps(second_in, select(t, subnormal_y, ay_scaled, float_const(t, 1)), t);
  Id rest =
      select(t, subnormal_y, m_.op(spv::OpFMul, ft, {second, float_const(t, 1.0 / scale)}), first);
  Id signed_rest = select(t, sign_bit(x, t), m_.op(spv::OpFNegate, ft, {rest}), rest);
  Id nan = float_const(t, std::numeric_limits<double>::quiet_NaN());
  return select(t, bad, nan, select(t, y_inf, x, signed_rest));
}

// GLSL leaves atan2(0, 0) undefined (lavapipe answers 3pi/4); C gives +-0 or +-pi.
Id SpirvMath::atan2(Id y, Id x, Scalar t) {
  Id bt = type(Scalar::Bool), zero = float_const(t, 0);
  Id both_zero =
      m_.op(spv::OpLogicalAnd, bt,
            {m_.op(spv::OpFOrdEqual, bt, {y, zero}), m_.op(spv::OpFOrdEqual, bt, {x, zero})});
  Id magnitude = select(t, sign_bit(x, t), float_const(t, 3.14159265358979323846), zero);
  Id special = select(t, sign_bit(y, t), m_.op(spv::OpFNegate, type(t), {magnitude}), magnitude);
  Id nan_in =
      m_.op(spv::OpLogicalOr, bt, {m_.op(spv::OpIsNan, bt, {y}), m_.op(spv::OpIsNan, bt, {x})});
  Id r = select(t, both_zero, special, transcendental(GLSLstd450Atan2, t, {y, x}, "atan2"));
  return select(t, nan_in, float_const(t, std::numeric_limits<double>::quiet_NaN()), r);
}

Id SpirvMath::unary(Op op, Id a, Scalar from, Scalar t) {
  Id ty = type(t);
  switch (op) {
    case Op::Neg: return m_.op(is_float(t) ? spv::OpFNegate : spv::OpSNegate, ty, {a});
    case Op::BitNot:
    case Op::LogicNot: return m_.op(t == Scalar::Bool ? spv::OpLogicalNot : spv::OpNot, ty, {a});
    case Op::Abs:
      if (is_float(t)) return ext(GLSLstd450FAbs, ty, {a});
      if (is_signed_int(t)) return ext(GLSLstd450SAbs, ty, {a});
      return a;
    case Op::Sign: return sign(a, t);
    case Op::Floor: return ext(GLSLstd450Floor, ty, {a});
    case Op::Ceil: return ext(GLSLstd450Ceil, ty, {a});
    case Op::Round: return round(a, t);
    case Op::Sqrt: return ext(GLSLstd450Sqrt, ty, {a});
    case Op::Rsqrt:
      return m_.op(spv::OpFDiv, ty, {float_const(t, 1), ext(GLSLstd450Sqrt, ty, {a})});
    case Op::Sin: return transcendental(GLSLstd450Sin, t, {a}, "sin");
    case Op::Cos: return transcendental(GLSLstd450Cos, t, {a}, "cos");
    case Op::Tan: return transcendental(GLSLstd450Tan, t, {a}, "tan");
    // Through atan2: drivers' own asin/acos are often coarse polynomials (lavapipe's is off
    // by 5e-5), their atan2 is not.
    case Op::Asin:
    case Op::Acos: {
      Id one = float_const(t, 1);
      Id c = ext(GLSLstd450Sqrt, ty,
                 {m_.op(spv::OpFMul, ty,
                        {m_.op(spv::OpFSub, ty, {one, a}), m_.op(spv::OpFAdd, ty, {one, a})})});
      return op == Op::Asin ? atan2(a, c, t) : atan2(c, a, t);
    }
    case Op::Atan: return transcendental(GLSLstd450Atan, t, {a}, "atan");
    case Op::Exp: return transcendental(GLSLstd450Exp, t, {a}, "exp");
    case Op::Log: return transcendental(GLSLstd450Log, t, {a}, "log");
    case Op::Cast: return cast(a, from, t);
    case Op::Bitcast: return m_.op(spv::OpBitcast, ty, {a});
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
  throw InternalError("spirv codegen: unhandled unary op " + std::string(ir::op_name(op)));
}

// Division that cannot trap and has one answer everywhere: x / 0 and x % 0 give 0,
// MIN / -1 wraps to MIN (as the CPU backend).
Id SpirvMath::int_div_rem(Id a, Id c, Scalar t, bool rem) {
  Id ty = type(t), bt = type(Scalar::Bool);
  bool s = is_signed_int(t);
  Id zero = int_const(t, 0), one = int_const(t, 1);
  Id by_zero = m_.op(spv::OpIEqual, bt, {c, zero});
  Id bad = by_zero, minus_one = 0;
  if (s) {
    minus_one = m_.op(spv::OpIEqual, bt, {c, int_const(t, -1)});
    bad = m_.op(spv::OpLogicalOr, bt, {by_zero, minus_one});
  }
  Id safe = select(t, bad, one, c);
  Id q =
      m_.op(rem ? (s ? spv::OpSRem : spv::OpUMod) : (s ? spv::OpSDiv : spv::OpUDiv), ty, {a, safe});
  if (s) q = select(t, minus_one, rem ? zero : m_.op(spv::OpSNegate, ty, {a}), q);
  return select(t, by_zero, zero, q);
}

// Power by squaring; a non-positive exponent gives 1.
Id SpirvMath::int_pow(Id base, Id exp, Scalar t) {
  Id ty = type(t), bt = type(Scalar::Bool);
  Id ptr = m_.type_pointer(spv::StorageClassFunction, ty);
  Id r = m_.local_variable(ptr), x = m_.local_variable(ptr), e = m_.local_variable(ptr);
  Id zero = int_const(t, 0), one = int_const(t, 1);
  m_.op_void(spv::OpStore, {r, one});
  m_.op_void(spv::OpStore, {x, base});
  m_.op_void(spv::OpStore, {e, exp});
  Id header = m_.fresh_id(), body = m_.fresh_id(), cont = m_.fresh_id(), merge = m_.fresh_id();
  m_.op_void(spv::OpBranch, {header});
  m_.label(header);
  Id more = m_.op(spv::OpSGreaterThan, bt, {m_.op(spv::OpLoad, ty, {e}), zero});
  m_.op_void(spv::OpLoopMerge, {merge, cont, spv::LoopControlMaskNone});
  m_.op_void(spv::OpBranchConditional, {more, body, merge});
  m_.label(body);
  Id ev = m_.op(spv::OpLoad, ty, {e}), xv = m_.op(spv::OpLoad, ty, {x}),
     rv = m_.op(spv::OpLoad, ty, {r});
  Id odd = m_.op(spv::OpINotEqual, bt, {m_.op(spv::OpBitwiseAnd, ty, {ev, one}), zero});
  m_.op_void(spv::OpStore, {r, select(t, odd, m_.op(spv::OpIMul, ty, {rv, xv}), rv)});
  m_.op_void(spv::OpStore, {x, m_.op(spv::OpIMul, ty, {xv, xv})});
  m_.op_void(spv::OpStore, {e, m_.op(spv::OpShiftRightLogical, ty, {ev, one})});
  m_.op_void(spv::OpBranch, {cont});
  m_.label(cont);
  m_.op_void(spv::OpBranch, {header});
  m_.label(merge);
  return m_.op(spv::OpLoad, ty, {r});
}

// GLSL's Pow is undefined for x < 0 and for x == 0, y <= 0; C's pow is not. Negative bases
// with integral exponents keep their sign rules, zero and y == 0 follow C.
Id SpirvMath::float_pow(Id x, Id y, Scalar t) {
  Id ty = type(t), bt = type(Scalar::Bool);
  Id zero = float_const(t, 0), one = float_const(t, 1);
  Id r = transcendental(GLSLstd450Pow, t, {ext(GLSLstd450FAbs, ty, {x}), y}, "pow");
  Id y_int = m_.op(spv::OpFOrdEqual, bt, {ext(GLSLstd450Trunc, ty, {y}), y});
  Id half = m_.op(spv::OpFMul, ty, {y, float_const(t, 0.5)});
  Id y_odd =
      m_.op(spv::OpLogicalAnd, bt,
            {y_int, m_.op(spv::OpFOrdNotEqual, bt, {ext(GLSLstd450Trunc, ty, {half}), half})});
  Id neg_x = m_.op(spv::OpFOrdLessThan, bt, {x, zero});
  Id nan = float_const(t, std::numeric_limits<double>::quiet_NaN());
  Id negative = select(t, y_int, select(t, y_odd, m_.op(spv::OpFNegate, ty, {r}), r), nan);
  Id result = select(t, neg_x, negative, r);
  Id zero_x = m_.op(spv::OpFOrdEqual, bt, {x, zero});
  Id y_pos = m_.op(spv::OpFOrdGreaterThan, bt, {y, zero});
  Id at_zero = select(t, y_pos, zero, float_const(t, std::numeric_limits<double>::infinity()));
  // -0 to an odd integer power keeps its sign: pow(-0, 3) = -0, pow(-0, -1) = -inf.
  at_zero = select(t, m_.op(spv::OpLogicalAnd, bt, {y_odd, sign_bit(x, t)}),
                   m_.op(spv::OpFNegate, ty, {at_zero}), at_zero);
  result = select(t, zero_x, at_zero, result);
  return select(t, m_.op(spv::OpFOrdEqual, bt, {y, zero}), one, result);
}

Id SpirvMath::compare(Op op, Id a, Id b, Scalar t) {
  Id bt = type(Scalar::Bool);
  if (t == Scalar::Bool) {
    if (op == Op::Eq) return m_.op(spv::OpLogicalEqual, bt, {a, b});
    if (op == Op::Ne) return m_.op(spv::OpLogicalNotEqual, bt, {a, b});
    a = cast(a, Scalar::Bool, Scalar::U32);
    b = cast(b, Scalar::Bool, Scalar::U32);
    t = Scalar::U32;
  }
  bool f = is_float(t), s = is_signed_int(t);
  spv::Op o = spv::OpNop;
  switch (op) {
    case Op::Eq: o = f ? spv::OpFOrdEqual : spv::OpIEqual; break;
    case Op::Ne: o = f ? spv::OpFUnordNotEqual : spv::OpINotEqual; break;
    case Op::Lt: o = f ? spv::OpFOrdLessThan : s ? spv::OpSLessThan : spv::OpULessThan; break;
    case Op::Le:
      o = f ? spv::OpFOrdLessThanEqual : s ? spv::OpSLessThanEqual : spv::OpULessThanEqual;
      break;
    case Op::Gt:
      o = f ? spv::OpFOrdGreaterThan : s ? spv::OpSGreaterThan : spv::OpUGreaterThan;
      break;
    case Op::Ge:
      o = f ? spv::OpFOrdGreaterThanEqual : s ? spv::OpSGreaterThanEqual : spv::OpUGreaterThanEqual;
      break;
    // Not comparisons: binary() sends only comparisons here.
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
    case Op::Offload: throw InternalError("spirv codegen: not a comparison");
  }
  return m_.op(o, bt, {a, b});
}

Id SpirvMath::binary(Op op, Id a, Id c, Scalar t) {
  if (ir::is_comparison(op)) return compare(op, a, c, t);
  Id ty = type(t), bt = type(Scalar::Bool);
  bool f = is_float(t), s = is_signed_int(t), logic = t == Scalar::Bool;
  switch (op) {
    case Op::Add: return m_.op(f ? spv::OpFAdd : spv::OpIAdd, ty, {a, c});
    case Op::Sub: return m_.op(f ? spv::OpFSub : spv::OpISub, ty, {a, c});
    case Op::Mul: return m_.op(f ? spv::OpFMul : spv::OpIMul, ty, {a, c});
    case Op::Div: return f ? m_.op(spv::OpFDiv, ty, {a, c}) : int_div_rem(a, c, t, false);
    case Op::Mod: {
      if (!f && !s) return int_div_rem(a, c, t, true);
      // Floored: a remainder whose sign differs from the divisor's moves by one divisor.
      if (f) {
        Id r = exact_fmod(a, c, t);
        Id zero = float_const(t, 0);
        Id nonzero = m_.op(spv::OpFUnordNotEqual, bt, {r, zero});
        Id differ = m_.op(
            spv::OpLogicalNotEqual, bt,
            {m_.op(spv::OpFOrdLessThan, bt, {r, zero}), m_.op(spv::OpFOrdLessThan, bt, {c, zero})});
        Id fix = m_.op(spv::OpLogicalAnd, bt, {nonzero, differ});
        return select(t, fix, m_.op(spv::OpFAdd, ty, {r, c}), r);
      }
      Id r = int_div_rem(a, c, t, true);
      Id zero = int_const(t, 0);
      Id fix = m_.op(spv::OpLogicalAnd, bt,
                     {m_.op(spv::OpINotEqual, bt, {r, zero}),
                      m_.op(spv::OpSLessThan, bt, {m_.op(spv::OpBitwiseXor, ty, {r, c}), zero})});
      return select(t, fix, m_.op(spv::OpIAdd, ty, {r, c}), r);
    }
    case Op::Min: return ext(f ? GLSLstd450NMin : s ? GLSLstd450SMin : GLSLstd450UMin, ty, {a, c});
    case Op::Max: return ext(f ? GLSLstd450NMax : s ? GLSLstd450SMax : GLSLstd450UMax, ty, {a, c});
    case Op::Pow: return f ? float_pow(a, c, t) : int_pow(a, c, t);
    case Op::Atan2: return atan2(a, c, t);
    case Op::BitAnd:
    case Op::LogicAnd: return m_.op(logic ? spv::OpLogicalAnd : spv::OpBitwiseAnd, ty, {a, c});
    case Op::BitOr:
    case Op::LogicOr: return m_.op(logic ? spv::OpLogicalOr : spv::OpBitwiseOr, ty, {a, c});
    case Op::BitXor: return m_.op(logic ? spv::OpLogicalNotEqual : spv::OpBitwiseXor, ty, {a, c});
    case Op::Shl:
    case Op::Shr: {
      // Shift counts wrap at the width, as on the CPU.
      Id n = m_.op(spv::OpBitwiseAnd, ty, {c, int_const(t, bit_width(t) - 1)});
      if (op == Op::Shl) return m_.op(spv::OpShiftLeftLogical, ty, {a, n});
      return m_.op(s ? spv::OpShiftRightArithmetic : spv::OpShiftRightLogical, ty, {a, n});
    }
    // Comparisons: compare(), above.
    case Op::Eq:
    case Op::Ne:
    case Op::Lt:
    case Op::Le:
    case Op::Gt:
    case Op::Ge: break;
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
  throw InternalError("spirv codegen: unhandled binary op " + std::string(ir::op_name(op)));
}

Id SpirvMath::fma(Scalar t, Id a, Id b, Id c) {
  Id ty = type(t);
  if (is_float(t)) return ext(GLSLstd450Fma, ty, {a, b, c});
  return m_.op(spv::OpIAdd, ty, {m_.op(spv::OpIMul, ty, {a, b}), c});
}

Id SpirvMath::to_memory(Scalar s, Id v) {
  if (s != Scalar::Bool) return v;
  return select(Scalar::U8, v, int_const(Scalar::U8, 1), int_const(Scalar::U8, 0));
}

Id SpirvMath::from_memory(Scalar s, Id v) {
  if (s != Scalar::Bool) return v;
  return m_.op(spv::OpINotEqual, type(Scalar::Bool), {v, int_const(Scalar::U8, 0)});
}

std::vector<Id> SpirvMath::to_words(Scalar s, Id v) {
  Id u32t = type(Scalar::U32);
  if (s == Scalar::Bool) return {select(Scalar::U32, v, u32(1), u32(0))};
  int w = bit_width(s);
  if (w == 64) {
    Id pair = m_.op(spv::OpBitcast, m_.type_vector(u32t, 2), {v});
    return {m_.op(spv::OpCompositeExtract, u32t, {pair, 0}),
            m_.op(spv::OpCompositeExtract, u32t, {pair, 1})};
  }
  if (w == 32) return {s == Scalar::U32 ? v : m_.op(spv::OpBitcast, u32t, {v})};
  return {m_.op(spv::OpUConvert, u32t, {v})};
}

Id SpirvMath::from_words(Scalar s, const std::vector<Id>& words) {
  Id ty = type(s);
  if (s == Scalar::Bool) return m_.op(spv::OpINotEqual, ty, {words.at(0), u32(0)});
  int w = bit_width(s);
  if (w == 64) {
    Id pair = m_.op(spv::OpCompositeConstruct, m_.type_vector(type(Scalar::U32), 2),
                    {words.at(0), words.at(1)});
    return m_.op(spv::OpBitcast, ty, {pair});
  }
  if (w == 32) return s == Scalar::U32 ? words.at(0) : m_.op(spv::OpBitcast, ty, {words.at(0)});
  Id narrow = m_.op(spv::OpUConvert, uint_type(w), {words.at(0)});
  return is_signed_int(s) ? m_.op(spv::OpBitcast, ty, {narrow}) : narrow;
}

}  // namespace loom::spirv
