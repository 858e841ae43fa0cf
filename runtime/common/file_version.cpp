#include "runtime/common/file_version.h"

#include <filesystem>
#include <system_error>

#include "runtime/common/abi_serialize.h"

namespace loom {

FileStamp file_stamp(const std::string& path) {
  namespace fs = std::filesystem;
  // Read before the file's time: a write after this moment shows a time past it.
  const fs::file_time_type now = fs::file_time_type::clock::now();
  std::error_code ec;
  FileStamp s;
  fs::file_time_type newest{};
  auto add = [&](const fs::path& p) {
    fs::file_time_type t = fs::last_write_time(p, ec);
    if (ec) return;
    uintmax_t size = fs::file_size(p, ec);
    if (ec) return;
    if (!s.exists || t > newest) newest = t;
    s.exists = true;
    s.size += size;
  };
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec))
      if (entry.is_regular_file(ec)) add(entry.path());
  } else {
    add(path);
  }
  s.mtime_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(newest.time_since_epoch()).count();
  s.settled = !s.exists || (newest <= now && now - newest >= kFileTimeSettle);
  return s;
}

uint64_t content_hash(const void* data, size_t size, uint64_t seed) {
  return fnv1a64(static_cast<const uint8_t*>(data), size, seed);
}

}  // namespace loom
