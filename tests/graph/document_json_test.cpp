// Graph documents as text: canonical round trips, migration, and errors that name the place.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/graph/document_json.h"
#include "compiler/graph/validate.h"
#include "runtime/common/error.h"

using namespace loom;
using namespace loom::graph;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string error_of(const std::string& text) {
  try {
    load_document(text, "bad.loom.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const char* kSmall = R"({
  "format": "loom-graph",
  "version": 2,
  "name": "small",
  "fields": [
    {"name": "x", "type": "f32x3", "shape": [8, 8], "layout": "soa"}
  ],
  "kernels": [
    {
      "name": "k",
      "params": [
        {"name": "s", "kind": "value", "type": "f32"}
      ],
      "nodes": [
        {"id": 1, "type": "range_for", "inputs": {"end0": 8, "end1": 8}, "regions": {"body": [
          {"id": 2, "type": "param", "params": {"name": "s"}},
          {"id": 3, "type": "vec3", "inputs": {"x": "2", "y": 1.0, "z": 2.50}},
          {"id": 4, "type": "store", "inputs": {"i0": "1.i0", "i1": "1.i1", "value": "3.out"}, "params": {"field": "x"}}
        ]}}
      ]
    }
  ],
  "pipelines": [
    {"name": "step", "launches": [
      {"kernel": "k", "args": {"s": 1e-3}}
    ]}
  ],
  "layout": [
    {"graph": "k", "positions": {"1": [10, 20.5], "2": [-3, 4]}}
  ]
}
)";

}  // namespace

TEST(DocumentJson, CanonicalTextRoundTripsByteForByte) {
  Document doc = load_document(kSmall, "small.loom.json");
  EXPECT_EQ(save_document(doc), kSmall);
  ASSERT_EQ(doc.kernels.size(), 1u);
  const Node& loop = doc.kernels[0].nodes[0];
  ASSERT_EQ(loop.regions.size(), 1u);
  const Node& vec = loop.regions[0].nodes[1];
  EXPECT_EQ(vec.inputs[0].from_node, 2);
  EXPECT_EQ(vec.inputs[0].from_pin, "out");
  EXPECT_EQ(vec.inputs[2].literal.spelling, "2.50");  // kept as written
  EXPECT_EQ(doc.fields[0].layout, Layout::SoA);
  EXPECT_EQ(doc.layout[0].positions[1].x, -3.0f);
}

TEST(DocumentJson, EverySampleAndTestDocumentIsCanonicalOrStable) {
  // Saving is deterministic and idempotent: load -> save -> load -> save gives the same text.
  std::vector<std::string> dirs = {std::string(LOOM_SOURCE_DIR) + "/assets/graphs",
                                   std::string(LOOM_SOURCE_DIR) + "/tests/e2e/docs"};
  int seen = 0;
  for (const auto& dir : dirs) {
    if (!std::filesystem::exists(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      std::string path = entry.path().string();
      if (entry.path().extension() != ".json") continue;
      Document doc = load_document_file(path);
      std::string once = save_document(doc);
      EXPECT_EQ(save_document(load_document(once, path)), once) << path;
      if (dir.find("assets") != std::string::npos) {
        EXPECT_EQ(once, read_file(path)) << path << " is not canonical";
      }
      ++seen;
    }
  }
  EXPECT_GT(seen, 3);
}

TEST(DocumentJson, SavedDocumentsLoadBackEqual) {
  Document doc = load_document(kSmall, "small.loom.json");
  doc.kernels[0].nodes[0].regions[0].nodes[1].inputs[1].literal.spelling.clear();  // as if edited
                                                                                   // in code
  doc.kernels[0].nodes[0].regions[0].nodes[1].inputs[1].literal.f = 0.1;
  std::string text = save_document(doc);
  EXPECT_NE(text.find("\"y\": 0.1"), std::string::npos) << text;
  Document back = load_document(text, "again.loom.json");
  EXPECT_EQ(back.kernels[0].nodes[0].regions[0].nodes[1].inputs[1].literal.f, 0.1);
}

TEST(DocumentJson, Version1IsMigrated) {
  Document doc =
      load_document_file(std::string(LOOM_SOURCE_DIR) + "/tests/graph/docs/v1_lerp.loom.json");
  EXPECT_EQ(doc.version, 2);
  ASSERT_EQ(doc.fields.size(), 1u);  // "globals" became "fields"
  const Node& mix = doc.kernels[0].nodes[0].regions[0].nodes[1];
  EXPECT_EQ(mix.type, "mix");  // "lerp" became "mix"
  EXPECT_EQ(mix.inputs[0].pin, "a");
  EXPECT_EQ(mix.inputs[1].pin, "b");
  EXPECT_TRUE(mix.inputs[2].linked);  // object links became "NODE.PIN"
  EXPECT_EQ(mix.inputs[2].from_node, 2);
  validate_document(doc);  // and the upgraded document is valid
  std::string saved = save_document(doc);
  EXPECT_NE(saved.find("\"version\": 2"), std::string::npos);
  EXPECT_NE(saved.find("\"t\": \"2\""), std::string::npos) << saved;
}

TEST(DocumentJson, NewerVersionIsRefused) {
  std::string e = error_of(R"({"format": "loom-graph", "version": 9})");
  EXPECT_NE(e.find("format version 9 is newer"), std::string::npos) << e;
}

TEST(DocumentJson, MalformedJsonNamesLineAndColumn) {
  std::string e =
      error_of("{\n  \"format\": \"loom-graph\",\n  \"version\": 2,\n  \"kernels\": [ }\n}");
  EXPECT_NE(e.find("bad.loom.json"), std::string::npos) << e;
  EXPECT_NE(e.find("line 4, column 16"), std::string::npos) << e;
  EXPECT_NE(error_of("").find("line 1, column 1"), std::string::npos);
  EXPECT_NE(error_of("{\"a\": 1,}").find("member name"), std::string::npos);
  EXPECT_NE(error_of("{\"a\": 01}").find("expected ',' or '}'"), std::string::npos);
  EXPECT_NE(error_of("{\"a\": \"unterminated}").find("unterminated string"), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("expected an object"), std::string::npos);
  EXPECT_NE(error_of("{\"a\": 1, \"a\": 2}").find("duplicate member"), std::string::npos);
}

TEST(DocumentJson, ALinkToANodeIdBeyondIntIsRefusedNotWrapped) {
  // Found by fuzzing: "18888888888888.i1" used to load as a link to node -377278920, and
  // the document it saved did not load back.
  std::string e =
      error_of(R"({"format": "loom-graph", "version": 2, "kernels": [{"name": "k", "nodes": [)"
               R"({"id": 7, "type": "add", "inputs": {"a": "18888888888888.i1"}}]}]})");
  EXPECT_NE(e.find("node 7"), std::string::npos) << e;
  EXPECT_NE(e.find("pin 'a'"), std::string::npos) << e;
  EXPECT_NE(e.find("bad link \"18888888888888.i1\": node id 18888888888888 is out of range"),
            std::string::npos)
      << e;
}

TEST(DocumentJson, SchemaErrorsNameKeyKernelNodeAndPin) {
  std::string head = R"({"format": "loom-graph", "version": 2, )";
  std::string e = error_of(head + R"("kernal": []})");
  EXPECT_NE(e.find("unknown key \"kernal\""), std::string::npos) << e;
  e = error_of(
      head +
      R"("kernels": [{"name": "k", "params": [{"name": "p", "kind": "scalar"}], "nodes": []}]})");
  EXPECT_NE(e.find("kernels[0].params[0].kind"), std::string::npos) << e;
  EXPECT_NE(e.find("kernel 'k'"), std::string::npos) << e;
  EXPECT_NE(e.find("expected one of value, ndarray, texture, argpack, template"), std::string::npos)
      << e;
  e = error_of(
      head +
      R"("kernels": [{"name": "k", "nodes": [{"id": 7, "type": "add", "inputs": {"a": "x.out"}}]}]})");
  EXPECT_NE(e.find("node 7"), std::string::npos) << e;
  EXPECT_NE(e.find("pin 'a'"), std::string::npos) << e;
  EXPECT_NE(e.find("bad link \"x.out\""), std::string::npos) << e;
  e = error_of(head + R"("fields": [{"name": "f", "type": "float", "shape": [4]}]})");
  EXPECT_NE(e.find("unknown type 'float'"), std::string::npos) << e;
  e = error_of(head + R"("fields": [{"name": "f", "type": "f32", "shape": [0]}]})");
  EXPECT_NE(e.find("extents must be positive"), std::string::npos) << e;
  e = error_of(R"({"format": "something-else", "version": 2})");
  EXPECT_NE(e.find("loom-graph"), std::string::npos) << e;
  e = error_of(
      head + R"("argpack_types": [{"name": "P", "members": [{"name": "a", "pack": "Missing"}]}]})");
  EXPECT_NE(e.find("no argpack type is named 'Missing'"), std::string::npos) << e;
  e = error_of(head + R"("kernels": [{"name": "k", "nodes": []}, {"name": "k", "nodes": []}]})");
  EXPECT_NE(e.find("two kernels are named 'k'"), std::string::npos) << e;
}

TEST(DocumentJson, MissingFileIsAClearError) {
  try {
    load_document_file("/nonexistent/x.loom.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/x.loom.json: cannot open"),
              std::string::npos)
        << e.what();
  }
}

TEST(DocumentJson, ContentKeyIgnoresLayoutAndFollowsCode) {
  Document a = load_document(kSmall, "a.loom.json");
  Document b = a;
  b.layout[0].positions[0].x = 999;  // moving a node is not a code change
  b.name = "renamed";
  b.pipelines.clear();
  EXPECT_EQ(kernel_content_key(a, "k"), kernel_content_key(b, "k"));
  Document c = a;
  c.kernels[0].nodes[0].regions[0].nodes[1].inputs[1].literal.spelling =
      "1.5";  // a constant changed
  EXPECT_NE(kernel_content_key(a, "k"), kernel_content_key(c, "k"));
  Document d = a;
  d.fields[0].shape = {16, 8};  // field shapes are compiled into the code
  EXPECT_NE(kernel_content_key(a, "k"), kernel_content_key(d, "k"));
  EXPECT_EQ(kernel_content_key(a, "k").size(), 32u);
}

TEST(DocumentJson, ExtentsAboveInt32MaxAreRejectedAtLoad) {
  std::string head = R"({"format": "loom-graph", "version": 2, )";
  std::string e =
      error_of(head + R"("fields": [{"name": "big", "type": "f32", "shape": [3000000000]}]})");
  EXPECT_NE(e.find("fields[0].shape: field 'big': extent 3000000000 (dimension 0) is larger than "
                   "2147483647"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("line 1, column"), std::string::npos) << e;
  e = error_of(
      head +
      R"("ndarrays": [{"name": "n", "type": "f64", "shape": [2000000000, 2000000000, 2000000000]}]})");
  EXPECT_NE(e.find("ndarray 'n': 2000000000 x 2000000000 x 2000000000 elements of 8 bytes do not "
                   "fit in 2^63 bytes"),
            std::string::npos)
      << e;
  e = error_of(head + R"("textures": [{"name": "t", "size": [4, 2147483648], "format": "r32f"}]})");
  EXPECT_NE(e.find("texture 't': extent 2147483648 (dimension 1) is larger than 2147483647"),
            std::string::npos)
      << e;
  EXPECT_EQ(error_of(head + R"("fields": [{"name": "ok", "type": "f32", "shape": [2147483647]}]})"),
            "");
}

// "shape": [] is a 0-d field (Taichi's shape=()); it saves as it was written. A 0-d ndarray
// is refused with the reason (ndim 0 of a kernel parameter means "any").
TEST(DocumentJson, ZeroDimensionalFieldsLoadAndSave) {
  std::string text = R"({
  "format": "loom-graph",
  "version": 2,
  "fields": [
    {"name": "loss", "type": "f32", "shape": []},
    {"name": "x", "type": "f32", "shape": [4]}
  ]
}
)";
  Document d = load_document(text, "zero.loom.json");
  ASSERT_EQ(d.fields.size(), 2u);
  EXPECT_TRUE(d.fields[0].shape.empty());
  EXPECT_EQ(save_document(d), text);
  std::string head = R"({"format": "loom-graph", "version": 2, )";
  std::string e = error_of(head + R"("ndarrays": [{"name": "n", "type": "f32", "shape": []}]})");
  EXPECT_NE(e.find("ndarrays[0].shape: ndarray 'n': ndarrays have 1 to 4 extents; for one value "
                   "use a 0-d field"),
            std::string::npos)
      << e;
  e = error_of(head + R"("fields": [{"name": "f", "type": "f32", "shape": [1, 1, 1, 1, 1]}]})");
  EXPECT_NE(e.find("expected a list of 0 to 4 extents"), std::string::npos) << e;
}

TEST(DocumentJson, WholeNumbersUpToU64MaxRoundTrip) {
  std::string text = R"({
  "format": "loom-graph",
  "version": 2,
  "kernels": [
    {
      "name": "k",
      "params": [
        {"name": "x", "kind": "value", "type": "u64"}
      ],
      "returns": ["u64"],
      "nodes": [
        {"id": 1, "type": "param", "params": {"name": "x"}},
        {"id": 2, "type": "xor", "inputs": {"a": "1", "b": 18446744073709551615}},
        {"id": 3, "type": "const", "params": {"value": -9223372036854775808, "type": "i64"}},
        {"id": 4, "type": "return", "inputs": {"r0": "2"}}
      ]
    }
  ]
}
)";
  Document doc = load_document(text, "u64.loom.json");
  const Literal& big = doc.kernels[0].nodes[1].inputs[1].literal;
  EXPECT_TRUE(big.above_int64);
  EXPECT_EQ(static_cast<uint64_t>(big.i), UINT64_MAX);
  EXPECT_EQ(big.as_double(), 18446744073709551615.0);
  EXPECT_EQ(save_document(doc), text);
  validate_document(doc);
  Document copy = doc;
  copy.kernels[0].nodes[1].inputs[1].literal.spelling.clear();  // as if set from code
  EXPECT_EQ(save_document(copy), text);
  std::string e =
      error_of(R"({"format": "loom-graph", "version": 2, "kernels": [{"name": "k", "nodes": [
    {"id": 1, "type": "add", "inputs": {"a": 1, "b": 18446744073709551616}}]}]})");
  EXPECT_NE(e.find("number out of range: 18446744073709551616 (whole numbers run from "
                   "-9223372036854775808 to "
                   "18446744073709551615)"),
            std::string::npos)
      << e;
  e = error_of(R"({"format": "loom-graph", "version": 2, "kernels": [{"name": "k", "nodes": [
    {"id": 4294967297, "type": "add"}]}]})");
  EXPECT_NE(e.find("kernels[0].nodes[0].id: number out of range: 4294967297 (expected"),
            std::string::npos)
      << e;
}

