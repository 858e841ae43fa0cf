#include "runtime/aot/module_files.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "runtime/common/abi_serialize.h"
#include "runtime/common/byte_stream.h"
#include "runtime/common/error.h"
#include "runtime/common/input_file.h"

namespace loom::aot {

namespace {

constexpr char kMagic[8] = {'L', 'O', 'O', 'M', 'M', 'O', 'D', '\0'};
constexpr uint32_t kArchiveVersion = 1;
constexpr const char* kMetadataName = "metadata.json";

std::string text_of(const std::vector<uint8_t>& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// Blob names become file names in the folder form: no paths, nothing hidden.
bool valid_blob_name(const std::string& n) {
  if (n.empty() || n.size() > 200 || n[0] == '.' || n == kMetadataName) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

// Regular files of at most kMaxInputFileBytes (docs/aot-modules.md): a FIFO or a device in
// a module's place must fail the load, not block it or fill the memory.
std::vector<uint8_t> read_file(const std::string& path) {
  return read_file_checked(path, "module file");
}

void write_file(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) throw Error(Place{path}, "cannot write the file");
}

// Checks blobs against the metadata and the kernels' references; returns the module.
Module assemble(ModuleMetadata meta, std::map<std::string, std::vector<uint8_t>> blobs,
                const std::string& what) {
  std::set<std::string> listed;
  for (const BlobInfo& b : meta.blobs) {
    if (!valid_blob_name(b.name))
      throw Error(Place{what}, "corrupt module: blob name '" + b.name + "' is not allowed");
    auto it = blobs.find(b.name);
    if (it == blobs.end())
      throw Error(Place{what}, "corrupt module: blob '" + b.name + "' is missing");
    if (it->second.size() != b.size)
      throw Error(Place{what}, "corrupt module: blob '" + b.name + "' has " +
                                   std::to_string(it->second.size()) +
                                   " bytes; the metadata says " + std::to_string(b.size));
    if (hash128_hex(text_of(it->second)) != b.hash)
      throw Error(Place{what}, "corrupt module: blob '" + b.name + "' does not match its hash");
    listed.insert(b.name);
  }
  for (const auto& [name, bytes] : blobs)
    if (!listed.count(name))
      throw Error(Place{what}, "corrupt module: blob '" + name + "' is not listed in the metadata");
  auto need = [&](const std::string& blob, const KernelInfo& k) {
    if (!listed.count(blob))
      throw Error(Place{what, k.name}, "corrupt module: kernel '" + k.name + "' needs blob '" +
                                           blob + "', which the module lacks");
  };
  for (const KernelInfo& k : meta.kernels) {
    for (const std::string& b : k.objects) need(b, k);
    for (const std::string& b : k.spirv_blobs) need(b, k);
  }
  Module m;
  m.meta = std::move(meta);
  m.blobs = std::move(blobs);
  return m;
}

struct ArchiveEntry {
  std::string name;
  uint64_t offset = 0, size = 0, hash = 0;
};

// Name (u32 length + bytes), offset, size, hash.
constexpr size_t kMinEntryBytes = 4 + 3 * 8;

// The entry table, every range checked: inside the file after the table and overlapping no
// other entry, so the entries copied out never total more than the file (a table naming the
// same bytes many times would otherwise multiply them).
std::vector<ArchiveEntry> read_entry_table(ByteReader& r, size_t file_bytes) {
  uint32_t count = r.u32();
  if (count == 0 || count > 1u << 20)
    r.fail("entry count " + std::to_string(count) + " is not plausible");
  if (count > r.remaining() / kMinEntryBytes)
    r.fail("entry count " + std::to_string(count) + " does not fit in the " +
           std::to_string(r.remaining()) + " bytes after it");
  std::vector<ArchiveEntry> entries(count);
  for (ArchiveEntry& e : entries) {
    e.name = r.str();
    e.offset = r.u64();
    e.size = r.u64();
    e.hash = r.u64();
  }
  const uint64_t data_begin = r.at();
  for (const ArchiveEntry& e : entries)
    if (e.offset < data_begin || e.offset > file_bytes || e.size > file_bytes - e.offset)
      r.fail("entry '" + e.name + "' lies outside the file's data (" + std::to_string(e.offset) +
             " + " + std::to_string(e.size) + " not within " + std::to_string(data_begin) + ".." +
             std::to_string(file_bytes) + " bytes)");
  std::vector<const ArchiveEntry*> by_offset;
  by_offset.reserve(entries.size());
  for (const ArchiveEntry& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const ArchiveEntry* a, const ArchiveEntry* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->offset < by_offset[i - 1]->offset + by_offset[i - 1]->size)
      r.fail("entry '" + by_offset[i]->name + "' overlaps entry '" + by_offset[i - 1]->name + "'");
  return entries;
}

}  // namespace

std::vector<uint8_t> write_module_archive(const Module& module) {
  std::string metadata = metadata_to_json(module.meta);
  std::vector<std::pair<std::string, const std::vector<uint8_t>*>> entries;
  std::vector<uint8_t> metadata_bytes(metadata.begin(), metadata.end());
  entries.emplace_back(kMetadataName, &metadata_bytes);
  for (const auto& [name, bytes] : module.blobs) entries.emplace_back(name, &bytes);

  ByteWriter w;
  w.raw(kMagic, 8);
  w.u32(kArchiveVersion);
  w.u32(static_cast<uint32_t>(entries.size()));
  size_t table = 0;
  for (const auto& [name, bytes] : entries) table += 4 + name.size() + 24;
  uint64_t offset = w.out.size() + table;
  for (const auto& [name, bytes] : entries) {
    w.str(name);
    w.u64(offset);
    w.u64(bytes->size());
    w.u64(fnv1a64(bytes->data(), bytes->size()));
    offset += bytes->size();
  }
  for (const auto& [name, bytes] : entries) w.raw(bytes->data(), bytes->size());
  return std::move(w.out);
}

void save_module_archive(const Module& module, const std::string& path) {
  std::vector<uint8_t> bytes = write_module_archive(module);
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code made;
  if (!parent.empty()) std::filesystem::create_directories(parent, made);
  if (made)
    throw Error(Place{path},
                "cannot create the folder '" + parent.string() + "': " + made.message());
  std::string tmp = path + ".tmp";
  write_file(tmp, bytes.data(), bytes.size());
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error(Place{path}, "cannot write the module file");
  }
}

void save_module_folder(const Module& module, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(Place{dir}, "cannot create the module folder: " + ec.message());
  std::string metadata = metadata_to_json(module.meta);
  write_file(dir + "/" + kMetadataName, metadata.data(), metadata.size());
  for (const auto& [name, bytes] : module.blobs)
    write_file(dir + "/" + name, bytes.data(), bytes.size());
}

Module read_module_bytes(const std::vector<uint8_t>& bytes, const std::string& what) {
  ByteReader r(bytes, what, "module archive");
  if (bytes.size() < 16 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    throw Error(Place{what}, "not a Loom module archive (bad magic)");
  char magic[8];
  r.raw(magic, 8);
  uint32_t version = r.u32();
  if (version != kArchiveVersion)
    throw Error(Place{what},
                "module archive version " + std::to_string(version) +
                    " is not one this runtime reads (version " + std::to_string(kArchiveVersion) +
                    ")",
                ErrorKind::Version);
  std::vector<ArchiveEntry> entries = read_entry_table(r, bytes.size());
  std::string metadata;
  bool have_metadata = false;
  std::map<std::string, std::vector<uint8_t>> blobs;
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& [name, offset, size, hash] = entries[i];
    if (fnv1a64(bytes.data() + offset, size) != hash)
      r.fail("entry '" + name + "' does not match its checksum");
    std::vector<uint8_t> data(bytes.begin() + static_cast<ptrdiff_t>(offset),
                              bytes.begin() + static_cast<ptrdiff_t>(offset + size));
    if (i == 0) {
      if (name != kMetadataName) r.fail("the first entry is '" + name + "', not " + kMetadataName);
      metadata = text_of(data);
      have_metadata = true;
      continue;
    }
    if (!valid_blob_name(name)) r.fail("entry name '" + name + "' is not allowed");
    if (!blobs.emplace(name, std::move(data)).second) r.fail("entry '" + name + "' appears twice");
  }
  if (!have_metadata) r.fail("no metadata");
  return assemble(metadata_from_json(metadata, what), std::move(blobs), what);
}

Module read_module_path(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return read_module_bytes(read_file(path), path);
  std::string meta_path = path + "/" + kMetadataName;
  if (!std::filesystem::exists(meta_path, ec))
    throw Error(Place{path}, "not a module folder: it has no " + std::string(kMetadataName));
  std::vector<uint8_t> meta_bytes = read_file(meta_path);
  ModuleMetadata meta = metadata_from_json(text_of(meta_bytes), meta_path);
  std::map<std::string, std::vector<uint8_t>> blobs;
  for (const BlobInfo& b : meta.blobs) {
    if (!valid_blob_name(b.name))
      throw Error(Place{path}, "corrupt module: blob name '" + b.name + "' is not allowed");
    std::string file = path + "/" + b.name;
    // A blob that exists but is no regular file is read_file's error, which says what it is.
    if (!std::filesystem::exists(file, ec))
      throw Error(Place{path}, "corrupt module: blob '" + b.name + "' is missing");
    // The size the metadata claims is checked before the file is read.
    uint64_t on_disk = std::filesystem::file_size(file, ec);
    if (!ec && on_disk != b.size)
      throw Error(Place{path}, "corrupt module: blob '" + b.name + "' has " +
                                   std::to_string(on_disk) + " bytes; the metadata says " +
                                   std::to_string(b.size));
    blobs[b.name] = read_file(file);
  }
  return assemble(std::move(meta), std::move(blobs), path);
}

}  // namespace loom::aot
