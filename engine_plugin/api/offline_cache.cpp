#include "engine_plugin/api/offline_cache.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "runtime/common/error.h"

namespace loom {

namespace fs = std::filesystem;

OfflineCache::OfflineCache(std::string directory, WarningSink warn)
    : dir_(std::move(directory)), warn_(std::move(warn)) {}

std::string OfflineCache::default_directory() {
  if (const char* d = std::getenv("LOOM_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/loom";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/loom";
  return "";
}

std::string OfflineCache::path_for(const std::string& key) const {
  return dir_ + "/" + key + ".lkr";
}

std::optional<KernelRecord> OfflineCache::load(const std::string& key) const {
  if (!enabled()) return std::nullopt;
  std::string path = path_for(key);
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return std::nullopt;  // a plain miss
  if (!fs::is_regular_file(status)) {
    discard(key, path + " is not a file");
    return std::nullopt;
  }
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(Place{path}, "cannot open the entry");
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    if (in.bad()) throw Error(Place{path}, "cannot read the entry");
    return deserialize_kernel_record(bytes, path);
  } catch (const std::exception& e) {  // corrupt, truncated or unreadable: a miss
    discard(key, e.what());
    return std::nullopt;
  }
}

void OfflineCache::discard(const std::string& key, const std::string& why) const {
  if (!enabled()) return;
  if (warn_) warn_("warning: ignoring offline cache entry (" + why + "); recompiling");
  std::error_code ec;
  fs::remove_all(path_for(key), ec);  // the recompiled kernel takes its place
}

void OfflineCache::store(const std::string& key, const KernelRecord& record) const {
  if (!enabled()) return;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  std::string final_path = path_for(key);
  std::string tmp = final_path + ".tmp" + std::to_string(::getpid());
  std::vector<uint8_t> bytes = serialize_kernel_record(record);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      if (warn_)
        warn_("warning: cannot write offline cache entry " + tmp + "; continuing without it");
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, final_path, ec);  // atomic within one directory
  if (ec) {
    if (warn_)
      warn_("warning: cannot publish offline cache entry " + final_path + ": " + ec.message());
    fs::remove(tmp, ec);
  }
}

}  // namespace loom
