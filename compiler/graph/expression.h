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

// Name of the Op that picks parts of a value (`v.xy`, `c.rgb`, `m.c1`): no node type and no
// name a formula can write, so `select` and friends stay calls of their node types.
constexpr const char* kSelectOp = ".";

struct Expr {
  // Type: a type name (`u8`, `f32x3`), the type argument of `cast(x, u8)` and `vec3(..., f64)`.
  enum class Kind { Number, Bool, Var, Type, Op };
  Kind kind = Kind::Number;
  // Var: input pin; Type: the type's name; Op: node type ("add", "neg", "select", "sin"...)
  // or kSelectOp.
  std::string name;
  double number = 0;
  bool integer = false;  // Number written without '.', 'e'
  // Number, integer: the exact value; above_int64 when it is 2^63 .. 2^64-1 (then
  // integer_value holds its bits, read as uint64_t).
  int64_t integer_value = 0;
  bool above_int64 = false;
  std::string swizzle;  // Op kSelectOp: what follows the dot ("xy", "rgb", "c1")
  std::vector<std::unique_ptr<Expr>> args;
  int column = 0;  // 1-based position in the text, for messages

  Expr() = default;
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;
  ~Expr();  // iterative: a chain of 100000 terms must not overflow the stack
};

// Grammar, loosest first: c ? a : b | || | && | == != < <= > >= | `|` | ^ | & | << >> | + - |
// * / // % | unary - ! ~ | ** (right associative) | postfix .x .xy .rgb .c0 | number, true,
// false, type name, name, name(args...), (expr).
// The bitwise levels are Python's (Taichi code ports from Python): all bind tighter than
// comparisons, so `a & 1 == 0` is `(a & 1) == 0`.
// Numbers as in Python: whole 42, 0xff, 0b101, 1_000 (weak integer literals alike); floats
// 2.5, .5, 1e-3; no hex floats, no inf or nan, no suffixes.
// Throws loom::Error ("column 5: expected ')' to close ...") on bad text, always naming the
// column and what was expected there, and on nesting deeper than kMaxFormulaNesting.
std::unique_ptr<Expr> parse_expression(const std::string& text);

// Input pin names the formula reads, in first-use order.
std::vector<std::string> expression_inputs(const Expr& expr);

// Python words Taichi users write (and, not, True, x if c else y, inf...): " (what formulas
// write instead)", or "" for other words. The parser and the lowering add it to messages.
std::string formula_word_hint(const std::string& word);

// The formula for messages: whole when short, else its start and "...".
std::string formula_excerpt(const std::string& text);

}  // namespace loom::graph
