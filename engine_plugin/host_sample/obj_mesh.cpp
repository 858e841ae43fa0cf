#include "obj_mesh.h"

#include <tiny_obj_loader.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

namespace host_sample {

ObjMesh load_obj(const std::string& path) {
  tinyobj::ObjReaderConfig config;
  config.triangulate = true;
  config.mtl_search_path = "";  // materials are not used
  tinyobj::ObjReader reader;
  if (!reader.ParseFromFile(path, config)) {
    std::string why = reader.Error();
    while (!why.empty() && why.back() == '\n') why.pop_back();
    throw std::runtime_error(path +
                             ": cannot read the OBJ mesh: " + (why.empty() ? "parse error" : why));
  }
  const tinyobj::attrib_t& attrib = reader.GetAttrib();
  ObjMesh mesh;
  mesh.position_count = attrib.vertices.size() / 3;
  for (const tinyobj::shape_t& shape : reader.GetShapes())
    for (const tinyobj::index_t& corner : shape.mesh.indices) {
      if (corner.vertex_index < 0 ||
          static_cast<size_t>(corner.vertex_index) >= mesh.position_count)
        throw std::runtime_error(path + ": a face uses vertex " +
                                 std::to_string(corner.vertex_index + 1) + " of " +
                                 std::to_string(mesh.position_count));
      mesh.position_indices.push_back(static_cast<uint32_t>(corner.vertex_index));
    }
  if (mesh.position_indices.empty() || mesh.position_indices.size() % 3 != 0)
    throw std::runtime_error(path + ": the OBJ mesh has no triangles");

  // Area-weighted vertex normals, for corners the file gives none.
  std::vector<float> smooth(attrib.vertices.size(), 0.0f);
  const float* p = attrib.vertices.data();
  for (size_t t = 0; t < mesh.position_indices.size(); t += 3) {
    const float* a = p + 3 * static_cast<size_t>(mesh.position_indices[t]);
    const float* b = p + 3 * static_cast<size_t>(mesh.position_indices[t + 1]);
    const float* c = p + 3 * static_cast<size_t>(mesh.position_indices[t + 2]);
    float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    float e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                  e1[0] * e2[1] - e1[1] * e2[0]};
    for (size_t k = 0; k < 3; ++k)
      for (int d = 0; d < 3; ++d) smooth[3 * mesh.position_indices[t + k] + d] += n[d];
  }

  std::map<std::pair<int, int>, uint32_t> distinct;
  for (const tinyobj::shape_t& shape : reader.GetShapes())
    for (const tinyobj::index_t& corner : shape.mesh.indices) {
      bool has_normal = corner.normal_index >= 0 &&
                        3 * static_cast<size_t>(corner.normal_index) < attrib.normals.size();
      auto key = std::make_pair(corner.vertex_index, has_normal ? corner.normal_index : -1);
      auto [it, added] = distinct.emplace(key, static_cast<uint32_t>(mesh.vertices.size() / 6));
      if (added) {
        const float* n = has_normal ? &attrib.normals[3 * static_cast<size_t>(corner.normal_index)]
                                    : &smooth[3 * static_cast<size_t>(corner.vertex_index)];
        float length = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        float scale = length > 0 ? 1.0f / length : 0.0f;
        for (int d = 0; d < 3; ++d) mesh.vertices.push_back(p[3 * corner.vertex_index + d]);
        for (int d = 0; d < 3; ++d) mesh.vertices.push_back(n[d] * scale);
      }
      mesh.indices.push_back(it->second);
    }
  return mesh;
}

}  // namespace host_sample
