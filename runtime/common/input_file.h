// Files a user names (graph documents, AOT modules and their blobs, .npy arrays) opened the
// one safe way: regular files only, checked without blocking, and bounded in size. A FIFO
// would block the reader forever and /dev/zero would grow it without end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace loom {

// The largest file a reader reads unless it passes its own limit (docs/aot-modules.md).
constexpr uint64_t kMaxInputFileBytes = uint64_t{1} << 30;

// An open regular file. `what` names the file's role in errors ("module file", "document"),
// which all name `path` and are ErrorKind::Io.
class InputFile {
 public:
  // Refuses a missing file, a folder, a FIFO, a device or a socket, saying which, and a file
  // larger than `limit` bytes. Opening never blocks.
  InputFile(const std::string& path, const std::string& what, uint64_t limit = kMaxInputFileBytes);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  uint64_t size() const { return size_; }  // as it was when opened
  // Reads the next `n` bytes; false at the end of the file before `n` bytes.
  bool read(void* out, size_t n);
  // Everything from the current position to the end, refusing a file that grew past `limit`.
  std::vector<uint8_t> read_rest();

 private:
  std::string path_;
  std::string what_;
  uint64_t limit_;
  uint64_t size_ = 0;
  int fd_ = -1;
};

// The whole file, through InputFile.
std::vector<uint8_t> read_file_checked(const std::string& path, const std::string& what,
                                       uint64_t limit = kMaxInputFileBytes);
std::string read_text_file_checked(const std::string& path, const std::string& what,
                                   uint64_t limit = kMaxInputFileBytes);

}  // namespace loom
