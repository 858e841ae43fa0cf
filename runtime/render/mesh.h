// Triangle meshes from OBJ files (tinyobjloader). Vertices keep the file's `v` order, so a
// field or ndarray with as many points can move them (a cloth simulated on the grid of
// assets/meshes/cloth_grid.obj); faces are triangulated, texture coordinates, normals and
// materials are not used (normals are recomputed from the positions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace loom::render {

struct Mesh {
  std::string name;               // the file it was read from, for messages
  std::vector<float> positions;   // x, y, z per vertex
  std::vector<uint32_t> indices;  // three per triangle, counter-clockwise seen from the front

  size_t vertex_count() const { return positions.size() / 3; }
  size_t triangle_count() const { return indices.size() / 3; }

  // Throws loom::Error naming `path` when it cannot be read, is not a valid OBJ file or has
  // no triangles.
  static Mesh load_obj(const std::string& path);
};

// Area-weighted vertex normals (x, y, z per vertex); a vertex on no triangle gets (0, 0, 0).
void vertex_normals(const float* positions, size_t vertex_count,
                    const std::vector<uint32_t>& indices, float* normals);

}  // namespace loom::render
