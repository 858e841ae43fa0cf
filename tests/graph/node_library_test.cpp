#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "compiler/graph/expression.h"
#include "compiler/graph/json_value.h"
#include "compiler/graph/node_library.h"
#include "runtime/common/error.h"

using namespace loom;
using namespace loom::graph;

TEST(NodeLibrary, NamesAreUniqueAndFound) {
  std::set<std::string> names;
  for (const NodeSpec& s : node_library()) {
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    EXPECT_EQ(find_node_spec(s.name), &s);
    EXPECT_FALSE(s.summary.empty()) << s.name << " has no summary";
  }
  EXPECT_EQ(find_node_spec("nope"), nullptr);
  const NodeSpec* rf = find_node_spec("range_for");
  ASSERT_NE(rf, nullptr);
  EXPECT_TRUE(rf->effectful);
  EXPECT_EQ(rf->regions, std::vector<std::string>{"body"});
  EXPECT_TRUE(rf->input("end0")->required);
  EXPECT_EQ(rf->input("begin0")->default_value.kind, Literal::Kind::Int);
  EXPECT_TRUE(rf->has_output("i2"));
  EXPECT_FALSE(find_node_spec("add")->effectful);
}

TEST(NodeLibrary, EveryNodeIsDocumented) {
  std::ifstream in(std::string(LOOM_SOURCE_DIR) + "/docs/nodes.md");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  std::string doc = text.str();
  for (const NodeSpec& s : node_library())
    EXPECT_NE(doc.find("`" + s.name + "`"), std::string::npos)
        << s.name << " missing from docs/nodes.md";
}

namespace {

std::string show(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::Number:
      return e.integer ? std::to_string(static_cast<long>(e.number)) : std::to_string(e.number);
    case Expr::Kind::Bool:
      return e.number ? "true" : "false";
    case Expr::Kind::Var:
      return e.name;
    case Expr::Kind::Op:
      break;
  }
  if (e.name == "swizzle") return show(*e.args[0]) + "." + e.swizzle;
  std::string s = e.name + "(";
  for (size_t i = 0; i < e.args.size(); ++i) s += (i ? ", " : "") + show(*e.args[i]);
  return s + ")";
}

std::string parse_show(const std::string& text) { return show(*parse_expression(text)); }

}  // namespace

TEST(Expression, PrecedenceAndAssociativity) {
  EXPECT_EQ(parse_show("a*sin(b)+1"), "add(mul(a, sin(b)), 1)");
  EXPECT_EQ(parse_show("-a**2"), "neg(pow(a, 2))");
  EXPECT_EQ(parse_show("a**b**c"), "pow(a, pow(b, c))");
  EXPECT_EQ(parse_show("a - b - c"), "sub(sub(a, b), c)");
  EXPECT_EQ(parse_show("a < b && !c || d == 1"), "or(and(lt(a, b), not(c)), eq(d, 1))");
  EXPECT_EQ(parse_show("c ? a : b ? 1 : 2"), "select(c, a, select(b, 1, 2))");
  EXPECT_EQ(parse_show("clamp(x, 0, 1.5) % 2"), "mod(clamp(x, 0, 1.500000), 2)");
  EXPECT_EQ(parse_show("a<=b"), "le(a, b)");
  EXPECT_EQ(parse_show("true"), "true");
  EXPECT_EQ(parse_show("-v.xy * (a + b).x"), "mul(neg(v.xy), add(a, b).x)");
}

TEST(Expression, InputsInFirstUseOrder) {
  auto e = parse_expression("b * a + b - c");
  EXPECT_EQ(expression_inputs(*e), (std::vector<std::string>{"b", "a", "c"}));
}