// clamp 1 had pins value, min, max; clamp 2 has x, lo, hi. Upgrades are keyed by node type
// and the node's own version, in kernels, functions and nested regions alike.
TEST(DocumentJson, NodeTypeVersionsAreUpgraded) {
  Document doc =
      load_document_file(std::string(LOOM_SOURCE_DIR) + "/tests/graph/docs/clamp_v1.loom.json");
  const Node& in_function = doc.functions[0].nodes[1];
  const Node& in_region = doc.kernels[0].nodes[0].regions[0].nodes[1];
  for (const Node* n : {&in_function, &in_region}) {
    EXPECT_EQ(n->type, "clamp");
    EXPECT_EQ(n->version, 2);
    ASSERT_EQ(n->inputs.size(), 3u);
    EXPECT_EQ(n->inputs[0].pin, "x");
    EXPECT_EQ(n->inputs[1].pin, "lo");
    EXPECT_EQ(n->inputs[2].pin, "hi");
  }
  validate_document(doc);
  std::string saved = save_document(doc);
  EXPECT_NE(
      saved.find(
          R"({"id": 3, "type": "clamp", "version": 2, "inputs": {"x": "2", "lo": 1.0, "hi": 2.0}})"),
      std::string::npos)
      << saved;
  EXPECT_NE(
      saved.find(
          R"({"id": 2, "type": "clamp", "version": 2, "inputs": {"x": "1", "lo": 0.0, "hi": 1.0}})"),
      std::string::npos)
      << saved;
  // The upgraded document is current: it loads and saves byte for byte.
  EXPECT_EQ(save_document(load_document(saved, "again.loom.json")), saved);
}

