#include "compiler/graph/expression.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "runtime/common/error.h"
#include "runtime/common/scalar.h"

namespace loom::graph {

namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  std::unique_ptr<Expr> parse() {
    auto e = ternary();
    skip_space();
    if (pos_ < text_.size()) {
      std::string hint = text_[pos_] == '=' ? " ('==' compares)" : formula_word_hint(word_at(pos_));
      fail("unexpected '" + next_token() + "': expected an operator or the end of the formula" +
           hint);
    }
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error("column " + std::to_string(pos_ + 1) + ": " + why);
  }

  [[noreturn]] void fail_at(int col, const std::string& why) const {
    throw Error("column " + std::to_string(col) + ": " + why);
  }

  // The word (name) starting at `i`, or "".
  std::string word_at(size_t i) const {
    size_t end = i;
    while (end < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_'))
      ++end;
    if (end == i || std::isdigit(static_cast<unsigned char>(text_[i]))) return "";
    return text_.substr(i, end - i);
  }

  // What is seen next, for messages: a whole word ('and'), else one character ('$').
  std::string next_token() const {
    std::string w = word_at(pos_);
    return w.empty() ? std::string(1, text_[pos_]) : w;
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  // Consumes `token` if it comes next (and is not the start of a longer operator: `*` is not
  // the start of `**`, `<` not of `<<` or `<=`, `/` not of `//`, `&` not of `&&`...).
  bool accept(const char* token) {
    skip_space();
    size_t n = std::char_traits<char>::length(token);
    if (text_.compare(pos_, n, token) != 0) return false;
    if (n == 1 && pos_ + 1 < text_.size()) {
      char c = token[0], d = text_[pos_ + 1];
      bool doubled =
          d == c && (c == '*' || c == '/' || c == '<' || c == '>' || c == '&' || c == '|');
      bool with_equals = d == '=' && (c == '<' || c == '>' || c == '!' || c == '=');
      if (doubled || with_equals) return false;
    }
    pos_ += n;
    return true;
  }

  // `what` says where the token belongs ("to close the '(' at column 3").
  void expect(const char* token, const std::string& what) {
    if (accept(token)) return;
    fail(std::string("expected '") + token + "' " + what + found());
  }

  // ", found 'x'" or ", but the formula ends", for messages about what was expected.
  std::string found() {
    skip_space();
    if (pos_ >= text_.size()) return ", but the formula ends";
    return ", found '" + next_token() + "'" + formula_word_hint(word_at(pos_));
  }

  std::unique_ptr<Expr> op(const char* name, int column, std::unique_ptr<Expr> a,
                           std::unique_ptr<Expr> b = nullptr, std::unique_ptr<Expr> c = nullptr) {
    auto e = std::make_unique<Expr>();
    e->kind = Expr::Kind::Op;
    e->name = name;
    e->column = column;
    e->args.push_back(std::move(a));
    if (b) e->args.push_back(std::move(b));
    if (c) e->args.push_back(std::move(c));
    return e;
  }

  int column() {
    skip_space();
    return static_cast<int>(pos_) + 1;
  }

  // Real nesting (parentheses, call arguments, the middle of ?:) goes through here, so
  // the parser's recursion depth is bounded by kMaxFormulaNesting.
  std::unique_ptr<Expr> nested(int col) {
    if (depth_ >= kMaxFormulaNesting)
      throw Error("column " + std::to_string(col) + ": the formula nests parentheses, calls or " +
                  "conditionals more than " + std::to_string(kMaxFormulaNesting) +
                  " levels deep; split it across several nodes");
    ++depth_;
    auto e = ternary();
    --depth_;
    return e;
  }

  // c1 ? a1 : c2 ? a2 : e, parsed in a loop and built from the right.
  std::unique_ptr<Expr> ternary() {
    struct Arm {
      std::unique_ptr<Expr> cond, value;
      int column;
    };
    std::vector<Arm> arms;
    std::unique_ptr<Expr> last;
    for (;;) {
      auto cond = logic_or();
      int col = column();
      if (!accept("?")) {
        last = std::move(cond);
        break;
      }
      auto value = nested(col);
      expect(":", "of the '?' at column " + std::to_string(col));
      arms.push_back({std::move(cond), std::move(value), col});
    }
    for (auto arm = arms.rbegin(); arm != arms.rend(); ++arm)
      last =
          op("select", arm->column, std::move(arm->cond), std::move(arm->value), std::move(last));
    return last;
  }

  // One level of left-associative binary operators: tokens (longest first where one starts
  // another) and the node types they lower to.
  struct Infix {
    const char* token;
    const char* node;
  };
  template <size_t N>
  std::unique_ptr<Expr> infix_chain(const Infix (&ops)[N],
                                    std::unique_ptr<Expr> (Parser::*operand)()) {
    auto e = (this->*operand)();
    for (;;) {
      int col = column();
      const Infix* hit = nullptr;
      for (const Infix& o : ops)
        if (accept(o.token)) {
          hit = &o;
          break;
        }
      if (!hit) return e;
      e = op(hit->node, col, std::move(e), (this->*operand)());
    }
  }

  std::unique_ptr<Expr> logic_or() {
    static const Infix ops[] = {{"||", "or"}};
    return infix_chain(ops, &Parser::logic_and);
  }

  std::unique_ptr<Expr> logic_and() {
    static const Infix ops[] = {{"&&", "and"}};
    return infix_chain(ops, &Parser::comparison);
  }

  std::unique_ptr<Expr> comparison() {
    static const Infix ops[] = {{"==", "eq"}, {"!=", "ne"}, {"<=", "le"},
                                {">=", "ge"}, {"<", "lt"},  {">", "gt"}};
    return infix_chain(ops, &Parser::bit_or);
  }

  // The bitwise levels, loosest first, all tighter than comparisons (Python's order).
  std::unique_ptr<Expr> bit_or() {
    static const Infix ops[] = {{"|", "or"}};
    return infix_chain(ops, &Parser::bit_xor);
  }

  std::unique_ptr<Expr> bit_xor() {
    static const Infix ops[] = {{"^", "xor"}};
    return infix_chain(ops, &Parser::bit_and);
  }

  std::unique_ptr<Expr> bit_and() {
    static const Infix ops[] = {{"&", "and"}};
    return infix_chain(ops, &Parser::shift);
  }

  std::unique_ptr<Expr> shift() {
    static const Infix ops[] = {{"<<", "shl"}, {">>", "shr"}};
    return infix_chain(ops, &Parser::additive);
  }

  std::unique_ptr<Expr> additive() {
    static const Infix ops[] = {{"+", "add"}, {"-", "sub"}};
    return infix_chain(ops, &Parser::multiplicative);
  }

  std::unique_ptr<Expr> multiplicative() {
    static const Infix ops[] = {{"*", "mul"}, {"//", "floordiv"}, {"/", "div"}, {"%", "mod"}};
    return infix_chain(ops, &Parser::unary);
  }

  // unary := (- | ! | ~ | +)* postfix (** unary)?  -- a right-recursive chain, parsed in a loop:
  // -a ** -b ** c is neg(pow(a, neg(pow(b, c)))).
  std::unique_ptr<Expr> unary() {
    struct Link {
      std::vector<std::pair<const char*, int>> prefixes;  // outermost first
      std::unique_ptr<Expr> base;
      int pow_column = 0;
    };
    std::vector<Link> links;
    for (;;) {
      Link link;
      for (;;) {
        int col = column();
        if (accept("-"))
          link.prefixes.emplace_back("neg", col);
        else if (accept("!") || accept("~"))
          link.prefixes.emplace_back("not", col);
        else if (!accept("+"))
          break;
      }
      link.base = postfix();
      int col = column();
      bool more = accept("**");
      link.pow_column = col;
      links.push_back(std::move(link));
      if (!more) break;
    }
    auto wrap = [&](Link& link, std::unique_ptr<Expr> e) {
      for (auto p = link.prefixes.rbegin(); p != link.prefixes.rend(); ++p)
        e = op(p->first, p->second, std::move(e));
      return e;
    };
    std::unique_ptr<Expr> acc = wrap(links.back(), std::move(links.back().base));
    for (size_t i = links.size() - 1; i-- > 0;) {
      Link& link = links[i];
      acc = wrap(link, op("pow", link.pow_column, std::move(link.base), std::move(acc)));
    }
    return acc;
  }

  // Parts of a value: components v.x, v.xy, c.rgb (any 1 to 4 of xyzw or rgba) and matrix
  // columns m.c0 .. m.c3, the names of the split node's outputs.
  std::unique_ptr<Expr> postfix() {
    auto e = primary();
    for (;;) {
      int col = column();
      if (pos_ >= text_.size() || text_[pos_] != '.') return e;
      ++pos_;
      size_t start = pos_;
      while (pos_ < text_.size() && std::isalnum(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      std::string part = text_.substr(start, pos_ - start);
      bool letters = !part.empty() && part.size() <= 4 &&
                     (part.find_first_not_of("xyzw") == std::string::npos ||
                      part.find_first_not_of("rgba") == std::string::npos);
      bool column = part.size() == 2 && part[0] == 'c' && part[1] >= '0' && part[1] <= '3';
      if (!letters && !column) {
        bool call = pos_ < text_.size() && text_[pos_] == '(';
        bool module = e->kind == Expr::Kind::Var &&
                      (e->name == "math" || e->name == "ti" || e->name == "tm" || e->name == "np" ||
                       e->name == "numpy");
        pos_ = start;
        if (!part.empty() && (call || module))
          fail("'." + part +
               "' is no part of a value: functions are called by their node name: " + part + "(x)");
        fail("expected components after '.', like .x, .xy or .rgb, or a matrix column .c0 to .c3");
      }
      auto sel = op(kSelectOp, col, std::move(e));
      sel->swizzle = part;
      e = std::move(sel);
    }
  }

  std::unique_ptr<Expr> primary() {
    skip_space();
    int col = static_cast<int>(pos_) + 1;
    if (pos_ >= text_.size())
      fail("the formula ends early: expected a value (a number, a name, a call or '(')");
    char c = text_[pos_];
    if (accept("(")) {
      auto e = nested(col);
      expect(")", "to close the '(' at column " + std::to_string(col));
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number(col);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        ++pos_;
      auto e = std::make_unique<Expr>();
      e->name = text_.substr(start, pos_ - start);
      e->column = col;
      if (e->name == "true" || e->name == "false") {
        e->kind = Expr::Kind::Bool;
        e->number = e->name == "true";
        return e;
      }
      if (e->name == "not") {
        // `not x` is Python's !x; a pin named "not" alone stays a name.
        size_t save = pos_;
        skip_space();
        bool operand = pos_ < text_.size() && pos_ > save &&
                       (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                        text_[pos_] == '_' || text_[pos_] == '(');
        pos_ = save;
        if (operand) fail_at(col, "unexpected 'not'" + formula_word_hint("not"));
      }
      if (!accept("(")) {
        // Type names are words of the language, like true and false: arguments of cast.
        e->kind = parse_value_type(e->name) ? Expr::Kind::Type : Expr::Kind::Var;
        return e;
      }
      e->kind = Expr::Kind::Op;
      if (!accept(")")) {
        do e->args.push_back(nested(col));
        while (accept(","));
        expect(")", "or ',' in the call of '" + e->name + "' at column " + std::to_string(col));
      }
      return e;
    }
    fail("unexpected '" + std::string(1, c) +
         "': expected a value (a number, a name, a call or '(')");
  }

  bool at_digit(size_t i, int base) const {
    if (i >= text_.size()) return false;
    char c = text_[i];
    if (base == 2) return c == '0' || c == '1';
    if (base == 16) return std::isxdigit(static_cast<unsigned char>(c)) != 0;
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  }

  // Digits of `base` from pos_, with single '_' between digits (1_000, 0xff_ff); the digits
  // alone go to `out`.
  void digits(int base, std::string& out) {
    bool any = false;
    while (pos_ < text_.size()) {
      if (at_digit(pos_, base)) {
        out += text_[pos_++];
        any = true;
        continue;
      }
      if (text_[pos_] != '_') return;
      if (!any || !at_digit(pos_ + 1, base))
        fail("'_' separates digits: one '_' between two digits, like 1_000");
      ++pos_;
    }
  }

  // Numbers are spelled as in Python and Taichi: 42, 0xff, 0b101, 1_000 are whole numbers;
  // 2.5, .5, 1e-3 are floats. strtod is not the reader: it would take 0x10 as a hex float,
  // and hex floats (0x1p4) are not literals here.
  std::unique_ptr<Expr> number(int col) {
    auto e = std::make_unique<Expr>();
    e->kind = Expr::Kind::Number;
    e->column = col;
    std::string spelled;  // the digits, without '_' and base prefix
    int base = 10;
    if (text_[pos_] == '0' && pos_ + 1 < text_.size() &&
        std::strchr("xXbB", text_[pos_ + 1]) != nullptr) {
      base = text_[pos_ + 1] == 'x' || text_[pos_ + 1] == 'X' ? 16 : 2;
      pos_ += 2;
      if (pos_ < text_.size() && text_[pos_] == '_') ++pos_;  // 0x_ff, as Python allows
      digits(base, spelled);
      if (spelled.empty())
        fail(base == 16 ? "expected hex digits (0-9, a-f) after '0x'"
                        : "expected binary digits (0 or 1) after '0b'");
      if (base == 16 && pos_ < text_.size() && std::strchr(".pP", text_[pos_]) != nullptr)
        fail("hex floats like 0x1p4 are not formula literals: write the value in decimal");
    } else {
      digits(10, spelled);
      bool whole = spelled.size() > 0;
      if (pos_ < text_.size() && text_[pos_] == '.') {
        ++pos_;
        spelled += '.';
        digits(10, spelled);
        whole = false;
        if (spelled.size() == 1) fail_at(col, "expected a number: digits before or after '.'");
      }
      if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
        spelled += 'e';
        ++pos_;
        if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-'))
          spelled += text_[pos_++];
        size_t before = spelled.size();
        digits(10, spelled);
        if (spelled.size() == before) fail("expected the digits of the exponent after 'e'");
        whole = false;
      }
      if (!whole) {
        e->number = std::strtod(spelled.c_str(), nullptr);
        // A decimal too large for a double would be infinity; formulas have no inf literal.
        if (!std::isfinite(e->number))
          fail_at(col,
                  "the number " + spelled + " is too large for a float (at most about 1.8e308)");
      }
      e->integer = whole;
    }
    if (base != 10) e->integer = true;
    // A number runs into no letter: 2x, 0b102, 0xfg, 1.5f are mistakes, not products.
    if (pos_ < text_.size() &&
        (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      fail("unexpected '" + std::string(1, text_[pos_]) + "' in a number" +
           (base == 2                                  ? ": binary digits are 0 and 1"
            : text_[pos_] == 'f' || text_[pos_] == 'F' ? ": floats take no suffix (2.5, not 2.5f)"
                                                       : ""));
    if (!e->integer) return e;
    uint64_t u = 0;
    auto [stop, ec] = std::from_chars(spelled.data(), spelled.data() + spelled.size(), u, base);
    if (ec != std::errc() || stop != spelled.data() + spelled.size())
      fail_at(col, "the whole number " + text_.substr(col - 1, pos_ - (col - 1)) +
                       " is too large (at most 18446744073709551615" +
                       (base == 16 ? std::string(", 0xffffffffffffffff)") : ")"));
    e->number = static_cast<double>(u);
    e->integer_value = static_cast<int64_t>(u);
    e->above_int64 = u > static_cast<uint64_t>(INT64_MAX);
    return e;
  }

  const std::string& text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

void collect_inputs(const Expr& root, std::vector<std::string>& out) {
  std::vector<const Expr*> stack{&root};  // pre-order, left to right
  std::unordered_set<std::string_view> seen;
  while (!stack.empty()) {
    const Expr* e = stack.back();
    stack.pop_back();
    if (e->kind == Expr::Kind::Var && seen.insert(e->name).second) out.push_back(e->name);
    for (auto a = e->args.rbegin(); a != e->args.rend(); ++a) stack.push_back(a->get());
  }
}

}  // namespace

Expr::~Expr() {
  std::vector<std::unique_ptr<Expr>> doomed;
  for (auto& a : args)
    if (a) doomed.push_back(std::move(a));
  while (!doomed.empty()) {
    std::unique_ptr<Expr> e = std::move(doomed.back());
    doomed.pop_back();
    for (auto& a : e->args)
      if (a) doomed.push_back(std::move(a));
  }  // each `e` dies with no children left
}

std::string formula_word_hint(const std::string& word) {
  if (word == "and" || word == "or" || word == "not")
    return " (use && / || / ! for and / or / not)";
  if (word == "if" || word == "else") return " (use c ? x : y for x if c else y)";
  if (word == "True" || word == "False") return " (booleans are true / false)";
  if (word == "inf" || word == "nan" || word == "pi")
    return " (formulas have no '" + word + "' literal: give it as an input)";
  return "";
}

std::string formula_excerpt(const std::string& text) {
  constexpr size_t kShown = 60;
  if (text.size() <= kShown) return text;
  return text.substr(0, kShown) + "... (" + std::to_string(text.size()) + " characters)";
}

std::unique_ptr<Expr> parse_expression(const std::string& text) { return Parser(text).parse(); }

std::vector<std::string> expression_inputs(const Expr& expr) {
  std::vector<std::string> out;
  collect_inputs(expr, out);
  return out;
}

}  // namespace loom::graph
