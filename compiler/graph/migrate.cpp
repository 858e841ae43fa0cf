#include "compiler/graph/migrate.h"

#include <functional>

#include "compiler/graph/document.h"
#include "runtime/common/error.h"

namespace loom::graph {

namespace {

void rename_member(JsonValue& object, const std::string& from, const std::string& to) {
  for (auto& [key, value] : object.members)
    if (key == from) key = to;
}

// v1 "lerp" (from, to, t) became "mix" (a, b, t).
void upgrade_lerp(JsonValue& node) {
  for (auto& [key, value] : node.members) {
    if (key == "type") value.text = "mix";
    if (key == "inputs") {
      rename_member(value, "from", "a");
      rename_member(value, "to", "b");
    }
  }
}

// v1 links {"node": 3, "pin": "out"} became the string "3.out".
void upgrade_links(JsonValue& node) {
  JsonValue* inputs = nullptr;
  for (auto& [key, value] : node.members)
    if (key == "inputs") inputs = &value;
  if (!inputs) return;
  for (auto& [pin, value] : inputs->members) {
    const JsonValue* from = value.kind == JsonValue::Kind::Object ? value.find("node") : nullptr;
    if (!from) continue;
    const JsonValue* out = value.find("pin");
    JsonValue link;
    link.kind = JsonValue::Kind::String;
    link.line = value.line;
    link.column = value.column;
    link.text = from->text + (out && out->text != "out" ? "." + out->text : "");
    value = link;
  }
}

struct NodeUpgrade {
  const char* type;     // node type in the old document
  int from_format;      // document format version the upgrade applies to
  std::function<void(JsonValue&)> upgrade;
};

const NodeUpgrade kNodeUpgrades[] = {
    {"lerp", 1, upgrade_lerp},
};

void for_each_node(JsonValue& nodes, const std::function<void(JsonValue&)>& fn) {
  if (nodes.kind != JsonValue::Kind::Array) return;
  for (JsonValue& node : nodes.items) {
    if (node.kind != JsonValue::Kind::Object) continue;
    fn(node);
    for (auto& [key, value] : node.members)
      if (key == "regions" && value.kind == JsonValue::Kind::Object)
        for (auto& region : value.members) for_each_node(region.second, fn);
  }
}

void upgrade_graphs(JsonValue& root, int from_format, const std::function<void(JsonValue&)>& fn) {
  for (auto& [section, list] : root.members) {
    if ((section != "kernels" && section != "functions") || list.kind != JsonValue::Kind::Array) continue;
    for (JsonValue& graph : list.items)
      for (auto& [key, value] : graph.members)
        if (key == "nodes") for_each_node(value, fn);
  }
  (void)from_format;
}

}  // namespace

void migrate_document(JsonValue& root, const std::string& path) {
  JsonValue* version = nullptr;
  for (auto& [key, value] : root.members)
    if (key == "version") version = &value;
  if (!version || !version->is_integer()) return;  // the reader reports the missing version
  int v = std::stoi(version->text);
  if (v > kFormatVersion)
    throw Error(Place{path}, "format version " + std::to_string(v) + " is newer than this Loom understands (" +
                                 std::to_string(kFormatVersion) + "); update Loom");
  if (v < 1) throw Error(Place{path}, "format version " + std::to_string(v) + " does not exist");
  if (v == 1) {
    rename_member(root, "globals", "fields");
    upgrade_graphs(root, 1, [](JsonValue& node) {
      upgrade_links(node);
      const JsonValue* type = node.find("type");
      for (const NodeUpgrade& u : kNodeUpgrades)
        if (u.from_format == 1 && type && type->text == u.type) u.upgrade(node);
    });
    version->text = "2";
  }
}

}  // namespace loom::graph
