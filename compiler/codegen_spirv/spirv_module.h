// A SPIR-V word emitter over SPIRV-Headers' spirv.hpp. One word vector per module section,
// assembled in the order the specification requires (capabilities, extensions, imports,
// memory model, entry points, execution modes, debug names, annotations, types/constants/
// globals, functions). Types and constants are de-duplicated by their operand words;
// decorated aggregate types (blocks, runtime arrays) are created fresh.
#pragma once

#include <spirv/unified1/spirv.hpp>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace loom::spirv {

using Id = uint32_t;

// Appends a literal string (nul-terminated, padded to whole words).
void append_string(std::vector<uint32_t>& words, const std::string& text);

class Module {
 public:
  explicit Module(uint32_t version = 0x00010500);
  uint32_t version() const { return version_; }

  Id fresh_id() { return next_id_++; }

  void capability(spv::Capability c);
  void extension(const std::string& name);
  Id ext_inst_import(const std::string& name);
  void memory_model(spv::AddressingModel a, spv::MemoryModel m);
  void entry_point(spv::ExecutionModel model, Id function, const std::string& name,
                   const std::vector<Id>& interface);
  void execution_mode(Id function, spv::ExecutionMode mode,
                      std::initializer_list<uint32_t> literals);
  void name(Id target, const std::string& text);
  void decorate(Id target, spv::Decoration d, std::initializer_list<uint32_t> literals = {});
  void member_decorate(Id type, uint32_t member, spv::Decoration d,
                       std::initializer_list<uint32_t> literals = {});

  // ---- types (de-duplicated unless noted)
  Id type_void();
  Id type_bool();
  Id type_int(uint32_t width, bool is_signed);
  Id type_float(uint32_t width);
  Id type_vector(Id component, uint32_t count);
  Id type_pointer(spv::StorageClass storage, Id pointee);
  Id type_function(Id result, const std::vector<Id>& params);
  Id type_array(Id element, Id length_constant);  // fresh: carries an ArrayStride
  Id type_runtime_array(Id element);              // fresh: carries an ArrayStride
  // An array of Function storage: de-duplicated, no layout (Vulkan forbids one there).
  Id type_local_array(Id element, Id length_constant);
  Id type_struct(const std::vector<Id>& members);  // fresh: carries Block/offsets
  Id type_image(Id sampled_type, spv::Dim dim, uint32_t sampled, spv::ImageFormat format);
  Id type_sampler();
  Id type_sampled_image(Id image);

  // ---- constants (de-duplicated)
  Id constant_bool(bool v);
  Id constant(Id type, std::initializer_list<uint32_t> words);
  Id constant_u32(uint32_t v) { return constant(type_int(32, false), {v}); }
  Id constant_i32(int32_t v) { return constant(type_int(32, true), {static_cast<uint32_t>(v)}); }
  Id constant_composite(Id type, const std::vector<Id>& parts);
  Id constant_null(Id type);
  // A boolean specialization constant (OpSpecConstantTrue/False, SpecId `spec_id`).
  Id spec_constant_bool(bool value, uint32_t spec_id);

  // A module-scope variable (in the types section).
  Id global_variable(Id pointer_type, spv::StorageClass storage);

  // ---- functions: one at a time
  Id begin_function(Id result_type, Id function_type,
                    spv::FunctionControlMask control = spv::FunctionControlMaskNone);
  // Opens a new basic block; `label` from fresh_id(), or 0 for a new one. Returns it.
  Id label(Id label = 0);
  // A Function-storage variable, placed at the top of the entry block.
  Id local_variable(Id pointer_type);
  void end_function();

  // An instruction in the current function. `result_type` 0: no result type; the result id
  // is fresh and returned when `has_result`.
  Id op(spv::Op opcode, Id result_type, std::initializer_list<uint32_t> operands);
  Id op(spv::Op opcode, Id result_type, const std::vector<uint32_t>& operands);
  void op_void(spv::Op opcode, std::initializer_list<uint32_t> operands);
  void op_void(spv::Op opcode, const std::vector<uint32_t>& operands);
  // True after a block terminator until the next label.
  bool block_closed() const { return block_closed_; }
  // The label of the block being written (or last written).
  Id current_block() const { return current_block_; }
  // An OpPhi of two incoming pairs whose second value is known only later (a loop header's
  // value from the back edge, computed after the body): `*later` says where set_later() puts it.
  Id phi_with_later(Id type, Id first_value, Id first_block, Id second_block, size_t* later);
  void set_later(size_t later, Id value);

  std::vector<uint32_t> assemble() const;

 private:
  static void emit(std::vector<uint32_t>& section, spv::Op opcode,
                   const std::vector<uint32_t>& operands);
  Id dedup_type(spv::Op opcode, const std::vector<uint32_t>& operands);

  uint32_t version_;
  Id next_id_ = 1;
  std::set<uint32_t> capabilities_;
  std::vector<uint32_t> capability_words_, extensions_, imports_, memory_model_, entry_points_,
      execution_modes_, debug_, annotations_, globals_, functions_;
  std::set<std::string> extension_names_;
  std::map<std::string, Id> imports_by_name_;
  std::map<std::vector<uint32_t>, Id> types_;  // opcode, operands (without result id)
  // Function under construction.
  std::vector<uint32_t> fn_header_, fn_vars_, fn_body_;
  bool in_function_ = false;
  bool block_closed_ = true;
  Id current_block_ = 0;
  bool first_label_pending_ = false;
};

bool is_block_terminator(spv::Op opcode);

}  // namespace loom::spirv
