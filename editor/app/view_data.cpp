#include "editor/app/view_data.h"

#include <cmath>
#include <cstring>

#include "runtime/common/error.h"

namespace loom::editor {

namespace {

using graph::ViewSettings;

ViewSettings make(const std::string& show, const char* as) {
  ViewSettings v;
  v.show = show;
  v.as = as;
  return v;
}

bool valid(const graph::Document& doc, const ViewSettings& v) {
  std::string key;
  return graph::view_problem(doc, v, &key).empty();
}

}  // namespace

std::vector<ViewSettings> view_choices(const graph::Document& doc) {
  std::vector<ViewSettings> out;
  auto add = [&](const ViewSettings& v) {
    if (!valid(doc, v)) return;
    for (const ViewSettings& seen : out)
      if (seen == v) return;
    out.push_back(v);
  };
  if (!doc.view.empty()) add(doc.view);
  auto both = [&](const std::string& name) {  // add() keeps the ways that suit the type
    add(make(name, "points"));
    add(make(name, "image"));
  };
  for (const FieldDesc& f : doc.fields) both(f.name);
  for (const graph::NdarrayDecl& n : doc.ndarrays) both(n.name);
  for (const graph::TextureDecl& t : doc.textures) add(make(t.name, "image"));
  return out;
}

ViewSettings default_view(const graph::Document& doc) {
  std::vector<ViewSettings> all = view_choices(doc);
  return all.empty() ? ViewSettings{} : all.front();
}

std::string view_label(const ViewSettings& v) {
  if (v.empty()) return "nothing";
  std::string s = v.show + " as " + (v.as == "mesh" ? "a mesh" : v.as);
  if (!v.color_by.empty()) s += ", coloured by " + v.color_by;
  return s;
}

PointsSnapshot read_points(Program& program, const ViewSettings& view) {
  ArrayView a = program.array(view.show);
  if (a.components != 2 && a.components != 3)
    throw Error(Place{program.document().path}, "the viewport shows '" + view.show + "' as " + view.as +
                                                    " but its elements have " + std::to_string(a.components) +
                                                    " components (2 or 3 expected)");
  PointsSnapshot s;
  s.dims = a.components;
  s.count = a.elements();
  s.positions.resize(s.count * static_cast<size_t>(s.dims));
  for (size_t e = 0; e < s.count; ++e)
    for (int c = 0; c < s.dims; ++c) s.positions[e * static_cast<size_t>(s.dims) + static_cast<size_t>(c)] = static_cast<float>(a.component(e, c));
  if (!view.color_by.empty()) {
    ArrayView by = program.array(view.color_by);
    if (by.elements() != s.count)
      throw Error(Place{program.document().path}, "the viewport colours '" + view.show + "' by '" + view.color_by + "', which has " +
                                                      std::to_string(by.elements()) + " elements for " +
                                                      std::to_string(s.count) + " points");
    s.scalars.resize(s.count);
    for (size_t e = 0; e < s.count; ++e) {
      double sum = 0;
      for (int c = 0; c < by.components; ++c) {
        double x = by.component(e, c);
        sum += x * x;
      }
      s.scalars[e] = static_cast<float>(by.components == 1 ? by.component(e, 0) : std::sqrt(sum));
    }
  }
  return s;
}

ImageSnapshot read_image(Program& program, const ViewSettings& view) {
  ImageSnapshot img;
  const graph::Document& doc = program.document();
  if (doc.texture(view.show)) {
    TextureView t = program.texture(view.show);
    img.format = t.format;
    img.width = static_cast<uint32_t>(t.size.at(0));
    img.height = static_cast<uint32_t>(t.size.at(1));
    img.depth = t.size.size() > 2 ? static_cast<uint32_t>(t.size[2]) : 1;
    img.texels.assign(t.data, t.data + t.bytes);
    return img;
  }
  ArrayView a = program.array(view.show);
  if (a.shape.size() != 2 || a.components > 4)
    throw Error(Place{doc.path}, "the viewport shows '" + view.show + "' as an image but it is not a 2-d array of scalars or vectors");
  img.width = static_cast<uint32_t>(a.shape[0]);
  img.height = static_cast<uint32_t>(a.shape[1]);
  int channels = a.components == 1 ? 1 : a.components == 2 ? 2 : 4;
  img.format = channels == 1 ? TextureFormat::R32F : channels == 2 ? TextureFormat::RG32F : TextureFormat::RGBA32F;
  size_t w = img.width, h = img.height;
  std::vector<float> texels(w * h * static_cast<size_t>(channels), 1.0f);
  for (size_t i = 0; i < w; ++i)
    for (size_t j = 0; j < h; ++j) {
      size_t e = i * h + j, t = (j * w + i) * static_cast<size_t>(channels);
      for (int c = 0; c < a.components; ++c) texels[t + static_cast<size_t>(c)] = static_cast<float>(a.component(e, c));
    }
  img.texels.resize(texels.size() * sizeof(float));
  std::memcpy(img.texels.data(), texels.data(), img.texels.size());
  return img;
}

}  // namespace loom::editor
