// What a SPIR-V compute shader asks of the pipeline it runs in, read from its words: its entry
// points and workgroup sizes, the capabilities, extensions and instruction sets it declares,
// every resource variable (descriptor set, binding, what kind of descriptor), its push-constant
// blocks and its workgroup memory. shader_check.h holds this against the pipeline layout Loom
// builds for a kernel and against the device.
//
// A reader of untrusted bytes (AOT module blobs, offline-cache entries): every instruction's
// word count is checked against the words present before it is read, nothing is allocated by
// a count the module claims (only per instruction present), type sizes are computed with a
// depth limit and saturate, and anything malformed is a loom::Error saying at which word.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace loom::vk {

// What kind of descriptor a resource variable needs; Other is anything Loom never binds.
enum class DescriptorShape : uint8_t {
  UniformBuffer,
  StorageBuffer,
  StorageImage,
  SampledImage,
  Sampler,
  Other,
};
// "a uniform buffer", "a storage buffer", ...
const char* descriptor_shape_text(DescriptorShape shape);

// A module-scope variable of the UniformConstant, Uniform or StorageBuffer storage class.
struct ShaderResource {
  uint32_t id = 0;
  std::string name;  // its OpName, "" without one
  bool has_set = false, has_binding = false;
  uint32_t set = 0, binding = 0;
  DescriptorShape shape = DescriptorShape::Other;
  std::string other;          // for Other: what it is ("a combined image sampler")
  uint32_t image_dim = 0;     // images: spv::Dim
  uint32_t image_format = 0;  // images: spv::ImageFormat
  uint64_t block_bytes = 0;   // uniform buffers: the block's size
};

struct ShaderEntryPoint {
  uint32_t model = 0;     // spv::ExecutionModel
  uint32_t function = 0;  // the entry function's id
  std::string name;
  // LocalSize, LocalSizeId or a WorkgroupSize built-in (which wins); all 0 when none is given.
  uint32_t local_size[3] = {0, 0, 0};
};

struct ShaderInterface {
  uint32_t version = 0;                // header word 1: 0x00010300 is SPIR-V 1.3
  std::vector<uint32_t> capabilities;  // spv::Capability, in module order
  std::vector<std::string> extensions;
  std::vector<std::string> instruction_sets;  // OpExtInstImport names
  std::vector<ShaderEntryPoint> entry_points;
  std::vector<ShaderResource> resources;
  std::vector<uint64_t> push_constant_blocks;  // bytes of each PushConstant variable
  uint64_t workgroup_bytes = 0;                // all Workgroup variables together
};

// Throws loom::Error (no place; the caller names kernel and task) on a module that is not
// well-formed: a header short of five words or with another magic, an instruction whose word
// count is 0 or runs past the end, an unterminated string, an id defined twice, a type or
// constant used but not defined, a descriptor decoration given twice, decoration groups.
ShaderInterface read_shader_interface(std::span<const uint32_t> words);

}  // namespace loom::vk
