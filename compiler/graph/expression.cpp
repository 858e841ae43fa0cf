#include "compiler/graph/expression.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <utility>

#include "runtime/common/error.h"

namespace loom::graph {

namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  std::unique_ptr<Expr> parse() {
    auto e = ternary();
    skip_space();
    if (pos_ < text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error("column " + std::to_string(pos_ + 1) + ": " + why);
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  // Consumes `token` if it comes next (and is not the start of a longer operator).
  bool accept(const char* token) {
    skip_space();
    size_t n = std::char_traits<char>::length(token);
    if (text_.compare(pos_, n, token) != 0) return false;
    if (n == 1 && pos_ + 1 < text_.size()) {
      char c = token[0], d = text_[pos_ + 1];
      if ((c == '*' && d == '*') || ((c == '<' || c == '>' || c == '!' || c == '=') && d == '=') ||
          (c == '&' && d == '&') || (c == '|' && d == '|'))
        return false;
    }
    pos_ += n;
    return true;
  }

  void expect(const char* token) {
    if (!accept(token)) fail(std::string("expected '") + token + "'");
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
      expect(":");
      arms.push_back({std::move(cond), std::move(value), col});
    }
    for (auto arm = arms.rbegin(); arm != arms.rend(); ++arm)
      last =
          op("select", arm->column, std::move(arm->cond), std::move(arm->value), std::move(last));
    return last;
  }

  std::unique_ptr<Expr> logic_or() {
    auto e = logic_and();
    for (int col = column(); accept("||"); col = column())
      e = op("or", col, std::move(e), logic_and());
    return e;
  }

  std::unique_ptr<Expr> logic_and() {
    auto e = comparison();
    for (int col = column(); accept("&&"); col = column())
      e = op("and", col, std::move(e), comparison());
    return e;
  }

  std::unique_ptr<Expr> comparison() {
    auto e = additive();
    static const char* const tokens[][2] = {{"==", "eq"}, {"!=", "ne"}, {"<=", "le"},
                                            {">=", "ge"}, {"<", "lt"},  {">", "gt"}};
    for (;;) {
      int col = column();
      bool found = false;
      for (auto& t : tokens) {
        if (accept(t[0])) {
          e = op(t[1], col, std::move(e), additive());
          found = true;
          break;
        }
      }
      if (!found) return e;
    }
  }

  std::unique_ptr<Expr> additive() {
    auto e = multiplicative();
    for (;;) {
      int col = column();
      if (accept("+"))
        e = op("add", col, std::move(e), multiplicative());
      else if (accept("-"))
        e = op("sub", col, std::move(e), multiplicative());
      else
        return e;
    }
  }

  std::unique_ptr<Expr> multiplicative() {
    auto e = unary();
    for (;;) {
      int col = column();
      if (accept("*"))
        e = op("mul", col, std::move(e), unary());
      else if (accept("/"))
        e = op("div", col, std::move(e), unary());
      else if (accept("%"))
        e = op("mod", col, std::move(e), unary());
      else
        return e;
    }
  }

  // unary := (- | ! | +)* postfix (** unary)?  -- a right-recursive chain, parsed in a loop:
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
        else if (accept("!"))
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

  // Component selection: v.x, v.xy, c.rgb (any 1 to 4 of xyzw or rgba).
  std::unique_ptr<Expr> postfix() {
    auto e = primary();
    for (;;) {
      int col = column();
      if (pos_ >= text_.size() || text_[pos_] != '.') return e;
      ++pos_;
      size_t start = pos_;
      while (pos_ < text_.size() && std::isalpha(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      std::string letters = text_.substr(start, pos_ - start);
      bool ok = !letters.empty() && letters.size() <= 4;
      bool xyzw = letters.find_first_not_of("xyzw") == std::string::npos;
      bool rgba = letters.find_first_not_of("rgba") == std::string::npos;
      if (!ok || (!xyzw && !rgba)) {
        pos_ = start;
        fail("expected components after '.', like .x, .xy or .rgb");
      }
      auto sel = op("swizzle", col, std::move(e));
      sel->swizzle = letters;
      e = std::move(sel);
    }
  }

  std::unique_ptr<Expr> primary() {
    skip_space();
    int col = static_cast<int>(pos_) + 1;
    if (pos_ >= text_.size()) fail("expression ends too early");
    char c = text_[pos_];
    if (accept("(")) {
      auto e = nested(col);
      expect(")");
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
      if (!accept("(")) {
        e->kind = Expr::Kind::Var;
        return e;
      }
      e->kind = Expr::Kind::Op;
      if (!accept(")")) {
        do e->args.push_back(nested(col));
        while (accept(","));
        expect(")");
      }
      return e;
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }

  std::unique_ptr<Expr> number(int col) {
    const char* begin = text_.c_str() + pos_;
    char* end = nullptr;
    double v = std::strtod(begin, &end);
    if (end == begin) fail("bad number");
    std::string spelled(begin, static_cast<size_t>(end - begin));
    auto e = std::make_unique<Expr>();
    e->kind = Expr::Kind::Number;
    e->number = v;
    e->integer = spelled.find_first_of(".eExXpP") == std::string::npos;
    if (e->integer) {
      uint64_t u = 0;
      auto [stop, ec] = std::from_chars(spelled.data(), spelled.data() + spelled.size(), u);
      if (ec != std::errc() || stop != spelled.data() + spelled.size())
        fail("the whole number " + spelled + " is too large (at most 18446744073709551615)");
      e->integer_value = static_cast<int64_t>(u);
      e->above_int64 = u > static_cast<uint64_t>(INT64_MAX);
    }
    pos_ += spelled.size();
    e->column = col;
    return e;
  }

  const std::string& text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

void collect_inputs(const Expr& root, std::vector<std::string>& out) {
  std::vector<const Expr*> stack{&root};  // pre-order, left to right
  while (!stack.empty()) {
    const Expr* e = stack.back();
    stack.pop_back();
    if (e->kind == Expr::Kind::Var && std::find(out.begin(), out.end(), e->name) == out.end())
      out.push_back(e->name);
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
