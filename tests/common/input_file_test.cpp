// User-named files are read only when they are regular files of bounded size: a FIFO, a
// device or a folder is an error naming the file and saying what it is, without blocking.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/common/error.h"
#include "runtime/common/input_file.h"
#include "runtime/common/npy.h"

using namespace loom;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("loom_input_file_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

Error error_of(const std::string& path, const std::string& what, uint64_t limit) {
  try {
    read_file_checked(path, what, limit);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error reading " << path;
  return Error("none");
}

}  // namespace

TEST(InputFile, ReadsARegularFile) {
  std::string path = temp_path("plain");
  std::ofstream(path, std::ios::binary) << "hello";
  EXPECT_EQ(read_text_file_checked(path, "document"), "hello");
  InputFile f(path, "document");
  EXPECT_EQ(f.size(), 5u);
  char buf[3];
  EXPECT_TRUE(f.read(buf, 3));
  EXPECT_EQ(std::string(buf, 3), "hel");
  EXPECT_FALSE(f.read(buf, 3));  // two bytes left
  std::filesystem::remove(path);
}

TEST(InputFile, AFifoIsRefusedWithoutBlocking) {
  // Used to block loom_module_load forever: nobody writes to the FIFO.
  std::string path = temp_path("fifo");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  Error e = error_of(path, "module file", kMaxInputFileBytes);
  EXPECT_EQ(e.kind(), ErrorKind::Io);
  EXPECT_EQ(e.place().document, path);
  EXPECT_EQ(e.message(), "cannot read the module file: it is a FIFO, not a regular file");
  std::filesystem::remove(path);
}

TEST(InputFile, DevicesAndFoldersAreRefused) {
  // /dev/zero used to be read until the memory ran out.
  EXPECT_EQ(error_of("/dev/zero", "document", kMaxInputFileBytes).message(),
            "cannot read the document: it is a character device, not a regular file");
  EXPECT_EQ(error_of("/tmp", "document", kMaxInputFileBytes).message(),
            "cannot read the document: it is a folder, not a regular file");
  Error missing = error_of("/nonexistent/x.loom.json", "document", kMaxInputFileBytes);
  EXPECT_EQ(missing.kind(), ErrorKind::Io);
  EXPECT_EQ(missing.message(), "cannot open the document (No such file or directory)");
}

TEST(InputFile, AFileOverTheLimitIsRefusedBeforeItIsRead) {
  std::string path = temp_path("big");
  std::ofstream(path, std::ios::binary) << std::string(1000, 'x');
  EXPECT_EQ(error_of(path, "module file", 999).message(),
            "the module file has 1000 bytes, more than the 999 Loom reads");
  EXPECT_EQ(read_file_checked(path, "module file", 1000).size(), 1000u);
  std::filesystem::remove(path);
}

TEST(InputFile, NpyFromAFifoIsRefused) {
  std::string path = temp_path("fifo.npy");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  try {
    read_npy(path);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "cannot read the .npy file: it is a FIFO, not a regular file");
  }
  std::filesystem::remove(path);
}
