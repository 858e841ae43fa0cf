#include "bench/big_graph.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace loom::bench {

std::string big_graph(int n) {
  const int rows = std::max(1, static_cast<int>(std::sqrt(n * 0.6)));
  const char* ops[] = {"add", "mul", "sub", "max", "mix", "sin", "sqrt", "fma"};
  std::string nodes, body, positions, comments;
  auto position = [&](int id, int col, int row) {
    positions += std::string(positions.empty() ? "" : ", ") + "\"" + std::to_string(id) + "\": [" +
                 std::to_string(col * 240) + ", " + std::to_string(row * 130) + "]";
  };
  int loop = n;  // the loop node's id
  int in_body = n / 10;
  for (int i = 0; i < n; ++i) {
    int col = i / rows, row = i % rows;
    std::string node;
    if (col == 0) {
      node = "{\"id\": " + std::to_string(i) +
             ", \"type\": \"const\", \"params\": {\"value\": " + std::to_string(i) + ".5}}";
    } else {
      const char* op = ops[i % 8];
      auto src = [&](int k) {
        return "\"" + std::to_string(((col - 1) * rows + (row + k) % rows)) + "\"";
      };
      std::string in = "\"a\": " + src(0);
      if (std::strcmp(op, "sin") && std::strcmp(op, "sqrt")) in += ", \"b\": " + src(1);
      if (!std::strcmp(op, "mix") || !std::strcmp(op, "fma"))
        in += std::string(", \"") + (op[0] == 'm' ? "t" : "c") + "\": 0.5";
      node =
          "{\"id\": " + std::to_string(i) + ", \"type\": \"" + op + "\", \"inputs\": {" + in + "}}";
    }
    // The last tenth lives in the loop body (they read top-level nodes: visible from there).
    std::string& list = i >= n - in_body ? body : nodes;
    list += std::string(list.empty() ? "" : ",\n") + node;
    position(i, col, row);
    if (i % 100 == 0)
      comments += std::string(comments.empty() ? "" : ", ") + "{\"title\": \"Block " +
                  std::to_string(i / 100) + "\", \"rect\": [" + std::to_string(col * 240 - 20) +
                  ", " + std::to_string(row * 130 - 40) + ", 700, 500], \"color\": \"#3a6ea5\"}";
  }
  nodes += ",\n{\"id\": " + std::to_string(loop) +
           ", \"type\": \"range_for\", \"inputs\": {\"end0\": 64}, \"regions\": {\"body\": [\n" +
           body + "]}}";
  position(loop, -1, 0);
  return R"({"format": "loom-graph", "version": 2, "kernels": [{"name": "big", "nodes": [)" +
         nodes + R"(]}], "layout": [{"graph": "big", "positions": {)" + positions +
         "}, \"comments\": [" + comments + "]}]}";
}

}  // namespace loom::bench