TEST(DocumentJson, FormatAndNodeUpgradesChain) {
  // A format 1 document with a clamp 1 node: links become strings, then the pins are renamed.
  Document doc = load_document(
      R"({"format": "loom-graph", "version": 1, "globals": [{"name": "o", "type": "f32", "shape": [1]}],
    "kernels": [{"name": "k", "nodes": [
      {"id": 1, "type": "const", "params": {"value": 3.0}},
      {"id": 2, "type": "clamp", "inputs": {"value": {"node": 1, "pin": "out"}, "min": 0.0, "max": 1.0}},
      {"id": 3, "type": "store", "inputs": {"i0": 0, "value": {"node": 2}}, "params": {"field": "o"}}]}]})",
      "old.loom.json");
  const Node& clamp = doc.kernels[0].nodes[1];
  EXPECT_EQ(clamp.version, 2);
  EXPECT_EQ(clamp.inputs[0].pin, "x");
  EXPECT_TRUE(clamp.inputs[0].linked);
  EXPECT_EQ(clamp.inputs[0].from_node, 1);
  validate_document(doc);
}

TEST(DocumentJson, NodeVersionsNewerOrStaleAreErrors) {
  Document doc =
      load_document(R"({"format": "loom-graph", "version": 2, "kernels": [{"name": "k", "nodes": [
      {"id": 7, "type": "clamp", "version": 3, "inputs": {"x": 1.0, "lo": 0.0, "hi": 1.0}}]}]})",
                    "new.loom.json");
  try {
    validate_document(doc);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.place().node, 7);
    EXPECT_NE(e.message().find("node type 'clamp' version 3 is newer than this Loom knows (2)"),
              std::string::npos)
        << e.what();
  }
  // In memory, a node must be at its type's current version (the builder API sets it).
  doc.kernels[0].nodes[0].version = 1;
  try {
    validate_document(doc);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("node type 'clamp' is at version 1 but this Loom's is 2"),
              std::string::npos)
        << e.what();
  }
}

