// Block-local storage (Taichi's ti.block_local): a 2-d task that reads a resource at small
// constant offsets of its indices (a stencil) loads the tile its workgroup covers, and the
// halo around it, into workgroup memory once; the reads then come from there. Which loads
// qualify is decided here; the emitter (emit_spirv.cpp) fills the tiles and reads them.
// A kernel asks for it per resource (the document's `block_local`; ir::Kernel::
// block_local_slots); a resource that cannot be staged gets a note saying why.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace loom::ir {
class Kernel;
class Inst;
}  // namespace loom::ir

namespace loom::codegen {

// How a workgroup of `workgroup_size` invocations covers its tile: `cols` along the inner
// dimension (16 where the size allows, so rows of a tile are contiguous in memory), `rows`
// = workgroup_size / cols along the outer one.
struct TileShape {
  uint32_t cols = 1, rows = 1;
};
TileShape tile_shape(uint32_t workgroup_size);

// One resource staged for one task: the loads that read it at (i0 + row, i1 + col), and the
// smallest and largest offsets, which size the halo.
struct StagedResource {
  int32_t slot = -1;
  int32_t row_lo = 0, row_hi = 0, col_lo = 0, col_hi = 0;
  std::unordered_map<const ir::Inst*, std::pair<int32_t, int32_t>> loads;  // GlobalLoad: offsets

  uint32_t width(TileShape t) const { return t.cols + static_cast<uint32_t>(col_hi - col_lo); }
  uint32_t height(TileShape t) const { return t.rows + static_cast<uint32_t>(row_hi - row_lo); }
};

// The largest offset from a task's index a staged read may have, and the workgroup memory
// the tiles of one task may take (of the 16 KiB every Vulkan device has:
// maxComputeSharedMemorySize).
constexpr int32_t kMaxHalo = 8;
constexpr uint32_t kMaxTileBytes = 12288;
// The most loads per invocation filling one tile: past it the halo costs more than it saves.
constexpr uint32_t kMaxFillTrips = 8;

// The resources of `kernel.block_local_slots` task `offload` (a 2-d range or struct task in
// the direct form) can stage with tiles of `shape`; why each other one is not, in `notes`
// ("'u' stays out of workgroup memory (block_local): the task writes it (node 7)").
std::vector<StagedResource> plan_block_local(const ir::Kernel& kernel, const ir::Inst& offload,
                                             TileShape shape, std::vector<std::string>* notes);

}  // namespace loom::codegen
