// Kernel IR -> SPIR-V: the binding plan of a kernel, then one module per offloaded task.
//
// Control flow is structured as SPIR-V requires: `if` is a selection with its own merge
// block; loops (while, nested range/struct loops, the grid-stride loop of a parallel task)
// have a header with OpLoopMerge, a continue block and a merge block. A `break` that leaves
// a while from inside a nested counted loop goes through a flag the enclosing loops check
// after they end. Values follow the IR's dominance, so no phi nodes are needed; locals are
// Function variables.
#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "compiler/codegen_spirv/block_local.h"
#include "compiler/codegen_spirv/spirv_codegen.h"
#include "compiler/codegen_spirv/spirv_loops.h"
#include "compiler/codegen_spirv/spirv_math.h"
#include "compiler/codegen_spirv/spirv_module.h"
#include "compiler/codegen_spirv/spirv_tools.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/range_bound.h"
#include "runtime/common/error.h"
#include "runtime/common/launch_error.h"

namespace loom::codegen {

namespace {

using ir::Inst;
using ir::Op;
using spirv::Id;

constexpr uint32_t kScopeDevice = 1;
constexpr uint32_t kSemanticsRelaxed = 0;

// ------------------------------------------------------------------------------ the plan

struct KernelPlan {
  std::vector<SpirvBinding> bindings;
  std::map<std::pair<BindingKind, int>, size_t> index;  // (kind, index) -> position
  ArgsLayout args;
  bool push_constants = true;

  int find(BindingKind kind, int i = -1) const {
    auto it = index.find({kind, i});
    return it == index.end() ? -1 : static_cast<int>(it->second);
  }
};

KernelPlan plan_kernel(const ir::Kernel& k, const SpirvTarget& target) {
  KernelPlan plan;
  plan.args = args_layout(k.abi);
  plan.push_constants = plan.args.size <= target.max_push_constant_bytes;
  std::set<int> buffers, storage_images, sampled_images, argpacks, linear_images;
  std::set<int> samplers;
  bool temps = false, error = false;
  ir::walk(*k.body, [&](Inst& in) {
    switch (in.op) {
      case Op::ArgLoad:
        if (k.abi.params.at(static_cast<size_t>(in.param_index())).kind == ParamKind::Argpack)
          argpacks.insert(in.param_index());
        break;
      case Op::ElementPtr: buffers.insert(in.resource_slot()); break;
      case Op::TexLoad:
      case Op::TexStore: storage_images.insert(in.resource_slot()); break;
      case Op::TexSample:
        sampled_images.insert(in.resource_slot());
        if (in.bits & ir::kSampleLinear) linear_images.insert(in.resource_slot());
        samplers.insert(static_cast<int>(in.bits & (ir::kSampleLinear | ir::kSampleRepeat)));
        break;
      case Op::TmpLoad:
      case Op::TmpStore:
      case Op::Reduce: temps = true; break;
      case Op::BoundsCheck:
      case Op::Assert: error = true; break;
      // Pure values need no binding.
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
      case Op::Fma: break;
      // No binding of their own: constants, locals, accesses through the element pointers
      // above, control flow.
      case Op::Const:
      case Op::LoopIndex:
      case Op::ResourceShape:
      case Op::Rand:
      case Op::Alloca:
      case Op::LocalLoad:
      case Op::LocalStore:
      case Op::LocalArray:
      case Op::ArrayLoad:
      case Op::ArrayStore:
      case Op::GlobalPtr:
      case Op::GlobalLoad:
      case Op::GlobalStore:
      case Op::AtomicRMW:
      case Op::If:
      case Op::RangeFor:
      case Op::StructFor:
      case Op::While:
      case Op::Break:
      case Op::Continue:
      case Op::Return:
      case Op::Offload: break;
    }
  });
  // A task whose loops check how they were left reports a loop cut short through the record.
  for (const auto& in : k.body->insts)
    if (in->op == Op::Offload && task_needs_loop_guard(k, *in, target)) error = true;
  auto add = [&](BindingKind kind, int i) {
    plan.index[{kind, i}] = plan.bindings.size();
    plan.bindings.push_back({static_cast<uint32_t>(plan.bindings.size()), kind, i});
  };
  if (!plan.push_constants) add(BindingKind::Args, -1);
  if (temps) add(BindingKind::Temps, -1);
  if (!k.abi.returns.empty()) add(BindingKind::Returns, -1);
  if (error) add(BindingKind::Error, -1);
  for (int p : argpacks) add(BindingKind::Argpack, p);
  for (int s : buffers) add(BindingKind::Buffer, s);
  for (int s : storage_images) add(BindingKind::StorageImage, s);
  for (int s : sampled_images) {
    add(BindingKind::SampledImage, s);
    plan.bindings.back().sampled_linearly = linear_images.count(s) > 0;
  }
  for (int m : samplers) add(BindingKind::Sampler, m);
  return plan;
}

// ------------------------------------------------------------------------------ one task

// A block of 32-bit words: the args block, an argpack, temps, returns or the error record.
struct WordBlock {
  Id var = 0;
  spv::StorageClass storage = spv::StorageClassStorageBuffer;
  bool vec4 = false;  // std140: uvec4 array (uniform buffers)
};

// One SPIR-V loop construct. A multi-dimensional range_for / struct_for is one construct per
// dimension, all with the same `owner`; a break leaves all of them, through `break_flag`.
struct Loop {
  const Inst* owner = nullptr;  // the IR loop: While, RangeFor, StructFor, or the task itself
  Id merge = 0;
  Id cont = 0;
  Id break_flag = 0;    // on a nest's outermost construct, when its body breaks
  Id left = 0;          // with a device loop limit: set when the loop is left as the program says
  bool direct = false;  // the task's own element (the direct form): `continue` ends the invocation
};

// "; the device lacks it", and why when the SPIR-V version is what rules the feature out.
std::string lacks(const SpirvTarget& target, uint32_t bits) {
  std::string s = "; " + target.device_name + " lacks it";
  if (target.spirv_version < kSpirv1_3 && (bits & ~kSpirv1_0Requirements))
    s += " (SPIR-V " + spirv_version_text(target.spirv_version) +
         ", for Vulkan 1.0, uses only the Vulkan 1.0 core features " +
         describe_requirements(kSpirv1_0Requirements) + ")";
  return s;
}

bool is_float_atomic_native(Scalar t, ir::AtomicOp op, uint32_t features) {
  bool add = op == ir::AtomicOp::Add || op == ir::AtomicOp::Sub;
  bool minmax = op == ir::AtomicOp::Min || op == ir::AtomicOp::Max;
  if (t == Scalar::F32)
    return (add && (features & kNeedFloat32AtomicAdd)) ||
           (minmax && (features & kNeedFloat32AtomicMinMax));
  return (add && (features & kNeedFloat64AtomicAdd)) ||
         (minmax && (features & kNeedFloat64AtomicMinMax));
}

class TaskEmitter {
 public:
  TaskEmitter(const ir::Kernel& kernel, const KernelPlan& plan, const SpirvTarget& target,
              const Inst& offload, size_t task_index, std::vector<std::string>* assert_messages,
              std::set<std::string>* notes, uint32_t* requirements)
      : k_(kernel),
        plan_(plan),
        target_(target),
        offload_(offload),
        task_index_(task_index),
        asserts_(assert_messages),
        notes_(notes),
        requirements_(requirements),
        m_(target.spirv_version),
        math_(m_, requirements, [this](const std::string& n) { notes_->insert(n); }) {}

  SpirvTask emit() {
    SpirvTask task;
    task.kind = static_cast<uint8_t>(offload_.task_kind());
    kind_ = offload_.task_kind();
    guard_loops_ = task_needs_loop_guard(k_, offload_, target_);
    task.workgroup_size = kind_ == ir::TaskKind::Serial ? 1 : target_.workgroup_size;
    task.grid_dims = kind_ == ir::TaskKind::Serial || task_dims() < 2 ? 1 : 2;
    access_.assign(plan_.bindings.size(), 0);
    prepare_cas_slots();

    m_.capability(spv::CapabilityShader);
    m_.memory_model(spv::AddressingModelLogical, spv::MemoryModelGLSL450);
    Id void_t = m_.type_void();
    fn_ = m_.begin_function(void_t, m_.type_function(void_t, {}));
    begin_block(0);
    prepare_loop_guard(task.workgroup_size);
    if (kind_ != ir::TaskKind::Serial && task_dims() == 2 && direct_form()) {
      tile_ = tile_shape(target_.workgroup_size);
      std::vector<std::string> why;
      staged_ = plan_block_local(k_, offload_, tile_, &why);
      notes_->insert(why.begin(), why.end());
    }
    for (auto& inst : k_.body->insts)
      if (inst->op != Op::Offload) emit_inst(*inst);
    preload_extents();
    in_task_ = true;
    uses_rand_ = contains(*offload_.region(0), Op::Rand);
    if (kind_ == ir::TaskKind::Serial) {
      if (uses_rand_) init_rng({});
      emit_block(*offload_.region(0));
    } else if (direct_form()) {
      task.direct = true;
      if (!staged_.empty()) task.tile_cols = tile_.cols;
      emit_direct_task();
    } else {
      begin_partials();
      emit_parallel_loop();
      combine_partials();
    }
    if (!m_.block_closed()) m_.op_void(spv::OpReturn, {});
    m_.end_function();

    // Before SPIR-V 1.4 the interface lists only Input and Output variables (our builtins).
    m_.entry_point(spv::ExecutionModelGLCompute, fn_, "main",
                   m_.version() >= 0x00010400 ? interface_ : io_interface_);
    m_.execution_mode(fn_, spv::ExecutionModeLocalSize, {task.workgroup_size, 1, 1});
    m_.name(fn_, "main");
    task.spirv = m_.assemble();
    task.access = access_;
    host_extent(&task);
    return task;
  }

 private:
  // ------------------------------------------------------------------ helpers
  size_t task_dims() const {
    if (kind_ == ir::TaskKind::StructFor)
      return static_cast<size_t>(
          k_.abi.resources.at(static_cast<size_t>(offload_.resource_slot())).ndim);
    return offload_.operands.size() / 2;
  }

  static bool contains(const ir::Block& block, Op op) {
    bool found = false;
    ir::walk(block, [&](const Inst& inst) { found |= inst.op == op; });
    return found;
  }

  [[noreturn]] void fail(const Inst& in, const std::string& why) const {
    throw Error(Place{"", k_.abi.name, in.node, ""}, why);
  }

  void require(uint32_t bit, const Inst& in, const std::string& what) {
    if (!(target_.features & bit))
      fail(in, "kernel '" + k_.abi.name + "' " + what + ", which needs " +
                   describe_requirements(bit) + lacks(target_, bit));
    *requirements_ |= bit;
  }

  Id t(Scalar s) { return math_.type(s); }
  Id u32t() { return t(Scalar::U32); }
  Id i32t() { return t(Scalar::I32); }
  Id bool_t() { return t(Scalar::Bool); }
  Id ptr(spv::StorageClass sc, Id pointee) { return m_.type_pointer(sc, pointee); }

  Id begin_block(Id label) {
    texel_cache_.clear();
    return m_.label(label);
  }

  Id value(const Inst* in) {
    auto it = values_.find(in);
    if (it == values_.end())
      throw InternalError("spirv codegen: operand used before it is defined (" +
                          std::string(ir::op_name(in->op)) + ")");
    return it->second;
  }

  Id to_i32(const Inst* in) {
    Id v = value(in);
    if (in->type == Scalar::I32) return v;
    return math_.cast(v, in->type, Scalar::I32);
  }

  void mark(int position, uint8_t bits) {
    if (position < 0) throw InternalError("spirv codegen: a binding the plan lacks");
    access_[static_cast<size_t>(position)] |= bits;
  }

  Id decorate_binding(Id var, int position) {
    m_.decorate(var, spv::DecorationDescriptorSet, {0});
    m_.decorate(var, spv::DecorationBinding,
                {plan_.bindings[static_cast<size_t>(position)].binding});
    interface_.push_back(var);
    return var;
  }

  // ------------------------------------------------------------------ globals
  Id builtin(spv::BuiltIn which) {
    auto it = builtins_.find(which);
    if (it != builtins_.end()) return it->second;
    Id var = m_.global_variable(ptr(spv::StorageClassInput, m_.type_vector(u32t(), 3)),
                                spv::StorageClassInput);
    m_.decorate(var, spv::DecorationBuiltIn, {static_cast<uint32_t>(which)});
    interface_.push_back(var);
    io_interface_.push_back(var);
    return builtins_[which] = var;
  }

  // A scalar u32 built-in (the subgroup ones).
  Id builtin_u32(spv::BuiltIn which) {
    auto it = builtins_.find(which);
    if (it != builtins_.end()) return it->second;
    Id var = m_.global_variable(ptr(spv::StorageClassInput, u32t()), spv::StorageClassInput);
    m_.decorate(var, spv::DecorationBuiltIn, {static_cast<uint32_t>(which)});
    interface_.push_back(var);
    io_interface_.push_back(var);
    return builtins_[which] = var;
  }
  Id load_builtin_u32(spv::BuiltIn which) {
    return m_.op(spv::OpLoad, u32t(), {builtin_u32(which)});
  }

  // SPIR-V 1.3 made the StorageBuffer class core; before it (SPIR-V 1.0 for Vulkan 1.0) a
  // storage buffer is a Uniform variable of a BufferBlock struct, which needs no extension.
  bool classic_buffers() const { return m_.version() < kSpirv1_3; }
  spv::StorageClass buffer_class() const {
    return classic_buffers() ? spv::StorageClassUniform : spv::StorageClassStorageBuffer;
  }
  void decorate_buffer_block(Id st) {
    m_.decorate(st, classic_buffers() ? spv::DecorationBufferBlock : spv::DecorationBlock);
  }

