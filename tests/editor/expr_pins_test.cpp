// An expr node's pins follow its formula: variables become pins as it is typed, inputs the
// formula no longer reads go (in the same undo step), a formula being typed keeps them.
#include <gtest/gtest.h>

#include "compiler/graph/node_library.h"
#include "editor/model/graph_access.h"
#include "editor/model/operations.h"
#include "tests/editor/test_docs.h"

using namespace loom;
using namespace loom::editor;

namespace {

graph::Literal text(const std::string& s) {
  graph::Literal l;
  l.kind = graph::Literal::Kind::String;
  l.s = s;
  return l;
}

graph::Literal real(double v) {
  graph::Literal l;
  l.kind = graph::Literal::Kind::Float;
  l.f = v;
  return l;
}

}  // namespace

TEST(ExprPins, VariablesAreLinkedOneAtATime) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  const GraphRef k{"k", false};
  int id = add_node(d, k, RegionRef{}, "expr", Vec2{0, 400}).nodes.at(0);
  ASSERT_TRUE(set_param(d, k, id, "expr", text("a * b + c")).ok);
  // b first, while a and c have nothing yet: the node is unfinished, not wrong.
  EditResult r = connect(d, k, PinRef{1, "out"}, PinRef{id, "b"});
  ASSERT_TRUE(r.ok) << r.message;
  r = connect(d, k, PinRef{1, "out"}, PinRef{id, "a"});
  ASSERT_TRUE(r.ok) << r.message;
  // What the formula cannot use is still refused: a variable's reference is no value.
  int var = add_node(d, k, RegionRef{}, "var", Vec2{0, 500}).nodes.at(0);
  ASSERT_TRUE(set_literal(d, k, PinRef{var, "init"}, real(1.0)).ok);
  EditResult refused = connect(d, k, PinRef{var, "ref"}, PinRef{id, "c"});
  EXPECT_FALSE(refused.ok);
  EXPECT_FALSE(refused.message.empty());
}

TEST(ExprPins, TheFormulaMakesThePinsAndDropsUnusedInputs) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  const GraphRef k{"k", false};
  int id = add_node(d, k, RegionRef{}, "expr", Vec2{0, 400}).nodes.at(0);
  ASSERT_TRUE(set_param(d, k, id, "expr", text("a * b + c")).ok);
  EXPECT_EQ(graph::node_input_pins(d.doc(), *find_node(d.doc(), k, id)),
            (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_TRUE(set_literal(d, k, PinRef{id, "a"}, real(2.0)).ok);
  ASSERT_TRUE(set_literal(d, k, PinRef{id, "c"}, real(1.0)).ok);
  EditResult linked = connect(d, k, PinRef{1, "out"}, PinRef{id, "b"});
  ASSERT_TRUE(linked.ok) << linked.message;
  std::string before = d.save_text();
  // b is no longer read: its link goes; a stays with its value.
  ASSERT_TRUE(set_param(d, k, id, "expr", text("a + 1 + c")).ok);
  const graph::Node* n = find_node(d.doc(), k, id);
  EXPECT_EQ(n->input("b"), nullptr);
  ASSERT_NE(n->input("a"), nullptr);
  EXPECT_DOUBLE_EQ(n->input("a")->literal.f, 2.0);
  EXPECT_EQ(graph::node_input_pins(d.doc(), *n), (std::vector<std::string>{"a", "c"}));
  // One undo step gives the link back.
  ASSERT_TRUE(d.undo());
  EXPECT_EQ(d.save_text(), before);
  // Half-typed text keeps every input.
  ASSERT_TRUE(set_param(d, k, id, "expr", text("a * (")).ok);
  n = find_node(d.doc(), k, id);
  EXPECT_NE(n->input("b"), nullptr);
  EXPECT_NE(n->input("c"), nullptr);
}
