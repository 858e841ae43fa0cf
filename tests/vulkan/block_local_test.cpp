// Block-local storage on Vulkan (a kernel's `block_local`, codegen_spirv/block_local.h): a
// 2-d task reading a named resource at small constant offsets of its indices fills a tile
// and its halo in workgroup memory, and its reads come from there. The answers must be the
// CPU's (which ignores the request) bit for bit, on ranges that are no multiple of a tile,
// with asymmetric halos, on fields and ndarrays, and on grids of more tiles than a row of
// workgroups holds; a resource that cannot be staged is read in place, with a note saying why.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "compiler/graph/graph_builder.h"
#include "engine_plugin/include/loom/program.h"
#include "tests/support/vulkan_required.h"

namespace loom {
namespace {

using namespace graph::build;

ProgramOptions on(Backend b, std::vector<std::string>* notes) {
  ProgramOptions o;
  o.backend = b;
  o.offline_cache = false;
  o.validation = true;
  o.warn = [notes](const std::string& m) { notes->push_back(m); };
  return o;
}

std::vector<int32_t> ints(Program& p, const std::string& name) {
  ArrayView v = p.array(name);
  std::vector<int32_t> out(v.bytes / 4);
  std::memcpy(out.data(), v.data, v.bytes);
  return out;
}

void fill(Program& p, const std::string& name) {
  ArrayView v = p.array(name);
  std::vector<int32_t> values(v.bytes / 4);
  uint32_t x = 12345;
  for (int32_t& e : values) {  // irregular, so a read from the wrong place shows
    x = x * 1664525u + 1013904223u;
    e = static_cast<int32_t>(x >> 12) - (1 << 19);
  }
  std::memcpy(v.data, values.data(), v.bytes);
}

// One input pin that reads `src` at (i + di, j + dj), from node ids `id`, `id + 1`, `id + 2`.
std::vector<N> read_at(int id, int loop, int di, int dj, const std::string& kind,
                       const std::string& src) {
  return {N(id, "add").in("a", ln(loop, "i0")).in("b", di),
          N(id + 1, "add").in("a", ln(loop, "i1")).in("b", dj),
          N(id + 2, "load").in("i0", ln(id)).in("i1", ln(id + 1)).p(kind, src)};
}

// out[i, j] = sum of weight_k * src[i + di_k, j + dj_k] over `taps`, for i in [lo, rows - hi)
// and j in [lo, cols - hi); `src` a field (fields u/out of `rows` x `cols`) or an ndarray
// parameter. The taps' weights differ, so two swapped reads change the sum.
graph::Document stencil(const std::vector<std::pair<int, int>>& taps, int lo, int hi, bool on_field,
                        int64_t rows, int64_t cols, bool in_place = false) {
  graph::Document doc;
  const std::string kind = on_field ? "field" : "ndarray";
  graph::KernelDecl k =
      on_field
          ? kernel("stencil", {}, {})
          : kernel("stencil", {ndarray_param("u", "i32", 2), ndarray_param("out", "i32", 2)}, {});
  if (on_field) {
    doc.fields.push_back(FieldDesc{"u", {Scalar::I32}, {rows, cols}, Layout::AoS});
    doc.fields.push_back(FieldDesc{"out", {Scalar::I32}, {rows, cols}, Layout::AoS});
  }
  const std::string dst = in_place ? "u" : "out";
  std::vector<N> body;
  int id = 10, sum = -1;
  for (size_t t = 0; t < taps.size(); ++t) {
    for (auto& n : read_at(id, 5, taps[t].first, taps[t].second, kind, "u")) body.push_back(n);
    body.push_back(N(id + 3, "mul").in("a", ln(id + 2)).in("b", static_cast<int>(2 * t + 1)));
    if (sum < 0) {
      sum = id + 3;
    } else {
      body.push_back(N(id + 4, "add").in("a", ln(sum)).in("b", ln(id + 3)));
      sum = id + 4;
    }
    id += 5;
  }
  body.push_back(
      N(id, "store").in("i0", ln(5, "i0")).in("i1", ln(5, "i1")).in("value", ln(sum)).p(kind, dst));
  N loop = N(5, "range_for")
               .in("begin0", lo)
               .in("end0", ln(3))
               .in("begin1", lo)
               .in("end1", ln(4))
               .region("body", {});
  for (const N& n : body) loop.node.regions[0].nodes.push_back(n.node);
  k.nodes = {N(1, "shape").p(kind, "u").p("dim", 0), N(2, "shape").p(kind, "u").p("dim", 1),
             N(3, "sub").in("a", ln(1)).in("b", hi), N(4, "sub").in("a", ln(2)).in("b", hi), loop};
  k.block_local = {"u"};
  doc.kernels.push_back(k);
  return doc;
}

struct Outcome {
  std::vector<int32_t> out;
  std::vector<std::string> notes;
  std::string spirv;
};

Outcome run(Backend backend, const graph::Document& doc, bool on_field, int64_t rows,
            int64_t cols) {
  Outcome r;
  Program p(on(backend, &r.notes));
  p.load(doc);
  Args args;
  if (!on_field) {
    p.create_ndarray("a", {Scalar::I32}, {rows, cols});
    p.create_ndarray("b", {Scalar::I32}, {rows, cols});
    args = {{"u", "a"}, {"out", "b"}};
  }
  fill(p, on_field ? "u" : "a");
  p.launch("stencil", args);
  r.out = ints(p, on_field ? "out" : "b");
  if (backend == Backend::Vulkan) r.spirv = p.spirv_text("stencil", args);
  return r;
}

// The instance the launch compiled staged `u` (no note saying otherwise), and so does the
// SPIR-V of the same instantiation.
bool staged(const Outcome& r) {
  for (const std::string& n : r.notes)
    if (n.find("stays out of workgroup memory") != std::string::npos) return false;
  return r.spirv.find("\"tile_0\"") != std::string::npos;
}

const std::vector<std::pair<int, int>> kFivePoint = {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}};

TEST(BlockLocal, FivePointStencilOnAFieldReadsTheTileAndMatchesTheCpu) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{77, 53}, {9, 200}, {300, 17}, {3, 3}}) {
    graph::Document doc = stencil(kFivePoint, 1, 1, true, rows, cols);
    Outcome cpu = run(Backend::Cpu, doc, true, rows, cols);
    Outcome gpu = run(Backend::Vulkan, doc, true, rows, cols);
    EXPECT_TRUE(staged(gpu)) << rows << "x" << cols;
    EXPECT_EQ(gpu.out, cpu.out) << rows << "x" << cols;
    for (const std::string& n : gpu.notes)
      EXPECT_EQ(n.find("stays out of workgroup memory"), std::string::npos) << n;
  }
}

