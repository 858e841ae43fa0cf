#include "compiler/ir/inst.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/common/error.h"

namespace loom::ir {

double Inst::float_value() const {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

namespace {
// Offload keeps its task's space in attr1: loop dimensions of a range task, the resource
// slot of a struct task.
bool task_space_means(TaskKind kind, Attr meaning) {
  return (kind == TaskKind::RangeFor && meaning == Attr::Dims) ||
         (kind == TaskKind::StructFor && meaning == Attr::ResourceSlot);
}

[[noreturn]] void no_such_attribute(Op op, Attr meaning) {
  throw InternalError("IR op " + std::string(op_name(op)) + " has no " +
                      std::string(attr_name(meaning)) + " attribute (see ops.def)");
}
}  // namespace

int32_t* Inst::attr_slot(Attr meaning) {
  const OpInfo& info = op_info(op);
  if (meaning == Attr::None) return nullptr;
  if (info.attr0 == meaning) return &attr0_;
  if (info.attr1 == meaning) return &attr1_;
  if (info.attr1 == Attr::TaskSpace && task_space_means(static_cast<TaskKind>(attr0_), meaning))
    return &attr1_;
  return nullptr;
}

int32_t Inst::attr(Attr meaning) const {
  const int32_t* slot = const_cast<Inst*>(this)->attr_slot(meaning);
  if (!slot) no_such_attribute(op, meaning);
  return *slot;
}

void Inst::set_attr(Attr meaning, int32_t value) {
  int32_t* slot = attr_slot(meaning);
  if (!slot) no_such_attribute(op, meaning);
  *slot = value;
}

const std::string& Inst::message() const {
  if (op != Op::Assert) no_such_attribute(op, Attr::Message);
  return text;
}

void Inst::morph(Op to) {
  const OpInfo& from = op_info(op);
  int32_t a0 = attr0_, a1 = attr1_;
  op = to;
  attr0_ = attr1_ = 0;
  auto keep = [&](Attr meaning, int32_t value) {
    if (meaning == Attr::None || meaning == Attr::TaskSpace) return;
    if (int32_t* slot = attr_slot(meaning)) *slot = value;
  };
  keep(from.attr0, a0);
  keep(from.attr1, a1);
  if (to != Op::Assert) text.clear();
}

void Inst::copy_attributes_from(const Inst& other) {
  attr0_ = other.attr0_;
  attr1_ = other.attr1_;
}

bool Inst::same_attributes(const Inst& o) const {
  return op == o.op && type == o.type && bits == o.bits && attr0_ == o.attr0_ &&
         attr1_ == o.attr1_ && text == o.text;
}

uint64_t float_bits(double value) {
  uint64_t b;
  std::memcpy(&b, &value, sizeof b);
  return b;
}

uint64_t normalize_const_bits(Scalar type, uint64_t bits) {
  if (type == Scalar::Bool) return bits & 1;
  if (!is_int(type)) return bits;
  int w = bit_width(type);
  if (w >= 64) return bits;
  uint64_t mask = (uint64_t{1} << w) - 1;
  bits &= mask;
  if (is_signed_int(type) && (bits >> (w - 1)) & 1) bits |= ~mask;
  return bits;
}

bool const_is_normalized(const Inst& c) {
  if (c.type == Scalar::F32) {
    double d = c.float_value();
    return std::isnan(d) || static_cast<double>(static_cast<float>(d)) == d;
  }
  if (c.type == Scalar::F64) return true;
  return c.bits == normalize_const_bits(c.type, c.bits);
}

std::unique_ptr<Inst> make_const(Scalar type, double value) {
  auto c = std::make_unique<Inst>(Op::Const, type);
  if (is_float(type)) {
    c->bits =
        float_bits(type == Scalar::F32 ? static_cast<double>(static_cast<float>(value)) : value);
  } else if (type == Scalar::Bool) {
    c->bits = value != 0.0;
  } else {
    c->bits = normalize_const_bits(type, static_cast<uint64_t>(static_cast<int64_t>(value)));
  }
  return c;
}

std::unique_ptr<Inst> make_const_int(Scalar type, int64_t value) {
  if (is_float(type)) return make_const(type, static_cast<double>(value));
  auto c = std::make_unique<Inst>(Op::Const, type);
  c->bits = type == Scalar::Bool ? (value != 0)
                                 : normalize_const_bits(type, static_cast<uint64_t>(value));
  return c;
}

Inst* Block::append(std::unique_ptr<Inst> inst) {
  inst->parent = this;
  insts.push_back(std::move(inst));
  return insts.back().get();
}

Inst* Block::insert(size_t pos, std::unique_ptr<Inst> inst) {
  count_work(insts.size() - std::min(pos, insts.size()) + 1);  // moved to make room
  inst->parent = this;
  Inst* raw = inst.get();
  insts.insert(insts.begin() + static_cast<std::ptrdiff_t>(pos), std::move(inst));
  return raw;
}

size_t Block::index_of(const Inst* inst) const {
  for (size_t i = 0; i < insts.size(); ++i)
    if (insts[i].get() == inst) {
      count_work(i + 1);  // positions searched
      return i;
    }
  throw InternalError("Block::index_of: instruction not in block");
}

std::unique_ptr<Inst> Block::remove(size_t pos) {
  count_work(insts.size() - pos);  // moved to close the gap
  auto inst = std::move(insts[pos]);
  insts.erase(insts.begin() + static_cast<std::ptrdiff_t>(pos));
  inst->parent = nullptr;
  return inst;
}

Kernel::Kernel() : body(std::make_unique<Block>()) {}
Kernel::~Kernel() = default;

void Kernel::renumber() const {
  uint32_t next = 0;
  walk(static_cast<const Block&>(*body), [&](const Inst& inst) { inst.id = next++; });
}

// Marks `inst` and everything in its regions; a pass may have moved regions or
// instructions out before erasing what is left, so null entries are skipped.
void Kernel::mark_erased(Inst& inst) {
  inst.erased_ = true;
  for (auto& region : inst.regions) {
    if (!region) continue;
    for (auto& nested : region->insts)
      if (nested) mark_erased(*nested);
  }
}

void Kernel::erase(std::unique_ptr<Inst> inst) {
  mark_erased(*inst);
  inst->parent = nullptr;
  erased_.push_back(std::move(inst));
}

void Kernel::free_erased() {
  // An origin must not outlive its variable: a later Alloca could take its address.
  std::erase_if(var_origins, [](const VarOrigin& o) { return o.var->erased(); });
  erased_.clear();
}

const Kernel::VarOrigin* Kernel::origin_of(const Inst* var) const {
  for (const VarOrigin& o : var_origins)
    if (o.var == var) return &o;
  return nullptr;
}

namespace {
void clone_block(const Block& from, Block& to, std::unordered_map<const Inst*, Inst*>& map) {
  for (const auto& inst : from.insts) {
    auto copy = std::make_unique<Inst>(inst->op, inst->type);
    copy->bits = inst->bits;
    copy->copy_attributes_from(*inst);
    copy->text = inst->text;
    copy->id = inst->id;
    copy->node = inst->node;
    copy->operands = inst->operands;  // remapped after the whole tree exists
    Inst* raw = to.append(std::move(copy));
    map[inst.get()] = raw;
    for (const auto& region : inst->regions) {
      raw->regions.push_back(std::make_unique<Block>(raw));
      clone_block(*region, *raw->regions.back(), map);
    }
  }
}
}  // namespace

uint64_t combine_identity_bits(Op combine, Scalar type) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (is_float(type)) {
    switch (combine) {
      case Op::Add: return float_bits(-0.0);
      case Op::Mul: return float_bits(1.0);
      case Op::Min: return float_bits(kInf);
      case Op::Max: return float_bits(-kInf);
      default: break;
    }
    throw InternalError("no float identity for " + std::string(op_name(combine)));
  }
  int width = bit_width(type);
  bool is_signed = is_signed_int(type);
  uint64_t ones = ~uint64_t{0};
  uint64_t top = width == 64 ? ones : (uint64_t{1} << width) - 1;  // largest unsigned
  switch (combine) {
    case Op::Add:
    case Op::BitOr:
    case Op::BitXor: return 0;
    case Op::Mul: return 1;
    case Op::BitAnd: return normalize_const_bits(type, ones);
    case Op::Min: return normalize_const_bits(type, is_signed ? top >> 1 : top);
    case Op::Max: return normalize_const_bits(type, is_signed ? ~(top >> 1) : 0);
    default: break;
  }
  throw InternalError("no identity for " + std::string(op_name(combine)));
}

std::unique_ptr<Kernel> Kernel::clone() const {
  auto k = std::make_unique<Kernel>();
  k->abi = abi;
  k->debug = debug;
  k->fast_math = fast_math;
  k->index_bits = index_bits;
  k->workgroup_size = workgroup_size;
  k->distinct_ndarrays = distinct_ndarrays;
  k->block_local_slots = block_local_slots;
  k->task_notes = task_notes;
  std::unordered_map<const Inst*, Inst*> map;
  clone_block(*body, *k->body, map);
  walk(*k->body, [&](Inst& inst) {
    for (auto& op : inst.operands) op = map.at(op);
  });
  for (const VarOrigin& o : var_origins) {
    auto it = map.find(o.var);
    if (it != map.end()) k->var_origins.push_back({it->second, o.function, o.node});
  }
  return k;
}

void replace_uses(Block& root, const std::unordered_map<Inst*, Inst*>& map) {
  if (map.empty()) return;
  walk(root, [&](Inst& inst) {
    for (auto& op : inst.operands) {
      for (auto it = map.find(op); it != map.end(); it = map.find(op)) op = it->second;
    }
  });
}

std::unordered_map<const Inst*, int> count_uses(Block& root) {
  std::unordered_map<const Inst*, int> uses;
  walk(root, [&](Inst& inst) {
    for (Inst* op : inst.operands) ++uses[op];
  });
  return uses;
}

bool is_inside(const Inst* inst, const Block* ancestor) {
  for (const Block* b = inst->parent; b; b = b->owner ? b->owner->parent : nullptr)
    if (b == ancestor) return true;
  return false;
}

}  // namespace loom::ir
