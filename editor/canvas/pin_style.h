// How a pin looks: colour and shape by the category of what flows through it, so a float,
// an integer, a bool, a vector, a matrix, an array, a texture and a variable reference are
// told apart at a glance (shape as well as colour, for colour-blind users).
#pragma once

#include <imgui.h>

#include <cstdint>
#include <string>

#include "compiler/graph/infer.h"

namespace loom::editor {

enum class PinCategory : uint8_t { Float, Int, Bool, Vector, Matrix, Memory, Texture, Ref, Any };

// From an inferred value (nullptr: not known).
PinCategory pin_category(const graph::PinValue* v);
// When inference has nothing (a node that failed, an unconnected input): what the node type
// says about the pin ("i0" of a loop is an integer, "cond" a bool, "array" memory...).
PinCategory guess_pin_category(const std::string& node_type, const std::string& pin, bool output);
const char* pin_category_name(PinCategory c);
ImU32 pin_color(PinCategory c);
// Draws a pin at `center`; filled when connected, hollow when not.
void draw_pin(ImDrawList* dl, ImVec2 center, float radius, PinCategory c, bool connected);

// Header colour of a node of a library category ("math", "memory", "control"...).
ImU32 category_color(const std::string& category);

}  // namespace loom::editor
