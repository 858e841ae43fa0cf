// What the Open and Save As prompts list: the folders and graph documents of one folder,
// folders first, each sorted by name as a person reads them (case-insensitive, "file2"
// before "file10"), with ".." first unless at the root.
#pragma once

#include <string>
#include <vector>

namespace loom::editor {

struct BrowserEntry {
  std::string name;  // file or folder name; ".." for the parent
  bool folder = false;
};

// The entries of `folder`; empty with `*error` set when it cannot be read.
std::vector<BrowserEntry> browse_folder(const std::string& folder, std::string* error);
// Name order: case-insensitive, runs of digits by value.
bool name_before(const std::string& a, const std::string& b);

}  // namespace loom::editor
