#include "compiler/graph/migrate.h"

#include <charconv>
#include <functional>

#include "compiler/graph/document.h"
#include "compiler/graph/node_library.h"
#include "runtime/common/error.h"

namespace loom::graph {

namespace {

JsonValue* member(JsonValue& object, const std::string& key) {
  for (auto& [k, v] : object.members)
    if (k == key) return &v;
  return nullptr;
}

void rename_member(JsonValue& object, const std::string& from, const std::string& to) {
  for (auto& [key, value] : object.members)
    if (key == from) key = to;
}

void rename_inputs(JsonValue& node,
                   std::initializer_list<std::pair<const char*, const char*>> renames) {
  JsonValue* inputs = member(node, "inputs");
  if (!inputs || inputs->kind != JsonValue::Kind::Object) return;
  for (const auto& [from, to] : renames) rename_member(*inputs, from, to);
}

// ---- format upgrades

// v1 "lerp" (from, to, t) became "mix" (a, b, t).
void upgrade_lerp(JsonValue& node) {
  if (JsonValue* type = member(node, "type")) type->text = "mix";
  rename_inputs(node, {{"from", "a"}, {"to", "b"}});
}

// v1 links {"node": 3, "pin": "out"} became the string "3.out".
void upgrade_links(JsonValue& node) {
  JsonValue* inputs = member(node, "inputs");
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

// ---- node type upgrades: (type, version) -> the node at version + 1

// clamp 1 (value, min, max) became clamp 2 (x, lo, hi): the pins no longer read like the
// min and max nodes, and match the formula call clamp(x, lo, hi).
void upgrade_clamp_1(JsonValue& node) {
  rename_inputs(node, {{"value", "x"}, {"min", "lo"}, {"max", "hi"}});
}

struct NodeUpgrade {
  const char* type;  // the node type at `from_version`
  int from_version;
  void (*upgrade)(JsonValue& node);  // rewrites the node to from_version + 1 (its type may change)
};

constexpr NodeUpgrade kNodeUpgrades[] = {
    {"clamp", 1, upgrade_clamp_1},
};

// ---- walking documents

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

void for_each_graph_node(JsonValue& root, const std::function<void(JsonValue&)>& fn) {
  for (auto& [section, list] : root.members) {
    if ((section != "kernels" && section != "functions") || list.kind != JsonValue::Kind::Array)
      continue;
    for (JsonValue& graph : list.items)
      if (JsonValue* nodes =
              graph.kind == JsonValue::Kind::Object ? member(graph, "nodes") : nullptr)
        for_each_node(*nodes, fn);
  }
}

// A whole number in JSON text that fits an int64, or nothing (the reader reports the rest).
bool read_int(const JsonValue& v, int64_t* out) {
  if (!v.is_integer()) return false;
  auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), *out);
  return ec == std::errc() && end == v.text.data() + v.text.size();
}

// Brings one node to its type's current version. Nodes of unknown types, with malformed
// versions or versions newer than this build are left to the reader and validator.
void upgrade_node(JsonValue& node) {
  JsonValue* type = member(node, "type");
  if (!type || type->kind != JsonValue::Kind::String) return;
  JsonValue* version = member(node, "version");
  int64_t v = 1;
  if (version && !read_int(*version, &v)) return;
  bool changed = false;
  for (;;) {
    const NodeSpec* spec = find_node_spec(type->text);
    if (!spec || v < 1 || v >= spec->version) break;
    const NodeUpgrade* step = nullptr;
    for (const NodeUpgrade& u : kNodeUpgrades)
      if (type->text == u.type && v == u.from_version) step = &u;
    if (!step)
      throw InternalError("node type '" + type->text + "' version " + std::to_string(v) +
                          " has no upgrade to version " + std::to_string(v + 1));
    step->upgrade(node);
    type = member(node, "type");
    ++v;
    changed = true;
  }
  if (!changed) return;
  if (version) {
    version->text = std::to_string(v);
    return;
  }
  // Canonical key order: "id", "type", "version", ...
  JsonValue number;
  number.kind = JsonValue::Kind::Number;
  number.text = std::to_string(v);
  number.line = type->line;
  number.column = type->column;
  size_t at = 0;
  while (at < node.members.size() && node.members[at].first != "type") ++at;
  node.members.insert(
      node.members.begin() + static_cast<std::ptrdiff_t>(std::min(at + 1, node.members.size())),
      {"version", number});
}

}  // namespace

void migrate_document(JsonValue& root, const std::string& path) {
  JsonValue* version = member(root, "version");
  if (!version || !version->is_integer()) return;  // the reader reports a missing or bad version
  auto where = [&] {
    return "line " + std::to_string(version->line) + ", column " + std::to_string(version->column) +
           ": version: ";
  };
  int64_t v = 0;
  if (!read_int(*version, &v) || v > kFormatVersion)
    throw Error(Place{path}, where() + "format version " + version->text +
                                 " is newer than this Loom understands (" +
                                 std::to_string(kFormatVersion) + "); update Loom");
  if (v < 1)
    throw Error(Place{path}, where() + "format version " + version->text + " does not exist");
  if (v == 1) {
    rename_member(root, "globals", "fields");
    for_each_graph_node(root, [](JsonValue& node) {
      upgrade_links(node);
      const JsonValue* type = node.find("type");
      if (type && type->text == "lerp") upgrade_lerp(node);
    });
    version->text = "2";
  }
  for_each_graph_node(root, [&](JsonValue& node) {
    try {
      upgrade_node(node);
    } catch (const Error& e) {
      throw Error(Place{path}, "line " + std::to_string(node.line) + ", column " +
                                   std::to_string(node.column) + ": " + e.message());
    }
  });
}

}  // namespace loom::graph