  // A Block struct of 32-bit words: `words` 0 means a runtime array. `storage_buffer`: a
  // storage buffer (BufferBlock before SPIR-V 1.3), not a uniform or push-constant block.
  WordBlock word_block(spv::StorageClass storage, bool vec4, uint32_t words,
                       bool storage_buffer = false) {
    WordBlock b;
    b.storage = storage;
    b.vec4 = vec4;
    Id elem = vec4 ? m_.type_vector(u32t(), 4) : u32t();
    uint32_t count = vec4 ? (words + 3) / 4 : words;
    Id array = words ? m_.type_array(elem, m_.constant_u32(std::max<uint32_t>(count, 1)))
                     : m_.type_runtime_array(elem);
    m_.decorate(array, spv::DecorationArrayStride, {vec4 ? 16u : 4u});
    Id st = m_.type_struct({array});
    if (storage_buffer)
      decorate_buffer_block(st);
    else
      m_.decorate(st, spv::DecorationBlock);
    m_.member_decorate(st, 0, spv::DecorationOffset, {0});
    b.var = m_.global_variable(ptr(storage, st), storage);
    return b;
  }

  const WordBlock& args_block() {
    if (args_.var) return args_;
    uint32_t words = plan_.args.size / 4;
    if (plan_.push_constants) {
      args_ = word_block(spv::StorageClassPushConstant, false, words);
      interface_.push_back(args_.var);
    } else {
      int pos = plan_.find(BindingKind::Args);
      args_ = word_block(spv::StorageClassUniform, true, words);
      decorate_binding(args_.var, pos);
      mark(pos, kAccessRead);
    }
    m_.name(args_.var, "args");
    return args_;
  }

  const WordBlock& buffer_block(BindingKind kind) {
    WordBlock& b = kind == BindingKind::Temps     ? temps_
                   : kind == BindingKind::Returns ? returns_
                                                  : error_;
    if (b.var) return b;
    b = word_block(buffer_class(), false, 0, true);
    decorate_binding(b.var, plan_.find(kind));
    m_.name(b.var, binding_kind_name(kind));
    return b;
  }

  const WordBlock& argpack_block(int param) {
    auto it = argpacks_.find(param);
    if (it != argpacks_.end()) return it->second;
    uint32_t size = k_.abi.params.at(static_cast<size_t>(param)).size;
    WordBlock b = word_block(spv::StorageClassUniform, true, std::max<uint32_t>(size, 16) / 4);
    int pos = plan_.find(BindingKind::Argpack, param);
    decorate_binding(b.var, pos);
    mark(pos, kAccessRead);
    m_.name(b.var, k_.abi.params[static_cast<size_t>(param)].name);
    return argpacks_[param] = b;
  }

  Id word_ptr(const WordBlock& b, uint32_t word) {
    Id p = ptr(b.storage, u32t());
    if (b.vec4)
      return m_.op(spv::OpAccessChain, p,
                   {b.var, m_.constant_i32(0), m_.constant_i32(static_cast<int32_t>(word / 4)),
                    m_.constant_i32(static_cast<int32_t>(word % 4))});
    return m_.op(spv::OpAccessChain, p,
                 {b.var, m_.constant_i32(0), m_.constant_i32(static_cast<int32_t>(word))});
  }

  Id load_word(const WordBlock& b, uint32_t word) {
    return m_.op(spv::OpLoad, u32t(), {word_ptr(b, word)});
  }

  // A scalar at a byte offset of a word block (narrow values inside their word).
  Id load_scalar(const WordBlock& b, uint32_t offset, Scalar s) {
    int size = size_of(s);
    uint32_t word = offset / 4;
    if (size == 8) return math_.from_words(s, {load_word(b, word), load_word(b, word + 1)});
    Id w = load_word(b, word);
    if (size == 4) return math_.from_words(s, {w});
    uint32_t shift = 8 * (offset % 4);
    if (shift) w = m_.op(spv::OpShiftRightLogical, u32t(), {w, m_.constant_u32(shift)});
    if (s == Scalar::Bool)
      return m_.op(
          spv::OpINotEqual, bool_t(),
          {m_.op(spv::OpBitwiseAnd, u32t(), {w, m_.constant_u32(0xff)}), m_.constant_u32(0)});
    return math_.from_words(s, {w});
  }

  void store_words(const WordBlock& b, uint32_t word, const std::vector<Id>& words) {
    for (size_t i = 0; i < words.size(); ++i)
      m_.op_void(spv::OpStore, {word_ptr(b, word + static_cast<uint32_t>(i)), words[i]});
  }

  // Storage buffer of a field or ndarray slot; float slots that need compare-and-swap
  // atomics are declared as unsigned words of the same width.
  struct SlotBuffer {
    Id var = 0;
    Scalar stored = Scalar::Void;  // element type in the buffer
  };

  const SlotBuffer& slot_buffer(int slot) {
    auto it = slot_buffers_.find(slot);
    if (it != slot_buffers_.end()) return it->second;
    const ResourceDesc& r = k_.abi.resources.at(static_cast<size_t>(slot));
    SlotBuffer sb;
    sb.stored = r.dtype == Scalar::Bool ? Scalar::U8 : r.dtype;
    if (cas_slots_.count(slot)) sb.stored = bit_width(r.dtype) == 64 ? Scalar::U64 : Scalar::U32;
    int width = bit_width(sb.stored);
    if (width == 8) {
      // Core in SPIR-V 1.5; an extension before (VK_KHR_8bit_storage on Vulkan 1.1).
      if (m_.version() < kSpirv1_5) m_.extension("SPV_KHR_8bit_storage");
      m_.capability(spv::CapabilityStorageBuffer8BitAccess);
      *requirements_ |= kNeedStorage8;
    } else if (width == 16) {
      m_.capability(spv::CapabilityStorageBuffer16BitAccess);
      *requirements_ |= kNeedStorage16;
    }
    Id elem = t(sb.stored);
    Id array = m_.type_runtime_array(elem);
    m_.decorate(array, spv::DecorationArrayStride, {static_cast<uint32_t>(size_of(sb.stored))});
    Id st = m_.type_struct({array});
    decorate_buffer_block(st);
    m_.member_decorate(st, 0, spv::DecorationOffset, {0});
    sb.var = m_.global_variable(ptr(buffer_class(), st), buffer_class());
    decorate_binding(sb.var, plan_.find(BindingKind::Buffer, slot));
    // SPIR-V lets a compiler assume distinct buffers do not overlap; two ndarray slots may be
    // bound to the same ndarray unless the launch said otherwise (fields are distinct by name
    // and never alias).
    if (r.kind == ResourceKind::Ndarray && ndarray_slots() > 1 && !k_.distinct_ndarrays)
      m_.decorate(sb.var, spv::DecorationAliased);
    m_.name(sb.var, r.kind == ResourceKind::Field ? r.field : "slot" + std::to_string(slot));
    return slot_buffers_[slot] = sb;
  }

  int ndarray_slots() const {
    int n = 0;
    for (const SpirvBinding& b : plan_.bindings)
      n += b.kind == BindingKind::Buffer &&
           k_.abi.resources.at(static_cast<size_t>(b.index)).kind == ResourceKind::Ndarray;
    return n;
  }

  void prepare_cas_slots() {
    ir::walk(*offload_.region(0), [&](Inst& in) {
      if (in.op != Op::AtomicRMW || in.operand(0)->op != Op::ElementPtr || !is_float(in.type))
        return;
      ir::AtomicOp op = in.atomic_op();
      bool bitwise = op == ir::AtomicOp::And || op == ir::AtomicOp::Or || op == ir::AtomicOp::Xor;
      if (bitwise || !is_float_atomic_native(in.type, op, target_.features))
        cas_slots_.insert(in.operand(0)->resource_slot());
    });
  }

  spv::Dim image_dim(int slot) {
    return k_.abi.resources.at(static_cast<size_t>(slot)).ndim == 3 ? spv::Dim3D : spv::Dim2D;
  }

  Id storage_image_type(int slot) {
    spv::ImageFormat f = spv::ImageFormatRgba32f;
    switch (k_.abi.resources.at(static_cast<size_t>(slot)).format) {
      case TextureFormat::R32F: f = spv::ImageFormatR32f; break;
      case TextureFormat::RG32F:
        f = spv::ImageFormatRg32f;
        m_.capability(spv::CapabilityStorageImageExtendedFormats);
        *requirements_ |= kNeedStorageImageExtendedFormats;
        break;
      case TextureFormat::RGBA32F: f = spv::ImageFormatRgba32f; break;
      case TextureFormat::RGBA8: f = spv::ImageFormatRgba8; break;
    }
    return m_.type_image(t(Scalar::F32), image_dim(slot), 2, f);
  }

  Id storage_image(int slot) {
    auto it = storage_images_.find(slot);
    if (it != storage_images_.end()) return it->second;
    Id var = m_.global_variable(ptr(spv::StorageClassUniformConstant, storage_image_type(slot)),
                                spv::StorageClassUniformConstant);
    decorate_binding(var, plan_.find(BindingKind::StorageImage, slot));
    return storage_images_[slot] = var;
  }

  Id sampled_image_type(int slot) {
    return m_.type_image(t(Scalar::F32), image_dim(slot), 1, spv::ImageFormatUnknown);
  }

  Id sampled_image(int slot) {
    auto it = sampled_images_.find(slot);
    if (it != sampled_images_.end()) return it->second;
    Id var = m_.global_variable(ptr(spv::StorageClassUniformConstant, sampled_image_type(slot)),
                                spv::StorageClassUniformConstant);
    decorate_binding(var, plan_.find(BindingKind::SampledImage, slot));
    return sampled_images_[slot] = var;
  }

  Id sampler(int mode) {
    auto it = samplers_.find(mode);
    if (it != samplers_.end()) return it->second;
    Id var = m_.global_variable(ptr(spv::StorageClassUniformConstant, m_.type_sampler()),
                                spv::StorageClassUniformConstant);
    decorate_binding(var, plan_.find(BindingKind::Sampler, mode));
    return samplers_[mode] = var;
  }

  // ------------------------------------------------------------------ control flow
  // Branches to `fail` when `failed`: records the LaunchError and ends the invocation.
  void check(Id failed, int code, int node, int slot, int dim, Id index, Scalar index_type,
             Id extent, Scalar extent_type) {
    Id fail_bb = m_.fresh_id(), ok = m_.fresh_id();
    m_.op_void(spv::OpSelectionMerge, {ok, spv::SelectionControlDontFlattenMask});
    m_.op_void(spv::OpBranchConditional, {failed, fail_bb, ok});
    begin_block(fail_bb);
    int pos = plan_.find(BindingKind::Error);
    mark(pos, kAccessRead | kAccessWrite);
    const WordBlock& err = buffer_block(BindingKind::Error);
    Id old = m_.op(spv::OpAtomicCompareExchange, u32t(),
                   {word_ptr(err, 0), m_.constant_u32(kScopeDevice),
                    m_.constant_u32(kSemanticsRelaxed), m_.constant_u32(kSemanticsRelaxed),
                    m_.constant_u32(static_cast<uint32_t>(code)), m_.constant_u32(0)});
    Id won = m_.op(spv::OpIEqual, bool_t(), {old, m_.constant_u32(0)});
    Id write = m_.fresh_id(), done = m_.fresh_id();
    m_.op_void(spv::OpSelectionMerge, {done, spv::SelectionControlMaskNone});
    m_.op_void(spv::OpBranchConditional, {won, write, done});
    begin_block(write);
    store_words(
        err, 1,
        {m_.constant_u32(static_cast<uint32_t>(node)), m_.constant_u32(static_cast<uint32_t>(slot)),
         m_.constant_u32(static_cast<uint32_t>(dim))});
    store_words(err, 4, wide_words(index, index_type));
    store_words(err, 6, wide_words(extent, extent_type));
    m_.op_void(spv::OpBranch, {done});
    begin_block(done);
    m_.op_void(spv::OpReturn, {});
    begin_block(ok);
  }

  // An integer as two words of its 64-bit sign- or zero-extension.
  std::vector<Id> wide_words(Id v, Scalar s) {
    if (bit_width(s) == 64) return math_.to_words(s, v);
    Id lo = math_.cast(v, s, is_signed_int(s) ? Scalar::I32 : Scalar::U32);
    lo = math_.cast(lo, is_signed_int(s) ? Scalar::I32 : Scalar::U32, Scalar::U32);
    Id hi = m_.constant_u32(0);
    if (is_signed_int(s)) {
      Id neg = m_.op(spv::OpSLessThan, bool_t(),
                     {math_.cast(lo, Scalar::U32, Scalar::I32), m_.constant_i32(0)});
      hi = m_.op(spv::OpSelect, u32t(), {neg, m_.constant_u32(0xffffffffu), m_.constant_u32(0)});
    }
    return {lo, hi};
  }

  // A loop over a counter, a phi in the loop's header: `more(i)` in the header decides
  // whether the body runs, `next(i)` in the continue block gives the following value.
  // `body(i)` emits the body; `continue` reaches the continue block, `break` the merge block.
  template <typename More, typename Next, typename Body>
  void counter_loop(const Inst* owner, Id break_flag, Id type, Id start, More&& more, Next&& next,
                    Body&& body) {
    Id left = begin_loop_guard();
    Id header = m_.fresh_id(), body_bb = m_.fresh_id(), cont = m_.fresh_id(), merge = m_.fresh_id();
    Id entry = m_.current_block();
    m_.op_void(spv::OpBranch, {header});
    begin_block(header);
    size_t back_edge_value = 0;
    Id iv = m_.phi_with_later(type, start, entry, cont, &back_edge_value);
    Id go_on = more(iv);
    if (left) mark_left(left, m_.op(spv::OpLogicalNot, bool_t(), {go_on}));
    m_.op_void(spv::OpLoopMerge, {merge, cont, spv::LoopControlMaskNone});
    m_.op_void(spv::OpBranchConditional, {go_on, body_bb, merge});
    begin_block(body_bb);
    loops_.push_back({owner, merge, cont, break_flag, left});
    body(iv);
    loops_.pop_back();
    if (!m_.block_closed()) m_.op_void(spv::OpBranch, {cont});
    begin_block(cont);
    if (left) mark_left(left, math_.bool_const(false));
    m_.set_later(back_edge_value, next(iv));
    m_.op_void(spv::OpBranch, {header});
    begin_block(merge);
    end_loop_guard(left, *owner);
    propagate_break(owner);
  }

