// Extents checked at launch through the C++ API (both backends): a loop bounded by a value
// parameter that indexes two ndarrays, one with an offset. Arguments too short for what the
// loop reaches are refused before anything runs; a loop that runs no iteration needs nothing.
#include <string>

#include "compiler/graph/document_json.h"
#include "tests/e2e/e2e_util.h"

namespace loom::test {
namespace {

constexpr const char* kDoc = R"({
  "format": "loom-graph",
  "version": 2,
  "name": "extent_check",
  "ndarrays": [{"name": "long", "type": "f32", "shape": [16]}, {"name": "short", "type": "f32", "shape": [8]}],
  "kernels": [
    {
      "name": "shift",
      "params": [{"name": "a", "kind": "ndarray", "type": "f32", "ndim": 1},
                 {"name": "b", "kind": "ndarray", "type": "f32", "ndim": 1},
                 {"name": "n", "kind": "value", "type": "i32"}],
      "nodes": [
        {"id": 1, "type": "param", "params": {"name": "n"}},
        {"id": 2, "type": "range_for", "inputs": {"end0": "1"}, "regions": {"body": [
          {"id": 3, "type": "add", "inputs": {"a": "2.i0", "b": 1}},
          {"id": 4, "type": "load", "inputs": {"i0": "3"}, "params": {"ndarray": "a"}},
          {"id": 5, "type": "add", "inputs": {"a": "4", "b": 1.0}},
          {"id": 6, "type": "store", "inputs": {"i0": "2.i0", "value": "5"}, "params": {"ndarray": "b"}}
        ]}}
      ]
    }
  ]
})";

TEST(ExtentCheck, ValueBoundedLoopsRefuseShortArgumentsBeforeRunning) {
  Program p(no_cache());
  p.load(graph::load_document(kDoc));
  // b[i] = a[i + 1] + 1 for i < n: b needs n elements, a needs n + 1.
  p.launch("shift", {{"a", "long"}, {"b", "short"}, {"n", 8}});
  EXPECT_EQ(element<float>(p.array("short"), 7), 1.0f);

  std::string e = error_of([&] { p.launch("shift", {{"a", "long"}, {"b", "short"}, {"n", 9}}); });
  EXPECT_NE(e.find("kernel 'shift'"), std::string::npos) << e;
  EXPECT_NE(e.find("ndarray 'b' has extent 8 along dimension 0, but the kernel indexes it up "
                   "to 8 with the loop up to parameter 'n' (9)"),
            std::string::npos)
      << e;

  e = error_of([&] { p.launch("shift", {{"a", "short"}, {"b", "long"}, {"n", 8}}); });
  EXPECT_NE(e.find("ndarray 'a' has extent 8 along dimension 0, but the kernel indexes it up "
                   "to 8 with the loop up to parameter 'n' (8) plus 1"),
            std::string::npos)
      << e;
  p.synchronize();
  for (int64_t i = 0; i < 16; ++i)  // neither refused launch ran
    ASSERT_EQ(element<float>(p.array("long"), i), 0.0f) << i;

  // No iteration, no assumption: a short `a` is fine when n is 0 (or negative).
  p.launch("shift", {{"a", "short"}, {"b", "long"}, {"n", 0}});
  p.launch("shift", {{"a", "short"}, {"b", "long"}, {"n", -3}});
  p.launch("shift", {{"a", "short"}, {"b", "long"}, {"n", 7}});
  p.synchronize();
  EXPECT_EQ(element<float>(p.array("long"), 6), 2.0f);  // short[7] + 1
  EXPECT_EQ(element<float>(p.array("long"), 7), 0.0f);
}

}  // namespace
}  // namespace loom::test
