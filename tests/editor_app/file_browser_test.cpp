// The Open and Save As prompts' folder listing: folders first, documents only, sorted as a
// person reads names, ".." to go up.
#include "editor/app/file_browser.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace loom::editor {
namespace {

namespace fs = std::filesystem;

TEST(FileBrowser, NamesSortAsPeopleReadThem) {
  EXPECT_TRUE(name_before("file2", "file10"));
  EXPECT_FALSE(name_before("file10", "file2"));
  EXPECT_TRUE(name_before("Apple", "banana"));
  EXPECT_TRUE(name_before("a", "ab"));
  EXPECT_TRUE(name_before("x007", "x8"));
  EXPECT_FALSE(name_before("same", "same"));
}

TEST(FileBrowser, FoldersFirstThenDocumentsSorted) {
  fs::path dir = fs::temp_directory_path() / ("loom-browse-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "zeta");
  fs::create_directories(dir / "Alpha");
  fs::create_directories(dir / ".hidden");
  for (const char* f :
       {"wave10.loom.json", "wave2.loom.json", "Heat.loom.json", "notes.txt", ".x.loom.json"})
    std::ofstream(dir / f) << "{}";
  std::string why;
  std::vector<BrowserEntry> e = browse_folder(dir.string(), &why);
  EXPECT_EQ(why, "");
  std::vector<std::string> names;
  for (const BrowserEntry& x : e) names.push_back(x.name + (x.folder ? "/" : ""));
  EXPECT_EQ(names, (std::vector<std::string>{"../", "Alpha/", "zeta/", "Heat.loom.json",
                                             "wave2.loom.json", "wave10.loom.json"}));
  e = browse_folder((dir / "missing").string(), &why);
  EXPECT_TRUE(e.empty());
  EXPECT_NE(why.find("cannot read"), std::string::npos);
  EXPECT_EQ(browse_folder("/", &why).front().name == "..", false);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace loom::editor
