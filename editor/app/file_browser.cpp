#include "editor/app/file_browser.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace loom::editor {

namespace fs = std::filesystem;

bool name_before(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    unsigned char ca = static_cast<unsigned char>(a[i]), cb = static_cast<unsigned char>(b[j]);
    if (std::isdigit(ca) && std::isdigit(cb)) {
      size_t ei = i, ej = j;
      while (ei < a.size() && a[ei] == '0') ++ei;  // leading zeros do not count
      while (ej < b.size() && b[ej] == '0') ++ej;
      size_t di = ei, dj = ej;
      while (di < a.size() && std::isdigit(static_cast<unsigned char>(a[di]))) ++di;
      while (dj < b.size() && std::isdigit(static_cast<unsigned char>(b[dj]))) ++dj;
      if (di - ei != dj - ej) return di - ei < dj - ej;  // fewer digits: smaller
      int c = a.compare(ei, di - ei, b, ej, dj - ej);
      if (c != 0) return c < 0;
      i = di;
      j = dj;
      continue;
    }
    int la = std::tolower(ca), lb = std::tolower(cb);
    if (la != lb) return la < lb;
    ++i;
    ++j;
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;  // equal but for case: a stable order
}

std::vector<BrowserEntry> browse_folder(const std::string& folder, std::string* error) {
  std::error_code ec;
  fs::path dir = folder.empty() ? fs::current_path(ec) : fs::path(folder);
  std::vector<BrowserEntry> folders, documents;
  fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) {
    *error = "cannot read " + dir.string() + ": " + ec.message();
    return {};
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;  // hidden
    std::error_code type_ec;
    if (it->is_directory(type_ec)) {
      folders.push_back({name, true});
    } else if (name.size() > 10 && name.compare(name.size() - 10, 10, ".loom.json") == 0) {
      documents.push_back({name, false});
    }
  }
  auto by_name = [](const BrowserEntry& x, const BrowserEntry& y) {
    return name_before(x.name, y.name);
  };
  std::sort(folders.begin(), folders.end(), by_name);
  std::sort(documents.begin(), documents.end(), by_name);
  std::vector<BrowserEntry> out;
  fs::path absolute = fs::absolute(dir, ec);
  if (absolute.has_parent_path() && absolute != absolute.root_path()) out.push_back({"..", true});
  out.insert(out.end(), folders.begin(), folders.end());
  out.insert(out.end(), documents.begin(), documents.end());
  return out;
}

}  // namespace loom::editor