  // for (i = lo; i < hi; i += step) over i32 (nested counted loops).
  template <typename Body>
  void counted_loop(const Inst* owner, Id break_flag, Id lo, Id hi, Id step, Body&& body) {
    counter_loop(
        owner, break_flag, i32t(), lo,
        [&](Id iv) {
          return m_.op(spv::OpSLessThan, bool_t(), {iv, hi});
        },
        [&](Id iv) {
          return m_.op(spv::OpIAdd, i32t(), {iv, step});
        },
        body);
  }

  // for (i = start; i < count; i += stride) over u32 (grid-stride loops), never wrapping: the
  // last step lands on `count` when fewer than `stride` iterations are left.
  template <typename Body>
  void stride_loop(Id start, Id count, Id stride, Body&& body) {
    counter_loop(
        &offload_, 0, u32t(), start,
        [&](Id iv) {
          return m_.op(spv::OpULessThan, bool_t(), {iv, count});
        },
        [&](Id iv) {
          Id last = m_.op(spv::OpULessThanEqual, bool_t(),
                          {m_.op(spv::OpISub, u32t(), {count, iv}), stride});
          return m_.op(spv::OpSelect, u32t(),
                       {last, count, m_.op(spv::OpIAdd, u32t(), {iv, stride})});
        },
        body);
  }

  // The outermost construct of the innermost IR loop (the first of its dimensions).
  size_t nest_start() const {
    size_t outer = loops_.size() - 1;
    while (outer > 0 && loops_[outer - 1].owner == loops_.back().owner) --outer;
    return outer;
  }

  // After an inner dimension of a nest: when a break set the nest's flag, the enclosing
  // dimension is left too (a SPIR-V break leaves only the innermost loop construct).
  void propagate_break(const Inst* owner) {
    if (loops_.empty() || loops_.back().owner != owner) return;
    Id break_flag = loops_[nest_start()].break_flag;
    if (!break_flag) return;
    Id target = loops_.back().merge;
    Id flag = m_.op(spv::OpLoad, bool_t(), {break_flag});
    Id leave = m_.fresh_id(), stay = m_.fresh_id();
    m_.op_void(spv::OpSelectionMerge, {stay, spv::SelectionControlMaskNone});
    m_.op_void(spv::OpBranchConditional, {flag, leave, stay});
    begin_block(leave);
    if (loops_.back().left) mark_left(loops_.back().left, math_.bool_const(true));
    m_.op_void(spv::OpBranch, {target});
    begin_block(stay);
  }

  // True when `body` holds a break of its own loop (not one of a loop nested in it).
  static bool breaks_own_loop(const ir::Block& body) {
    for (const auto& in : body.insts) {
      if (in->op == Op::Break) return true;
      if (in->op == Op::While || in->op == Op::RangeFor || in->op == Op::StructFor) continue;
      for (const auto& r : in->regions)
        if (breaks_own_loop(*r)) return true;
    }
    return false;
  }

  // On a device with a loop limit (SpirvTarget::loop_iteration_limit), one flag per
  // invocation says whether the last loop left was left as the program says: set by a header
  // whose condition fails and by a break, cleared on entry and in every continue block. The
  // driver's cut leaves from the continue block, so the merge block finds it clear: that
  // launch ends with an error naming the loop. The flag is a word of Workgroup memory, not a
  // Function variable: Mesa's NIR, which knows nothing of the cut, sees that every way out
  // sets a Function variable and folds its load to true; it keeps shared memory as written.
  void prepare_loop_guard(uint32_t workgroup_size) {
    if (!guard_loops_) return;
    Id array = m_.type_array(u32t(), m_.constant_u32(workgroup_size));
    Id var = m_.global_variable(ptr(spv::StorageClassWorkgroup, array), spv::StorageClassWorkgroup);
    interface_.push_back(var);
    Id lid = m_.op(
        spv::OpCompositeExtract, u32t(),
        {m_.op(spv::OpLoad, m_.type_vector(u32t(), 3), {builtin(spv::BuiltInLocalInvocationId)}),
         0});
    loop_flag_ = m_.op(spv::OpAccessChain, ptr(spv::StorageClassWorkgroup, u32t()), {var, lid});
  }

  Id begin_loop_guard() {
    if (!guard_loops_) return 0;
    mark_left(loop_flag_, math_.bool_const(false));
    return loop_flag_;
  }

  void mark_left(Id flag, Id yes) {
    m_.op_void(spv::OpStore,
               {flag, m_.op(spv::OpSelect, u32t(), {yes, m_.constant_u32(1), m_.constant_u32(0)})});
  }

  void end_loop_guard(Id left, const Inst& loop) {
    if (!left) return;
    Id cut =
        m_.op(spv::OpIEqual, bool_t(), {m_.op(spv::OpLoad, u32t(), {left}), m_.constant_u32(0)});
    check(cut, kLaunchLoopCut, loop.node, -1, -1, m_.constant_u32(target_.loop_iteration_limit),
          Scalar::U32, m_.constant_i32(0), Scalar::I32);
  }

  void emit_while(const Inst& in) {
    Loop loop{&in, m_.fresh_id(), m_.fresh_id(), 0, begin_loop_guard()};
    Id header = m_.fresh_id(), body = m_.fresh_id();
    m_.op_void(spv::OpBranch, {header});
    begin_block(header);
    m_.op_void(spv::OpLoopMerge, {loop.merge, loop.cont, spv::LoopControlMaskNone});
    m_.op_void(spv::OpBranch, {body});
    begin_block(body);
    loops_.push_back(loop);
    emit_block(*in.region(0));
    loops_.pop_back();
    if (!m_.block_closed()) m_.op_void(spv::OpBranch, {loop.cont});
    begin_block(loop.cont);
    if (loop.left) mark_left(loop.left, math_.bool_const(false));
    m_.op_void(spv::OpBranch, {header});
    begin_block(loop.merge);
    end_loop_guard(loop.left, in);
  }

  // Leaves the innermost IR loop: its construct's merge, or, from the inner dimension of a
  // nest, the innermost construct's merge with the nest's flag set (propagate_break goes on).
  void emit_break() {
    if (loops_.empty()) throw InternalError("spirv codegen: break outside a loop");
    if (loops_.back().owner->op == Op::Offload)
      throw InternalError("spirv codegen: break leaves a parallel task");
    const Loop& outer = loops_[nest_start()];
    if (&outer != &loops_.back()) {
      if (!outer.break_flag)
        throw InternalError("spirv codegen: a loop nest breaks without a flag");
      m_.op_void(spv::OpStore, {outer.break_flag, math_.bool_const(true)});
    }
    if (loops_.back().left) mark_left(loops_.back().left, math_.bool_const(true));
    m_.op_void(spv::OpBranch, {loops_.back().merge});
  }

  void emit_if(const Inst& in) {
    Id then_bb = m_.fresh_id(), else_bb = m_.fresh_id(), merge = m_.fresh_id();
    m_.op_void(spv::OpSelectionMerge, {merge, spv::SelectionControlMaskNone});
    m_.op_void(spv::OpBranchConditional, {value(in.operand(0)), then_bb, else_bb});
    begin_block(then_bb);
    emit_block(*in.region(0));
    bool then_open = !m_.block_closed();
    if (then_open) m_.op_void(spv::OpBranch, {merge});
    begin_block(else_bb);
    emit_block(*in.region(1));
    bool else_open = !m_.block_closed();
    if (else_open) m_.op_void(spv::OpBranch, {merge});
    begin_block(merge);
    if (!then_open && !else_open) m_.op_void(spv::OpUnreachable, {});
  }

  // Bounds of a range/struct loop (an Offload task or a nested loop), as i32 values.
  void loop_bounds(const Inst& loop, std::vector<Id>* lo, std::vector<Id>* hi) {
    bool is_struct = loop.op == Op::StructFor ||
                     (loop.op == Op::Offload && loop.task_kind() == ir::TaskKind::StructFor);
    if (is_struct) {
      int slot = loop.resource_slot();
      int dims = loop.op == Op::StructFor && loop.dims() > 0
                     ? loop.dims()
                     : k_.abi.resources.at(static_cast<size_t>(slot)).ndim;
      for (int d = 0; d < dims; ++d) {
        lo->push_back(m_.constant_i32(0));
        hi->push_back(shape(slot, d));
      }
      return;
    }
    if (loop.operands.empty() || loop.operands.size() % 2)
      throw InternalError("spirv codegen: range loop without begin/end pairs");
    for (size_t i = 0; i < loop.operands.size(); i += 2) {
      lo->push_back(to_i32(loop.operand(i)));
      hi->push_back(to_i32(loop.operand(i + 1)));
    }
  }

  // Nested counted loops over dims [d, n); the body runs in the innermost one. A break in
  // the body leaves them all: the flag, cleared each time the nest starts, tells the outer
  // dimensions.
  void emit_nest(const Inst& loop, size_t d, const std::vector<Id>& lo, const std::vector<Id>& hi,
                 const ir::Block& body) {
    Id break_flag = 0;
    if (d == 0 && lo.size() > 1 && breaks_own_loop(body)) {
      break_flag = m_.local_variable(ptr(spv::StorageClassFunction, bool_t()));
      m_.op_void(spv::OpStore, {break_flag, math_.bool_const(false)});
    }
    counted_loop(&loop, break_flag, lo[d], hi[d], m_.constant_i32(1), [&](Id iv) {
      loop_index_[{&loop, static_cast<int>(d)}] = iv;
      if (d + 1 < lo.size()) {
        emit_nest(loop, d + 1, lo, hi, body);
        return;
      }
      emit_block(body);
    });
  }

  // The task's iteration space in grid-stride loops over unsigned counts (a range wider than
  // 2^31 still counts right). 1-d: over x. n-d: the innermost dimension over x, the others
  // flattened over y (split once per row, not per element).
  void emit_parallel_loop() {
    std::vector<Id> lo, hi;
    loop_bounds(offload_, &lo, &hi);
    size_t dims = lo.size();
    std::vector<Id> extent(dims);
    for (size_t d = 0; d < dims; ++d) {
      Id nonempty = m_.op(spv::OpSGreaterThan, bool_t(), {hi[d], lo[d]});
      Id diff = m_.op(spv::OpBitcast, u32t(), {m_.op(spv::OpISub, i32t(), {hi[d], lo[d]})});
      extent[d] = m_.op(spv::OpSelect, u32t(), {nonempty, diff, m_.constant_u32(0)});
    }
    Id gid =
        m_.op(spv::OpLoad, m_.type_vector(u32t(), 3), {builtin(spv::BuiltInGlobalInvocationId)});
    Id groups = m_.op(spv::OpLoad, m_.type_vector(u32t(), 3), {builtin(spv::BuiltInNumWorkgroups)});
    auto lane = [&](Id v, uint32_t c) { return m_.op(spv::OpCompositeExtract, u32t(), {v, c}); };
    Id stride_x =
        m_.op(spv::OpIMul, u32t(), {lane(groups, 0), m_.constant_u32(target_.workgroup_size)});
    Id stride_y = lane(groups, 1);
    // Workgroup (0, 0) walks the whole space, the others none: see one_workgroup_.
    auto start = [&](Id from, Id count) {
      return one_workgroup_ ? m_.op(spv::OpSelect, u32t(), {first_workgroup(), from, count}) : from;
    };
    if (one_workgroup_) {
      stride_x = m_.constant_u32(target_.workgroup_size);
      stride_y = m_.constant_u32(1);
    }
    auto at = [&](size_t d, Id offset) {  // lo + offset, wrapping like the CPU's i32 indices
      return m_.op(spv::OpIAdd, i32t(), {lo[d], m_.op(spv::OpBitcast, i32t(), {offset})});
    };
    std::vector<Id> idx(dims);
    auto inner = [&](Id i) {
      idx[dims - 1] = at(dims - 1, i);
      for (size_t d = 0; d < dims; ++d) loop_index_[{&offload_, static_cast<int>(d)}] = idx[d];
      if (uses_rand_) init_rng(idx);
      emit_block(*offload_.region(0));
    };
    if (dims == 1) {
      stride_loop(start(lane(gid, 0), extent[0]), extent[0], stride_x, inner);
      return;
    }
    Id outer = extent[0];
    for (size_t d = 1; d + 1 < dims; ++d) outer = m_.op(spv::OpIMul, u32t(), {outer, extent[d]});
    stride_loop(start(lane(gid, 1), outer), outer, stride_y, [&](Id row) {
      Id rest = row;
      for (size_t d = dims - 1; d-- > 0;) {
        Id within = d == 0 ? rest : m_.op(spv::OpUMod, u32t(), {rest, extent[d]});
        idx[d] = at(d, within);
        if (d > 0) rest = m_.op(spv::OpUDiv, u32t(), {rest, extent[d]});
      }
      stride_loop(lane(gid, 0), extent[dims - 1], stride_x, inner);
    });
  }

  // The direct form, for a task whose range the host evaluates (host_extent) and that combines
  // no partials: no loop, one invocation per element, the dispatch sized by the host to cover
  // the range (SpirvTask::direct; the Vulkan runtime's dispatch_groups). Drivers compile it as
  // straight-line code; the grid-stride loop stays for the other tasks.
  bool direct_form() const {
    if (kind_ == ir::TaskKind::Serial || contains(*offload_.region(0), Op::Reduce)) return false;
    if (kind_ == ir::TaskKind::StructFor) return true;
    for (size_t i = 0; i < offload_.operands.size(); ++i)
      if (!ir::host_range_bound(k_.abi, offload_.operand(i))) return false;
    return !offload_.operands.empty();
  }

