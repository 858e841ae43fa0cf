// Compiled kernels on disk, keyed by content (graph hash, template signature, backend,
// options, compiler/runtime version, host CPU). Writes are atomic (temp file + rename); an
// unreadable entry is reported through the warning callback and treated as a miss.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "runtime/common/abi_serialize.h"

namespace loom {

class OfflineCache {
 public:
  using WarningSink = std::function<void(const std::string&)>;

  // An empty directory disables the cache.
  OfflineCache(std::string directory, WarningSink warn);

  bool enabled() const { return !dir_.empty(); }
  const std::string& directory() const { return dir_; }

  std::optional<KernelRecord> load(const std::string& key) const;
  void store(const std::string& key, const KernelRecord& record) const;
  std::string path_for(const std::string& key) const;

  // $LOOM_CACHE_DIR, else $XDG_CACHE_HOME/loom, else $HOME/.cache/loom.
  static std::string default_directory();

 private:
  std::string dir_;
  WarningSink warn_;
};

}  // namespace loom
