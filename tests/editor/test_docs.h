// Small documents the editor tests share.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace loom::editor::test {

// A kernel with a parameter, a loop whose body loads, computes and stores, and a function.
inline const char* kSmallDoc = R"({
  "format": "loom-graph",
  "version": 2,
  "name": "small",
  "fields": [
    {"name": "f", "type": "f32", "shape": [64]},
    {"name": "v", "type": "f32x3", "shape": [64]}
  ],
  "functions": [
    {
      "name": "twice",
      "inputs": [{"name": "x", "type": "f32"}],
      "outputs": [{"name": "y", "type": "f32"}],
      "nodes": [
        {"id": 1, "type": "input", "params": {"name": "x"}},
        {"id": 2, "type": "mul", "inputs": {"a": "1", "b": 2.0}},
        {"id": 3, "type": "output", "inputs": {"y": "2"}}
      ]
    }
  ],
  "kernels": [
    {
      "name": "k",
      "params": [
        {"name": "s", "kind": "value", "type": "f32"}
      ],
      "nodes": [
        {"id": 1, "type": "param", "params": {"name": "s"}},
        {"id": 2, "type": "range_for", "inputs": {"end0": 64}, "regions": {"body": [
          {"id": 7, "type": "load", "inputs": {"i0": "2.i0"}, "params": {"field": "v"}},
          {"id": 3, "type": "load", "inputs": {"i0": "2.i0"}, "params": {"field": "f"}},
          {"id": 4, "type": "mul", "inputs": {"a": "3", "b": "1"}},
          {"id": 5, "type": "call", "inputs": {"x": "4"}, "params": {"function": "twice"}},
          {"id": 6, "type": "store", "inputs": {"i0": "2.i0", "value": "5.y"}, "params": {"field": "f"}}
        ]}}
      ]
    }
  ],
  "pipelines": [
    {"name": "step", "launches": [
      {"kernel": "k", "args": {"s": 0.5}}
    ]}
  ],
  "layout": [
    {"graph": "twice", "positions": {"1": [0, 0], "2": [200, 0], "3": [400, 0]}},
    {"graph": "k", "positions": {"1": [0, 200], "2": [0, 0], "3": [250, 0], "4": [450, 0], "5": [650, 0], "6": [850, 0], "7": [250, 120]}}
  ]
}
)";

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace loom::editor::test