  // The grid, as the runtime dispatches it: workgroups along x, then rows of them along y and
  // z. 1-d: the invocation's place in the whole grid is the element. n-d: x covers the
  // innermost dimension and each row of workgroups (y + z * groups.y) one index of the others
  // flattened; when the innermost dimension needs more workgroups than the device has along x,
  // the runtime lays the rows end to end instead, in a pipeline specialised for it
  // (kSpecRowsEndToEnd), and the shader splits the workgroup's place by the row's length (a
  // division; rare: wider than 65,535 workgroups). The constant folds the other way away.
  void emit_direct_task() {
    std::vector<Id> lo, hi;
    loop_bounds(offload_, &lo, &hi);
    const size_t dims = lo.size();
    std::vector<Id> extent(dims);
    for (size_t d = 0; d < dims; ++d) {
      Id nonempty = m_.op(spv::OpSGreaterThan, bool_t(), {hi[d], lo[d]});
      Id diff = m_.op(spv::OpBitcast, u32t(), {m_.op(spv::OpISub, i32t(), {hi[d], lo[d]})});
      extent[d] = m_.op(spv::OpSelect, u32t(), {nonempty, diff, m_.constant_u32(0)});
    }
    Id v3 = m_.type_vector(u32t(), 3);
    auto lane = [&](Id v, uint32_t c) { return m_.op(spv::OpCompositeExtract, u32t(), {v, c}); };
    Id group = m_.op(spv::OpLoad, v3, {builtin(spv::BuiltInWorkgroupId)});
    Id groups = m_.op(spv::OpLoad, v3, {builtin(spv::BuiltInNumWorkgroups)});
    Id local = lane(m_.op(spv::OpLoad, v3, {builtin(spv::BuiltInLocalInvocationId)}), 0);
    Id wg = m_.constant_u32(target_.workgroup_size);
    auto mul = [&](Id a, Id b) { return m_.op(spv::OpIMul, u32t(), {a, b}); };
    auto add = [&](Id a, Id b) { return m_.op(spv::OpIAdd, u32t(), {a, b}); };
    Id grid_row = add(lane(group, 1), mul(lane(group, 2), lane(groups, 1)));
    Id in_range = 0, inner = 0, row = 0;
    if (!staged_.empty()) {
      tiled_position(lo, extent, add(mul(grid_row, lane(groups, 0)), lane(group, 0)), local, &inner,
                     &row, &in_range);
    } else if (dims == 1) {
      inner = add(mul(add(mul(grid_row, lane(groups, 0)), lane(group, 0)), wg), local);
      in_range = m_.op(spv::OpULessThan, bool_t(), {inner, extent[0]});
    } else {
      Id outer = extent[0];
      for (size_t d = 1; d + 1 < dims; ++d) outer = mul(outer, extent[d]);
      Id cols = extent[dims - 1];
      // Workgroups per row: ceil(cols / wg) without overflowing.
      Id per_row = add(m_.op(spv::OpUDiv, u32t(), {cols, wg}),
                       m_.op(spv::OpSelect, u32t(),
                             {m_.op(spv::OpINotEqual, bool_t(),
                                    {m_.op(spv::OpUMod, u32t(), {cols, wg}), m_.constant_u32(0)}),
                              m_.constant_u32(1), m_.constant_u32(0)}));
      Id wide = m_.spec_constant_bool(false, kSpecRowsEndToEnd);
      Id narrow_bb = m_.fresh_id(), wide_bb = m_.fresh_id(), merge = m_.fresh_id();
      m_.op_void(spv::OpSelectionMerge, {merge, spv::SelectionControlMaskNone});
      m_.op_void(spv::OpBranchConditional, {wide, wide_bb, narrow_bb});
      begin_block(narrow_bb);
      Id col_a = add(mul(lane(group, 0), wg), local);
      m_.op_void(spv::OpBranch, {merge});
      begin_block(wide_bb);
      Id place = add(mul(grid_row, lane(groups, 0)), lane(group, 0));
      Id row_b = m_.op(spv::OpUDiv, u32t(), {place, per_row});
      Id col_b = add(mul(m_.op(spv::OpISub, u32t(), {place, mul(row_b, per_row)}), wg), local);
      m_.op_void(spv::OpBranch, {merge});
      begin_block(merge);
      inner = m_.op(spv::OpPhi, u32t(), {col_a, narrow_bb, col_b, wide_bb});
      row = m_.op(spv::OpPhi, u32t(), {grid_row, narrow_bb, row_b, wide_bb});
      in_range = m_.op(spv::OpLogicalAnd, bool_t(),
                       {m_.op(spv::OpULessThan, bool_t(), {inner, cols}),
                        m_.op(spv::OpULessThan, bool_t(), {row, outer})});
    }
    Id body_bb = m_.fresh_id(), done = m_.fresh_id();
    m_.op_void(spv::OpSelectionMerge, {done, spv::SelectionControlMaskNone});
    m_.op_void(spv::OpBranchConditional, {in_range, body_bb, done});
    begin_block(body_bb);
    auto at = [&](size_t d, Id offset) {  // lo + offset, wrapping like the CPU's i32 indices
      return m_.op(spv::OpIAdd, i32t(), {lo[d], m_.op(spv::OpBitcast, i32t(), {offset})});
    };
    std::vector<Id> idx(dims);
    idx[dims - 1] = at(dims - 1, inner);
    Id rest = row;
    for (size_t d = dims - 1; d-- > 0;) {
      Id within = d == 0 ? rest : m_.op(spv::OpUMod, u32t(), {rest, extent[d]});
      idx[d] = at(d, within);
      if (d > 0) rest = m_.op(spv::OpUDiv, u32t(), {rest, extent[d]});
    }
    for (size_t d = 0; d < dims; ++d) loop_index_[{&offload_, static_cast<int>(d)}] = idx[d];
    if (uses_rand_) init_rng(idx);
    Loop task{&offload_, done, done, 0, 0, true};
    loops_.push_back(task);
    emit_block(*offload_.region(0));
    loops_.pop_back();
    if (!m_.block_closed()) m_.op_void(spv::OpBranch, {done});
    begin_block(done);
  }

  // The direct form with tiles (block-local storage, block_local.h): each workgroup covers a
  // tile of tile_.rows x tile_.cols elements, the tiles numbered by the workgroup's place in
  // the grid (x, then y, then z; SpirvTask::tile_cols, the runtime's direct_groups). The
  // workgroup fills the tiles of its staged resources, halos included, waits for all of
  // them, and then each invocation runs its element, its staged reads served from the tiles.
  void tiled_position(const std::vector<Id>& lo, const std::vector<Id>& extent, Id place, Id local,
                      Id* inner, Id* row, Id* in_range) {
    auto c = [&](uint32_t v) { return m_.constant_u32(v); };
    auto mul = [&](Id a, Id b) { return m_.op(spv::OpIMul, u32t(), {a, b}); };
    auto add = [&](Id a, Id b) { return m_.op(spv::OpIAdd, u32t(), {a, b}); };
    auto div = [&](Id a, Id b) { return m_.op(spv::OpUDiv, u32t(), {a, b}); };
    auto less = [&](Id a, Id b) { return m_.op(spv::OpULessThan, bool_t(), {a, b}); };
    auto ceil_div = [&](Id a, uint32_t k) {  // without overflowing near 2^32
      Id rest = m_.op(spv::OpUMod, u32t(), {a, c(k)});
      return add(div(a, c(k)),
                 m_.op(spv::OpSelect, u32t(),
                       {m_.op(spv::OpINotEqual, bool_t(), {rest, c(0)}), c(1), c(0)}));
    };
    Id rows = extent[0], cols = extent[1];
    // At least 1: an empty range is never dispatched, but a division by 0 is undefined.
    Id per_row = math_.binary(Op::Max, ceil_div(cols, tile_.cols), c(1), Scalar::U32);
    Id tile_row = div(place, per_row);
    Id tile_col = m_.op(spv::OpISub, u32t(), {place, mul(tile_row, per_row)});
    Id active = less(tile_row, ceil_div(rows, tile_.rows));  // the same for the whole workgroup
    tile_x_ = m_.op(spv::OpUMod, u32t(), {local, c(tile_.cols)});
    tile_y_ = div(local, c(tile_.cols));
    Id row0 = mul(tile_row, c(tile_.rows)), col0 = mul(tile_col, c(tile_.cols));
    *inner = add(col0, tile_x_);
    *row = add(row0, tile_y_);
    if_then(active, [&] {
      for (const StagedResource& st : staged_) fill_tile(st, lo, row0, col0, local);
    });
    barrier();  // outside the branch: every invocation of the workgroup reaches it
    *in_range =
        m_.op(spv::OpLogicalAnd, bool_t(),
              {active, m_.op(spv::OpLogicalAnd, bool_t(), {less(*inner, cols), less(*row, rows)})});
  }

  // Tile elements (r, c) hold the resource's (row0 + row_lo + r, col0 + col_lo + c), each
  // invocation loading every workgroup-size-th; outside the resource, 0 (what robust buffer
  // access reads; no read of an element in range goes there, the launch's extent check says).
  void fill_tile(const StagedResource& st, const std::vector<Id>& lo, Id row0, Id col0, Id local) {
    const uint32_t width = st.width(tile_), elements = width * st.height(tile_);
    const uint32_t wg = tile_.cols * tile_.rows;
    const SlotBuffer& sb = slot_buffer(st.slot);
    mark(plan_.find(BindingKind::Buffer, st.slot), kAccessRead);
    Id elem = t(sb.stored);
    Id array = m_.type_array(elem, m_.constant_u32(elements));
    Id var = m_.global_variable(ptr(spv::StorageClassWorkgroup, array), spv::StorageClassWorkgroup);
    interface_.push_back(var);
    m_.name(var, "tile_" + std::to_string(st.slot));
    tiles_[st.slot] = var;
    auto i32 = [&](Id u) { return m_.op(spv::OpBitcast, i32t(), {u}); };
    auto iadd = [&](Id a, Id b) { return m_.op(spv::OpIAdd, i32t(), {a, b}); };
    Id first_row = iadd(iadd(lo[0], i32(row0)), m_.constant_i32(st.row_lo));
    Id first_col = iadd(iadd(lo[1], i32(col0)), m_.constant_i32(st.col_lo));
    Id e0 = shape(st.slot, 0), e1 = shape(st.slot, 1);
    auto within = [&](Id i, Id extent) {
      return m_.op(spv::OpLogicalAnd, bool_t(),
                   {m_.op(spv::OpSGreaterThanEqual, bool_t(), {i, m_.constant_i32(0)}),
                    m_.op(spv::OpSLessThan, bool_t(), {i, extent})});
    };
    for (uint32_t first = 0; first < elements; first += wg) {
      Id e = m_.op(spv::OpIAdd, u32t(), {local, m_.constant_u32(first)});
      auto fill = [&] {
        Id r = m_.op(spv::OpUDiv, u32t(), {e, m_.constant_u32(width)});
        Id col = m_.op(spv::OpISub, u32t(),
                       {e, m_.op(spv::OpIMul, u32t(), {r, m_.constant_u32(width)})});
        Id i = iadd(first_row, i32(r)), j = iadd(first_col, i32(col));
        Id dst = m_.op(spv::OpAccessChain, ptr(spv::StorageClassWorkgroup, elem), {var, e});
        m_.op_void(spv::OpStore, {dst, math_.bits_const(sb.stored, 0)});
        Id inside = m_.op(spv::OpLogicalAnd, bool_t(), {within(i, e0), within(j, e1)});
        if_then(inside, [&] {
          Id linear = iadd(m_.op(spv::OpIMul, i32t(), {i, e1}), j);
          Id src = m_.op(spv::OpAccessChain, ptr(buffer_class(), elem),
                         {sb.var, m_.constant_i32(0), linear});
          m_.op_void(spv::OpStore, {dst, m_.op(spv::OpLoad, elem, {src})});
        });
      };
      if (first + wg > elements)
        if_then(m_.op(spv::OpULessThan, bool_t(), {e, m_.constant_u32(elements)}), fill);
      else
        fill();
    }
  }

  // A read of a staged resource from its tile; any other read as written.
  Id staged_load(const Inst& in) {
    for (const StagedResource& st : staged_) {
      auto it = st.loads.find(&in);
      if (it == st.loads.end()) continue;
      const uint32_t width = st.width(tile_);
      auto [dr, dc] = it->second;
      Id at = m_.op(
          spv::OpIAdd, u32t(),
          {m_.op(spv::OpIAdd, u32t(),
                 {m_.op(spv::OpIMul, u32t(),
                        {m_.op(spv::OpIAdd, u32t(),
                               {tile_y_, m_.constant_u32(static_cast<uint32_t>(dr - st.row_lo))}),
                         m_.constant_u32(width)}),
                  tile_x_}),
           m_.constant_u32(static_cast<uint32_t>(dc - st.col_lo))});
      Scalar stored = slot_buffer(st.slot).stored;
      Id raw = m_.op(spv::OpLoad, t(stored),
                     {m_.op(spv::OpAccessChain, ptr(spv::StorageClassWorkgroup, t(stored)),
                            {tiles_.at(st.slot), at})});
      return stored == in.type ? raw : m_.op(spv::OpBitcast, t(in.type), {raw});
    }
    return load_through(in.operand(0), in.type);
  }

  // ------------------------------------------------------------------ random numbers
  // The CPU backend's counter-based generator, bit for bit.
  Id mix64(Id z) {
    Id u64 = t(Scalar::U64);
    auto c = [&](uint64_t v) { return math_.bits_const(Scalar::U64, v); };
    z = m_.op(spv::OpIMul, u64,
              {m_.op(spv::OpBitwiseXor, u64, {z, m_.op(spv::OpShiftRightLogical, u64, {z, c(30)})}),
               c(0xBF58476D1CE4E5B9ull)});
    z = m_.op(spv::OpIMul, u64,
              {m_.op(spv::OpBitwiseXor, u64, {z, m_.op(spv::OpShiftRightLogical, u64, {z, c(27)})}),
               c(0x94D049BB133111EBull)});
    return m_.op(spv::OpBitwiseXor, u64, {z, m_.op(spv::OpShiftRightLogical, u64, {z, c(31)})});
  }

  static constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

