// .npy files (`loom run --load`, resources of modules and documents): read_npy takes a path,
// so each input goes through an in-memory file (memfd) that read_npy opens by its /proc name.
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "runtime/common/error.h"
#include "runtime/common/npy.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

// An anonymous file holding `bytes`, closed when it goes out of scope.
class MemoryFile {
 public:
  MemoryFile(const uint8_t* bytes, size_t size) : fd_(memfd_create("fuzz.npy", 0)) {
    loom::fuzz::require(fd_ >= 0, "memfd_create failed");
    for (size_t done = 0; done < size;) {
      ssize_t n = write(fd_, bytes + done, size - done);
      loom::fuzz::require(n > 0, "writing the memfd failed");
      done += static_cast<size_t>(n);
    }
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace loom;
  MemoryFile file(data, size);
  try {
    NpyArray array = read_npy(file.path());
    size_t element = static_cast<size_t>(size_of(array.dtype));
    fuzz::require(array.data.size() % element == 0 &&
                      static_cast<int64_t>(array.data.size() / element) == array.count(),
                  "read_npy's data does not match its shape and dtype");
  } catch (const Error&) {
  }
  return 0;
}
