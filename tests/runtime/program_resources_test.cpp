// Program-level resource creation on the CPU runtime: storage errors name the resource and
// leave the program usable; 3-d textures of depth 1 bind to 3-d texture parameters.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "compiler/graph/document.h"
#include "compiler/graph/document_json.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/common/error.h"

using namespace loom;

namespace {

ProgramOptions options() {
  ProgramOptions o;
  o.offline_cache = false;
  o.threads = 2;
  return o;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

constexpr const char* kVolume = R"doc({"format": "loom-graph", "version": 2, "name": "volume",
  "textures": [{"name": "vol", "size": [4, 3, 1], "format": "r32f"}, {"name": "img", "size": [4, 3], "format": "r32f"}],
  "kernels": [{"name": "paint", "params": [{"name": "t", "kind": "texture", "type": "r32f", "ndim": 3}],
    "nodes": [
      {"id": 1, "type": "range_for", "inputs": {"end0": 4, "end1": 3, "end2": 1}, "regions": {"body": [
        {"id": 2, "type": "cast", "inputs": {"a": "1.i0"}, "params": {"type": "f32"}},
        {"id": 3, "type": "cast", "inputs": {"a": "1.i1"}, "params": {"type": "f32"}},
        {"id": 4, "type": "expr", "inputs": {"x": "2", "y": "3"}, "params": {"expr": "vec4(x + 10.0 * y, 0.0, 0.0, 1.0)"}},
        {"id": 5, "type": "tex_store", "inputs": {"x": "1.i0", "y": "1.i1", "z": "1.i2", "value": "4"}, "params": {"texture": "t"}}
      ]}}]}]})doc";

}  // namespace

TEST(ProgramResources, ThreeDimensionalTextureOfDepthOneBinds) {
  Program p(options());
  p.load(graph::load_document(kVolume));
  p.launch("paint", {{"t", "vol"}});
  TextureView v = p.texture("vol");
  EXPECT_EQ(v.size, (std::vector<int64_t>{4, 3, 1}));
  ASSERT_EQ(v.bytes, 4u * 3 * 4);
  float texel[12];
  std::memcpy(texel, v.data, sizeof texel);
  EXPECT_EQ(texel[2 * 4 + 3], 3.0f + 10.0f * 2.0f);
  // A 2-d texture is still refused by the 3-d parameter.
  try {
    p.launch("paint", {{"t", "img"}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(has(e.what(), "3-d texture")) << e.what();
  }
}

TEST(ProgramResources, NdarrayExtentErrorsNameItAndLeaveTheNameFree) {
  Program p(options());
  p.load(graph::load_document(kVolume));
  for (int64_t n : {(int64_t{1} << 32) + 7, (int64_t{1} << 31) + 7}) {
    try {
      p.create_ndarray("a", {Scalar::F32}, {n});
      FAIL();
    } catch (const Error& e) {
      EXPECT_TRUE(has(e.what(), "ndarray 'a'") && has(e.what(), std::to_string(n))) << e.what();
    }
  }
  p.create_ndarray("a", {Scalar::F32}, {8});
  EXPECT_EQ(p.array("a").shape, std::vector<int64_t>{8});
}

TEST(ProgramResources, FieldTooLargeToAllocateIsAnErrorNotACrash) {
  Program p(options());
  constexpr const char* kHuge = R"doc({"format": "loom-graph", "version": 2, "name": "huge",
    "fields": [{"name": "rho", "type": "f32", "shape": [1073741824, 1073741824]}],
    "kernels": [{"name": "k", "nodes": [{"id": 1, "type": "store", "inputs": {"i0": 0, "i1": 0, "value": 1.0},
                 "params": {"field": "rho"}}]}]})doc";
  try {
    p.load(graph::load_document(kHuge));
    p.launch("k");
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(has(e.what(), "field 'rho'") && has(e.what(), "4611686018427387904 bytes"))
        << e.what();
  }
}
