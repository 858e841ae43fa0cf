// User text in messages, within bounds (runtime/common/error.cpp).
#pragma once

#include <string>

namespace loom {

// The one rule for user text (names, paths, formulas, numbers) in messages: a run of more
// than 200 characters without a space keeps its start and end around its length
// ("'aaaa...(10485760 characters)...aaaa'"), and a message longer than 8192 characters is cut
// there, so a 10 MB identifier or formula never makes a 10 MB message. Error applies it to
// every message and place; anything that shows user text outside an Error can call it.
std::string bounded_message(const std::string& text);

}  // namespace loom
