// Builds IR at an insertion point. Used by graph lowering, passes and tests.
#pragma once

#include <initializer_list>
#include <memory>

#include "compiler/ir/inst.h"

namespace loom::ir {

class Builder {
 public:
  explicit Builder(Block* block) : block_(block), pos_(block->insts.size()) {}
  Builder(Block* block, size_t pos) : block_(block), pos_(pos) {}

  Block* block() const { return block_; }
  size_t position() const { return pos_; }
  void set_insert_point(Block* block, size_t pos) {
    block_ = block;
    pos_ = pos;
  }
  void set_insert_end(Block* block) {
    block_ = block;
    pos_ = block->insts.size();
  }
  // Graph node id stamped onto everything created from now on.
  void set_node(int32_t node) { node_ = node; }

  Inst* insert(std::unique_ptr<Inst> inst);
  // attr0/attr1: the op's attributes in ops.def's column order (ArgLoad: parameter, offset).
  Inst* make(Op op, Scalar type, std::initializer_list<Inst*> operands = {}, int32_t attr0 = 0,
             int32_t attr1 = 0);

  Inst* const_int(Scalar type, int64_t value);
  Inst* const_float(Scalar type, double value);
  Inst* const_bool(bool value);
  Inst* i32(int64_t value) { return const_int(Scalar::I32, value); }
  Inst* f32(double value) { return const_float(Scalar::F32, value); }

  Inst* arg(Scalar type, int param, int offset = 0);
  Inst* unary(Op op, Inst* a);
  Inst* binary(Op op, Inst* a, Inst* b);  // result bool for comparisons
  Inst* cast(Scalar to, Inst* a);
  Inst* select(Inst* cond, Inst* a, Inst* b);

  Inst* alloca_(Scalar type);
  Inst* local_load(Inst* var);
  Inst* local_store(Inst* var, Inst* value);

  Inst* global_ptr(Scalar type, int slot, std::initializer_list<Inst*> indices, int component = 0);
  Inst* global_ptr(Scalar type, int slot, const std::vector<Inst*>& indices, int component = 0);
  Inst* global_load(Inst* ptr);
  Inst* global_store(Inst* ptr, Inst* value);
  Inst* atomic(AtomicOp op, Inst* ptr, Inst* value);

  // Regions: the returned instruction owns fresh empty blocks.
  Inst* if_(Inst* cond);                                 // regions: then, else
  Inst* range_for(const std::vector<Inst*>& begin_end);  // pairs: begin0, end0, begin1, end1...
  Inst* struct_for(int slot, int ndim);
  Inst* while_();
  Inst* loop_index(Inst* loop, int dim);

 private:
  Inst* add_regions(Inst* inst, int count);

  Block* block_;
  size_t pos_;
  int32_t node_ = -1;
};

}  // namespace loom::ir
