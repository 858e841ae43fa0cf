// Module paths that are not regular files: a FIFO (used to block the load forever), a device
// (/dev/zero used to grow the read to 16 GB) or a FIFO inside a module folder are errors that
// name the file and say what it is.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "runtime/aot/module.h"
#include "runtime/aot/module_files.h"
#include "runtime/common/error.h"

using namespace loom;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("loom_module_kind_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

Error read_error(const std::string& path) {
  try {
    aot::read_module_path(path);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error reading " << path;
  return Error("none");
}

}  // namespace

TEST(ModuleFileKind, AFifoIsRefusedWithoutBlocking) {
  std::string fifo = temp_path("m.loommod");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Error e = read_error(fifo);
  EXPECT_EQ(e.kind(), ErrorKind::Io);
  EXPECT_EQ(e.place().document, fifo);
  EXPECT_EQ(e.message(), "cannot read the module file: it is a FIFO, not a regular file");
  std::filesystem::remove(fifo);
}

TEST(ModuleFileKind, ADeviceIsRefused) {
  Error e = read_error("/dev/zero");
  EXPECT_EQ(e.kind(), ErrorKind::Io);
  EXPECT_EQ(e.message(),
            "cannot read the module file: it is a character device, not a regular file");
}

TEST(ModuleFileKind, AFifoAsTheMetadataOfAModuleFolderIsRefused) {
  std::string folder = temp_path("folder");
  std::filesystem::create_directories(folder);
  std::string meta = folder + "/metadata.json";
  ASSERT_EQ(::mkfifo(meta.c_str(), 0600), 0);
  Error e = read_error(folder);
  EXPECT_EQ(e.place().document, meta);
  EXPECT_EQ(e.message(), "cannot read the module file: it is a FIFO, not a regular file");
  std::filesystem::remove_all(folder);
}

TEST(ModuleFileKind, AFifoAsABlobOfAModuleFolderIsRefused) {
  // A real module (the fuzz corpus keeps one) saved as a folder, one blob made a FIFO.
  std::ifstream in(std::string(LOOM_SOURCE_DIR) + "/tests/fuzz/corpus/aot_module/heat.cpu.loommod",
                   std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  aot::Module module = aot::read_module_bytes(bytes, "heat.cpu.loommod");
  ASSERT_FALSE(module.blobs.empty());
  std::string folder = temp_path("blobs");
  aot::save_module_folder(module, folder);
  ASSERT_NO_THROW(aot::read_module_path(folder));
  std::string blob = folder + "/" + module.blobs.begin()->first;
  std::filesystem::remove(blob);
  ASSERT_EQ(::mkfifo(blob.c_str(), 0600), 0);
  Error e = read_error(folder);
  EXPECT_EQ(e.place().document, blob);
  EXPECT_EQ(e.message(), "cannot read the module file: it is a FIFO, not a regular file");
  std::filesystem::remove_all(folder);
}
