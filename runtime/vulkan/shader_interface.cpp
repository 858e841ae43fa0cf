#include "runtime/vulkan/shader_interface.h"

#include <spirv/unified1/spirv.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "runtime/common/error.h"

namespace loom::vk {

const char* descriptor_shape_text(DescriptorShape shape) {
  switch (shape) {
    case DescriptorShape::UniformBuffer: return "a uniform buffer";
    case DescriptorShape::StorageBuffer: return "a storage buffer";
    case DescriptorShape::StorageImage: return "a storage image";
    case DescriptorShape::SampledImage: return "a sampled image";
    case DescriptorShape::Sampler: return "a sampler";
    case DescriptorShape::Other: return "a descriptor Loom never binds";
  }
  return "?";
}

namespace {

constexpr uint32_t kMagic = 0x07230203;
constexpr size_t kHeaderWords = 5;
// Deeper type nesting than this is refused (sizes are computed recursively).
constexpr int kMaxTypeDepth = 32;
// Sizes saturate here: far beyond any limit they are compared with, and no overflow.
constexpr uint64_t kHugeBytes = uint64_t{1} << 48;

uint64_t saturating_add(uint64_t a, uint64_t b) { return std::min(a + b, kHugeBytes); }
uint64_t saturating_mul(uint64_t a, uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kHugeBytes / b ? kHugeBytes : std::min(a * b, kHugeBytes);
}

std::string op_text(uint32_t op) {
  switch (static_cast<spv::Op>(op)) {
    case spv::OpName: return "OpName";
    case spv::OpExtension: return "OpExtension";
    case spv::OpExtInstImport: return "OpExtInstImport";
    case spv::OpEntryPoint: return "OpEntryPoint";
    case spv::OpExecutionMode: return "OpExecutionMode";
    case spv::OpExecutionModeId: return "OpExecutionModeId";
    case spv::OpCapability: return "OpCapability";
    case spv::OpTypeInt: return "OpTypeInt";
    case spv::OpTypeFloat: return "OpTypeFloat";
    case spv::OpTypeVector: return "OpTypeVector";
    case spv::OpTypeMatrix: return "OpTypeMatrix";
    case spv::OpTypeImage: return "OpTypeImage";
    case spv::OpTypeArray: return "OpTypeArray";
    case spv::OpTypeRuntimeArray: return "OpTypeRuntimeArray";
    case spv::OpTypeStruct: return "OpTypeStruct";
    case spv::OpTypePointer: return "OpTypePointer";
    case spv::OpConstant: return "OpConstant";
    case spv::OpSpecConstant: return "OpSpecConstant";
    case spv::OpConstantComposite: return "OpConstantComposite";
    case spv::OpSpecConstantComposite: return "OpSpecConstantComposite";
    case spv::OpVariable: return "OpVariable";
    case spv::OpDecorate: return "OpDecorate";
    case spv::OpMemberDecorate: return "OpMemberDecorate";
    case spv::OpFunction: return "OpFunction";
    default: return "opcode " + std::to_string(op);
  }
}

[[noreturn]] void fail(const std::string& why) { throw Error(Place{}, why, ErrorKind::Corrupt); }

// One instruction: its opcode and its words (words[0] is the opcode word), within bounds.
struct Instruction {
  uint32_t op = 0;
  size_t at = 0;  // word index in the module
  std::span<const uint32_t> words;

  [[noreturn]] void fail(const std::string& why) const {
    vk::fail("word " + std::to_string(at) + ": " + op_text(op) + " " + why);
  }
  // Word i, which the instruction must have.
  uint32_t word(size_t i) const {
    if (i >= words.size())
      fail("has " + std::to_string(words.size()) + " words; it needs at least " +
           std::to_string(i + 1));
    return words[i];
  }
  // The nul-terminated literal string starting at word `first`.
  std::string string(size_t first) const {
    std::string s;
    for (size_t i = first; i < words.size(); ++i)
      for (int byte = 0; byte < 4; ++byte) {
        char c = static_cast<char>((words[i] >> (8 * byte)) & 0xff);
        if (c == '\0') return s;
        s += c;
      }
    fail("has a string that does not end within the instruction");
  }
};

struct Type {
  uint32_t op = 0;
  std::vector<uint32_t> operands;  // the words after the result id
};

struct Decorations {
  std::optional<uint32_t> set, binding, builtin, array_stride;
  bool block = false, buffer_block = false;
};

struct MemberDecorations {
  std::optional<uint32_t> offset, matrix_stride;
};

struct Variable {
  uint32_t type = 0, id = 0, storage = 0;
};

struct Mode {
  uint32_t function = 0, mode = 0;
  uint32_t operands[3] = {0, 0, 0};
};

class Reader {
 public:
  explicit Reader(std::span<const uint32_t> words) : words_(words) {}

