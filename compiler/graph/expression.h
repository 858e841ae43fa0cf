// Formula text of "expr" nodes ("a*sin(b)+1"): a small recursive-descent parser. The tree
// names operations by node type ("add", "sin", "select"), so the lowering evaluates it
// through the same code paths as the equivalent nodes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace loom::graph {

struct Expr {
  enum class Kind { Number, Bool, Var, Op };
  Kind kind = Kind::Number;
  std::string name;  // Var: input pin; Op: node type ("add", "neg", "select", "sin"...)
  double number = 0;
  bool integer = false;  // Number written without '.', 'e'
  int64_t integer_value = 0;
  std::string swizzle;  // Op "swizzle": component letters ("xy", "rgb")
  std::vector<std::unique_ptr<Expr>> args;
  int column = 0;  // 1-based position in the text, for messages
};

// Grammar, loosest first: c ? a : b | || | && | == != < <= > >= | + - | * / % | unary - ! |
// ** (right associative) | postfix .x .xy .rgb | number, true, false, name, name(args...), (expr).
// Throws loom::Error ("column 5: expected ')'") on bad text.
std::unique_ptr<Expr> parse_expression(const std::string& text);

// Input pin names the formula reads, in first-use order.
std::vector<std::string> expression_inputs(const Expr& expr);

}  // namespace loom::graph
