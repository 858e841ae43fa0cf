// Triangle meshes from OBJ files (tinyobjloader): vertices with normals for static meshes,
// and the triangles as indices of the file's `v` lines for meshes whose positions come from
// elsewhere (a simulated field holding one position per `v` line, in file order).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace host_sample {

struct ObjMesh {
  size_t position_count = 0;               // `v` lines in the file
  std::vector<uint32_t> position_indices;  // per triangle corner: its `v` line (0-based)
  std::vector<float> vertices;             // position xyz, normal xyz per distinct corner
  std::vector<uint32_t> indices;           // per triangle corner: into `vertices`
};

// Throws std::runtime_error naming `path` for a missing or malformed file or one with no
// triangles. Corners without a normal get the area-weighted normal of their faces.
ObjMesh load_obj(const std::string& path);

}  // namespace host_sample