TEST(Expression, ErrorsNameTheColumn) {
  auto message = [](const std::string& text) {
    try {
      parse_expression(text);
    } catch (const Error& e) {
      return e.message();
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("a + "), "column 5: expression ends too early");
  EXPECT_EQ(message("(a + b"), "column 7: expected ')'");
  EXPECT_EQ(message("a $ b"), "column 3: unexpected '$'");
  EXPECT_EQ(message("a ? b"), "column 6: expected ':'");
  EXPECT_EQ(message("v.q"), "column 3: expected components after '.', like .x, .xy or .rgb");
}

TEST(NodeLibrary, PinsOfDocumentDependentNodes) {
  Document doc;
  FunctionDecl f;
  f.name = "spring";
  f.inputs = {{"x", "f32"}, {"k", "f32"}};
  f.outputs = {{"force", "f32"}};
  doc.functions.push_back(f);
  Node call;
  call.type = "call";
  Literal name;
  name.kind = Literal::Kind::String;
  name.s = "spring";
  call.params.emplace_back("function", name);
  EXPECT_EQ(node_input_pins(doc, call), (std::vector<std::string>{"x", "k"}));
  EXPECT_EQ(node_output_pins(doc, call), std::vector<std::string>{"force"});

  Node branch;
  branch.type = "if";
  Node yield;
  yield.type = "yield";
  yield.inputs.push_back(Input{"color", false, -1, "", {}});
  branch.regions.push_back(Region{"then", {yield}});
  EXPECT_EQ(node_output_pins(doc, branch), std::vector<std::string>{"color"});
  EXPECT_EQ(node_input_pins(doc, branch), std::vector<std::string>{"cond"});

  // An expr shows its formula's variables as pins before they have values; other inputs
  // it has come after; a formula being typed keeps the pins it had.
  Node expr;
  expr.type = "expr";
  Literal formula;
  formula.kind = Literal::Kind::String;
  formula.s = "c + k * (n - 4.0 * c) + sin(t)";
  expr.params.emplace_back("expr", formula);
  expr.inputs.push_back(Input{"old", false, -1, "", {}});
  EXPECT_EQ(node_input_pins(doc, expr), (std::vector<std::string>{"c", "k", "n", "t", "old"}));
  expr.params[0].second.s = "c + (";
  EXPECT_EQ(node_input_pins(doc, expr), std::vector<std::string>{"old"});

  Node add;
  add.type = "add";
  EXPECT_EQ(node_output_pins(doc, add), std::vector<std::string>{"out"});
  EXPECT_EQ(node_input_pins(doc, add), (std::vector<std::string>{"a", "b"}));
}

// docs/graph.schema.json lists every node type of the library (and nothing else), in
// palette order, and states the current version of every type above version 1.
TEST(NodeLibrary, SchemaListsEveryNodeTypeAndVersion) {
  std::ifstream in(std::string(LOOM_SOURCE_DIR) + "/docs/graph.schema.json");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  JsonValue schema = parse_json(text.str(), "graph.schema.json");
  const JsonValue* defs = schema.find("$defs");
  ASSERT_NE(defs, nullptr);
  const JsonValue* node_type = defs->find("nodeType");
  ASSERT_NE(node_type, nullptr);
  std::vector<std::string> in_schema;
  for (const JsonValue& v : node_type->find("enum")->items) in_schema.push_back(v.text);
  std::vector<std::string> in_library;
  for (const NodeSpec& s : node_library()) in_library.push_back(s.name);
  EXPECT_EQ(in_schema, in_library);
  for (const std::string& name : in_library)
    EXPECT_NE(std::find(in_schema.begin(), in_schema.end(), name), in_schema.end()) << name << " missing from the schema";
  for (const std::string& name : in_schema)
    EXPECT_NE(find_node_spec(name), nullptr) << name << " is in the schema but not a node type";

  // Versions: one rule per type above version 1, and a last rule listing them all.
  const JsonValue* rules = defs->find("node")->find("allOf");
  ASSERT_NE(rules, nullptr);
  std::map<std::string, int> versioned;
  std::vector<std::string> listed_as_versioned;
  for (const JsonValue& rule : rules->items) {
    const JsonValue* type = rule.find("if")->find("properties")->find("type");
    if (const JsonValue* c = type->find("const"))
      versioned[c->text] = std::stoi(rule.find("then")->find("properties")->find("version")->find("const")->text);
    if (const JsonValue* e = type->find("enum"))
      for (const JsonValue& v : e->items) listed_as_versioned.push_back(v.text);
  }
  std::map<std::string, int> expected;
  std::vector<std::string> expected_list;
  for (const NodeSpec& s : node_library())
    if (s.version > 1) {
      expected[s.name] = s.version;
      expected_list.push_back(s.name);
    }
  EXPECT_EQ(versioned, expected);
  EXPECT_EQ(listed_as_versioned, expected_list);
  EXPECT_EQ(schema.find("properties")->find("version")->find("const")->text, std::to_string(kFormatVersion));
}