  ShaderInterface read() {
    if (words_.size() < kHeaderWords)
      fail("a SPIR-V module begins with a header of 5 words; this one has " +
           std::to_string(words_.size()) + " words");
    if (words_[0] != kMagic) fail("word 0: not the SPIR-V magic number");
    out_.version = words_[1];
    for (size_t at = kHeaderWords; at < words_.size();) {
      uint32_t count = words_[at] >> 16, op = words_[at] & 0xffff;
      if (count == 0)
        fail("word " + std::to_string(at) + ": " + op_text(op) + " has a word count of 0");
      if (count > words_.size() - at)
        fail("word " + std::to_string(at) + ": " + op_text(op) + " claims " +
             std::to_string(count) + " words; the module has " +
             std::to_string(words_.size() - at) + " left");
      visit(Instruction{op, at, words_.subspan(at, count)});
      at += count;
    }
    resolve_local_sizes();
    resolve_variables();
    return std::move(out_);
  }

 private:
  void define(const Instruction& in, uint32_t id) {
    if (!defined_.insert(id).second) in.fail("defines id %" + std::to_string(id) + " again");
  }

  void visit(const Instruction& in) {
    switch (static_cast<spv::Op>(in.op)) {
      case spv::OpCapability: out_.capabilities.push_back(in.word(1)); break;
      case spv::OpExtension: out_.extensions.push_back(in.string(1)); break;
      case spv::OpExtInstImport:
        define(in, in.word(1));
        out_.instruction_sets.push_back(in.string(2));
        break;
      case spv::OpEntryPoint: {
        ShaderEntryPoint e;
        e.model = in.word(1);
        e.function = in.word(2);
        e.name = in.string(3);
        out_.entry_points.push_back(std::move(e));
        break;
      }
      case spv::OpExecutionMode:
      case spv::OpExecutionModeId: {
        Mode m{in.word(1), in.word(2)};
        bool local_size =
            (in.op == spv::OpExecutionMode && m.mode == spv::ExecutionModeLocalSize) ||
            (in.op == spv::OpExecutionModeId && m.mode == spv::ExecutionModeLocalSizeId);
        if (!local_size) break;
        for (int i = 0; i < 3; ++i) m.operands[i] = in.word(3 + static_cast<size_t>(i));
        modes_.push_back(m);
        break;
      }
      case spv::OpName: names_[in.word(1)] = in.string(2); break;
      case spv::OpDecorate: decorate(in); break;
      case spv::OpMemberDecorate: {
        MemberDecorations& d = members_[{in.word(1), in.word(2)}];
        uint32_t which = in.word(3);
        if (which == spv::DecorationOffset) d.offset = in.word(4);
        if (which == spv::DecorationMatrixStride) d.matrix_stride = in.word(4);
        break;
      }
      case spv::OpDecorationGroup:
      case spv::OpGroupDecorate:
      case spv::OpGroupMemberDecorate:
        in.fail("(a decoration group): descriptors must be decorated directly");
      case spv::OpTypeVoid:
      case spv::OpTypeBool:
      case spv::OpTypeInt:
      case spv::OpTypeFloat:
      case spv::OpTypeVector:
      case spv::OpTypeMatrix:
      case spv::OpTypeImage:
      case spv::OpTypeSampler:
      case spv::OpTypeSampledImage:
      case spv::OpTypeArray:
      case spv::OpTypeRuntimeArray:
      case spv::OpTypeStruct:
      case spv::OpTypeOpaque:
      case spv::OpTypePointer:
      case spv::OpTypeFunction: {
        uint32_t id = in.word(1);
        define(in, id);
        types_[id] = Type{in.op, {in.words.begin() + 2, in.words.end()}};
        break;
      }
      case spv::OpConstant:
      case spv::OpSpecConstant: {
        uint32_t id = in.word(2);
        define(in, id);
        uint64_t low = in.word(3), high = in.words.size() > 4 ? in.words[4] : 0;
        scalars_[id] = low | (high << 32);
        break;
      }
      case spv::OpConstantNull:
        define(in, in.word(2));
        scalars_[in.word(2)] = 0;
        break;
      case spv::OpConstantComposite:
      case spv::OpSpecConstantComposite: {
        uint32_t id = in.word(2);
        define(in, id);
        composites_[id] = {in.words.begin() + 3, in.words.end()};
        break;
      }
      case spv::OpVariable:
        // Variables inside functions are the Function storage class: nothing a pipeline binds.
        if (in_functions_) break;
        define(in, in.word(2));
        variables_.push_back({in.word(1), in.word(2), in.word(3)});
        break;
      case spv::OpFunction: in_functions_ = true; break;
      default: break;
    }
  }

