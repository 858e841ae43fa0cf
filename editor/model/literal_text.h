// Literals as the user reads and types them: numbers as written, bools, lists as JSON, and
// names and formulas without quotes. Used by the canvas's value editor and its pin labels.
#pragma once

#include <optional>
#include <string>

#include "compiler/graph/document.h"

namespace loom::editor {

// "2.5", "true", "[1, 0, 0]", "temperature" (strings bare).
std::string literal_text(const graph::Literal& l);

// Parses what the user typed: with `text_ok` (names, formulas, types) the text itself;
// otherwise a JSON value (numbers keep their spelling, so "1.0" stays "1.0"), or nullopt and
// the reason in `error`. Empty input gives nullopt with no error (nothing: the default).
std::optional<graph::Literal> parse_literal_text(const std::string& text, bool text_ok,
                                                 std::string* error);

// Parameters that hold names or formulas rather than numbers.
bool is_text_param(const std::string& name);

}  // namespace loom::editor