  void init_rng(const std::vector<Id>& indices) {
    Id u64 = t(Scalar::U64);
    if (!rng_) rng_ = m_.local_variable(ptr(spv::StorageClassFunction, u64));
    Id seed = load_scalar(args_block(), plan_.args.seed, Scalar::U64);
    Id h = mix64(m_.op(spv::OpIAdd, u64,
                       {seed, math_.bits_const(Scalar::U64, kGolden * (task_index_ + 1))}));
    for (Id i : indices) {
      Id wide = m_.op(spv::OpUConvert, u64, {m_.op(spv::OpBitcast, u32t(), {i})});
      h = mix64(m_.op(
          spv::OpIAdd, u64,
          {m_.op(spv::OpBitwiseXor, u64, {h, wide}), math_.bits_const(Scalar::U64, kGolden)}));
    }
    m_.op_void(spv::OpStore, {rng_, h});
  }

  Id rand(const Inst& in) {
    if (!(target_.features & kNeedInt64)) require(kNeedInt64, in, "uses random numbers");
    Id u64 = t(Scalar::U64);
    if (!rng_) init_rng({});
    Id s = m_.op(spv::OpIAdd, u64,
                 {m_.op(spv::OpLoad, u64, {rng_}), math_.bits_const(Scalar::U64, kGolden)});
    m_.op_void(spv::OpStore, {rng_, s});
    Id z = mix64(s);
    switch (in.type) {
      case Scalar::F32: {
        Id top = m_.op(spv::OpShiftRightLogical, u64, {z, math_.bits_const(Scalar::U64, 40)});
        Id f = m_.op(spv::OpConvertUToF, t(Scalar::F32), {top});
        return m_.op(spv::OpFMul, t(Scalar::F32),
                     {f, math_.float_const(Scalar::F32, 1.0 / 16777216.0)});
      }
      case Scalar::F64: {
        Id top = m_.op(spv::OpShiftRightLogical, u64, {z, math_.bits_const(Scalar::U64, 11)});
        Id f = m_.op(spv::OpConvertUToF, t(Scalar::F64), {top});
        return m_.op(spv::OpFMul, t(Scalar::F64),
                     {f, math_.float_const(Scalar::F64, 1.0 / 9007199254740992.0)});
      }
      case Scalar::Bool:
        return m_.op(spv::OpINotEqual, bool_t(),
                     {m_.op(spv::OpBitwiseAnd, u64, {z, math_.bits_const(Scalar::U64, 1)}),
                      math_.bits_const(Scalar::U64, 0)});
      default:
        return bit_width(in.type) == 64 ? math_.cast(z, Scalar::U64, in.type)
                                        : math_.cast(z, Scalar::U64, in.type);
    }
  }

  // ------------------------------------------------------------------ memory
  // Extents of every ndarray and texture the task touches, loaded in the entry block so
  // they dominate every use (an extent first needed inside a branch serves code after it).
  void preload_extents() {
    std::set<int> slots;
    ir::walk(*offload_.region(0), [&](const Inst& in) {
      bool slot_op = in.op == Op::ResourceShape || in.op == Op::TexLoad || in.op == Op::TexSample ||
                     in.op == Op::TexStore || in.op == Op::StructFor;
      if (slot_op) slots.insert(in.resource_slot());
    });
    if (kind_ == ir::TaskKind::StructFor) slots.insert(offload_.resource_slot());
    for (const StagedResource& st : staged_) slots.insert(st.slot);  // the fill checks bounds
    for (int slot : slots) {
      const ResourceDesc& r = k_.abi.resources.at(static_cast<size_t>(slot));
      if (r.kind == ResourceKind::Field) continue;
      int32_t at = plan_.args.shapes.at(static_cast<size_t>(slot));
      for (int d = 0; d < std::max(r.ndim, 1); ++d)
        shapes_[{slot, d}] =
            load_scalar(args_block(), static_cast<uint32_t>(at + 4 * d), Scalar::I32);
    }
  }

  Id shape(int slot, int dim) {
    const ResourceDesc& r = k_.abi.resources.at(static_cast<size_t>(slot));
    if (dim < 0 || dim >= kMaxDims)
      throw InternalError("spirv codegen: shape dimension out of range");
    if (r.kind == ResourceKind::Field)
      return m_.constant_i32(static_cast<int32_t>(r.shape[static_cast<size_t>(dim)]));
    auto it = shapes_.find({slot, dim});
    if (it != shapes_.end()) return it->second;
    // Uniform code before the task (top-level shape values) loads at the entry too.
    if (!in_task_) {
      int32_t at = plan_.args.shapes.at(static_cast<size_t>(slot));
      return shapes_[{slot, dim}] =
                 load_scalar(args_block(), static_cast<uint32_t>(at + 4 * dim), Scalar::I32);
    }
    throw InternalError("spirv codegen: extent of slot " + std::to_string(slot) +
                        " was not loaded at the task's entry");
  }

  Id element_ptr(const Inst& in) {
    const SlotBuffer& sb = slot_buffer(in.resource_slot());
    Id index = value(in.operand(0));
    return m_.op(spv::OpAccessChain, ptr(buffer_class(), t(sb.stored)),
                 {sb.var, m_.constant_i32(0), index});
  }

  // Component `component()` of element operand 1 of a local array, the index clamped into the
  // array (as on the CPU, where the array is on the stack).
  Id array_element(const Inst& in) {
    const Inst& array = *in.operand(0);
    Id i = math_.binary(Op::Max, value(in.operand(1)), m_.constant_i32(0), Scalar::I32);
    i = math_.binary(Op::Min, i, m_.constant_i32(array.length() - 1), Scalar::I32);
    Id i32 = t(Scalar::I32);
    Id flat = m_.op(spv::OpIAdd, i32,
                    {m_.op(spv::OpIMul, i32, {i, m_.constant_i32(array.width())}),
                     m_.constant_i32(in.component())});
    return m_.op(spv::OpAccessChain, ptr(spv::StorageClassFunction, t(array.type)),
                 {value(&array), flat});
  }

  int slot_of(const Inst* p) const { return p->op == Op::ElementPtr ? p->resource_slot() : -1; }

  Id load_through(const Inst* p, Scalar s) {
    Id pv = value(p);
    if (p->op == Op::Alloca) return m_.op(spv::OpLoad, t(s), {pv});
    mark(plan_.find(BindingKind::Buffer, p->resource_slot()), kAccessRead);
    Scalar stored = slot_buffer(p->resource_slot()).stored;
    Id raw = m_.op(spv::OpLoad, t(stored), {pv});
    if (stored == s) return raw;
    if (s == Scalar::Bool) return math_.from_memory(s, raw);
    return m_.op(spv::OpBitcast, t(s), {raw});
  }

  void store_through(const Inst* p, Id v, Scalar s) {
    Id pv = value(p);
    if (p->op == Op::Alloca) {
      m_.op_void(spv::OpStore, {pv, v});
      return;
    }
    mark(plan_.find(BindingKind::Buffer, p->resource_slot()), kAccessWrite);
    Scalar stored = slot_buffer(p->resource_slot()).stored;
    if (s == Scalar::Bool)
      v = math_.to_memory(s, v);
    else if (stored != s)
      v = m_.op(spv::OpBitcast, t(stored), {v});
    m_.op_void(spv::OpStore, {pv, v});
  }

  Id atomic(const Inst& in) {
    const Inst* p = in.operand(0);
    Scalar ty = in.type;
    ir::AtomicOp op = in.atomic_op();
    Id v = value(in.operand(1));
    if (p->op == Op::Alloca) {  // demote_atomics leaves none; a plain read-modify-write is exact
      Id old = load_through(p, ty);
      store_through(p, math_.binary(ir::atomic_binary_op(op), old, v, ty), ty);
      return old;
    }
    if (p->op != Op::ElementPtr)
      throw InternalError(Place{"", k_.abi.name, in.node, ""},
                          "atomic on something that is not a field or ndarray element");
    int width = bit_width(ty);
    if (ty == Scalar::Bool || width < 32)
      fail(in, "kernel '" + k_.abi.name + "' uses an atomic on " + std::string(scalar_name(ty)) +
                   " memory; Vulkan atomics work on 32- and 64-bit values only");
    bool native_float = is_float(ty) && !cas_slots_.count(p->resource_slot()) &&
                        is_float_atomic_native(ty, op, target_.features);
    if (width == 64 && !native_float) {  // integer ops, or compare-and-swap on the bits
      require(kNeedInt64Atomics, in, "uses a 64-bit atomic");
      m_.capability(spv::CapabilityInt64Atomics);
    }
    mark(plan_.find(BindingKind::Buffer, p->resource_slot()), kAccessRead | kAccessWrite);
    Id pv = value(p);
    if (combines_in_subgroup(in)) {
      // Every active invocation updates the same element: the subgroup combines its values
      // and one of them updates memory (one atomic per subgroup instead of one per element).
      constexpr uint32_t kScopeSubgroup = 3;
      Op combine = op == ir::AtomicOp::Sub ? Op::Add : ir::atomic_binary_op(op);
      Id total = m_.op(
          subgroup_op(combine, ty), t(ty),
          {m_.constant_u32(kScopeSubgroup), static_cast<uint32_t>(spv::GroupOperationReduce), v});
      Id leader = m_.op(spv::OpGroupNonUniformElect, bool_t(), {m_.constant_u32(kScopeSubgroup)});
      if_then(leader, [&] { atomic_update(in, pv, total); });
      return total;  // never read: combines_in_subgroup asks that nothing uses the old value
    }
    return atomic_update(in, pv, v);
  }

  // True for an atomic whose element is the same in every invocation (its index is built from
  // constants, value parameters and extents: a 0-d field, g[3], a[n - 1]) and whose old value
  // nothing reads, when the device combines 32-bit values in subgroups (integers: every
  // operation; floats: add and subtract, where only the order of the additions changes).
  bool combines_in_subgroup(const Inst& in) {
    if (m_.version() < kSpirv1_3 || !(target_.features & kNeedSubgroupArithmetic)) return false;
    Scalar ty = in.type;
    if (ty != Scalar::I32 && ty != Scalar::U32 && ty != Scalar::F32) return false;
    ir::AtomicOp op = in.atomic_op();
    if (ty == Scalar::F32 && op != ir::AtomicOp::Add && op != ir::AtomicOp::Sub) return false;
    if (kind_ == ir::TaskKind::Serial || read_values().count(&in)) return false;
    if (!uniform(in.operand(0)->operand(0), 0)) return false;
    *requirements_ |= kNeedSubgroupArithmetic;
    m_.capability(spv::CapabilityGroupNonUniform);
    m_.capability(spv::CapabilityGroupNonUniformArithmetic);
    return true;
  }

  // The instructions of the task whose values something reads.
  const std::set<const Inst*>& read_values() {
    if (!read_values_) {
      read_values_.emplace();
      ir::walk(*offload_.region(0), [&](const Inst& i) {
        for (const Inst* o : i.operands) read_values_->insert(o);
      });
    }
    return *read_values_;
  }

  // True when `v` has one value in every invocation of the dispatch: built by pure operations
  // from constants, value parameters and extents only (no loop index, load or random number).
  // Deep expressions are treated as varying rather than followed (a bounded walk).
  bool uniform(const Inst* v, int depth) {
    if (auto it = uniform_.find(v); it != uniform_.end()) return it->second;
    bool u = false;
    if (v->op == Op::Const || v->op == Op::ArgLoad || v->op == Op::ResourceShape)
      u = true;
    else if (ir::is_pure(v->op) && !v->operands.empty() && depth < 32)
      u = std::all_of(v->operands.begin(), v->operands.end(),
                      [&](const Inst* o) { return uniform(o, depth + 1); });
    return uniform_[v] = u;
  }

  // The atomic update of the element at `pv` by `v`; the old value.
  Id atomic_update(const Inst& in, Id pv, Id v) {
    const Inst* p = in.operand(0);
    Scalar ty = in.type;
    ir::AtomicOp op = in.atomic_op();
    int width = bit_width(ty);
    bool native_float = is_float(ty) && !cas_slots_.count(p->resource_slot()) &&
                        is_float_atomic_native(ty, op, target_.features);
    Id scope = m_.constant_u32(kScopeDevice), sem = m_.constant_u32(kSemanticsRelaxed);
    if (!is_float(ty) || native_float) return native_atomic(ty, op, pv, v);
    Scalar ut = width == 64 ? Scalar::U64 : Scalar::U32;
    bool bitwise = op == ir::AtomicOp::And || op == ir::AtomicOp::Or || op == ir::AtomicOp::Xor;
    if (bitwise) {  // on the bits, as the CPU backend does
      spv::Op o = op == ir::AtomicOp::And  ? spv::OpAtomicAnd
                  : op == ir::AtomicOp::Or ? spv::OpAtomicOr
                                           : spv::OpAtomicXor;
      Id old = m_.op(o, t(ut), {pv, scope, sem, m_.op(spv::OpBitcast, t(ut), {v})});
      return m_.op(spv::OpBitcast, t(ty), {old});
    }
    return cas_update(pv, ty, ir::atomic_binary_op(op), v);
  }

  // The device's own atomic `op` of `v` on the `ty` at `pv` (an integer, or a float the
  // device has the atomic for: is_float_atomic_native); the old value.
  Id native_atomic(Scalar ty, ir::AtomicOp op, Id pv, Id v) {
    int width = bit_width(ty);
    Id scope = m_.constant_u32(kScopeDevice), sem = m_.constant_u32(kSemanticsRelaxed);
    if (!is_float(ty)) {
      bool s = is_signed_int(ty);
      spv::Op o = spv::OpAtomicIAdd;
      switch (op) {
        case ir::AtomicOp::Add: o = spv::OpAtomicIAdd; break;
        case ir::AtomicOp::Sub: o = spv::OpAtomicISub; break;
        case ir::AtomicOp::Min: o = s ? spv::OpAtomicSMin : spv::OpAtomicUMin; break;
        case ir::AtomicOp::Max: o = s ? spv::OpAtomicSMax : spv::OpAtomicUMax; break;
        case ir::AtomicOp::And: o = spv::OpAtomicAnd; break;
        case ir::AtomicOp::Or: o = spv::OpAtomicOr; break;
        case ir::AtomicOp::Xor: o = spv::OpAtomicXor; break;
      }
      return m_.op(o, t(ty), {pv, scope, sem, v});
    }
    bool add = op == ir::AtomicOp::Add || op == ir::AtomicOp::Sub;
    if (add) {
      m_.extension("SPV_EXT_shader_atomic_float_add");
      m_.capability(width == 64 ? spv::CapabilityAtomicFloat64AddEXT
                                : spv::CapabilityAtomicFloat32AddEXT);
      *requirements_ |= width == 64 ? kNeedFloat64AtomicAdd : kNeedFloat32AtomicAdd;
      Id operand = op == ir::AtomicOp::Sub ? m_.op(spv::OpFNegate, t(ty), {v}) : v;
      return m_.op(spv::OpAtomicFAddEXT, t(ty), {pv, scope, sem, operand});
    }
    m_.extension("SPV_EXT_shader_atomic_float_min_max");
    m_.capability(width == 64 ? spv::CapabilityAtomicFloat64MinMaxEXT
                              : spv::CapabilityAtomicFloat32MinMaxEXT);
    *requirements_ |= width == 64 ? kNeedFloat64AtomicMinMax : kNeedFloat32AtomicMinMax;
    return m_.op(op == ir::AtomicOp::Min ? spv::OpAtomicFMinEXT : spv::OpAtomicFMaxEXT, t(ty),
                 {pv, scope, sem, v});
  }