TEST(DocumentJson, HugeFormatVersionNamesLineAndColumn) {
  std::string e = error_of("{\"format\": \"loom-graph\",\n  \"version\": 99999999999999999999}");
  EXPECT_NE(e.find("bad.loom.json: line 2, column 14: version: format version 99999999999999999999 "
                   "is newer than "
                   "this Loom understands (2)"),
            std::string::npos)
      << e;
  e = error_of("{\"format\": \"loom-graph\", \"version\": -3}");
  EXPECT_NE(e.find("line 1, column 37: version: format version -3 does not exist"),
            std::string::npos)
      << e;
}

TEST(DocumentJson, LayoutOfUnknownGraphsOrNodesIsAnError) {
  std::string head =
      R"({"format": "loom-graph", "version": 2, "kernels": [{"name": "k", "nodes": [{"id": 1, "type": "const", "params": {"value": 1}}]}], )";
  EXPECT_EQ(error_of(head + R"("layout": [{"graph": "k", "positions": {"1": [0, 0]}}]})"), "");
  std::string e = error_of(head + R"("layout": [{"graph": "q", "positions": {}}]})");
  EXPECT_NE(e.find("layout[0].graph: layout of 'q', but no kernel or function has that name"),
            std::string::npos)
      << e;
  e = error_of(head + R"("layout": [{"graph": "k", "positions": {"1": [0, 0], "5": [1, 1]}}]})");
  EXPECT_NE(e.find("layout[0].positions.5: position of node 5, but 'k' has no node 5"),
            std::string::npos)
      << e;
  // Found by fuzz_graph_document: "01" and "1" both parsed as node 1, and the document
  // saved two "1" keys that it could not load again.
  e = error_of(head + R"("layout": [{"graph": "k", "positions": {"1": [0, 0], "01": [1, 1]}}]})");
  EXPECT_NE(e.find("layout[0].positions.01: position key \"01\" is not a node id as written "
                   "(expected \"1\")"),
            std::string::npos)
      << e;
  e = error_of(head + R"("layout": [{"graph": "k"}, {"graph": "k"}]})");
  EXPECT_NE(e.find("layout[1].graph: a second layout entry for 'k'"), std::string::npos) << e;
}

