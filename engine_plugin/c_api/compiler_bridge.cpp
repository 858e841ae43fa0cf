#include "engine_plugin/c_api/compiler_bridge.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "engine_plugin/c_api/c_api_error.h"

extern char** environ;

namespace loom::capi {

namespace fs = std::filesystem;

namespace {

std::string find_compiler() {
  if (const char* env = std::getenv("LOOM_COMPILER"); env && *env) return env;
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&find_compiler), &self) && self.dli_fname) {
    fs::path dir = fs::path(self.dli_fname).parent_path();
    for (const fs::path& candidate : {dir / "loom", dir / "../bin/loom"}) {
      std::error_code ec;
      if (fs::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0)
        return candidate.string();
    }
  }
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string d;
    while (std::getline(dirs, d, ':')) {
      fs::path candidate = fs::path(d.empty() ? "." : d) / "loom";
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return "";
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A temporary folder, removed with its contents when this goes.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "loom-compile-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw ApiError(LOOM_ERROR_IO, "cannot make a temporary folder for the compiler");
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

bool is_graph_document(const std::string& path) {
  const std::string ext = ".loom.json";
  return path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
}

std::vector<uint8_t> compile_document(const std::string& path, const char* arch) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw ApiError(LOOM_ERROR_IO, Place{path}, "cannot open the graph document");
  std::string compiler = find_compiler();
  if (compiler.empty())
    throw ApiError(LOOM_ERROR_NOT_SUPPORTED, Place{path},
                   "graph documents load only where the Loom compiler (`loom`) is installed: set "
                   "LOOM_COMPILER, put it "
                   "beside libloom.so or on PATH; or load a module compiled with `loom compile`");
  TempDir tmp;
  std::string stem = fs::path(path).filename().string();
  stem = stem.substr(0, stem.size() - std::string(".loom.json").size());
  fs::path out = tmp.path / (stem.empty() ? "module.loommod" : stem + ".loommod");
  fs::path log = tmp.path / "compiler.log";
  std::vector<std::string> argv_text = {compiler,     "compile", path, "-o",
                                        out.string(), "--arch",  arch};
  // Compiled on the machine that runs it: the CPU's own level, not the portable baseline.
  if (std::string(arch) == "cpu") argv_text.insert(argv_text.end(), {"--cpu", "host"});
  std::vector<char*> argv;
  argv.reserve(argv_text.size() + 1);
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, compiler.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    throw ApiError(LOOM_ERROR_NOT_SUPPORTED, Place{path},
                   "cannot run the compiler '" + compiler + "': " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string message = read_text(log);
    while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
      message.pop_back();
    if (message.rfind("error: ", 0) == 0) message = message.substr(7);
    throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                   "the graph document does not compile: " +
                       (message.empty() ? std::string("the compiler failed") : message));
  }
  std::ifstream in(out, std::ios::binary);
  if (!in) throw ApiError(LOOM_ERROR_IO, Place{path}, "the compiler wrote no module");
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

}  // namespace loom::capi