  // `*pv = *pv combine v` by a compare-and-swap loop on the bits of the unsigned word at `pv`
  // (serves every operation and type alike); the old value.
  Id cas_update(Id pv, Scalar ty, Op combine, Id v) {
    Scalar ut = bit_width(ty) == 64 ? Scalar::U64 : Scalar::U32;
    Id scope = m_.constant_u32(kScopeDevice), sem = m_.constant_u32(kSemanticsRelaxed);
    Id header = m_.fresh_id(), body = m_.fresh_id(), cont = m_.fresh_id(), merge = m_.fresh_id();
    m_.op_void(spv::OpBranch, {header});
    begin_block(header);
    m_.op_void(spv::OpLoopMerge, {merge, cont, spv::LoopControlMaskNone});
    m_.op_void(spv::OpBranch, {body});
    begin_block(body);
    Id old_bits = m_.op(spv::OpAtomicLoad, t(ut), {pv, scope, sem});
    Id old = ty == ut ? old_bits : m_.op(spv::OpBitcast, t(ty), {old_bits});
    Id updated = math_.binary(combine, old, v, ty);
    Id new_bits = ty == ut ? updated : m_.op(spv::OpBitcast, t(ut), {updated});
    Id seen = m_.op(spv::OpAtomicCompareExchange, t(ut), {pv, scope, sem, sem, new_bits, old_bits});
    Id swapped = m_.op(spv::OpIEqual, bool_t(), {seen, old_bits});
    m_.op_void(spv::OpBranchConditional, {swapped, merge, cont});
    begin_block(cont);
    m_.op_void(spv::OpBranch, {header});
    begin_block(merge);
    return old;
  }

  // ------------------------------------------------------------------ reductions
  // A parallel task accumulates each reduced temporary in a per-invocation partial that
  // starts at the operation's identity. After the grid-stride loop the workgroup combines
  // its partials through shared memory (a tree, a barrier after each level; or, with
  // subgroup arithmetic, subgroup ops around one barrier) and invocation 0 combines the
  // result into the temporary: one atomic per workgroup, and without subgroups no device
  // feature beyond core Vulkan. A task whose debug checks may end an invocation early
  // cannot meet at a barrier, so there every invocation combines its own partial.
  struct Partial {
    Id var = 0;
    Scalar type = Scalar::Void;
    Op combine = Op::Add;
    const Inst* first = nullptr;  // a reduce of it, to name in errors
  };

  // True in workgroup (0, 0) of the dispatch.
  Id first_workgroup() {
    Id gid = m_.op(spv::OpLoad, m_.type_vector(u32t(), 3), {builtin(spv::BuiltInWorkgroupId)});
    Id x = m_.op(spv::OpCompositeExtract, u32t(), {gid, 0});
    Id y = m_.op(spv::OpCompositeExtract, u32t(), {gid, 1});
    return m_.op(spv::OpLogicalAnd, bool_t(),
                 {m_.op(spv::OpIEqual, bool_t(), {x, m_.constant_u32(0)}),
                  m_.op(spv::OpIEqual, bool_t(), {y, m_.constant_u32(0)})});
  }

  // Bounds checks and assertions end a failing invocation early, so such a task cannot meet
  // at a workgroup barrier.
  bool has_debug_checks() const {
    return contains(*offload_.region(0), Op::BoundsCheck) ||
           contains(*offload_.region(0), Op::Assert);
  }

  void begin_partials() {
    ir::walk(*offload_.region(0), [&](const Inst& in) {
      if (in.op != Op::Reduce) return;
      // 64-bit partials of several workgroups need a 64-bit atomic to meet; without one
      // (SPIR-V 1.0 targets, say) one workgroup runs the whole task and its invocation 0,
      // the only writer, updates the temporary. (Debug checks and loop guards rule out its
      // barriers: there combine_into_temp asks for the feature.)
      if (bit_width(in.operand(0)->type) == 64 && !(target_.features & kNeedInt64Atomics) &&
          !has_debug_checks() && !guard_loops_ && !one_workgroup_) {
        one_workgroup_ = true;
        notes_->insert("kernel '" + k_.abi.name + "': node " + std::to_string(in.node) +
                       " reduces a 64-bit value; without shaderBufferInt64Atomics its loop runs "
                       "on one workgroup");
      }
      if (partials_.count(in.temp_offset())) return;
      Scalar ty = in.operand(0)->type;
      Partial p{m_.local_variable(ptr(spv::StorageClassFunction, t(ty))), ty, in.combine_op(), &in};
      m_.op_void(spv::OpStore,
                 {p.var, math_.bits_const(ty, ir::combine_identity_bits(p.combine, ty))});
      partials_[in.temp_offset()] = p;
    });
  }

  void reduce(const Inst& in) {
    auto it = partials_.find(in.temp_offset());
    if (it == partials_.end()) throw InternalError("spirv codegen: reduce outside a parallel task");
    const Partial& p = it->second;
    Id old = m_.op(spv::OpLoad, t(p.type), {p.var});
    m_.op_void(spv::OpStore, {p.var, math_.binary(p.combine, old, value(in.operand(0)), p.type)});
  }

  void barrier() {
    constexpr uint32_t kScopeWorkgroup = 2;
    constexpr uint32_t kAcquireReleaseWorkgroupMemory = 0x8 | 0x100;
    m_.op_void(spv::OpControlBarrier,
               {m_.constant_u32(kScopeWorkgroup), m_.constant_u32(kScopeWorkgroup),
                m_.constant_u32(kAcquireReleaseWorkgroupMemory)});
  }

  template <typename Then>
  void if_then(Id cond, Then&& then) {
    Id then_bb = m_.fresh_id(), merge = m_.fresh_id();
    m_.op_void(spv::OpSelectionMerge, {merge, spv::SelectionControlMaskNone});
    m_.op_void(spv::OpBranchConditional, {cond, then_bb, merge});
    begin_block(then_bb);
    then();
    if (!m_.block_closed()) m_.op_void(spv::OpBranch, {merge});
    begin_block(merge);
  }

  // Subgroup reductions need SPIR-V 1.3 and the device's subgroup arithmetic, and serve
  // 32-bit values only (8, 16 and 64-bit ones need shaderSubgroupExtendedTypes, shaderInt64,
  // shaderFloat64 for subgroups, which we do not check).
  bool use_subgroups() const {
    if (m_.version() < kSpirv1_3 || !(target_.features & kNeedSubgroupArithmetic)) return false;
    for (const auto& entry : partials_) {
      Scalar ty = entry.second.type;
      if (ty != Scalar::I32 && ty != Scalar::U32 && ty != Scalar::F32) return false;
    }
    return true;
  }

  static spv::Op subgroup_op(Op combine, Scalar ty) {
    bool f = ty == Scalar::F32, s = ty == Scalar::I32;
    switch (combine) {
      case Op::Add: return f ? spv::OpGroupNonUniformFAdd : spv::OpGroupNonUniformIAdd;
      case Op::Mul: return f ? spv::OpGroupNonUniformFMul : spv::OpGroupNonUniformIMul;
      case Op::Min:
        return f ? spv::OpGroupNonUniformFMin
                 : (s ? spv::OpGroupNonUniformSMin : spv::OpGroupNonUniformUMin);
      case Op::Max:
        return f ? spv::OpGroupNonUniformFMax
                 : (s ? spv::OpGroupNonUniformSMax : spv::OpGroupNonUniformUMax);
      case Op::BitAnd: return spv::OpGroupNonUniformBitwiseAnd;
      case Op::BitOr: return spv::OpGroupNonUniformBitwiseOr;
      case Op::BitXor: return spv::OpGroupNonUniformBitwiseXor;
      default: break;
    }
    throw InternalError("spirv codegen: no subgroup reduction for " +
                        std::string(ir::op_name(combine)));
  }

  // `v` combined over the active invocations of the subgroup.
  Id subgroup_reduce(const Partial& p, Id v) {
    Scalar ty = p.type;
    // A float min/max partial is never NaN (it starts at an infinity and our min/max ignore
    // NaN), so FMin/FMax, whose result for a NaN is the driver's choice, never see one.
    constexpr uint32_t kScopeSubgroup = 3;
    return m_.op(
        subgroup_op(p.combine, ty), t(ty),
        {m_.constant_u32(kScopeSubgroup), static_cast<uint32_t>(spv::GroupOperationReduce), v});
  }

  // Each subgroup reduces its partials and its first lane writes one value per subgroup to
  // shared memory; after one barrier the first subgroup reduces those (each lane a strided
  // share of them, then a subgroup op) and its first lane makes the one atomic.
  void combine_partials_by_subgroup() {
    m_.capability(spv::CapabilityGroupNonUniform);
    m_.capability(spv::CapabilityGroupNonUniformArithmetic);
    *requirements_ |= kNeedSubgroupArithmetic;
    Id lane = load_builtin_u32(spv::BuiltInSubgroupLocalInvocationId);
    Id subgroup = load_builtin_u32(spv::BuiltInSubgroupId);
    Id subgroups = load_builtin_u32(spv::BuiltInNumSubgroups);
    Id subgroup_size = load_builtin_u32(spv::BuiltInSubgroupSize);
    Id first_lane = m_.op(spv::OpIEqual, bool_t(), {lane, m_.constant_u32(0)});
    struct Shared {
      const Partial* p;
      uint32_t offset;
      Id var, elem, reduced;
    };
    std::vector<Shared> arrays;
    for (auto& [offset, p] : partials_) {
      // At most one entry per invocation: a subgroup has at least one.
      Id array = m_.type_array(t(p.type), m_.constant_u32(target_.workgroup_size));
      Id var =
          m_.global_variable(ptr(spv::StorageClassWorkgroup, array), spv::StorageClassWorkgroup);
      interface_.push_back(var);
      // Reduced here, in uniform control flow, where every invocation takes part.
      Id reduced = subgroup_reduce(p, m_.op(spv::OpLoad, t(p.type), {p.var}));
      arrays.push_back({&p, static_cast<uint32_t>(offset), var,
                        ptr(spv::StorageClassWorkgroup, t(p.type)), reduced});
    }
    auto slot = [&](const Shared& a, Id i) {
      return m_.op(spv::OpAccessChain, a.elem, {a.var, i});
    };
    if_then(first_lane, [&] {
      for (const Shared& a : arrays) m_.op_void(spv::OpStore, {slot(a, subgroup), a.reduced});
    });
    barrier();
    if_then(m_.op(spv::OpIEqual, bool_t(), {subgroup, m_.constant_u32(0)}), [&] {
      // The first subgroup walks the per-subgroup values in rows of its size; the trip count
      // is the same for all its lanes, so they stay together for the subgroup op after it.
      std::vector<Id> accs;
      for (const Shared& a : arrays) {
        Scalar ty = a.p->type;
        Id acc = m_.local_variable(ptr(spv::StorageClassFunction, t(ty)));
        m_.op_void(spv::OpStore,
                   {acc, math_.bits_const(ty, ir::combine_identity_bits(a.p->combine, ty))});
        accs.push_back(acc);
      }
      Id base_var = m_.local_variable(ptr(spv::StorageClassFunction, u32t()));
      m_.op_void(spv::OpStore, {base_var, m_.constant_u32(0)});
      Id header = m_.fresh_id(), body = m_.fresh_id(), cont = m_.fresh_id(), merge = m_.fresh_id();
      m_.op_void(spv::OpBranch, {header});
      begin_block(header);
      Id base = m_.op(spv::OpLoad, u32t(), {base_var});
      Id more = m_.op(spv::OpULessThan, bool_t(), {base, subgroups});
      m_.op_void(spv::OpLoopMerge, {merge, cont, spv::LoopControlMaskNone});
      m_.op_void(spv::OpBranchConditional, {more, body, merge});
      begin_block(body);
      Id at = m_.op(spv::OpIAdd, u32t(), {base, lane});
      Id inside = m_.op(spv::OpULessThan, bool_t(), {at, subgroups});
      Id index = m_.op(spv::OpSelect, u32t(), {inside, at, m_.constant_u32(0)});
      for (size_t i = 0; i < arrays.size(); ++i) {
        Scalar ty = arrays[i].p->type;
        Id acc = m_.op(spv::OpLoad, t(ty), {accs[i]});
        Id v = m_.op(spv::OpLoad, t(ty), {slot(arrays[i], index)});
        m_.op_void(spv::OpStore,
                   {accs[i],
                    math_.select(ty, inside, math_.binary(arrays[i].p->combine, acc, v, ty), acc)});
      }
      m_.op_void(spv::OpBranch, {cont});
      begin_block(cont);
      m_.op_void(spv::OpStore, {base_var, m_.op(spv::OpIAdd, u32t(), {base, subgroup_size})});
      m_.op_void(spv::OpBranch, {header});
      begin_block(merge);
      std::vector<Id> totals;
      for (size_t i = 0; i < arrays.size(); ++i)
        totals.push_back(
            subgroup_reduce(*arrays[i].p, m_.op(spv::OpLoad, t(arrays[i].p->type), {accs[i]})));
      if_then(first_lane, [&] {
        for (size_t i = 0; i < arrays.size(); ++i)
          combine_into_temp(*arrays[i].p, arrays[i].offset, totals[i]);
      });
    });
  }