TEST(DocumentJson, InvalidUtf8NamesLineAndColumn) {
  std::string e = error_of("{\"format\": \"loom-graph\",\n  \"name\": \"ab\xff\"}");
  EXPECT_NE(e.find("line 2, column 14: malformed JSON: invalid UTF-8 in a string (a sequence "
                   "starting with byte "
                   "0xFF)"),
            std::string::npos)
      << e;
  for (const char* bad :
       {"\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc3", "\xe2\x82"}) {
    e = error_of(std::string("{\"name\": \"x") + bad + "\"}");
    EXPECT_NE(e.find("line 1, column 12: malformed JSON: invalid UTF-8"), std::string::npos) << e;
  }
  e = error_of(R"({"name": "\udc00"})");
  EXPECT_NE(e.find("unpaired surrogate"), std::string::npos) << e;
  e = error_of(R"({"name": "\ud800\u0041"})");
  EXPECT_NE(e.find("unpaired surrogate"), std::string::npos) << e;
  // Valid UTF-8 (2, 3 and 4 bytes) and escapes load and save unchanged.
  Document doc = load_document(
      "{\"format\": \"loom-graph\", \"version\": 2, \"name\": "
      "\"h\xc3\xa9\xe2\x82\xac\xf0\x9f\x8c\x8a \\u00e9\"}",
      "ok.loom.json");
  EXPECT_EQ(doc.name, "h\xc3\xa9\xe2\x82\xac\xf0\x9f\x8c\x8a \xc3\xa9");
}

