// Reading and writing graph documents as JSON text (docs/graph-format.md).
//
// load_document: parses, migrates older format versions (migrate.h), checks the shape of
// every section and returns the Document; any problem throws loom::Error naming the file,
// the line and column or the key path, and the kernel/node/pin where there is one. Nothing
// is partially returned. Semantic checks (node types, links, types) are validate_document's.
// save_document: one canonical style, so load -> save of a canonical file is byte-identical.
#pragma once

#include <string>
#include <string_view>

#include "compiler/graph/document.h"

namespace loom::graph {

Document load_document(std::string_view text, const std::string& path = "<memory>");
Document load_document_file(const std::string& path);
std::string save_document(const Document& doc);
// The canonical text without the editor-only sections (layout, view): two documents with the
// same program key run the same way, so an edit that keeps it needs no recompiling.
std::string program_key(const Document& doc);
void save_document_file(const Document& doc, const std::string& path);

// Canonical text of one kernel and everything its code depends on (the functions it calls,
// transitively, the fields, textures and argpack types): no layout, no document name.
std::string kernel_canonical_text(const Document& doc, const std::string& kernel);
// 32 hex digits hashing kernel_canonical_text: the content part of compile cache keys.
std::string kernel_content_key(const Document& doc, const std::string& kernel);

}  // namespace loom::graph
