// record_resource_access: what a kernel's final code reads, writes and updates atomically,
// named as an engine's render graph needs it (parameter, field, "pack.member").
#include "compiler/passes/resource_access.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/graph/document_json.h"
#include "compiler/graph/lower.h"
#include "compiler/ir/inst.h"
#include "compiler/passes/pipeline.h"

using namespace loom;

namespace {

constexpr const char* kDoc = R"({
  "format": "loom-graph",
  "version": 2,
  "name": "access",
  "fields": [{"name": "f", "type": "f32", "shape": [16]}, {"name": "g", "type": "f32", "shape": [16]}],
  "argpack_types": [
    {"name": "Inner", "kind": "pack", "members": [{"name": "grid", "ndarray": "f32", "ndim": 1}]},
    {"name": "Job", "kind": "pack", "members": [
      {"name": "scale", "type": "f32"},
      {"name": "src", "ndarray": "f32", "ndim": 1},
      {"name": "dst", "ndarray": "f32", "ndim": 1},
      {"name": "idle", "ndarray": "f32", "ndim": 1},
      {"name": "inner", "pack": "Inner"}]}
  ],
  "kernels": [
    {
      "name": "touch",
      "params": [
        {"name": "a", "kind": "ndarray", "type": "f32", "ndim": 1},
        {"name": "b", "kind": "ndarray", "type": "f32", "ndim": 1},
        {"name": "c", "kind": "ndarray", "type": "i32", "ndim": 1},
        {"name": "d", "kind": "ndarray", "type": "f32", "ndim": 1},
        {"name": "job", "kind": "argpack", "type": "Job"},
        {"name": "img", "kind": "texture", "type": "rgba32f", "ndim": 2},
        {"name": "out", "kind": "texture", "type": "rgba32f", "ndim": 2},
        {"name": "tf", "kind": "template", "type": "field"}
      ],
      "nodes": [
        {"id": 1, "type": "range_for", "inputs": {"end0": 16}, "regions": {"body": [
          {"id": 2, "type": "load", "inputs": {"i0": "1.i0"}, "params": {"ndarray": "a"}},
          {"id": 3, "type": "load", "inputs": {"i0": "1.i0"}, "params": {"ndarray": "d"}},
          {"id": 4, "type": "store", "inputs": {"i0": "1.i0", "value": "2"}, "params": {"ndarray": "b"}},
          {"id": 5, "type": "atomic_add", "inputs": {"i0": 0, "value": 1}, "params": {"ndarray": "c"}},
          {"id": 6, "type": "load", "inputs": {"i0": "1.i0"}, "params": {"ndarray": "job.src"}},
          {"id": 7, "type": "load", "inputs": {"i0": "1.i0"}, "params": {"field": "f"}},
          {"id": 8, "type": "add", "inputs": {"a": "6", "b": "7"}},
          {"id": 9, "type": "store", "inputs": {"i0": "1.i0", "value": "8"}, "params": {"ndarray": "job.dst"}},
          {"id": 10, "type": "load", "inputs": {"i0": "1.i0"}, "params": {"ndarray": "job.inner.grid"}},
          {"id": 11, "type": "store", "inputs": {"i0": "1.i0", "value": "10"}, "params": {"ndarray": "job.inner.grid"}},
          {"id": 12, "type": "tex_load", "inputs": {"x": "1.i0", "y": 0}, "params": {"texture": "img"}},
          {"id": 13, "type": "tex_store", "inputs": {"x": "1.i0", "y": 0, "value": "12"}, "params": {"texture": "out"}},
          {"id": 14, "type": "load", "inputs": {"i0": "1.i0"}, "params": {"field": "tf"}},
          {"id": 15, "type": "store", "inputs": {"i0": "1.i0", "value": "14"}, "params": {"field": "tf"}}
        ]}}
      ]
    },
    {
      "name": "serial",
      "params": [{"name": "c", "kind": "ndarray", "type": "i32", "ndim": 1}],
      "nodes": [
        {"id": 1, "type": "atomic_add", "inputs": {"i0": 0, "value": 1}, "params": {"ndarray": "c"}}
      ]
    },
    {
      "name": "dead",
      "params": [{"name": "a", "kind": "ndarray", "type": "f32", "ndim": 1},
                 {"name": "b", "kind": "ndarray", "type": "f32", "ndim": 1}],
      "nodes": [
        {"id": 1, "type": "range_for", "inputs": {"end0": 4}, "regions": {"body": [
          {"id": 2, "type": "if", "inputs": {"cond": false}, "regions": {"then": [
            {"id": 3, "type": "store", "inputs": {"i0": "1.i0", "value": 1.0}, "params": {"ndarray": "b"}}
          ]}},
          {"id": 4, "type": "load", "inputs": {"i0": "1.i0"}, "params": {"ndarray": "a"}}
        ]}}
      ]
    }
  ]
})";

// "a:r b:w ..." in slot order: the whole list, so anything extra or missing shows.
std::string accesses(const std::string& kernel, bool pipeline = true) {
  graph::Document doc = graph::load_document(kDoc);
  graph::TemplateArgs targs;
  graph::TemplateArg field;
  field.kind = graph::TemplateArg::Kind::Field;
  field.field = "g";
  if (kernel == "touch") targs.set("tf", field);
  std::unique_ptr<ir::Kernel> k = graph::lower_kernel(doc, kernel, targs);
  if (pipeline) passes::run_pipeline(*k, {});
  std::string out = k->abi.resource_access_known ? "" : "unknown";
  for (const ResourceAccess& a : k->abi.resource_access)
    out += (out.empty() ? "" : " ") + a.name + ":" + resource_access_name(a.access);
  return out;
}

}  // namespace

TEST(ResourceAccess, ReadsWritesAndAtomicsOfTheFinalCode) {
  // d's load is dead (its value is unused) and the passes remove it, so d is not listed;
  // job.idle is never used; job.inner.grid is read and written; tf is the field bound to it.
  EXPECT_EQ(accesses("touch"),
            "a:r b:w c:a img:r out:w job.src:r f:r job.dst:w job.inner.grid:rw g:rw");
}

TEST(ResourceAccess, AtomicsInSerialCodeAreAPlainReadAndWrite) {
  // One thread runs serial code, so demote_atomics makes the atomic a load and a store.
  EXPECT_EQ(accesses("serial"), "c:rw");
}

TEST(ResourceAccess, CodeThePassesRemoveDoesNotCount) { EXPECT_EQ(accesses("dead"), ""); }

TEST(ResourceAccess, UnknownUntilRecorded) {
  // Lowering alone names the argpack members it binds but records no access.
  EXPECT_EQ(accesses("serial", /*pipeline=*/false), "unknown");
  graph::Document doc = graph::load_document(kDoc);
  std::unique_ptr<ir::Kernel> k = graph::lower_kernel(doc, "dead");
  EXPECT_FALSE(passes::record_resource_access(*k));  // records, never changes the IR
  EXPECT_TRUE(k->abi.resource_access_known);
  ASSERT_EQ(k->abi.resource_access.size(), 2u);  // before the passes both accesses are there
  EXPECT_EQ(k->abi.resource_access[0].name, "a");
  EXPECT_EQ(k->abi.resource_access[0].access, kResourceRead);
  EXPECT_EQ(k->abi.resource_access[1].name, "b");
  EXPECT_EQ(k->abi.resource_access[1].access, kResourceWrite);
}
