// What the viewport can show of a document, and the host data it draws: the ways each
// resource can be shown (the viewport's menu), the view chosen when the document names none,
// and a resource's values read from the running program as floats for the scene renderer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "engine_plugin/include/loom/program.h"

namespace loom::editor {

// Every valid way of showing the document's resources: 2-/3-vectors as points, 2-d arrays
// and textures as images, in declaration order; the document's own view first.
std::vector<graph::ViewSettings> view_choices(const graph::Document& doc);
// The document's view, else its first choice; empty when there is nothing to show.
graph::ViewSettings default_view(const graph::Document& doc);
// "x as points, coloured by v"
std::string view_label(const graph::ViewSettings& view);

// Points (or a mesh's vertices): `dims` floats per point, and one scalar per point when the
// view colours them (a vector's length).
struct PointsSnapshot {
  std::vector<float> positions;
  int dims = 3;
  size_t count = 0;
  std::vector<float> scalars;
};
// An image: texels x fastest, then y, then z. 2-d arrays give r32f (scalars), rg32f
// (2-vectors) or rgba32f (3- and 4-vectors, alpha 1 for 3); element [i, j] is texel (i, j).
struct ImageSnapshot {
  TextureFormat format = TextureFormat::R32F;
  std::vector<uint8_t> texels;
  uint32_t width = 0, height = 0, depth = 1;
};

// Read the program's current values. Throw loom::Error naming the resource when it cannot be
// shown that way (the program's resource differs from what the view expects).
PointsSnapshot read_points(Program& program, const graph::ViewSettings& view);
ImageSnapshot read_image(Program& program, const graph::ViewSettings& view);

}  // namespace loom::editor
