#include "compiler/ir/printer.h"

#include <cinttypes>
#include <cstdio>

#include "compiler/ir/inst.h"

namespace loom::ir {

namespace {

std::string ref(const Inst* inst) { return inst ? "%" + std::to_string(inst->id) : "%<null>"; }

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

void print_one(const Inst& inst, int indent, std::string& out) {
  out.append(static_cast<size_t>(indent) * 2, ' ');
  if (inst.type != Scalar::Void) {
    out += ref(&inst);
    out += ":";
    out += scalar_name(inst.type);
    out += " = ";
  }
  out += op_name(inst.op);
  std::string attrs;
  switch (inst.op) {
    case Op::Const: attrs = format_const(inst); break;
    case Op::ArgLoad: attrs = "p" + std::to_string(inst.attr0) + "+" + std::to_string(inst.attr1); break;
    case Op::LoopIndex:
      attrs = (inst.operands.empty() ? ref(nullptr) : ref(inst.operand(0))) + "." + std::to_string(inst.attr0);
      break;
    case Op::ResourceShape: attrs = "$" + std::to_string(inst.attr0) + "." + std::to_string(inst.attr1); break;
    case Op::GlobalPtr: attrs = "$" + std::to_string(inst.attr0) + ".c" + std::to_string(inst.attr1); break;
    case Op::ElementPtr: attrs = "$" + std::to_string(inst.attr0); break;
    case Op::AtomicRMW: attrs = std::string(atomic_op_name(static_cast<AtomicOp>(inst.attr0))); break;
    case Op::TexLoad:
      attrs = "$" + std::to_string(inst.attr0) + ".c" + std::to_string(inst.attr1); break;
    case Op::TexSample:
      attrs = "$" + std::to_string(inst.attr0) + ".c" + std::to_string(inst.attr1) +
              ((inst.bits & kSampleLinear) ? " linear" : " nearest") +
              ((inst.bits & kSampleRepeat) ? " repeat" : " clamp");
      break;
    case Op::TexStore: attrs = "$" + std::to_string(inst.attr0); break;
    case Op::BoundsCheck: attrs = "$" + std::to_string(inst.attr0) + "." + std::to_string(inst.attr1); break;
    case Op::TmpLoad: case Op::TmpStore: attrs = "@" + std::to_string(inst.attr0); break;
    case Op::StructFor: attrs = "$" + std::to_string(inst.attr0) + " dims " + std::to_string(inst.attr1); break;
    case Op::Offload:
      attrs = std::string(task_kind_name(static_cast<TaskKind>(inst.attr0)));
      if (inst.attr0 == static_cast<int>(TaskKind::StructFor)) attrs += " $" + std::to_string(inst.attr1);
      break;
    case Op::Assert: attrs = "\"" + inst.text + "\""; break;
    default: break;
  }
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

std::string print_kernel(Kernel& kernel) {
  kernel.renumber();
  const KernelABI& abi = kernel.abi;
  std::string out = "kernel " + abi.name + "\n";
  for (size_t i = 0; i < abi.params.size(); ++i) {
    const ParamDesc& p = abi.params[i];
    out += "  param p" + std::to_string(i) + " " + p.name + ": " + param_kind_name(p.kind);
    if (p.kind == ParamKind::Value || p.kind == ParamKind::Ndarray) out += " " + value_type_name(p.type);
    if (p.kind == ParamKind::Ndarray || p.kind == ParamKind::Texture) out += " ndim " + std::to_string(p.ndim);
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
  for (const ValueType& t : abi.returns) out += "  returns " + value_type_name(t) + "\n";
  print_block(*kernel.body, 1, out);
  return out;
}

}  // namespace loom::ir