  void decorate(const Instruction& in) {
    uint32_t target = in.word(1), which = in.word(2);
    Decorations& d = decorations_[target];
    auto once = [&](std::optional<uint32_t>& slot, const char* name) {
      if (slot)
        in.fail("decorates %" + std::to_string(target) + " with " + name + " a second time");
      slot = in.word(3);
    };
    switch (static_cast<spv::Decoration>(which)) {
      case spv::DecorationDescriptorSet: once(d.set, "DescriptorSet"); break;
      case spv::DecorationBinding: once(d.binding, "Binding"); break;
      case spv::DecorationBuiltIn: once(d.builtin, "BuiltIn"); break;
      case spv::DecorationArrayStride: once(d.array_stride, "ArrayStride"); break;
      case spv::DecorationBlock: d.block = true; break;
      case spv::DecorationBufferBlock: d.buffer_block = true; break;
      default: break;
    }
  }

  const Type& type(uint32_t id) const {
    auto it = types_.find(id);
    if (it == types_.end()) fail("type %" + std::to_string(id) + " is used but not defined");
    return it->second;
  }
  static uint32_t operand(const Type& t, size_t i, uint32_t id) {
    if (i >= t.operands.size())
      fail(op_text(t.op) + " %" + std::to_string(id) + " lacks operand " + std::to_string(i));
    return t.operands[i];
  }
  uint64_t scalar_constant(uint32_t id, const std::string& what) const {
    auto it = scalars_.find(id);
    if (it == scalars_.end())
      fail(what + " %" + std::to_string(id) + " is not an integer constant of the module");
    return it->second;
  }

  // Bytes of a value of type `id`: explicit offsets and strides where the module gives them
  // (blocks), the natural size otherwise (workgroup memory); runtime arrays count 0. Each
  // type's size is computed once, so types that share members cost their number, not the
  // number of paths through them.
  uint64_t size_of(uint32_t id, int depth = 0) const {
    if (depth > kMaxTypeDepth)
      fail("type %" + std::to_string(id) + " nests more than " + std::to_string(kMaxTypeDepth) +
           " levels deep");
    if (auto known = sizes_.find(id); known != sizes_.end()) return known->second;
    uint64_t bytes = compute_size(id, depth);
    sizes_[id] = bytes;
    return bytes;
  }

  uint64_t compute_size(uint32_t id, int depth) const {
    const Type& t = type(id);
    switch (static_cast<spv::Op>(t.op)) {
      case spv::OpTypeBool: return 4;
      case spv::OpTypeInt:
      case spv::OpTypeFloat: return (uint64_t{operand(t, 0, id)} + 7) / 8;
      case spv::OpTypeVector:
      case spv::OpTypeMatrix:
        return saturating_mul(operand(t, 1, id), size_of(operand(t, 0, id), depth + 1));
      case spv::OpTypeArray: {
        uint64_t length = scalar_constant(operand(t, 1, id), "the length of array");
        auto d = decorations_.find(id);
        uint64_t stride = d != decorations_.end() && d->second.array_stride
                              ? *d->second.array_stride
                              : size_of(operand(t, 0, id), depth + 1);
        return saturating_mul(length, stride);
      }
      case spv::OpTypeStruct: {
        uint64_t end = 0, next = 0;
        for (uint32_t m = 0; m < t.operands.size(); ++m) {
          auto d = members_.find({id, m});
          uint64_t at = d != members_.end() && d->second.offset ? *d->second.offset : next;
          uint64_t bytes = size_of(t.operands[m], depth + 1);
          if (d != members_.end() && d->second.matrix_stride &&
              type(t.operands[m]).op == spv::OpTypeMatrix)
            bytes = std::max(bytes, saturating_mul(operand(type(t.operands[m]), 1, t.operands[m]),
                                                   *d->second.matrix_stride));
          next = saturating_add(at, bytes);
          end = std::max(end, next);
        }
        return end;
      }
      case spv::OpTypePointer: return 8;
      default: return 0;  // runtime arrays, opaque types
    }
  }

  uint32_t local_size_constant(uint32_t id) const {
    uint64_t v = scalar_constant(id, "workgroup size");
    return static_cast<uint32_t>(std::min<uint64_t>(v, UINT32_MAX));
  }

