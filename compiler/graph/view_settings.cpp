#include "compiler/graph/view_settings.h"

#include "compiler/graph/document.h"

namespace loom::graph {

namespace {

// The element type and shape of a field or ndarray of the document; false for anything else.
bool array_of(const Document& doc, const std::string& name, ValueType* elem,
              const std::vector<int64_t>** shape) {
  if (const FieldDesc* f = doc.field(name)) {
    *elem = f->elem;
    *shape = &f->shape;
    return true;
  }
  if (const NdarrayDecl* n = doc.ndarray(name)) {
    *elem = n->elem;
    *shape = &n->shape;
    return true;
  }
  return false;
}

int64_t count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

}  // namespace

std::string view_problem(const Document& doc, const ViewSettings& view, std::string* key) {
  auto problem = [&](const char* k, std::string why) {
    *key = k;
    return why;
  };
  if (view.show.empty()) return problem("show", "names no resource");
  ValueType elem;
  const std::vector<int64_t>* shape = nullptr;
  bool is_array = array_of(doc, view.show, &elem, &shape);
  const TextureDecl* texture = doc.texture(view.show);
  if (!is_array && !texture)
    return problem("show", "'" + view.show + "' is no field, ndarray or texture of the document");
  bool vector23 = is_array && elem.is_vector() && (elem.rows == 2 || elem.rows == 3);
  if (view.as == "points" || view.as == "mesh") {
    if (!vector23)
      return problem("as", "'" + view.show + "' is " +
                               (texture ? std::string("a texture") : value_type_name(elem)) + "; " +
                               view.as + " need a field or ndarray of 2- or 3-component vectors");
  } else if (view.as == "image") {
    if (is_array && shape->size() != 2)
      return problem("as", "'" + view.show + "' has " + std::to_string(shape->size()) +
                               " dimensions; an image needs a 2-d field or ndarray, or a texture");
    if (is_array && elem.is_matrix())
      return problem("as", "'" + view.show + "' holds matrices; an image needs scalars or vectors");
  } else {
    return problem("as", "expected \"points\", \"image\" or \"mesh\", found '" + view.as + "'");
  }
  if (!view.color_by.empty()) {
    if (view.as != "points") return problem("color_by", "only points are coloured by a resource");
    ValueType by;
    const std::vector<int64_t>* by_shape = nullptr;
    if (!array_of(doc, view.color_by, &by, &by_shape))
      return problem("color_by", "'" + view.color_by + "' is no field or ndarray of the document");
    if (by.is_matrix())
      return problem("color_by",
                     "'" + view.color_by + "' holds matrices; colours need scalars or vectors");
    if (count(*by_shape) != count(*shape))
      return problem("color_by", "'" + view.color_by + "' has " + std::to_string(count(*by_shape)) +
                                     " elements but '" + view.show + "' has " +
                                     std::to_string(count(*shape)));
  }
  if (view.as == "mesh" && view.mesh.empty())
    return problem("mesh", "a mesh view needs an OBJ file");
  if (view.as != "mesh" && !view.mesh.empty())
    return problem("mesh", "only a mesh view takes an OBJ file");
  if (view.point_size != 0) {
    if (view.as != "points") return problem("point_size", "only points have a size");
    if (!(view.point_size > 0 && view.point_size <= 64))
      return problem("point_size", "expected a size above 0 and at most 64 pixels");
  }
  return "";
}

}  // namespace loom::graph