TEST(BlockLocal, AsymmetricHalosOnNdarraysMatchTheCpu) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  // Offsets from -3 to +2 along rows and -1 to +4 along columns: ranges [3, rows - 2) and
  // [1, cols - 4).
  const std::vector<std::pair<int, int>> taps = {{-3, 0}, {2, 1}, {0, 4}, {1, -1}, {0, 0}};
  graph::Document doc = stencil(taps, 3, 4, false, 61, 45);
  Outcome cpu = run(Backend::Cpu, doc, false, 61, 45);
  Outcome gpu = run(Backend::Vulkan, doc, false, 61, 45);
  EXPECT_TRUE(staged(gpu));
  EXPECT_EQ(gpu.out, cpu.out);
}

TEST(BlockLocal, GridsOfMoreTilesThanARowOfWorkgroupsFoldIntoY) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  // 8 rows by 1,120,000 columns: 70,000 tiles of 16 columns, past 65,535 workgroups along x.
  const int64_t rows = 10, cols = 16 * 70000 + 2;
  graph::Document doc = stencil(kFivePoint, 1, 1, false, rows, cols);
  Outcome cpu = run(Backend::Cpu, doc, false, rows, cols);
  Outcome gpu = run(Backend::Vulkan, doc, false, rows, cols);
  EXPECT_TRUE(staged(gpu));
  size_t wrong = 0;
  for (size_t i = 0; i < cpu.out.size(); ++i) wrong += gpu.out[i] != cpu.out[i];
  EXPECT_EQ(wrong, 0u);
}

TEST(BlockLocal, AResourceTheTaskWritesIsReadInPlaceWithANote) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  // u[i, j] = u[i, j] * 1: only its own element, so the answer is defined either way.
  graph::Document doc = stencil({{0, 0}}, 0, 0, true, 20, 20, /*in_place=*/true);
  Outcome cpu = run(Backend::Cpu, doc, true, 20, 20);
  Outcome gpu = run(Backend::Vulkan, doc, true, 20, 20);
  EXPECT_FALSE(staged(gpu));
  bool noted = false;
  for (const std::string& n : gpu.notes)
    noted |= n.find(
                 "kernel 'stencil': 'u' stays out of workgroup memory (block_local): the task "
                 "writes it") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_EQ(gpu.out, cpu.out);
}

TEST(BlockLocal, TheCpuIgnoresTheRequest) {
  graph::Document doc = stencil(kFivePoint, 1, 1, true, 12, 12);
  std::vector<std::string> notes;
  Program p(on(Backend::Cpu, &notes));
  p.load(doc);
  fill(p, "u");
  p.launch("stencil", {});
  EXPECT_TRUE(notes.empty());
}

}  // namespace
}  // namespace loom
