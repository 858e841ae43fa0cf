// A module on disk or in memory: one archive file, or an unpacked folder.
//
// Archive: 8 magic bytes "LOOMMOD\0", u32 archive version, u32 entry count, then per entry its
// name (u32 length + bytes), u64 offset, u64 size and the 64-bit FNV-1a of its bytes, then
// the entries' bytes. The first entry is "metadata.json"; the blobs follow sorted by name.
// Folder: metadata.json and the blobs as files of the same names.
//
// Reading checks everything (magic, versions, bounds, entry and blob hashes, that every
// blob the metadata lists is there with its size and hash, and that every kernel's blobs
// are listed), so a corrupt or truncated module is a loom::Error naming the file, never a
// crash.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/aot/module.h"

namespace loom::aot {

// The conventional extension of module archives.
constexpr const char* kModuleExtension = ".loommod";

// `module` must be finalized (finalize_module). Same module, same bytes.
std::vector<uint8_t> write_module_archive(const Module& module);
// Writes the archive atomically (a temporary file renamed over `path`).
void save_module_archive(const Module& module, const std::string& path);
// Creates `dir` if needed and writes metadata.json and the blobs into it.
void save_module_folder(const Module& module, const std::string& dir);

// `what` names the source in errors.
Module read_module_bytes(const std::vector<uint8_t>& bytes, const std::string& what);
// An archive file or a module folder.
Module read_module_path(const std::string& path);

}  // namespace loom::aot
