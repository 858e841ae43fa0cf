// Argpack types and their byte layout, shared by the compiler (member reads compile to
// ArgLoad at a byte offset) and the runtime (member writes land at the same offset).
//
// Layout follows std140 so the same bytes can back a Vulkan uniform buffer unchanged:
// 4-byte scalars aligned to 4, 8-byte scalars to 8, 2-vectors to 2 elements, 3/4-vectors to
// 4 elements, matrices as arrays of column vectors with a 16-byte stride, nested packs and
// structs aligned to 16. bool is stored as a 32-bit integer (0 or 1).
// Resource members take a fixed 32-byte record: u64 handle, then i32 shape[4] (ndarrays)
// or i32 size[3] (textures); the CPU runtime's handle is the data pointer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/common/kernel_abi.h"
#include "runtime/common/scalar.h"

namespace loom {

enum class MemberKind : uint8_t { Value, Struct, Pack, Ndarray, Texture };

struct ArgpackMember {
  std::string name;
  MemberKind kind = MemberKind::Value;
  ValueType type;       // Value: the value; Ndarray: element type
  int ndim = 0;         // Ndarray / Texture
  int nested = -1;      // Struct / Pack: index of the nested type in the same type table
  uint32_t offset = 0;  // filled by layout_argpack_types
  TextureFormat format = TextureFormat::RGBA32F;  // Texture: the texel format code expects
};

// A struct type or an argpack type; both are laid out alike, only packs are parameters.
struct ArgpackType {
  std::string name;
  bool is_pack = true;
  std::vector<ArgpackMember> members;
  uint32_t size = 0;  // filled by layout_argpack_types, a multiple of 16
  uint32_t align = 16;
};

// Byte size and alignment of a value in std140.
uint32_t std140_align(ValueType t);
uint32_t std140_size(ValueType t);
// Byte offset of component (row, col) of a value of type t placed at offset 0.
uint32_t std140_component_offset(ValueType t, int row, int col);

// Fills offsets and sizes of all types (nested types first; throws loom::Error on a cycle
// or a dangling nested index).
void layout_argpack_types(std::vector<ArgpackType>& types);

// Finds a member by dotted path ("element.a", "c.b") starting at type `root`.
// Returns nullptr if absent; *offset receives the absolute byte offset.
const ArgpackMember* find_member(const std::vector<ArgpackType>& types, int root,
                                 const std::string& path, uint32_t* offset);

// The dotted paths of the float ndarray members of type `root`, inside nested structs and
// packs too, in layout order: those that may have an adjoint or a tangent ("inner.vel").
std::vector<std::string> float_ndarray_members(const std::vector<ArgpackType>& types, int root);

// The resource member (ndarray or texture) at absolute byte `offset` of type `root`, looking
// into nested structs and packs; *path receives its dotted path. Nullptr if none starts there.
const ArgpackMember* find_resource_member_at(const std::vector<ArgpackType>& types, int root,
                                             uint32_t offset, std::string* path);

}  // namespace loom