  void combine_partials() {
    if (partials_.empty()) return;
    if (has_debug_checks() || guard_loops_) {
      for (auto& [offset, p] : partials_)
        combine_into_temp(p, static_cast<uint32_t>(offset), m_.op(spv::OpLoad, t(p.type), {p.var}));
      return;
    }
    if (use_subgroups()) {
      combine_partials_by_subgroup();
      return;
    }
    uint32_t wg = target_.workgroup_size;
    Id lid = m_.op(
        spv::OpCompositeExtract, u32t(),
        {m_.op(spv::OpLoad, m_.type_vector(u32t(), 3), {builtin(spv::BuiltInLocalInvocationId)}),
         0});
    // Two levels, two barriers for all of the task's reductions at once (barriers, not the
    // loads, are what costs): `lanes` (about sqrt(wg), a power of two) invocations each
    // combine every lanes-th entry, then invocation 0 combines those `lanes` results.
    uint32_t lanes = 1;
    while (lanes * lanes < wg) lanes *= 2;
    struct Shared {
      const Partial* p;
      uint32_t offset;
      Id var, elem;
    };
    std::vector<Shared> arrays;
    for (auto& [offset, p] : partials_) {
      Id array = m_.type_array(t(p.type), m_.constant_u32(wg));
      Id var =
          m_.global_variable(ptr(spv::StorageClassWorkgroup, array), spv::StorageClassWorkgroup);
      interface_.push_back(var);
      arrays.push_back(
          {&p, static_cast<uint32_t>(offset), var, ptr(spv::StorageClassWorkgroup, t(p.type))});
    }
    auto slot = [&](const Shared& a, Id i) {
      return m_.op(spv::OpAccessChain, a.elem, {a.var, i});
    };
    auto load = [&](const Shared& a, Id i) {
      return m_.op(spv::OpLoad, t(a.p->type), {slot(a, i)});
    };
    for (const Shared& a : arrays)
      m_.op_void(spv::OpStore, {slot(a, lid), m_.op(spv::OpLoad, t(a.p->type), {a.p->var})});
    barrier();
    if_then(m_.op(spv::OpULessThan, bool_t(), {lid, m_.constant_u32(lanes)}), [&] {
      for (const Shared& a : arrays) {
        Scalar ty = a.p->type;
        Id acc = load(a, lid);
        for (uint32_t j = lanes; j < wg; j += lanes) {
          Id at = m_.op(spv::OpIAdd, u32t(), {lid, m_.constant_u32(j)});
          if (j + lanes <= wg) {
            acc = math_.binary(a.p->combine, acc, load(a, at), ty);
            continue;
          }
          // The last, partial row: only lanes whose entry exists (the others reread their own).
          Id inside = m_.op(spv::OpULessThan, bool_t(), {at, m_.constant_u32(wg)});
          Id v = load(a, m_.op(spv::OpSelect, u32t(), {inside, at, lid}));
          acc = math_.select(ty, inside, math_.binary(a.p->combine, acc, v, ty), acc);
        }
        m_.op_void(spv::OpStore, {slot(a, lid), acc});
      }
    });
    barrier();
    Id leader = m_.op(spv::OpIEqual, bool_t(), {lid, m_.constant_u32(0)});
    if (one_workgroup_) leader = m_.op(spv::OpLogicalAnd, bool_t(), {leader, first_workgroup()});
    if_then(leader, [&] {
      for (const Shared& a : arrays) {
        Id acc = load(a, m_.constant_u32(0));
        for (uint32_t k = 1; k < lanes; ++k)
          acc = math_.binary(a.p->combine, acc, load(a, m_.constant_u32(k)), a.p->type);
        if (!one_workgroup_) {
          combine_into_temp(*a.p, a.offset, acc);
          continue;
        }
        // The only writer: a plain read-modify-write of the words.
        const WordBlock& temps = buffer_block(BindingKind::Temps);
        mark(plan_.find(BindingKind::Temps), kAccessRead | kAccessWrite);
        Id old = load_scalar(temps, a.offset, a.p->type);
        store_words(temps, a.offset / 4,
                    math_.to_words(a.p->type, math_.binary(a.p->combine, old, acc, a.p->type)));
      }
    });
  }

  // The temps binding as 64-bit words, for 64-bit atomics (an alias of the same buffer).
  // The temps binding seen as an array of `ty` (a second view of the same binding, for
  // atomics whose pointer must point to their own type).
  const WordBlock& temps_as(Scalar ty) {
    WordBlock& view = temps_views_[ty];
    if (view.var) return view;
    Id array = m_.type_runtime_array(t(ty));
    m_.decorate(array, spv::DecorationArrayStride, {static_cast<uint32_t>(bit_width(ty) / 8)});
    Id st = m_.type_struct({array});
    decorate_buffer_block(st);
    m_.member_decorate(st, 0, spv::DecorationOffset, {0});
    view.storage = buffer_class();
    view.var = m_.global_variable(ptr(buffer_class(), st), buffer_class());
    decorate_binding(view.var, plan_.find(BindingKind::Temps));
    m_.name(view.var, "temps_" + std::string(scalar_name(ty)));
    return view;
  }

  // The atomic the device has for `temp = temp combine partial`, if any: integer add,
  // min, max and bit operations always; float add, min and max where the device has them.
  std::optional<ir::AtomicOp> native_combine(Op combine, Scalar ty) const {
    std::optional<ir::AtomicOp> op;
    switch (combine) {
      case Op::Add: op = ir::AtomicOp::Add; break;
      case Op::Min: op = ir::AtomicOp::Min; break;
      case Op::Max: op = ir::AtomicOp::Max; break;
      case Op::BitAnd: op = ir::AtomicOp::And; break;
      case Op::BitOr: op = ir::AtomicOp::Or; break;
      case Op::BitXor: op = ir::AtomicOp::Xor; break;
      default: return std::nullopt;  // no atomic multiply
    }
    if (ty == Scalar::Bool || bit_width(ty) < 32) return std::nullopt;
    if (is_float(ty) && !is_float_atomic_native(ty, *op, target_.features)) return std::nullopt;
    return op;
  }

  // temp = temp OP partial: one of the device's atomics where it has one (under contention a
  // compare-and-swap loop retries once per writer that got in first: thousands of workgroups
  // adding floats into one sum took 25x a native atomic add on an H200), else a
  // compare-and-swap loop on the bits, which serves every operation and type alike.
  void combine_into_temp(const Partial& p, uint32_t offset, Id partial) {
    int width = bit_width(p.type);
    Scalar ut = width == 64 ? Scalar::U64 : Scalar::U32;
    mark(plan_.find(BindingKind::Temps), kAccessRead | kAccessWrite);
    if (width == 64) {
      require(kNeedInt64Atomics, *p.first, "reduces a 64-bit value in parallel");
      m_.capability(spv::CapabilityInt64Atomics);
    }
    auto element = [&](Scalar view) {
      return m_.op(spv::OpAccessChain, ptr(buffer_class(), t(view)),
                   {temps_as(view).var, m_.constant_i32(0),
                    m_.constant_i32(static_cast<int32_t>(offset / (width / 8)))});
    };
    if (std::optional<ir::AtomicOp> op = native_combine(p.combine, p.type)) {
      native_atomic(p.type, *op, element(p.type), partial);
      return;
    }
    Id pv = width == 64 ? element(ut) : word_ptr(buffer_block(BindingKind::Temps), offset / 4);
    cas_update(pv, p.type, p.combine, partial);
  }

  // ------------------------------------------------------------------ textures
  Id coords(const Inst& in, size_t first, size_t count, bool clamp, int slot) {
    std::vector<uint32_t> parts;
    for (size_t d = 0; d < count; ++d) {
      Id c = to_i32(in.operand(first + d));
      if (clamp) {
        Id top = m_.op(spv::OpISub, i32t(), {shape(slot, static_cast<int>(d)), m_.constant_i32(1)});
        c = m_.op(spv::OpExtInst, i32t(),
                  {math_.glsl(), 45 /* SClamp */, c, m_.constant_i32(0), top});
      }
      parts.push_back(c);
    }
    if (count == 1) return parts[0];
    return m_.op(spv::OpCompositeConstruct, m_.type_vector(i32t(), static_cast<uint32_t>(count)),
                 parts);
  }

  size_t image_dims(int slot) {
    return static_cast<size_t>(k_.abi.resources.at(static_cast<size_t>(slot)).ndim == 3 ? 3 : 2);
  }

  Id texel_key_lookup(const Inst& in, const std::function<Id()>& make) {
    std::vector<uint32_t> key = {static_cast<uint32_t>(in.op),
                                 static_cast<uint32_t>(in.resource_slot()),
                                 static_cast<uint32_t>(in.bits), m_.current_block()};
    for (const Inst* o : in.operands) key.push_back(value(o));
    auto it = texel_cache_.find(key);
    if (it != texel_cache_.end()) return it->second;
    Id texel = make();
    texel_cache_[key] = texel;
    return texel;
  }

  Id tex_load(const Inst& in) {
    int slot = in.resource_slot();
    mark(plan_.find(BindingKind::StorageImage, slot), kAccessRead);
    Id texel = texel_key_lookup(in, [&] {
      size_t dims = std::min(image_dims(slot), in.operands.size());
      Id c = coords(in, 0, dims, true, slot);
      Id image = m_.op(spv::OpLoad, storage_image_type(slot), {storage_image(slot)});
      return m_.op(spv::OpImageRead, m_.type_vector(t(Scalar::F32), 4), {image, c});
    });
    return m_.op(spv::OpCompositeExtract, t(Scalar::F32),
                 {texel, static_cast<uint32_t>(in.channel())});
  }

  Id tex_sample(const Inst& in) {
    int slot = in.resource_slot();
    int mode = static_cast<int>(in.bits & (ir::kSampleLinear | ir::kSampleRepeat));
    mark(plan_.find(BindingKind::SampledImage, slot), kAccessRead);
    mark(plan_.find(BindingKind::Sampler, mode), kAccessRead);
    Id texel = texel_key_lookup(in, [&] {
      size_t dims = in.operands.size();
      std::vector<uint32_t> parts;
      for (size_t d = 0; d < dims; ++d)
        parts.push_back(math_.cast(value(in.operand(d)), in.operand(d)->type, Scalar::F32));
      Id c = dims == 1 ? parts[0]
                       : m_.op(spv::OpCompositeConstruct,
                               m_.type_vector(t(Scalar::F32), static_cast<uint32_t>(dims)), parts);
      Id image = m_.op(spv::OpLoad, sampled_image_type(slot), {sampled_image(slot)});
      Id smp = m_.op(spv::OpLoad, m_.type_sampler(), {sampler(mode)});
      Id combined =
          m_.op(spv::OpSampledImage, m_.type_sampled_image(sampled_image_type(slot)), {image, smp});
      return m_.op(spv::OpImageSampleExplicitLod, m_.type_vector(t(Scalar::F32), 4),
                   {combined, c, spv::ImageOperandsLodMask, math_.float_const(Scalar::F32, 0)});
    });
    return m_.op(spv::OpCompositeExtract, t(Scalar::F32),
                 {texel, static_cast<uint32_t>(in.channel())});
  }

  void tex_store(const Inst& in) {
    int slot = in.resource_slot();
    auto dims =
        static_cast<size_t>(in.dims() > 0 ? in.dims() : static_cast<int>(in.operands.size()) - 4);
    if (in.operands.size() != dims + 4)
      throw InternalError("spirv codegen: tex_store needs coordinates and 4 channels");
    mark(plan_.find(BindingKind::StorageImage, slot), kAccessWrite);
    texel_cache_.clear();
    Id c = coords(in, 0, dims, false, slot);
    // Stores outside the texture are dropped (an unsigned compare also rejects negatives).
    Id inside = math_.bool_const(true);
    for (size_t d = 0; d < dims; ++d) {
      Id cd = dims == 1 ? c : m_.op(spv::OpCompositeExtract, i32t(), {c, static_cast<uint32_t>(d)});
      Id ok = m_.op(spv::OpULessThan, bool_t(), {cd, shape(slot, static_cast<int>(d))});
      inside = m_.op(spv::OpLogicalAnd, bool_t(), {inside, ok});
    }
    std::vector<uint32_t> ch;
    for (size_t i = 0; i < 4; ++i) {
      const Inst* src = in.operand(dims + i);
      ch.push_back(math_.cast(value(src), src->type, Scalar::F32));
    }
    Id texel = m_.op(spv::OpCompositeConstruct, m_.type_vector(t(Scalar::F32), 4), ch);
    Id write = m_.fresh_id(), done = m_.fresh_id();
    m_.op_void(spv::OpSelectionMerge, {done, spv::SelectionControlMaskNone});
    m_.op_void(spv::OpBranchConditional, {inside, write, done});
    begin_block(write);
    Id image = m_.op(spv::OpLoad, storage_image_type(slot), {storage_image(slot)});
    m_.op_void(spv::OpImageWrite, {image, c, texel});
    m_.op_void(spv::OpBranch, {done});
    begin_block(done);
  }

  // ------------------------------------------------------------------ instructions
  void emit_block(const ir::Block& block) {
    for (const auto& inst : block.insts) {
      if (m_.block_closed()) return;  // the rest of the block follows a jump: dead
      emit_inst(*inst);
    }
  }

  void emit_inst(const Inst& in) {
    Id v = 0;
    if (ir::is_unary(in.op)) {
      v = math_.unary(in.op, value(in.operand(0)), in.operand(0)->type, in.type);
    } else if (ir::is_binary(in.op)) {
      v = math_.binary(in.op, value(in.operand(0)), value(in.operand(1)), in.operand(0)->type);
    } else {
      v = other(in);
    }
    if (v) values_[&in] = v;
  }

