#include "runtime/render/mesh.h"

#include <tiny_obj_loader.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "runtime/common/error.h"

namespace loom::render {

Mesh Mesh::load_obj(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(Place{path}, "cannot read OBJ mesh: no such file");
  tinyobj::ObjReaderConfig config;
  config.triangulate = true;
  config.vertex_color = false;
  config.mtl_search_path = "";  // materials are not used: never fail on a missing .mtl
  tinyobj::ObjReader reader;
  if (!reader.ParseFromFile(path, config)) {
    std::string why = reader.Error();
    while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) why.pop_back();
    throw Error(Place{path},
                "cannot read OBJ mesh: " + (why.empty() ? std::string("parse error") : why));
  }
  Mesh mesh;
  mesh.name = path;
  const auto& attrib = reader.GetAttrib();
  mesh.positions.assign(attrib.vertices.begin(), attrib.vertices.end());
  size_t n = mesh.vertex_count();
  for (const auto& shape : reader.GetShapes()) {
    size_t at = 0;
    for (size_t f = 0; f < shape.mesh.num_face_vertices.size(); ++f) {
      size_t corners = shape.mesh.num_face_vertices[f];
      if (corners == 3) {
        for (size_t k = 0; k < 3; ++k) {
          int v = shape.mesh.indices[at + k].vertex_index;
          if (v < 0 || static_cast<size_t>(v) >= n)
            throw Error(Place{path}, "OBJ face " + std::to_string(f + 1) + " of '" + shape.name +
                                         "' uses vertex " + std::to_string(v + 1) + " of " +
                                         std::to_string(n));
          mesh.indices.push_back(static_cast<uint32_t>(v));
        }
      }
      at += corners;
    }
  }
  if (mesh.indices.empty()) throw Error(Place{path}, "OBJ mesh has no triangles");
  for (float p : mesh.positions)
    if (!std::isfinite(p))
      throw Error(Place{path}, "OBJ mesh has a vertex that is not a finite number");
  return mesh;
}

void vertex_normals(const float* p, size_t vertex_count, const std::vector<uint32_t>& indices,
                    float* normals) {
  std::fill(normals, normals + vertex_count * 3, 0.0f);
  for (size_t t = 0; t + 2 < indices.size(); t += 3) {
    const float* a = p + size_t{indices[t]} * 3;
    const float* b = p + size_t{indices[t + 1]} * 3;
    const float* c = p + size_t{indices[t + 2]} * 3;
    float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    float e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    // The cross product's length is twice the area: larger triangles weigh more.
    float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                  e1[0] * e2[1] - e1[1] * e2[0]};
    for (int k = 0; k < 3; ++k) {
      float* out = normals + size_t{indices[t + static_cast<size_t>(k)]} * 3;
      out[0] += n[0], out[1] += n[1], out[2] += n[2];
    }
  }
  for (size_t v = 0; v < vertex_count; ++v) {
    float* n = normals + v * 3;
    float len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (len > 0) n[0] /= len, n[1] /= len, n[2] /= len;
  }
}

}  // namespace loom::render
