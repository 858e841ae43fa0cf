// How the editor's viewport shows a program: one resource drawn as points, as an image or as
// the vertices of a mesh. Editor-only like the layout: it never changes a kernel's content
// key, and the document keeps it so a sample opens showing what it is about.
#pragma once

#include <string>

namespace loom::graph {

struct Document;

struct ViewSettings {
  std::string show;  // a field, ndarray or texture of the document; "" when unset
  std::string as;    // "points", "image" or "mesh"
  std::string
      color_by;      // points: a field or ndarray with one element per point (vectors by length)
  std::string mesh;  // mesh: an OBJ file, relative to the document's folder
  float point_size = 0;  // points: diameter in pixels, 0 < size <= 64; 0 when the editor chooses

  bool empty() const { return show.empty(); }
  friend bool operator==(const ViewSettings&, const ViewSettings&) = default;
};

// What is wrong with `view` for `doc`, "" when nothing: `*key` is set to the key at fault
// ("show", "as", "color_by", "mesh", "point_size"). Points need a vector of 2 or 3
// components; images a texture or a 2-d field or ndarray; meshes a vector of 2 or 3
// components and an OBJ file; color_by a resource with as many elements as `show`.
std::string view_problem(const Document& doc, const ViewSettings& view, std::string* key);

}  // namespace loom::graph
