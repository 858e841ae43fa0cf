#include "compiler/graph/expression.h"

#include <cctype>
#include <cstdlib>

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

  std::unique_ptr<Expr> ternary() {
    auto cond = logic_or();
    int col = column();
    if (!accept("?")) return cond;
    auto a = ternary();
    expect(":");
    auto b = ternary();
    return op("select", col, std::move(cond), std::move(a), std::move(b));
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

  std::unique_ptr<Expr> unary() {
    int col = column();
    if (accept("-")) return op("neg", col, unary());
    if (accept("!")) return op("not", col, unary());
    if (accept("+")) return unary();
    return power();
  }

  std::unique_ptr<Expr> power() {
    auto base = postfix();
    int col = column();
    if (accept("**")) return op("pow", col, std::move(base), unary());
    return base;
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
      auto e = ternary();
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
        do e->args.push_back(ternary());
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
    pos_ += spelled.size();
    auto e = std::make_unique<Expr>();
    e->kind = Expr::Kind::Number;
    e->number = v;
    e->integer = spelled.find_first_of(".eExXpP") == std::string::npos;
    if (e->integer) e->integer_value = std::strtoll(spelled.c_str(), nullptr, 10);
    e->column = col;
    return e;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

void collect_inputs(const Expr& e, std::vector<std::string>& out) {
  if (e.kind == Expr::Kind::Var) {
    for (const std::string& s : out)
      if (s == e.name) return;
    out.push_back(e.name);
  }
  for (const auto& a : e.args) collect_inputs(*a, out);
}

}  // namespace

std::unique_ptr<Expr> parse_expression(const std::string& text) { return Parser(text).parse(); }

std::vector<std::string> expression_inputs(const Expr& expr) {
  std::vector<std::string> out;
  collect_inputs(expr, out);
  return out;
}

}  // namespace loom::graph
