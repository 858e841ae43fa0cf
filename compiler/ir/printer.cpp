#include "compiler/ir/printer.h"

#include <cinttypes>
#include <cstdio>

#include "compiler/ir/inst.h"

namespace loom::ir {

namespace {

std::string ref(const Inst* inst) {
  if (!inst) return "%<null>";
  if (inst->erased()) return "%<erased>";  // its id is stale: the kernel was renumbered without it
  return "%" + std::to_string(inst->id);
}

std::string format_const(const Inst& c) {
  if (is_float(c.type)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", c.float_value());
    std::string s = buf;
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // keep floats visibly floats
    return s;
  }
  if (c.type == Scalar::Bool) return c.bits ? "true" : "false";
  if (is_unsigned_int(c.type)) return std::to_string(c.bits);
  return std::to_string(c.int_value());
}

void print_block(const Block& block, int indent, std::string& out);

std::string slot_and(const Inst& inst, const char* separator, int32_t value) {
  return "$" + std::to_string(inst.resource_slot()) + separator + std::to_string(value);
}

std::string format_sampler(const Inst& inst) {
  return std::string((inst.bits & kSampleLinear) ? " linear" : " nearest") +
         ((inst.bits & kSampleRepeat) ? " repeat" : " clamp");
}

// What the printed IR shows between the op's name and its operands.
std::string format_attributes(const Inst& inst) {
  switch (inst.op) {
    case Op::Const: return format_const(inst);
    case Op::ArgLoad:
      return "p" + std::to_string(inst.param_index()) + "+" + std::to_string(inst.byte_offset());
    case Op::LoopIndex:
      return (inst.operands.empty() ? ref(nullptr) : ref(inst.operand(0))) + "." +
             std::to_string(inst.dimension());
    case Op::ResourceShape: return slot_and(inst, ".", inst.dimension());
    case Op::GlobalPtr: return slot_and(inst, ".c", inst.component());
    case Op::ElementPtr: return "$" + std::to_string(inst.resource_slot());
    case Op::AtomicRMW: return std::string(atomic_op_name(inst.atomic_op()));
    case Op::TexLoad: return slot_and(inst, ".c", inst.channel());
    case Op::TexSample: return slot_and(inst, ".c", inst.channel()) + format_sampler(inst);
    case Op::TexStore: return "$" + std::to_string(inst.resource_slot());
    case Op::BoundsCheck: return slot_and(inst, ".", inst.dimension());
    case Op::LocalArray: return std::to_string(inst.length()) + "x" + std::to_string(inst.width());
    case Op::ArrayLoad:
    case Op::ArrayStore: return "c" + std::to_string(inst.component());
    case Op::TmpLoad:
    case Op::TmpStore: return "@" + std::to_string(inst.temp_offset());
    case Op::Reduce:
      return std::string(op_name(inst.combine_op())) + " @" + std::to_string(inst.temp_offset());
    case Op::StructFor: return slot_and(inst, " dims ", inst.dims());
    case Op::Offload: {
      std::string kind(task_kind_name(inst.task_kind()));
      if (inst.task_kind() == TaskKind::StructFor)
        kind += " $" + std::to_string(inst.resource_slot());
      return kind;
    }
    case Op::Assert: return "\"" + inst.message() + "\"";
    // Shown by their operands alone (a range_for's dimensions are its bound pairs).
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
    case Op::LogicOr:
    case Op::Select:
    case Op::Fma:
    case Op::Rand:
    case Op::Alloca:
    case Op::LocalLoad:
    case Op::LocalStore:
    case Op::GlobalLoad:
    case Op::GlobalStore:
    case Op::If:
    case Op::RangeFor:
    case Op::While:
    case Op::Break:
    case Op::Continue:
    case Op::Return: return "";
  }
  return "";
}

void print_one(const Inst& inst, int indent, std::string& out) {
  out.append(static_cast<size_t>(indent) * 2, ' ');
  if (inst.type != Scalar::Void) {
    out += ref(&inst);
    out += ":";
    out += scalar_name(inst.type);
    out += " = ";
  }
  out += op_name(inst.op);
  std::string attrs = format_attributes(inst);
  size_t first_operand = inst.op == Op::LoopIndex ? 1 : 0;
  if (!attrs.empty()) out += " " + attrs;
  for (size_t i = first_operand; i < inst.operands.size(); ++i) {
    out += i == first_operand ? " " : ", ";
    out += ref(inst.operands[i]);
  }
  if (inst.regions.empty()) {
    out += "\n";
    return;
  }
  for (size_t r = 0; r < inst.regions.size(); ++r) {
    out += r == 0 ? " {\n" : (std::string(static_cast<size_t>(indent) * 2, ' ') + "} else {\n");
    print_block(*inst.regions[r], indent + 1, out);
  }
  out.append(static_cast<size_t>(indent) * 2, ' ');
  out += "}\n";
}

void print_block(const Block& block, int indent, std::string& out) {
  for (const auto& inst : block.insts) print_one(*inst, indent, out);
}

}  // namespace

std::string print_inst(const Inst& inst, int indent) {
  std::string out;
  print_one(inst, indent, out);
  return out;
}

std::string print_kernel(const Kernel& kernel) {
  kernel.renumber();
  const KernelABI& abi = kernel.abi;
  std::string out = "kernel " + abi.name + "\n";
  for (size_t i = 0; i < abi.params.size(); ++i) {
    const ParamDesc& p = abi.params[i];
    out += "  param p" + std::to_string(i) + " " + p.name + ": " + param_kind_name(p.kind);
    if (p.kind == ParamKind::Value || p.kind == ParamKind::Ndarray)
      out += " " + value_type_name(p.type);
    if (p.kind == ParamKind::Ndarray || p.kind == ParamKind::Texture)
      out += " ndim " + std::to_string(p.ndim);
    if (p.kind == ParamKind::Argpack) out += " type " + std::to_string(p.argpack_type);
    out += "\n";
  }
  for (size_t i = 0; i < abi.resources.size(); ++i) {
    const ResourceDesc& r = abi.resources[i];
    out += "  slot $" + std::to_string(i) + ": " + resource_kind_name(r.kind) + " " +
           std::string(scalar_name(r.dtype));
    if (r.components > 1) out += "x" + std::to_string(r.components);
    out += " shape [";
    for (int d = 0; d < r.ndim; ++d) {
      if (d) out += ", ";
      out += r.kind == ResourceKind::Field ? std::to_string(r.shape[static_cast<size_t>(d)]) : "?";
    }
    out += "]";
    if (r.layout == Layout::SoA) out += " soa";
    if (!r.field.empty()) out += " field " + r.field;
    if (r.param >= 0) out += " from p" + std::to_string(r.param);
    if (r.param_offset >= 0) out += "+" + std::to_string(r.param_offset);
    out += "\n";
  }
  if (!kernel.block_local_slots.empty()) {
    out += "  block_local";
    for (int32_t slot : kernel.block_local_slots) out += " $" + std::to_string(slot);
    out += "\n";
  }
  for (const ValueType& t : abi.returns) out += "  returns " + value_type_name(t) + "\n";
  print_block(*kernel.body, 1, out);
  return out;
}

}  // namespace loom::ir
