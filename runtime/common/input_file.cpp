#include "runtime/common/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/common/error.h"

namespace loom {

namespace {

// What a file that is not a regular file is, for the error.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

}  // namespace

InputFile::InputFile(const std::string& path, const std::string& what, uint64_t limit)
    : path_(path), what_(what), limit_(limit) {
  auto fail = [&](const std::string& why) { throw Error(Place{path_}, why, ErrorKind::Io); };
  auto refuse_kind = [&](mode_t mode) {
    if (!S_ISREG(mode))
      fail("cannot read the " + what_ + ": it is " + kind_of(mode) + ", not a regular file");
  };
  // stat first, so that nothing is opened that is not a regular file (opening some devices
  // acts on them); fstat after, in case the path changed in between. O_NONBLOCK keeps that
  // open from waiting for a writer if a FIFO was swapped in.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    fail("cannot open the " + what_ + " (" + std::strerror(errno) + ")");
  refuse_kind(st.st_mode);
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd_ < 0) fail("cannot open the " + what_ + " (" + std::strerror(errno) + ")");
  try {
    if (::fstat(fd_, &st) != 0)
      fail("cannot read the " + what_ + " (" + std::strerror(errno) + ")");
    refuse_kind(st.st_mode);
    size_ = static_cast<uint64_t>(st.st_size);
    if (size_ > limit_)
      fail("the " + what_ + " has " + std::to_string(size_) + " bytes, more than the " +
           std::to_string(limit_) + " Loom reads");
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool InputFile::read(void* out, size_t n) {
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    ssize_t got = ::read(fd_, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      throw Error(Place{path_}, "cannot read the " + what_ + " (" + std::strerror(errno) + ")",
                  ErrorKind::Io);
    if (got == 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

std::vector<uint8_t> InputFile::read_rest() {
  std::vector<uint8_t> bytes;
  bytes.reserve(static_cast<size_t>(size_));
  // Up to one byte past the limit: a file that grew beyond it since the open is refused
  // rather than read without end.
  uint8_t chunk[65536];
  for (;;) {
    ssize_t got = ::read(fd_, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      throw Error(Place{path_}, "cannot read the " + what_ + " (" + std::strerror(errno) + ")",
                  ErrorKind::Io);
    if (got == 0) return bytes;
    bytes.insert(bytes.end(), chunk, chunk + got);
    if (bytes.size() > limit_)
      throw Error(Place{path_},
                  "the " + what_ + " grew past the " + std::to_string(limit_) +
                      " bytes Loom reads while it was read",
                  ErrorKind::Io);
  }
}

std::vector<uint8_t> read_file_checked(const std::string& path, const std::string& what,
                                       uint64_t limit) {
  return InputFile(path, what, limit).read_rest();
}

std::string read_text_file_checked(const std::string& path, const std::string& what,
                                   uint64_t limit) {
  std::vector<uint8_t> bytes = read_file_checked(path, what, limit);
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

}  // namespace loom
