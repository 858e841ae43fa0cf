// Reading a module archive checks every entry's range against the file before copying it:
// entries lie in the data after the table and never overlap, so an archive cannot make the
// reader copy its bytes many times over.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/aot/module_files.h"
#include "runtime/common/abi_serialize.h"
#include "runtime/common/byte_stream.h"
#include "runtime/common/error.h"

using namespace loom;

namespace {

struct Entry {
  std::string name;
  uint64_t offset = 0, size = 0;
};

// An archive whose table lists `entries` (offsets counted from the start of the data, after
// the table), followed by `data`.
std::vector<uint8_t> archive(uint32_t count, const std::vector<Entry>& entries,
                             const std::string& data) {
  size_t table = 16;
  for (const Entry& e : entries) table += 4 + e.name.size() + 24;
  ByteWriter w;
  w.raw("LOOMMOD\0", 8);
  w.u32(1);
  w.u32(count);
  for (const Entry& e : entries) {
    w.str(e.name);
    w.u64(table + e.offset);
    w.u64(e.size);
    w.u64(fnv1a64(reinterpret_cast<const uint8_t*>(data.data()) + e.offset, e.size));
  }
  w.raw(data.data(), data.size());
  return std::move(w.out);
}

std::string read_error(const std::vector<uint8_t>& bytes) {
  try {
    aot::read_module_bytes(bytes, "bad.loommod");
  } catch (const Error& e) {
    EXPECT_EQ(e.place().document, "bad.loommod") << e.what();
    return e.message();
  }
  return "";
}

}  // namespace

TEST(ModuleArchive, RefusesEntriesThatShareBytes) {
  const std::string data(64, '{');
  std::string message = read_error(archive(2, {{"metadata.json", 0, 64}, {"blob.o", 0, 64}}, data));
  EXPECT_NE(message.find("entry 'blob.o' overlaps entry 'metadata.json'"), std::string::npos)
      << message;
  message = read_error(archive(2, {{"metadata.json", 0, 40}, {"blob.o", 32, 32}}, data));
  EXPECT_NE(message.find("overlaps"), std::string::npos) << message;
}

TEST(ModuleArchive, RefusesAnEntryInsideTheTable) {
  std::vector<uint8_t> bytes = archive(1, {{"metadata.json", 0, 8}}, std::string(8, '{'));
  // Point the entry at the archive's own header.
  uint64_t zero = 0;
  std::memcpy(bytes.data() + 16 + 4 + 13, &zero, 8);
  std::string message = read_error(bytes);
  EXPECT_NE(message.find("entry 'metadata.json' lies outside the file's data"), std::string::npos)
      << message;
}

TEST(ModuleArchive, RefusesAnEntryCountTheFileCannotHold) {
  std::string message = read_error(archive(100000, {{"metadata.json", 0, 8}}, std::string(8, '{')));
  EXPECT_NE(message.find("entry count 100000 does not fit"), std::string::npos) << message;
}
