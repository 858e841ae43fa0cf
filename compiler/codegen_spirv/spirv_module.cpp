#include "compiler/codegen_spirv/spirv_module.h"

#include "runtime/common/error.h"

namespace loom::spirv {

void append_string(std::vector<uint32_t>& words, const std::string& text) {
  size_t n = text.size() / 4 + 1;  // always room for the terminating nul
  size_t base = words.size();
  words.resize(base + n, 0);
  for (size_t i = 0; i < text.size(); ++i)
    words[base + i / 4] |= static_cast<uint32_t>(static_cast<uint8_t>(text[i])) << (8 * (i % 4));
}

bool is_block_terminator(spv::Op opcode) {
  switch (opcode) {
    case spv::OpBranch:
    case spv::OpBranchConditional:
    case spv::OpSwitch:
    case spv::OpReturn:
    case spv::OpReturnValue:
    case spv::OpKill:
    case spv::OpUnreachable:
    case spv::OpTerminateInvocation: return true;
    default: return false;
  }
}

Module::Module(uint32_t version) : version_(version) {}

void Module::emit(std::vector<uint32_t>& section, spv::Op opcode,
                  const std::vector<uint32_t>& operands) {
  section.push_back(static_cast<uint32_t>(operands.size() + 1) << 16 |
                    static_cast<uint32_t>(opcode));
  section.insert(section.end(), operands.begin(), operands.end());
}

void Module::capability(spv::Capability c) {
  if (!capabilities_.insert(static_cast<uint32_t>(c)).second) return;
  emit(capability_words_, spv::OpCapability, {static_cast<uint32_t>(c)});
}

void Module::extension(const std::string& name) {
  if (!extension_names_.insert(name).second) return;
  std::vector<uint32_t> w;
  append_string(w, name);
  emit(extensions_, spv::OpExtension, w);
}

Id Module::ext_inst_import(const std::string& name) {
  auto it = imports_by_name_.find(name);
  if (it != imports_by_name_.end()) return it->second;
  Id id = fresh_id();
  std::vector<uint32_t> w = {id};
  append_string(w, name);
  emit(imports_, spv::OpExtInstImport, w);
  return imports_by_name_[name] = id;
}

void Module::memory_model(spv::AddressingModel a, spv::MemoryModel m) {
  memory_model_.clear();
  emit(memory_model_, spv::OpMemoryModel, {static_cast<uint32_t>(a), static_cast<uint32_t>(m)});
}

void Module::entry_point(spv::ExecutionModel model, Id function, const std::string& name,
                         const std::vector<Id>& interface) {
  std::vector<uint32_t> w = {static_cast<uint32_t>(model), function};
  append_string(w, name);
  w.insert(w.end(), interface.begin(), interface.end());
  emit(entry_points_, spv::OpEntryPoint, w);
}

void Module::execution_mode(Id function, spv::ExecutionMode mode,
                            std::initializer_list<uint32_t> literals) {
  std::vector<uint32_t> w = {function, static_cast<uint32_t>(mode)};
  w.insert(w.end(), literals.begin(), literals.end());
  emit(execution_modes_, spv::OpExecutionMode, w);
}

void Module::name(Id target, const std::string& text) {
  std::vector<uint32_t> w = {target};
  append_string(w, text);
  emit(debug_, spv::OpName, w);
}

void Module::decorate(Id target, spv::Decoration d, std::initializer_list<uint32_t> literals) {
  std::vector<uint32_t> w = {target, static_cast<uint32_t>(d)};
  w.insert(w.end(), literals.begin(), literals.end());
  emit(annotations_, spv::OpDecorate, w);
}

void Module::member_decorate(Id type, uint32_t member, spv::Decoration d,
                             std::initializer_list<uint32_t> literals) {
  std::vector<uint32_t> w = {type, member, static_cast<uint32_t>(d)};
  w.insert(w.end(), literals.begin(), literals.end());
  emit(annotations_, spv::OpMemberDecorate, w);
}

// ---------------------------------------------------------------------------- types

Id Module::dedup_type(spv::Op opcode, const std::vector<uint32_t>& operands) {
  std::vector<uint32_t> key = {static_cast<uint32_t>(opcode)};
  key.insert(key.end(), operands.begin(), operands.end());
  auto it = types_.find(key);
  if (it != types_.end()) return it->second;
  Id id = fresh_id();
  // Types put their result id first; constants have a result type before it.
  bool typed = opcode == spv::OpConstant || opcode == spv::OpConstantTrue ||
               opcode == spv::OpConstantFalse || opcode == spv::OpConstantComposite ||
               opcode == spv::OpConstantNull;
  std::vector<uint32_t> w;
  if (typed) {
    w.push_back(operands.at(0));
    w.push_back(id);
    w.insert(w.end(), operands.begin() + 1, operands.end());
  } else {
    w.push_back(id);
    w.insert(w.end(), operands.begin(), operands.end());
  }
  emit(globals_, opcode, w);
  return types_[key] = id;
}

Id Module::type_void() { return dedup_type(spv::OpTypeVoid, {}); }
Id Module::type_bool() { return dedup_type(spv::OpTypeBool, {}); }
Id Module::type_int(uint32_t width, bool is_signed) {
  return dedup_type(spv::OpTypeInt, {width, is_signed ? 1u : 0u});
}
Id Module::type_float(uint32_t width) { return dedup_type(spv::OpTypeFloat, {width}); }
Id Module::type_vector(Id component, uint32_t count) {
  return dedup_type(spv::OpTypeVector, {component, count});
}
Id Module::type_pointer(spv::StorageClass storage, Id pointee) {
  return dedup_type(spv::OpTypePointer, {static_cast<uint32_t>(storage), pointee});
}
Id Module::type_function(Id result, const std::vector<Id>& params) {
  std::vector<uint32_t> w = {result};
  w.insert(w.end(), params.begin(), params.end());
  return dedup_type(spv::OpTypeFunction, w);
}

Id Module::type_array(Id element, Id length_constant) {
  Id id = fresh_id();
  emit(globals_, spv::OpTypeArray, {id, element, length_constant});
  return id;
}

Id Module::type_local_array(Id element, Id length_constant) {
  return dedup_type(spv::OpTypeArray, {element, length_constant});
}

Id Module::type_runtime_array(Id element) {
  Id id = fresh_id();
  emit(globals_, spv::OpTypeRuntimeArray, {id, element});
  return id;
}

Id Module::type_struct(const std::vector<Id>& members) {
  Id id = fresh_id();
  std::vector<uint32_t> w = {id};
  w.insert(w.end(), members.begin(), members.end());
  emit(globals_, spv::OpTypeStruct, w);
  return id;
}

Id Module::type_image(Id sampled_type, spv::Dim dim, uint32_t sampled, spv::ImageFormat format) {
  // depth 0, arrayed 0, multisampled 0
  return dedup_type(spv::OpTypeImage, {sampled_type, static_cast<uint32_t>(dim), 0, 0, 0, sampled,
                                       static_cast<uint32_t>(format)});
}

Id Module::type_sampler() { return dedup_type(spv::OpTypeSampler, {}); }
Id Module::type_sampled_image(Id image) { return dedup_type(spv::OpTypeSampledImage, {image}); }

// ---------------------------------------------------------------------------- constants

Id Module::constant_bool(bool v) {
  return dedup_type(v ? spv::OpConstantTrue : spv::OpConstantFalse, {type_bool()});
}

Id Module::constant(Id type, std::initializer_list<uint32_t> words) {
  std::vector<uint32_t> w = {type};
  w.insert(w.end(), words.begin(), words.end());
  return dedup_type(spv::OpConstant, w);
}

Id Module::constant_composite(Id type, const std::vector<Id>& parts) {
  std::vector<uint32_t> w = {type};
  w.insert(w.end(), parts.begin(), parts.end());
  return dedup_type(spv::OpConstantComposite, w);
}

Id Module::constant_null(Id type) { return dedup_type(spv::OpConstantNull, {type}); }

Id Module::global_variable(Id pointer_type, spv::StorageClass storage) {
  Id id = fresh_id();
  emit(globals_, spv::OpVariable, {pointer_type, id, static_cast<uint32_t>(storage)});
  return id;
}

// ---------------------------------------------------------------------------- functions

Id Module::begin_function(Id result_type, Id function_type, spv::FunctionControlMask control) {
  if (in_function_) throw InternalError("spirv: a function is already open");
  in_function_ = true;
  first_label_pending_ = true;
  fn_header_.clear();
  fn_vars_.clear();
  fn_body_.clear();
  Id id = fresh_id();
  emit(fn_header_, spv::OpFunction,
       {result_type, id, static_cast<uint32_t>(control), function_type});
  return id;
}

Id Module::label(Id label) {
  if (!in_function_) throw InternalError("spirv: label outside a function");
  if (!label) label = fresh_id();
  if (!block_closed_) throw InternalError("spirv: a new block before the last one was terminated");
  if (first_label_pending_) {
    emit(fn_header_, spv::OpLabel, {label});
    first_label_pending_ = false;
  } else {
    emit(fn_body_, spv::OpLabel, {label});
  }
  block_closed_ = false;
  current_block_ = label;
  return label;
}

Id Module::local_variable(Id pointer_type) {
  Id id = fresh_id();
  emit(fn_vars_, spv::OpVariable,
       {pointer_type, id, static_cast<uint32_t>(spv::StorageClassFunction)});
  return id;
}

void Module::end_function() {
  if (!in_function_) throw InternalError("spirv: no function is open");
  if (!block_closed_) throw InternalError("spirv: the function's last block has no terminator");
  functions_.insert(functions_.end(), fn_header_.begin(), fn_header_.end());
  functions_.insert(functions_.end(), fn_vars_.begin(), fn_vars_.end());
  functions_.insert(functions_.end(), fn_body_.begin(), fn_body_.end());
  emit(functions_, spv::OpFunctionEnd, {});
  in_function_ = false;
}

Id Module::op(spv::Op opcode, Id result_type, const std::vector<uint32_t>& operands) {
  if (block_closed_) throw InternalError("spirv: instruction outside a basic block");
  Id id = fresh_id();
  std::vector<uint32_t> w;
  w.reserve(operands.size() + 2);
  if (result_type) w.push_back(result_type);
  w.push_back(id);
  w.insert(w.end(), operands.begin(), operands.end());
  emit(fn_body_, opcode, w);
  return id;
}

Id Module::op(spv::Op opcode, Id result_type, std::initializer_list<uint32_t> operands) {
  return op(opcode, result_type, std::vector<uint32_t>(operands));
}

void Module::op_void(spv::Op opcode, const std::vector<uint32_t>& operands) {
  if (block_closed_) throw InternalError("spirv: instruction outside a basic block");
  emit(fn_body_, opcode, operands);
  if (is_block_terminator(opcode)) block_closed_ = true;
}

void Module::op_void(spv::Op opcode, std::initializer_list<uint32_t> operands) {
  op_void(opcode, std::vector<uint32_t>(operands));
}

Id Module::phi_with_later(Id type, Id first_value, Id first_block, Id second_block, size_t* later) {
  if (block_closed_) throw InternalError("spirv: instruction outside a basic block");
  Id id = fresh_id();
  emit(fn_body_, spv::OpPhi, {type, id, first_value, first_block, 0, second_block});
  *later = fn_body_.size() - 2;
  return id;
}

void Module::set_later(size_t later, Id value) {
  if (later >= fn_body_.size() || fn_body_[later] != 0)
    throw InternalError("spirv: a phi's later value set twice or out of place");
  fn_body_[later] = value;
}

Id Module::spec_constant_bool(bool value, uint32_t spec_id) {
  Id id = fresh_id();
  emit(globals_, value ? spv::OpSpecConstantTrue : spv::OpSpecConstantFalse, {type_bool(), id});
  decorate(id, spv::DecorationSpecId, {spec_id});
  return id;
}

std::vector<uint32_t> Module::assemble() const {
  if (in_function_) throw InternalError("spirv: assemble with a function still open");
  // Generator 0 (no registered tool id); schema 0.
  std::vector<uint32_t> out = {spv::MagicNumber, version_, 0, next_id_, 0};
  for (const auto* s : {&capability_words_, &extensions_, &imports_, &memory_model_, &entry_points_,
                        &execution_modes_, &debug_, &annotations_, &globals_, &functions_})
    out.insert(out.end(), s->begin(), s->end());
  return out;
}

}  // namespace loom::spirv