  void resolve_local_sizes() {
    std::optional<uint32_t> builtin;  // the id decorated BuiltIn WorkgroupSize
    for (const auto& [id, d] : decorations_) {
      if (!d.builtin || *d.builtin != spv::BuiltInWorkgroupSize) continue;
      if (builtin) fail("two ids are decorated as the WorkgroupSize built-in");
      builtin = id;
    }
    for (ShaderEntryPoint& e : out_.entry_points) {
      for (const Mode& m : modes_) {
        if (m.function != e.function) continue;
        for (int i = 0; i < 3; ++i)
          e.local_size[i] = m.mode == spv::ExecutionModeLocalSize
                                ? m.operands[i]
                                : local_size_constant(m.operands[i]);
      }
      if (!builtin) continue;
      auto c = composites_.find(*builtin);
      if (c == composites_.end() || c->second.size() != 3)
        fail("the WorkgroupSize built-in %" + std::to_string(*builtin) +
             " is not a constant of three components");
      for (int i = 0; i < 3; ++i) e.local_size[i] = local_size_constant(c->second[i]);
    }
  }

  void resolve_variables() {
    for (const Variable& v : variables_) {
      switch (static_cast<spv::StorageClass>(v.storage)) {
        case spv::StorageClassUniformConstant:
        case spv::StorageClassUniform:
        case spv::StorageClassStorageBuffer: out_.resources.push_back(resource(v)); break;
        case spv::StorageClassPushConstant:
          out_.push_constant_blocks.push_back(size_of(pointee(v)));
          break;
        case spv::StorageClassWorkgroup:
          out_.workgroup_bytes = saturating_add(out_.workgroup_bytes, size_of(pointee(v)));
          break;
        default: break;
      }
    }
  }

  uint32_t pointee(const Variable& v) const {
    const Type& p = type(v.type);
    if (p.op != spv::OpTypePointer)
      fail("variable %" + std::to_string(v.id) + " has a type that is not a pointer");
    return operand(p, 1, v.type);
  }

  ShaderResource resource(const Variable& v) const {
    ShaderResource r;
    r.id = v.id;
    if (auto n = names_.find(v.id); n != names_.end()) r.name = n->second;
    if (auto d = decorations_.find(v.id); d != decorations_.end()) {
      r.has_set = d->second.set.has_value();
      r.has_binding = d->second.binding.has_value();
      r.set = d->second.set.value_or(0);
      r.binding = d->second.binding.value_or(0);
    }
    uint32_t id = pointee(v);
    const Type& t = type(id);
    auto other = [&](const std::string& what) {
      r.shape = DescriptorShape::Other;
      r.other = what;
      return r;
    };
    switch (static_cast<spv::Op>(t.op)) {
      case spv::OpTypeStruct: {
        auto d = decorations_.find(id);
        bool block = d != decorations_.end() && d->second.block;
        bool buffer_block = d != decorations_.end() && d->second.buffer_block;
        if ((v.storage == spv::StorageClassStorageBuffer && block) ||
            (v.storage == spv::StorageClassUniform && buffer_block)) {
          r.shape = DescriptorShape::StorageBuffer;
          return r;
        }
        if (v.storage == spv::StorageClassUniform && block) {
          r.shape = DescriptorShape::UniformBuffer;
          r.block_bytes = size_of(id);
          return r;
        }
        return other("a struct that is not a block of its storage class");
      }
      case spv::OpTypeImage: {
        r.image_dim = operand(t, 1, id);
        r.image_format = operand(t, 6, id);
        if (r.image_dim == spv::DimBuffer) return other("a texel buffer");
        if (r.image_dim == spv::DimSubpassData) return other("an input attachment");
        if (operand(t, 3, id) != 0) return other("an arrayed image");
        if (operand(t, 4, id) != 0) return other("a multisampled image");
        if (operand(t, 5, id) == 2) r.shape = DescriptorShape::StorageImage;
        if (operand(t, 5, id) == 1) r.shape = DescriptorShape::SampledImage;
        if (r.shape == DescriptorShape::Other) return other("an image of undeclared use");
        return r;
      }
      case spv::OpTypeSampler: r.shape = DescriptorShape::Sampler; return r;
      case spv::OpTypeSampledImage: return other("a combined image sampler");
      case spv::OpTypeArray:
      case spv::OpTypeRuntimeArray:
        return other("an array of descriptors (Loom binds one per binding)");
      default: return other("a variable of " + op_text(t.op));
    }
  }

  std::span<const uint32_t> words_;
  ShaderInterface out_;
  bool in_functions_ = false;
  std::unordered_set<uint32_t> defined_;
  std::unordered_map<uint32_t, Type> types_;
  std::unordered_map<uint32_t, uint64_t> scalars_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> composites_;
  std::unordered_map<uint32_t, Decorations> decorations_;
  std::map<std::pair<uint32_t, uint32_t>, MemberDecorations> members_;
  std::unordered_map<uint32_t, std::string> names_;
  std::vector<Variable> variables_;
  std::vector<Mode> modes_;
  mutable std::unordered_map<uint32_t, uint64_t> sizes_;
};

}  // namespace

ShaderInterface read_shader_interface(std::span<const uint32_t> words) {
  return Reader(words).read();
}

}  // namespace loom::vk
