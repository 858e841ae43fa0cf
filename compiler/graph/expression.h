// Formula text of "expr" nodes ("a*sin(b)+1"): a small recursive-descent parser. The tree
// names operations by node type ("add", "sin", "select"), so the lowering evaluates it
// through the same code paths as the equivalent nodes.
//
// Recursion is bounded: chains of operators (`a+a+...`, `- - a`, `a**b**c`, `c?x:d?y:z`) are
// parsed in loops, and only real nesting (parentheses, call arguments, the middle of `?:`)
// recurses, at most kMaxFormulaNesting levels. Trees may still be deep (a long chain is a
// deep left- or right-leaning tree), so everything that walks them, destruction included,
// is iterative: formulas are safe on the small thread stacks of editors and engines.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace loom::graph {

// Deepest nesting of parentheses, call arguments and `?:` middles a formula may use.
constexpr int kMaxFormulaNesting = 64;

struct Expr {
  enum class Kind { Number, Bool, Var, Op };
  Kind kind = Kind::Number;
  std::string name;  // Var: input pin; Op: node type ("add", "neg", "select", "sin"...)
  double number = 0;
  bool integer = false;  // Number written without '.', 'e'
  // Number, integer: the exact value; above_int64 when it is 2^63 .. 2^64-1 (then
  // integer_value holds its bits, read as uint64_t).
  int64_t integer_value = 0;
  bool above_int64 = false;
  std::string swizzle;  // Op "swizzle": component letters ("xy", "rgb")
  std::vector<std::unique_ptr<Expr>> args;
  int column = 0;  // 1-based position in the text, for messages

  Expr() = default;
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;
  ~Expr();  // iterative: a chain of 100000 terms must not overflow the stack
};

// Grammar, loosest first: c ? a : b | || | && | == != < <= > >= | + - | * / % | unary - ! |
// ** (right associative) | postfix .x .xy .rgb | number, true, false, name, name(args...), (expr).
// Throws loom::Error ("column 5: expected ')'") on bad text, and on nesting deeper than
// kMaxFormulaNesting.
std::unique_ptr<Expr> parse_expression(const std::string& text);

// Input pin names the formula reads, in first-use order.
std::vector<std::string> expression_inputs(const Expr& expr);

// The formula for messages: whole when short, else its start and "...".
std::string formula_excerpt(const std::string& text);

}  // namespace loom::graph
