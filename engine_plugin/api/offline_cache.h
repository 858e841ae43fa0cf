// Compiled kernels on disk, keyed by content (graph hash, template signature, backend,
// options, compiler/runtime version and build id, host CPU). Writes are atomic (temp file +
// rename); an unusable entry is reported through the warning callback and treated as a miss.
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

  // The entry, or nullopt on a miss. An entry that cannot be read (corrupt, truncated, not a
  // file) is discarded with a warning and is a miss.
  std::optional<KernelRecord> load(const std::string& key) const;
  // Drops an entry found unusable after loading (its object does not load): a warning
  // naming `why`, and the entry removed so the recompiled kernel replaces it.
  void discard(const std::string& key, const std::string& why) const;
  void store(const std::string& key, const KernelRecord& record) const;
  std::string path_for(const std::string& key) const;

  // $LOOM_CACHE_DIR, else $XDG_CACHE_HOME/loom, else $HOME/.cache/loom.
  static std::string default_directory();

 private:
  std::string dir_;
  WarningSink warn_;
};

}  // namespace loom
