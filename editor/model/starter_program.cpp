#include "editor/model/starter_program.h"

#include "compiler/graph/document_json.h"

namespace loom::editor {

namespace {

// Canonical document text (docs/graph-format.md), so a new document saved untouched is this.
constexpr const char* kStarter = R"json({
  "format": "loom-graph",
  "version": 2,
  "name": "untitled",
  "fields": [
    {"name": "u", "type": "f32", "shape": [128, 128]}
  ],
  "kernels": [
    {
      "name": "init",
      "nodes": [
        {"id": 1, "type": "range_for", "inputs": {"end0": 128, "end1": 128}, "regions": {"body": [
          {"id": 2, "type": "expr", "inputs": {"x": "1.i0", "y": "1.i1"}, "params": {"expr": "sin(x * 0.1) * cos(y * 0.1)"}},
          {"id": 3, "type": "store", "inputs": {"i0": "1.i0", "i1": "1.i1", "value": "2"}, "params": {"field": "u"}}
        ]}}
      ]
    },
    {
      "name": "step",
      "params": [
        {"name": "decay", "kind": "value", "type": "f32"}
      ],
      "nodes": [
        {"id": 1, "type": "param", "params": {"name": "decay"}},
        {"id": 2, "type": "range_for", "inputs": {"end0": 128, "end1": 128}, "regions": {"body": [
          {"id": 3, "type": "load", "inputs": {"i0": "2.i0", "i1": "2.i1"}, "params": {"field": "u"}},
          {"id": 4, "type": "mul", "inputs": {"a": "3", "b": "1"}},
          {"id": 5, "type": "store", "inputs": {"i0": "2.i0", "i1": "2.i1", "value": "4"}, "params": {"field": "u"}}
        ]}}
      ]
    }
  ],
  "pipelines": [
    {"name": "init", "launches": [
      {"kernel": "init"}
    ]},
    {"name": "step", "launches": [
      {"kernel": "step", "args": {"decay": 0.99}}
    ]}
  ],
  "layout": [
    {"graph": "init", "positions": {"1": [40, 40], "2": [260, 80], "3": [520, 80]}},
    {"graph": "step", "positions": {"1": [40, 220], "2": [40, 40], "3": [260, 80], "4": [480, 120], "5": [700, 80]}}
  ],
  "view": {"show": "u", "as": "image"}
}
)json";

}  // namespace

graph::Document starter_program() { return graph::load_document(kStarter, "<memory>"); }

}  // namespace loom::editor
