#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "compiler/graph/expression.h"
#include "compiler/graph/json_value.h"
#include "compiler/graph/lowerer.h"
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

std::string read_source_file(const std::string& path) {
  std::ifstream in(std::string(LOOM_SOURCE_DIR) + "/" + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The cells of a markdown table row "| a | b |", trimmed; empty when `line` is no row.
std::vector<std::string> table_cells(const std::string& line) {
  std::vector<std::string> cells;
  if (line.size() < 2 || line[0] != '|') return cells;
  size_t at = 1;
  for (size_t bar; (bar = line.find('|', at)) != std::string::npos; at = bar + 1) {
    std::string cell = line.substr(at, bar - at);
    size_t b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
    cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
  }
  return cells;
}

// The `quoted` names of a cell, in order.
std::vector<std::string> code_names(const std::string& cell) {
  std::vector<std::string> names;
  for (size_t open = cell.find('`'); open != std::string::npos; open = cell.find('`', open)) {
    size_t close = cell.find('`', open + 1);
    if (close == std::string::npos) break;
    names.push_back(cell.substr(open + 1, close - open - 1));
    open = close + 1;
  }
  return names;
}

// One row of a docs/nodes.md table: the node types of its first cell, and its cells by the
// table's column names.
struct DocRow {
  std::vector<std::string> types;
  std::map<std::string, std::string> cells;
  std::string first_column;  // "node", or "node type" in the versions table
};

std::vector<DocRow> node_doc_rows(const std::string& markdown) {
  std::vector<DocRow> rows;
  std::vector<std::string> header;
  std::istringstream lines(markdown);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells = table_cells(line);
    if (cells.empty()) {
      header.clear();
      continue;
    }
    if (header.empty()) {
      header = cells;
      continue;
    }
    if (cells[0].rfind("---", 0) == 0) continue;  // the line under the header
    if (header[0] != "node" && header[0] != "node type") continue;
    DocRow row{code_names(cells[0]), {}, header[0]};
    for (size_t i = 0; i < cells.size() && i < header.size(); ++i) row.cells[header[i]] = cells[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

// docs/nodes.md has one row for every node type of the table and no row for anything else;
// where its tables say whether a type is ordered, which regions it has or its version, they
// say what the table says.
TEST(NodeLibrary, DocRowsMatchTheTable) {
  std::vector<DocRow> rows = node_doc_rows(read_source_file("docs/nodes.md"));
  ASSERT_FALSE(rows.empty());
  std::map<std::string, int> documented;
  std::map<std::string, int> versions;
  for (const DocRow& row : rows) {
    EXPECT_FALSE(row.types.empty())
        << "a row of docs/nodes.md names no node type: " << row.cells.begin()->second;
    for (const std::string& name : row.types) {
      const NodeSpec* spec = find_node_spec(name);
      EXPECT_NE(spec, nullptr) << "docs/nodes.md documents '" << name
                               << "', which is not a node type";
      if (!spec) continue;
      if (row.first_column == "node type") {
        versions[name] = std::stoi(row.cells.at("version"));
        continue;
      }
      ++documented[name];
      if (auto ordered = row.cells.find("ordered"); ordered != row.cells.end()) {
        EXPECT_EQ(ordered->second == "yes", spec->effectful) << name << ": the 'ordered' column";
      }
      if (auto regions = row.cells.find("regions"); regions != row.cells.end()) {
        EXPECT_EQ(code_names(regions->second), spec->regions) << name << ": the 'regions' column";
      }
    }
  }
  std::map<std::string, int> expected_versions;
  for (const NodeSpec& s : node_library()) {
    EXPECT_EQ(documented[s.name], 1) << s.name << " needs exactly one row in docs/nodes.md";
    if (s.version > 1) expected_versions[s.name] = s.version;
  }
  EXPECT_EQ(versions, expected_versions) << "the 'Node versions' table of docs/nodes.md";
}

// Every entry of the node table lowers, and says where the pins of a document-dependent
// type come from.
TEST(NodeLibrary, EveryTypeHasItsLoweringAndPins) {
  for (const NodeSpec& s : node_library()) {
    const detail::NodeType* t = detail::find_node_type(s.name);
    ASSERT_NE(t, nullptr) << s.name;
    EXPECT_EQ(t->spec, &s) << s.name;
    EXPECT_NE(t->lower, nullptr) << s.name << " has no lowering";
    EXPECT_EQ(t->value != nullptr, s.formula_call) << s.name;
    EXPECT_EQ(s.any_inputs, s.document_inputs != nullptr) << s.name;
    EXPECT_EQ(s.any_outputs, s.document_outputs != nullptr) << s.name;
  }
  EXPECT_EQ(detail::find_node_type("sine"), nullptr);
}

// Formulas call exactly these node types by name (issue 14 widens the set); the table says
// which through their value forms.
TEST(NodeLibrary, FormulasCallTheOperationsOfTheTable) {
  const std::set<std::string> callable = {
      "add",       "sub",    "mul",       "div",         "mod",     "pow",    "min",   "max",
      "atan2",     "eq",     "ne",        "lt",          "le",      "gt",     "ge",    "and",
      "or",        "xor",    "shl",       "shr",         "neg",     "not",    "abs",   "sign",
      "floor",     "ceil",   "round",     "fract",       "sqrt",    "rsqrt",  "sin",   "cos",
      "tan",       "asin",   "acos",      "atan",        "exp",     "log",    "clamp", "mix",
      "select",    "fma",    "vec2",      "vec3",        "vec4",    "dot",    "cross", "length",
      "normalize", "matmul", "transpose", "determinant", "inverse", "outer",  "trace", "floordiv",
      "cast",      "mat2",   "mat3",      "mat4",        "split",   "element"};
  std::set<std::string> in_table;
  for (const NodeSpec& s : node_library())
    if (s.formula_call) in_table.insert(s.name);
  EXPECT_EQ(in_table, callable);
  for (const NodeSpec& s : node_library()) {
    if (s.formula_call) {
      EXPECT_FALSE(s.effectful) << s.name << ": formulas call pure operations";
    }
  }
}

namespace {

std::string show(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::Number:
      return e.integer ? std::to_string(static_cast<long>(e.number)) : std::to_string(e.number);
    case Expr::Kind::Bool: return e.number ? "true" : "false";
    case Expr::Kind::Var: return e.name;
    case Expr::Kind::Type: return "type " + e.name;
    case Expr::Kind::Op: break;
  }
  if (e.name == kSelectOp) return show(*e.args[0]) + "." + e.swizzle;
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
  // Bitwise operators bind as in Python: | then ^ then & then shifts, all tighter than
  // comparisons; // is with * / %.
  EXPECT_EQ(parse_show("a & 1 == 0"), "eq(and(a, 1), 0)");
  EXPECT_EQ(parse_show("a | b ^ c & d << 1 + 2"), "or(a, xor(b, and(c, shl(d, add(1, 2)))))");
  EXPECT_EQ(parse_show("a >> 2 << 1"), "shl(shr(a, 2), 1)");
  EXPECT_EQ(parse_show("a < b | c"), "lt(a, or(b, c))");
  EXPECT_EQ(parse_show("a && b | c || d"), "or(and(a, or(b, c)), d)");
  EXPECT_EQ(parse_show("a//b * c % d / e"), "div(mod(mul(floordiv(a, b), c), d), e)");
  EXPECT_EQ(parse_show("-a // 2 ** b"), "floordiv(neg(a), pow(2, b))");
  EXPECT_EQ(parse_show("~a & !b"), "and(not(a), not(b))");
  EXPECT_EQ(parse_show("a<=b<<c"), "le(a, shl(b, c))");
  EXPECT_EQ(parse_show("cast(x, u8)"), "cast(x, type u8)");
  EXPECT_EQ(parse_show("split(m).c1.x"), "split(m).c1.x");
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
  EXPECT_EQ(message("a + "),
            "column 5: the formula ends early: expected a value (a number, a name, a call or '(')");
  EXPECT_EQ(message("(a + b"),
            "column 7: expected ')' to close the '(' at column 1, but the "
            "formula ends");
  EXPECT_EQ(message("a $ b"),
            "column 3: unexpected '$': expected an operator or the end of the formula");
  EXPECT_EQ(message("a ? b"),
            "column 6: expected ':' of the '?' at column 3, but the formula ends");
  EXPECT_EQ(message("v.q"),
            "column 3: expected components after '.', like .x, .xy or .rgb, or a matrix column .c0 "
            "to .c3");
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
    EXPECT_NE(std::find(in_schema.begin(), in_schema.end(), name), in_schema.end())
        << name << " missing from the schema";
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
      versioned[c->text] =
          std::stoi(rule.find("then")->find("properties")->find("version")->find("const")->text);
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
  EXPECT_EQ(schema.find("properties")->find("version")->find("const")->text,
            std::to_string(kFormatVersion));
}