  Id arg_load(const Inst& in) {
    const ParamDesc& p = k_.abi.params.at(static_cast<size_t>(in.param_index()));
    if (p.kind == ParamKind::Argpack)
      return load_scalar(argpack_block(in.param_index()), static_cast<uint32_t>(in.byte_offset()),
                         in.type);
    int32_t base = plan_.args.params.at(static_cast<size_t>(in.param_index()));
    if (base < 0) throw InternalError("spirv codegen: argument load of a parameter without bytes");
    return load_scalar(args_block(), static_cast<uint32_t>(base + in.byte_offset()), in.type);
  }

  Id other(const Inst& in) {
    switch (in.op) {
      case Op::Const: return math_.bits_const(in.type, in.bits);
      case Op::ArgLoad: return arg_load(in);
      case Op::ResourceShape: return shape(in.resource_slot(), in.dimension());
      case Op::LoopIndex: {
        auto it = loop_index_.find({in.operand(0), in.dimension()});
        if (it == loop_index_.end())
          throw InternalError("spirv codegen: loop_index outside its loop");
        return it->second;
      }
      case Op::Select:
        return math_.select(in.type, value(in.operand(0)), value(in.operand(1)),
                            value(in.operand(2)));
      case Op::Fma:
        return math_.fma(in.type, value(in.operand(0)), value(in.operand(1)), value(in.operand(2)));
      case Op::Rand: return rand(in);
      case Op::Alloca: {
        Id var = m_.local_variable(ptr(spv::StorageClassFunction, t(in.type)));
        m_.op_void(spv::OpStore, {var, math_.bits_const(in.type, 0)});
        return var;
      }
      case Op::LocalLoad: return m_.op(spv::OpLoad, t(in.type), {value(in.operand(0))});
      case Op::LocalStore:
        m_.op_void(spv::OpStore, {value(in.operand(0)), value(in.operand(1))});
        return 0;
      case Op::LocalArray: {
        // Zeroed where it is declared: declared in a loop body, every iteration starts from
        // a zeroed array.
        Id type = m_.type_local_array(
            t(in.type), m_.constant_u32(static_cast<uint32_t>(in.length() * in.width())));
        Id var = m_.local_variable(ptr(spv::StorageClassFunction, type));
        m_.op_void(spv::OpStore, {var, m_.constant_null(type)});
        return var;
      }
      case Op::ArrayLoad: return m_.op(spv::OpLoad, t(in.type), {array_element(in)});
      case Op::ArrayStore:
        m_.op_void(spv::OpStore, {array_element(in), value(in.operand(2))});
        return 0;
      case Op::ElementPtr: return element_ptr(in);
      case Op::GlobalLoad: return staged_load(in);
      case Op::GlobalStore:
        store_through(in.operand(0), value(in.operand(1)), in.operand(1)->type);
        return 0;
      case Op::AtomicRMW: return atomic(in);
      case Op::Reduce: reduce(in); return 0;
      case Op::TmpLoad: {
        mark(plan_.find(BindingKind::Temps), kAccessRead);
        const WordBlock& b = buffer_block(BindingKind::Temps);
        uint32_t w = static_cast<uint32_t>(in.temp_offset()) / 4;
        if (bit_width(in.type) == 64)
          return math_.from_words(in.type, {load_word(b, w), load_word(b, w + 1)});
        return math_.from_words(in.type, {load_word(b, w)});
      }
      case Op::TmpStore: {
        mark(plan_.find(BindingKind::Temps), kAccessWrite);
        store_words(buffer_block(BindingKind::Temps), static_cast<uint32_t>(in.temp_offset()) / 4,
                    math_.to_words(in.operand(0)->type, value(in.operand(0))));
        return 0;
      }
      case Op::BoundsCheck: {
        Scalar it = in.operand(0)->type, et = in.operand(1)->type;
        Id idx =
            math_.cast(value(in.operand(0)), it, is_signed_int(it) ? Scalar::I32 : Scalar::U32);
        Id ext = math_.cast(value(in.operand(1)), et, Scalar::U32);
        if (bit_width(it) == 64) {  // wide indices compare wide
          Id wide_ext = math_.cast(value(in.operand(1)), et, Scalar::U64);
          Id failed = m_.op(spv::OpUGreaterThanEqual, bool_t(),
                            {math_.cast(value(in.operand(0)), it, Scalar::U64), wide_ext});
          check(failed, 1, in.node, in.resource_slot(), in.dimension(), value(in.operand(0)), it,
                value(in.operand(1)), et);
          return 0;
        }
        Id failed = m_.op(
            spv::OpUGreaterThanEqual, bool_t(),
            {math_.cast(idx, is_signed_int(it) ? Scalar::I32 : Scalar::U32, Scalar::U32), ext});
        check(failed, 1, in.node, in.resource_slot(), in.dimension(), value(in.operand(0)), it,
              value(in.operand(1)), et);
        return 0;
      }
      case Op::Assert: {
        int node = in.assert_node() == 0 && in.node >= 0 ? in.node : in.assert_node();
        auto message = static_cast<int32_t>(asserts_->size());
        asserts_->push_back(in.message());
        Id failed = m_.op(spv::OpLogicalNot, bool_t(), {value(in.operand(0))});
        check(failed, 2, node, -1, -1, m_.constant_i32(message), Scalar::I32, m_.constant_i32(0),
              Scalar::I32);
        return 0;
      }
      case Op::TexLoad: return tex_load(in);
      case Op::TexSample: return tex_sample(in);
      case Op::TexStore: tex_store(in); return 0;
      case Op::If: emit_if(in); return 0;
      case Op::While: emit_while(in); return 0;
      case Op::RangeFor:
      case Op::StructFor: {
        std::vector<Id> lo, hi;
        loop_bounds(in, &lo, &hi);
        emit_nest(in, 0, lo, hi, *in.region(0));
        return 0;
      }
      case Op::Break: emit_break(); return 0;
      case Op::Continue:
        if (loops_.empty()) throw InternalError("spirv codegen: continue outside a loop");
        if (loops_.back().direct)
          m_.op_void(spv::OpReturn, {});  // the invocation's one element is done
        else
          m_.op_void(spv::OpBranch, {loops_.back().cont});
        return 0;
      case Op::Return: {
        if (kind_ != ir::TaskKind::Serial) fail(in, "return outside serial code");
        mark(plan_.find(BindingKind::Returns), kAccessWrite);
        const WordBlock& b = buffer_block(BindingKind::Returns);
        for (size_t i = 0; i < in.operands.size(); ++i)
          store_words(b, static_cast<uint32_t>(i * kReturnSlotBytes / 4),
                      math_.to_words(in.operand(i)->type, value(in.operand(i))));
        m_.op_void(spv::OpReturn, {});
        return 0;
      }
      case Op::GlobalPtr: throw InternalError("spirv codegen: global_ptr left in lowered IR");
      case Op::Offload: throw InternalError("spirv codegen: offload nested in a task");
      // Unary and binary ops: emit_inst hands them to the math emitter.
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
      case Op::LogicOr: break;
    }
    throw InternalError("spirv codegen: unhandled op " + std::string(ir::op_name(in.op)));
  }

  // ------------------------------------------------------------------ host extent
  bool bound_of(const Inst* v, RangeBound* out) const {
    std::optional<RangeBound> b = ir::host_range_bound(k_.abi, v);
    if (b) *out = *b;
    return b.has_value();
  }

  void host_extent(SpirvTask* task) const {
    if (kind_ == ir::TaskKind::Serial) return;
    if (kind_ == ir::TaskKind::StructFor) {
      const ResourceDesc& r = k_.abi.resources.at(static_cast<size_t>(offload_.resource_slot()));
      for (int d = 0; d < r.ndim; ++d) {
        RangeBound lo, hi;
        hi.value = r.shape[static_cast<size_t>(d)];
        task->begin.push_back(lo);
        task->end.push_back(hi);
      }
      task->host_extent = true;
      return;
    }
    for (size_t i = 0; i + 1 < offload_.operands.size(); i += 2) {
      RangeBound lo, hi;
      if (!bound_of(offload_.operand(i), &lo) || !bound_of(offload_.operand(i + 1), &hi)) {
        task->begin.clear();
        task->end.clear();
        return;
      }
      task->begin.push_back(lo);
      task->end.push_back(hi);
    }
    task->host_extent = true;
  }

  const ir::Kernel& k_;
  const KernelPlan& plan_;
  const SpirvTarget& target_;
  const Inst& offload_;
  size_t task_index_;
  std::vector<std::string>* asserts_;
  std::set<std::string>* notes_;
  uint32_t* requirements_;
  spirv::Module m_;
  spirv::SpirvMath math_;
  ir::TaskKind kind_ = ir::TaskKind::Serial;

  Id fn_ = 0;
  bool in_task_ = false;  // past the entry block's uniform values
  Id rng_ = 0;
  // Block-local storage of a tiled direct task: the resources staged, the tile's shape, each
  // resource's tile (Workgroup array) by slot, and the invocation's column and row in it.
  std::vector<StagedResource> staged_;
  TileShape tile_;
  std::map<int32_t, Id> tiles_;
  Id tile_x_ = 0, tile_y_ = 0;
  bool uses_rand_ = false;
  std::vector<Id> interface_;     // every global the entry point uses (SPIR-V 1.4 and later)
  std::vector<Id> io_interface_;  // its Input and Output variables only (before 1.4)
  std::vector<uint8_t> access_;
  WordBlock args_, temps_, returns_, error_;
  std::map<Scalar, WordBlock> temps_views_;  // the temps binding seen as other types (reductions)
  std::map<int32_t, Partial> partials_;      // temp offset -> the task's partial
  bool one_workgroup_ = false;               // a 64-bit reduction without 64-bit atomics
  std::map<int, WordBlock> argpacks_;
  std::map<int, SlotBuffer> slot_buffers_;
  std::set<int> cas_slots_;
  std::map<int, Id> storage_images_, sampled_images_, samplers_;
  std::map<spv::BuiltIn, Id> builtins_;
  std::unordered_map<const Inst*, Id> values_;
  std::map<std::pair<const Inst*, int>, Id> loop_index_;
  std::map<std::pair<int, int>, Id> shapes_;
  std::map<std::vector<uint32_t>, Id> texel_cache_;
  std::vector<Loop> loops_;
  std::optional<std::set<const Inst*>> read_values_;  // combines_in_subgroup
  std::unordered_map<const Inst*, bool> uniform_;
  bool guard_loops_ = false;  // the device may cut this task's loops short (spirv_loops.h)
  Id loop_flag_ = 0;          // this invocation's word of the loop flag (prepare_loop_guard)
};

// The graph node of the first instruction that makes the kernel need `bit` (-1 if none is
// found), so a missing device feature is reported where the user can change it.
int node_needing(const ir::Kernel& k, uint32_t bit) {
  int node = -1;
  auto needs = [&](Scalar s) {
    switch (s) {
      case Scalar::I64:
      case Scalar::U64: return bit == kNeedInt64;
      case Scalar::F64: return bit == kNeedFloat64;
      case Scalar::I16:
      case Scalar::U16: return bit == kNeedInt16 || bit == kNeedStorage16;
      case Scalar::I8:
      case Scalar::U8: return bit == kNeedInt8 || bit == kNeedStorage8;
      default: return false;
    }
  };
  ir::walk(*k.body, [&](Inst& in) {
    if (node >= 0 || in.node < 0) return;
    bool hit = needs(in.type);
    for (const Inst* o : in.operands) hit = hit || needs(o->type);
    if (hit) node = in.node;
  });
  return node;
}

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

CompiledSpirvKernel compile_kernel_to_spirv(const ir::Kernel& kernel, const SpirvTarget& target_in,
                                            SpirvTimings* timings) {
  // A kernel's own workgroup size (its document option) wins over the program's.
  SpirvTarget target = target_in;
  if (kernel.workgroup_size > 0)
    target.workgroup_size = static_cast<uint32_t>(kernel.workgroup_size);
  if (target.spirv_version < kSpirv1_3) target.features &= kSpirv1_0Requirements;
  CompiledSpirvKernel out;
  KernelPlan plan = plan_kernel(kernel, target);
  out.kernel.bindings = plan.bindings;
  out.kernel.args_in_push_constants = plan.push_constants;
  std::set<std::string> notes;
  size_t index = 0;
  for (auto& inst : kernel.body->insts) {
    if (inst->op != Op::Offload) continue;
    auto t0 = Clock::now();
    TaskEmitter emitter(kernel, plan, target, *inst, index, &out.kernel.assert_messages, &notes,
                        &out.kernel.requirements);
    SpirvTask task = emitter.emit();
    if (uint32_t missing = out.kernel.requirements & ~target.features) {
      uint32_t bit = missing & (~missing + 1);
      throw Error(Place{"", kernel.abi.name, node_needing(kernel, bit), ""},
                  "kernel '" + kernel.abi.name + "' needs " + describe_requirements(missing) +
                      lacks(target, missing) + "; use narrower types, or run on the CPU");
    }
    if (timings) timings->emit_ms += ms_since(t0);
    auto t1 = Clock::now();
    std::string problems = validate_spirv(task.spirv);
    if (timings) timings->validate_ms += ms_since(t1);
    if (!problems.empty())
      throw InternalError(Place{"", kernel.abi.name, -1, ""},
                          "task " + std::to_string(index) + " of kernel '" + kernel.abi.name +
                              "' is not valid SPIR-V:\n" + problems);
    if (target.optimize) {
      auto t2 = Clock::now();
      task.spirv = optimize_spirv(task.spirv, target.optimizer_passes);
      if (timings) timings->optimize_ms += ms_since(t2);
    }
    TaskDesc desc;
    desc.kind = task.kind;
    desc.symbol = "main";
    desc.dims = static_cast<uint8_t>(std::max<size_t>(task.begin.size(), 1));
    if (inst->task_kind() == ir::TaskKind::RangeFor) desc.dims = static_cast<uint8_t>(inst->dims());
    out.abi.tasks.push_back(desc);
    out.kernel.tasks.push_back(std::move(task));
    ++index;
  }
  std::vector<TaskDesc> tasks = std::move(out.abi.tasks);
  out.abi = kernel.abi;
  out.abi.tasks = std::move(tasks);
  for (const std::string& n : notes) out.notes.push_back("kernel '" + kernel.abi.name + "': " + n);
  return out;
}

}  // namespace loom::codegen
