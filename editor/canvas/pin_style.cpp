#include "editor/canvas/pin_style.h"

namespace loom::editor {

PinCategory pin_category(const graph::PinValue* v) {
  if (!v) return PinCategory::Any;
  switch (v->kind) {
    case graph::PinValue::Kind::Ref: return PinCategory::Ref;
    case graph::PinValue::Kind::Array: return PinCategory::Memory;
    case graph::PinValue::Kind::Texture: return PinCategory::Texture;
    case graph::PinValue::Kind::Value: break;
  }
  if (v->type.is_matrix()) return PinCategory::Matrix;
  if (!v->type.is_scalar()) return PinCategory::Vector;
  if (v->type.scalar == Scalar::Bool) return PinCategory::Bool;
  return is_float(v->type.scalar) ? PinCategory::Float : PinCategory::Int;
}

PinCategory guess_pin_category(const std::string& type, const std::string& pin, bool output) {
  bool index = pin.size() == 2 && pin[0] == 'i' && pin[1] >= '0' && pin[1] <= '3';
  if (output) {
    if (type == "var") return PinCategory::Ref;
    if (index || type == "index" || type == "shape" || pin == "i") return PinCategory::Int;
    if (type == "eq" || type == "ne" || type == "lt" || type == "le" || type == "gt" ||
        type == "ge")
      return PinCategory::Bool;
    if (type == "tex_load" || type == "tex_sample" || type == "vec2" || type == "vec3" ||
        type == "vec4")
      return PinCategory::Vector;
    if (type == "mat2" || type == "mat3" || type == "mat4") return PinCategory::Matrix;
    return PinCategory::Any;
  }
  if (pin == "array") return PinCategory::Memory;
  if (pin == "texture") return PinCategory::Texture;
  if (pin == "var") return PinCategory::Ref;
  if (pin == "cond") return PinCategory::Bool;
  if (index || pin.rfind("begin", 0) == 0 || pin.rfind("end", 0) == 0) return PinCategory::Int;
  if ((type == "tex_load" || type == "tex_store") && (pin == "x" || pin == "y" || pin == "z"))
    return PinCategory::Int;
  if (type == "tex_sample" && (pin == "u" || pin == "v" || pin == "w")) return PinCategory::Float;
  return PinCategory::Any;
}

const char* pin_category_name(PinCategory c) {
  switch (c) {
    case PinCategory::Float: return "float";
    case PinCategory::Int: return "integer";
    case PinCategory::Bool: return "bool";
    case PinCategory::Vector: return "vector";
    case PinCategory::Matrix: return "matrix";
    case PinCategory::Memory: return "array";
    case PinCategory::Texture: return "texture";
    case PinCategory::Ref: return "variable";
    case PinCategory::Any: return "any";
  }
  return "any";
}

ImU32 pin_color(PinCategory c) {
  switch (c) {
    case PinCategory::Float: return IM_COL32(161, 214, 99, 255);     // green
    case PinCategory::Int: return IM_COL32(90, 190, 230, 255);       // cyan
    case PinCategory::Bool: return IM_COL32(230, 96, 96, 255);       // red
    case PinCategory::Vector: return IM_COL32(240, 200, 70, 255);    // yellow
    case PinCategory::Matrix: return IM_COL32(240, 140, 60, 255);    // orange
    case PinCategory::Memory: return IM_COL32(110, 140, 255, 255);   // blue
    case PinCategory::Texture: return IM_COL32(220, 110, 220, 255);  // magenta
    case PinCategory::Ref: return IM_COL32(200, 160, 255, 255);      // lilac
    case PinCategory::Any: return IM_COL32(185, 185, 185, 255);      // grey
  }
  return IM_COL32_WHITE;
}

void draw_pin(ImDrawList* dl, ImVec2 c, float r, PinCategory cat, bool connected) {
  ImU32 col = pin_color(cat);
  float t = r > 3 ? 1.5f : 1.0f;
  switch (cat) {
    case PinCategory::Bool: {  // diamond
      ImVec2 p[4] = {ImVec2(c.x, c.y - r), ImVec2(c.x + r, c.y), ImVec2(c.x, c.y + r),
                     ImVec2(c.x - r, c.y)};
      connected ? dl->AddConvexPolyFilled(p, 4, col)
                : dl->AddPolyline(p, 4, col, ImDrawFlags_Closed, t);
      return;
    }
    case PinCategory::Vector:
    case PinCategory::Matrix: {  // square; a matrix gets a cross
      ImVec2 a(c.x - r * 0.85f, c.y - r * 0.85f), b(c.x + r * 0.85f, c.y + r * 0.85f);
      connected ? dl->AddRectFilled(a, b, col, r * 0.25f) : dl->AddRect(a, b, col, r * 0.25f, 0, t);
      if (cat == PinCategory::Matrix) {
        dl->AddLine(ImVec2(a.x, c.y), ImVec2(b.x, c.y), IM_COL32(30, 30, 30, 255), 1);
        dl->AddLine(ImVec2(c.x, a.y), ImVec2(c.x, b.y), IM_COL32(30, 30, 30, 255), 1);
      }
      return;
    }
    case PinCategory::Memory:
    case PinCategory::Texture: {  // square ring with a dot: "a place", not a value
      ImVec2 a(c.x - r, c.y - r), b(c.x + r, c.y + r);
      dl->AddRect(a, b, col, 0, 0, t);
      if (connected)
        dl->AddRectFilled(ImVec2(c.x - r * 0.4f, c.y - r * 0.4f),
                          ImVec2(c.x + r * 0.4f, c.y + r * 0.4f), col);
      return;
    }
    case PinCategory::Ref: {  // triangle pointing right
      ImVec2 p[3] = {ImVec2(c.x - r * 0.8f, c.y - r), ImVec2(c.x + r, c.y),
                     ImVec2(c.x - r * 0.8f, c.y + r)};
      connected ? dl->AddConvexPolyFilled(p, 3, col)
                : dl->AddPolyline(p, 3, col, ImDrawFlags_Closed, t);
      return;
    }
    default: connected ? dl->AddCircleFilled(c, r, col, 12) : dl->AddCircle(c, r, col, 12, t);
  }
}

ImU32 category_color(const std::string& category) {
  if (category == "math") return IM_COL32(52, 86, 140, 255);
  if (category == "vector") return IM_COL32(40, 112, 112, 255);
  if (category == "memory") return IM_COL32(46, 110, 60, 255);
  if (category == "texture") return IM_COL32(120, 60, 120, 255);
  if (category == "control") return IM_COL32(130, 60, 50, 255);
  if (category == "variable") return IM_COL32(140, 100, 40, 255);
  if (category == "layout") return IM_COL32(70, 70, 70, 255);
  return IM_COL32(80, 80, 90, 255);  // value
}

}  // namespace loom::editor
