// Whether a file changed since Loom read it (hot reload of modules and documents). Its
// modification time cannot say alone: on file systems with coarse timestamps (1-2 s on ext3,
// HFS+, FAT, some network file systems) two writes within one tick show the same time, often
// with the same size, so a rewrite, or a write that completed after Loom read the
// half-written file, would look unchanged for ever. So time and size only say when to look,
// a hash of what was read decides, and a stamp is trusted only once it is settled: taken at
// least kFileTimeSettle after the time it shows, so that any later write shows a later time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace loom {

// At least the coarsest timestamp granularity expected (FAT: 2 s).
constexpr std::chrono::seconds kFileTimeSettle{2};

// A file's modification time and size (a folder: its regular files' newest time and total
// size), taken before the file is read.
struct FileStamp {
  bool exists = false;
  int64_t mtime_ns = 0;  // file clock ticks, any epoch (may be negative)
  uint64_t size = 0;
  // Taken kFileTimeSettle or more after mtime by the file clock: a later write must show a
  // later time. False for a time in the future (a file server's clock ahead of ours). A
  // missing file is settled: appearing changes the stamp.
  bool settled = false;

  bool same_time_and_size(const FileStamp& o) const {
    return exists == o.exists && mtime_ns == o.mtime_ns && size == o.size;
  }
};

FileStamp file_stamp(const std::string& path);

// A hash of bytes read from a file, to tell two contents apart (64-bit FNV-1a). `seed`: the
// hash of what came before, to hash several pieces as one.
constexpr uint64_t kContentHashStart = 0xcbf29ce484222325ull;
uint64_t content_hash(const void* data, size_t size, uint64_t seed = kContentHashStart);
inline uint64_t content_hash(const std::string& text) {
  return content_hash(text.data(), text.size());
}

// What was read of a file: its stamp, and a hash of the bytes when they could be read.
struct FileVersion {
  FileStamp stamp;
  bool hashed = false;
  uint64_t hash = 0;

  FileVersion() = default;
  explicit FileVersion(const FileStamp& s) : stamp(s) {}
  FileVersion(const FileStamp& s, uint64_t h) : stamp(s), hashed(true), hash(h) {}

  // `now` shows nothing new: the time and size of this version's stamp, which was settled.
  // Otherwise the file has to be read and its hash decides (same_content).
  bool unchanged_at(const FileStamp& now) const {
    return stamp.settled && now.same_time_and_size(stamp);
  }
  bool same_content(uint64_t h) const { return hashed && hash == h; }
};

}  // namespace loom