TEST(DocumentJson, CommentFramesRoundTripAndKeepTheContentKey) {
  const std::string text = R"({
  "format": "loom-graph",
  "version": 2,
  "kernels": [
    {
      "name": "k",
      "nodes": [
        {"id": 1, "type": "const", "params": {"value": 1}},
        {"id": 2, "type": "reroute", "inputs": {"in": "1"}}
      ]
    }
  ],
  "layout": [
    {"graph": "k", "positions": {"1": [0.1, -3], "2": [120, 0]}, "comments": [{"title": "Setup \u00e9", "rect": [-20, -40, 300.5, 200], "color": "#3A6ea5"}, {"title": "", "rect": [0, 0, 1, 1]}]}
  ]
}
)";
  Document doc = load_document(text, "c.loom.json");
  ASSERT_EQ(doc.layout[0].comments.size(), 2u);
  const CommentFrame& c = doc.layout[0].comments[0];
  EXPECT_EQ(c.title, "Setup \xc3\xa9");
  EXPECT_EQ(c.x, -20.0f);
  EXPECT_EQ(c.w, 300.5f);
  EXPECT_EQ(c.color, "#3A6ea5");
  EXPECT_EQ(doc.layout[0].comments[1].color, "");
  std::string saved = save_document(doc);
  // Escapes are written as UTF-8; everything else is as it was.
  std::string expected = text;
  expected.replace(expected.find("\\u00e9"), 6, "\xc3\xa9");
  EXPECT_EQ(saved, expected);
  EXPECT_NO_THROW(validate_document(doc));

  // Comments and positions are layout: the kernel's content key does not change.
  Document moved = doc;
  moved.layout[0].comments.clear();
  moved.layout[0].positions[0].x = 500;
  EXPECT_EQ(kernel_content_key(doc, "k"), kernel_content_key(moved, "k"));
}

TEST(DocumentJson, BadCommentFramesNameThePlace) {
  std::string head =
      R"({"format": "loom-graph", "version": 2, "kernels": [{"name": "k", "nodes": []}], )";
  std::string e = error_of(
      head +
      R"("layout": [{"graph": "k", "comments": [{"title": "t", "rect": [0, 0, -5, 10]}]}]})");
  EXPECT_NE(e.find("layout[0].comments[0].rect: a comment's width and height must be positive"),
            std::string::npos)
      << e;
  e = error_of(head +
               R"("layout": [{"graph": "k", "comments": [{"title": "t", "rect": [0, 0, 5]}]}]})");
  EXPECT_NE(e.find("layout[0].comments[0].rect: expected [x, y, width, height]"), std::string::npos)
      << e;
  e = error_of(
      head +
      R"("layout": [{"graph": "k", "comments": [{"title": "t", "rect": [0, 0, 5, 5], "color": "red"}]}]})");
  EXPECT_NE(e.find("layout[0].comments[0].color: expected a colour \"#rrggbb\", found 'red'"),
            std::string::npos)
      << e;
  e = error_of(head + R"("layout": [{"graph": "k", "comments": [{"rect": [0, 0, 5, 5]}]}]})");
  EXPECT_NE(e.find("layout[0].comments[0]: missing \"title\""), std::string::npos) << e;
  e = error_of(
      head +
      R"("layout": [{"graph": "k", "comments": [{"title": "t", "rect": [0, 0, 5, 5], "size": 3}]}]})");
  EXPECT_NE(e.find("unknown key \"size\""), std::string::npos) << e;
  e = error_of(
      head +
      R"("layout": [{"graph": "k", "positions": {}, "comments": [{"title": "t", "rect": [1e300, 0, 5, 5]}]}]})");
  EXPECT_NE(e.find("coordinate 1e300 is out of range"), std::string::npos) << e;

  // A document built in code is checked by validate_document.
  Document doc = load_document(
      head + R"("layout": [{"graph": "k", "comments": [{"title": "t", "rect": [0, 0, 5, 5]}]}]})");
  doc.layout[0].comments[0].h = 0;
  try {
    validate_document(doc);
    ADD_FAILURE() << "no error";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what())
                  .find("layout: comment 0 ('t') needs a finite position and a positive width"),
              std::string::npos)
        << err.what();
  }
}

