#include "compiler/passes/cse.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/inst.h"
#include "compiler/ir/work_count.h"
#include "compiler/passes/rewrite.h"

namespace loom::passes {

namespace {

using ir::Block;
using ir::Inst;
using ir::Op;

// An instruction's value number key.
struct Key {
  const Inst* inst;
  std::vector<Inst*> operands;  // canonical order for commutative ops

  bool operator==(const Key& o) const {
    return inst->same_attributes(*o.inst) && operands == o.operands;
  }
};

struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = std::hash<int>()(static_cast<int>(k.inst->op));
    auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    mix(static_cast<size_t>(k.inst->type));
    mix(std::hash<uint64_t>()(k.inst->bits));
    auto [attr0, attr1] = k.inst->raw_attributes();
    mix(std::hash<int32_t>()(attr0));
    mix(std::hash<int32_t>()(attr1));
    for (const Inst* op : k.operands) mix(std::hash<const Inst*>()(op));
    return h;
  }
};

class ValueNumbering {
 public:
  explicit ValueNumbering(ir::Kernel& k) : kernel_(k) {}

  bool run() {
    visit(*kernel_.body);
    std::unordered_set<Inst*> dead;
    for (auto& [from, to] : replaced_) dead.insert(from);
    replace_and_erase(kernel_, replaced_, dead);
    return !replaced_.empty();
  }

 private:
  Inst* resolve(Inst* v) {
    auto it = replaced_.find(v);
    return it == replaced_.end() ? v : it->second;
  }

  Key key_of(const Inst* inst) {
    Key k{inst, inst->operands};
    if (ir::is_commutative(inst->op) && k.operands.size() == 2 && k.operands[1] < k.operands[0])
      std::swap(k.operands[0], k.operands[1]);
    return k;
  }

  void visit(Block& block) {
    std::vector<Key> scope;  // keys this block added, dropped when it ends
    for (auto& up : block.insts) {
      Inst* inst = up.get();
      ir::count_work();
      for (auto& op : inst->operands) op = resolve(op);
      if (ir::is_pure(inst->op) && inst->type != Scalar::Void) {
        Key k = key_of(inst);
        auto it = table_.find(k);
        if (it != table_.end()) {
          replaced_[inst] = it->second;
        } else {
          table_.emplace(k, inst);
          scope.push_back(k);
        }
      }
      for (auto& region : inst->regions) visit(*region);
    }
    for (const Key& k : scope) table_.erase(k);
  }

  ir::Kernel& kernel_;
  std::unordered_map<Key, Inst*, KeyHash> table_;
  std::unordered_map<Inst*, Inst*> replaced_;
};

}  // namespace

bool cse(ir::Kernel& kernel) { return ValueNumbering(kernel).run(); }

}  // namespace loom::passes