TEST(DocumentJson, CollapsedNodesAreLayoutAndRoundTrip) {
  std::string text = R"({
  "format": "loom-graph",
  "version": 2,
  "kernels": [
    {
      "name": "k",
      "nodes": [
        {"id": 1, "type": "const", "params": {"value": 1}},
        {"id": 2, "type": "range_for", "inputs": {"end0": 4}, "regions": {"body": [
          {"id": 3, "type": "neg", "inputs": {"a": "1"}}
        ]}}
      ]
    }
  ],
  "layout": [
    {"graph": "k", "positions": {}, "collapsed": [1, 3]}
  ]
}
)";
  Document doc = load_document(text, "c.loom.json");
  EXPECT_EQ(doc.layout[0].collapsed, (std::vector<int>{1, 3}));  // nested nodes too
  EXPECT_EQ(save_document(doc), text);
  EXPECT_NO_THROW(validate_document(doc));
  // With comments: "collapsed" comes after them.
  Document commented = doc;
  commented.layout[0].comments.push_back(CommentFrame{"c", 0, 0, 10, 10, ""});
  std::string saved = save_document(commented);
  EXPECT_NE(
      saved.find(R"("comments": [{"title": "c", "rect": [0, 0, 10, 10]}], "collapsed": [1, 3]})"),
      std::string::npos)
      << saved;
  EXPECT_EQ(save_document(load_document(saved, "c.loom.json")), saved);
  // Layout only: the kernel's content key is the same expanded.
  Document expanded = doc;
  expanded.layout[0].collapsed.clear();
  EXPECT_EQ(kernel_content_key(doc, "k"), kernel_content_key(expanded, "k"));
  EXPECT_EQ(program_key(doc), program_key(expanded));
  EXPECT_EQ(save_document(expanded).find("collapsed"), std::string::npos);

  std::string head = text.substr(0, text.find("\"layout\""));
  std::string e = error_of(head + R"("layout": [{"graph": "k", "collapsed": [4]}]})");
  EXPECT_NE(e.find("layout[0].collapsed[0]: node 4 collapsed, but 'k' has no node 4"),
            std::string::npos)
      << e;
  e = error_of(head + R"("layout": [{"graph": "k", "collapsed": [3, 1]}]})");
  EXPECT_NE(
      e.find("layout[0].collapsed[1]: collapsed nodes are listed once each, in ascending order"),
      std::string::npos)
      << e;
  e = error_of(head + R"("layout": [{"graph": "k", "collapsed": [1, 1]}]})");
  EXPECT_NE(e.find("in ascending order"), std::string::npos) << e;
  e = error_of(head + R"("layout": [{"graph": "k", "collapsed": ["1"]}]})");
  EXPECT_NE(e.find("layout[0].collapsed[0]"), std::string::npos) << e;
}

TEST(DocumentJson, ViewSettingsRoundTripAndNameTheKeyAtFault) {
  std::string head =
      R"({"format": "loom-graph", "version": 2, "fields": [{"name": "x", "type": "f32x2", "shape": [64]}, )"
      R"({"name": "speed", "type": "f32", "shape": [8, 8]}, {"name": "few", "type": "f32", "shape": [3]}, )"
      R"({"name": "m", "type": "f32x2x2", "shape": [4, 4]}], "textures": [{"name": "img", "size": [4, 4], "format": "rgba8"}], )";
  std::string good =
      head + R"("view": {"show": "x", "as": "points", "color_by": "speed", "point_size": 2.5}})";
  EXPECT_EQ(error_of(good), "");
  Document doc = load_document(good, "v.loom.json");
  EXPECT_EQ(doc.view.show, "x");
  EXPECT_EQ(doc.view.color_by, "speed");
  EXPECT_EQ(doc.view.point_size, 2.5f);
  std::string saved = save_document(doc);
  EXPECT_NE(saved.find(
                R"("view": {"show": "x", "as": "points", "color_by": "speed", "point_size": 2.5})"),
            std::string::npos)
      << saved;
  EXPECT_EQ(save_document(load_document(saved, "v.loom.json")), saved);
  EXPECT_EQ(error_of(head + R"("view": {"show": "img", "as": "image"}})"), "");
  EXPECT_EQ(error_of(head + R"("view": {"show": "speed", "as": "image"}})"), "");

  struct Case {
    const char* view;
    const char* message;
  } cases[] = {
      {R"({"show": "nope", "as": "points"})",
       "view.show: 'nope' is no field, ndarray or texture of the document"},
      {R"({"show": "speed", "as": "points"})",
       "view.as: 'speed' is f32; points need a field or ndarray of 2- or 3-component vectors"},
      {R"({"show": "img", "as": "mesh", "mesh": "a.obj"})",
       "view.as: 'img' is a texture; mesh need"},
      {R"({"show": "x", "as": "image"})",
       "view.as: 'x' has 1 dimensions; an image needs a 2-d field or ndarray, or a texture"},
      {R"({"show": "m", "as": "image"})", "view.as: 'm' holds matrices"},
      {R"({"show": "x", "as": "dots"})",
       "view.as: expected \"points\", \"image\" or \"mesh\", found 'dots'"},
      {R"({"show": "x", "as": "points", "color_by": "few"})",
       "view.color_by: 'few' has 3 elements but 'x' has 64"},
      {R"({"show": "speed", "as": "image", "color_by": "speed"})",
       "view.color_by: only points are coloured by a resource"},
      {R"({"show": "x", "as": "mesh"})", "view.mesh: a mesh view needs an OBJ file"},
      {R"({"show": "x", "as": "points", "mesh": "a.obj"})",
       "view.mesh: only a mesh view takes an OBJ file"},
      {R"({"show": "x", "as": "points", "point_size": 65})",
       "view.point_size: expected a size above 0 and at most 64 pixels"},
      {R"({"show": "x"})", "view: missing"},
      {R"({"show": "x", "as": "points", "colour": "x"})", "colour"},
  };
  for (const Case& c : cases) {
    std::string e = error_of(head + "\"view\": " + c.view + "}");
    EXPECT_NE(e.find(c.message), std::string::npos) << c.view << " -> " << e;
    EXPECT_NE(e.find("bad.loom.json"), std::string::npos) << e;
  }

  // Documents built in code are checked by validate_document the same way.
  Document built = load_document(good, "v.loom.json");
  built.view.color_by = "few";
  try {
    validate_document(built);
    ADD_FAILURE() << "a view colouring 64 points by 3 values validated";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("view.color_by: 'few' has 3 elements but 'x' has 64"),
              std::string::npos)
        << e.what();
  }
}

// A kernel's block_local list (fields or ndarray parameters to stage in GPU workgroup memory)
// round-trips, is written only when given, and is part of the kernel's content key.
TEST(DocumentJson, BlockLocalRoundTripsAndKeysTheKernel) {
  std::string with = kSmall;
  with.replace(with.find("      \"nodes\": [\n        {\"id\": 1"), 0,
               "      \"block_local\": [\"x\"],\n");
  Document doc = load_document(with, "b.loom.json");
  EXPECT_EQ(doc.kernels[0].block_local, std::vector<std::string>{"x"});
  EXPECT_EQ(save_document(doc), with);
  Document back = load_document(save_document(doc), "b.loom.json");
  EXPECT_EQ(back.kernels[0].block_local, doc.kernels[0].block_local);
  EXPECT_EQ(save_document(back), with);
  EXPECT_NO_THROW(validate_document(doc));
  // Without it, nothing is written: documents that never had one keep their bytes.
  Document plain = load_document(kSmall, "a.loom.json");
  EXPECT_TRUE(plain.kernels[0].block_local.empty());
  EXPECT_EQ(save_document(plain).find("block_local"), std::string::npos);
  // The JIT cache key follows the list.
  EXPECT_NE(kernel_content_key(doc, "k"), kernel_content_key(plain, "k"));
  plain.kernels[0].block_local = {"x"};
  EXPECT_EQ(kernel_content_key(doc, "k"), kernel_content_key(plain, "k"));

  std::string head =
      R"({"format": "loom-graph", "version": 2, "kernels": [{"name": "a", "nodes": []}, )";
  std::string e = error_of(head + R"({"name": "heat", "block_local": ["x", 3], "nodes": []}]})");
  EXPECT_NE(e.find("bad.loom.json: kernel 'heat': line 1, column"), std::string::npos) << e;
  EXPECT_NE(e.find("kernels[1].block_local[1]: expected a string, found a number"),
            std::string::npos)
      << e;
  e = error_of(head + R"({"name": "heat", "block_local": "x", "nodes": []}]})");
  EXPECT_NE(e.find("kernels[1].block_local: expected a list of names, found a string"),
            std::string::npos)
      << e;
  e = error_of(head + R"({"name": "heat", "blocklocal": ["x"], "nodes": []}]})");
  EXPECT_NE(e.find("unknown key \"blocklocal\" (expected one of name, params, returns, "
                   "workgroup_size, block_local, nodes)"),
            std::string::npos)
      << e;
}
