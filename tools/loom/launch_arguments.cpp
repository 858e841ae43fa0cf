#include "tools/loom/launch_arguments.h"

#include <cctype>
#include <cerrno>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

#include "compiler/graph/document.h"
#include "runtime/common/argpack_layout.h"

namespace loom::cli {

namespace {

// A value's text as its components: `columns` when written as a list of lists (a matrix),
// else `flat`. Syntax problems are thrown as the message text.
struct Components {
  std::vector<std::string> flat;
  std::vector<std::vector<std::string>> columns;
};

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  for (size_t begin = 0;;) {
    size_t comma = s.find(',', begin);
    out.push_back(s.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (comma == std::string::npos) return out;
    begin = comma + 1;
  }
}

Components components_of(const std::string& text) {
  std::string s;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  if (s.empty()) throw std::string("no value given");
  const std::string shape = "'" + text +
                            "' is neither a value, a list of numbers, nor a list of columns "
                            "([[1, 2], [3, 4]])";
  Components c;
  if (s.front() != '[') {
    c.flat = split_commas(s);
  } else if (s.back() != ']') {
    throw shape;
  } else if (std::string inner = s.substr(1, s.size() - 2); inner.empty() || inner[0] != '[') {
    c.flat = split_commas(inner);
  } else {
    for (size_t pos = 0; pos < inner.size();) {
      size_t close = inner.find(']', pos);
      if (inner[pos] != '[' || close == std::string::npos) throw shape;
      c.columns.push_back(split_commas(inner.substr(pos + 1, close - pos - 1)));
      pos = close + 1;
      if (pos == inner.size()) break;
      if (inner[pos] != ',' || pos + 1 == inner.size()) throw shape;
      ++pos;
    }
  }
  auto check = [&](const std::vector<std::string>& tokens) {
    for (const std::string& t : tokens) {
      if (t.empty()) throw "'" + text + "' has an empty component";
      if (t.find_first_of("[]") != std::string::npos) throw shape;
    }
  };
  check(c.flat);
  for (const auto& column : c.columns) check(column);
  return c;
}

// One component as its scalar type reads it.
struct Component {
  double value = 0;
  int64_t i = 0;
  bool above_int64 = false;  // u64 beyond INT64_MAX: `i` holds the bits
};

bool whole_text_is_a_number(const std::string& t) {
  char* end = nullptr;
  std::strtod(t.c_str(), &end);
  return !t.empty() && end && *end == '\0';
}

std::string integer_range(Scalar s) {
  int bits = bit_width(s);
  if (is_unsigned_int(s))
    return "0 to " + std::to_string(bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1);
  int64_t low = bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
  int64_t high = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  return std::to_string(low) + " to " + std::to_string(high);
}

Component component(const std::string& token, Scalar s) {
  std::string name(scalar_name(s));
  if (token.empty()) throw std::string("no value given");
  if (s == Scalar::Bool) {
    if (token == "true" || token == "1") return {1, 1, false};
    if (token == "false" || token == "0") return {0, 0, false};
    throw "'" + token + "' is not a bool (true, false, 1 or 0)";
  }
  if (is_int(s)) {
    std::string t = token[0] == '+' ? token.substr(1) : token;
    bool negative = !t.empty() && t[0] == '-';
    uint64_t magnitude = 0;
    const char* first = t.data() + (negative ? 1 : 0);
    const char* last = t.data() + t.size();
    auto [end, ec] = std::from_chars(first, last, magnitude);
    bool too_big = ec == std::errc::result_out_of_range;
    if (first == last || end != last || (ec != std::errc() && !too_big)) {
      if (whole_text_is_a_number(token))
        throw "'" + token + "' is not a whole number (" + name + " takes integers)";
      throw "'" + token + "' is not an integer";
    }
    int bits = bit_width(s);
    if (is_signed_int(s)) {
      uint64_t limit = (uint64_t{1} << (bits - 1)) - (negative ? 0 : 1);
      too_big |= magnitude > limit;
    } else {
      too_big |=
          (negative && magnitude != 0) || (bits < 64 && magnitude > (uint64_t{1} << bits) - 1);
    }
    if (too_big) throw token + " is out of range for " + name + " (" + integer_range(s) + ")";
    Component c;
    c.value = negative ? -static_cast<double>(magnitude) : static_cast<double>(magnitude);
    c.i = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
    c.above_int64 = !negative && magnitude > static_cast<uint64_t>(INT64_MAX);
    return c;
  }
  errno = 0;
  char* end = nullptr;
  double d = std::strtod(token.c_str(), &end);
  if (!end || *end != '\0') throw "'" + token + "' is not a number";
  bool written_infinite = token.find_first_of("iI") != std::string::npos;
  if ((std::isinf(d) && !written_infinite) ||
      (s == Scalar::F32 && std::isfinite(d) && std::fabs(d) > FLT_MAX))
    throw token + " is out of range for " + name + " (largest " +
        (s == Scalar::F32 ? "3.4028235e38" : "1.7976931348623157e308") + ")";
  return {d, 0, false};
}

// What a parameter takes, for messages: "i32", "ndarray of f32x3, 2-d", "argpack P".
std::string describe(const graph::KernelParam& p) {
  switch (p.kind) {
    case graph::ParamKind::Value: return p.type;
    case graph::ParamKind::Ndarray:
      return "ndarray" + (p.type.empty() ? "" : " of " + p.type) +
             (p.ndim ? ", " + std::to_string(p.ndim) + "-d" : "");
    case graph::ParamKind::Texture:
      return "texture" + (p.ndim ? " " + std::to_string(p.ndim) + "-d" : "");
    case graph::ParamKind::Argpack: return "argpack " + p.type;
    case graph::ParamKind::Template: return "template" + (p.type.empty() ? "" : " " + p.type);
  }
  return p.type;
}

template <typename List, typename Name>
std::string names_of(const List& list, Name name) {
  std::string out;
  for (const auto& x : list) out += (out.empty() ? "" : ", ") + name(x);
  return out;
}

}  // namespace

Arg parse_value(const std::string& text, ValueType type, const Place& where,
                const std::string& what) {
  try {
    Components c = components_of(text);
    std::string name = value_type_name(type);
    int n = type.components();
    if (type.is_scalar()) {
      if (!c.columns.empty() || c.flat.size() != 1)
        throw "'" + text + "' is not one value; " + name + " takes one";
      Component x = component(c.flat[0], type.scalar);
      if (type.scalar == Scalar::Bool) return Arg(x.i != 0);
      if (is_float(type.scalar)) return Arg(x.value);
      return x.above_int64 ? Arg(static_cast<uint64_t>(x.i)) : Arg(x.i);
    }
    std::vector<std::string> tokens = c.flat;
    if (!c.columns.empty()) {
      bool fits = type.is_matrix() && c.columns.size() == type.cols;
      for (const auto& column : c.columns) fits &= column.size() == type.rows;
      if (!fits)
        throw "'" + text + "' does not fit " + name +
            (type.is_matrix() ? ": it takes " + std::to_string(type.cols) + " columns of " +
                                    std::to_string(type.rows) + " components"
                              : ": a vector is one list of components");
      tokens.clear();
      for (const auto& column : c.columns)
        tokens.insert(tokens.end(), column.begin(), column.end());
    }
    if (tokens.size() == 1) tokens.assign(static_cast<size_t>(n), tokens[0]);  // splat
    if (static_cast<int>(tokens.size()) != n)
      throw name + " takes " + std::to_string(n) + " components (or one for all), got " +
          std::to_string(tokens.size());
    std::vector<double> values;
    for (const std::string& t : tokens) {
      Component x = component(t, type.scalar);
      // Lists reach the program as doubles: integers beyond 2^53 would silently change.
      if (is_int(type.scalar) && std::fabs(x.value) > 9007199254740992.0)
        throw t + " is too large for a list component (exact up to 2^53)";
      values.push_back(x.value);
    }
    return Arg(std::move(values));
  } catch (const std::string& message) {
    throw Error(where, what + ": " + message);
  }
}

Args launch_arguments(Program& program, const std::string& kernel,
                      const std::vector<std::string>& specs) {
  const graph::Document& doc = program.document();
  const graph::KernelDecl* decl = doc.kernel(kernel);
  // K.grad / K.dual: K's parameters, and the twins PARAM.grad / PARAM.dual (docs/autodiff.md).
  std::string twin;
  for (const char* suffix : {".grad", ".dual"}) {
    size_t n = std::strlen(suffix);
    if (decl || kernel.size() <= n || kernel.compare(kernel.size() - n, n, suffix) != 0) continue;
    decl = doc.kernel(kernel.substr(0, kernel.size() - n));
    if (decl) twin = suffix;
  }
  if (!decl)
    throw Error(Place{doc.path, "", -1, ""},
                "the document has no kernel '" + kernel + "'; " +
                    (doc.kernels.empty()
                         ? std::string("it has no kernels")
                         : "its kernels are: " +
                               names_of(doc.kernels, [](const auto& k) { return k.name; })));
  const Place where{doc.path, kernel, -1, ""};
  auto parameter = [&](const std::string& name) -> const graph::KernelParam* {
    for (const graph::KernelParam& p : decl->params)
      if (p.name == name) return &p;
    return nullptr;
  };
  std::string parameters =
      decl->params.empty()
          ? std::string("it has none")
          : "its parameters are: " + names_of(decl->params, [](const graph::KernelParam& p) {
              return p.name + " (" + describe(p) + ")";
            });

  std::vector<std::pair<std::string, std::string>> given;  // NAME or PARAM.MEMBER, VALUE
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(where, "--arg expects NAME=VALUE, got '" + spec + "'");
    std::string name = spec.substr(0, eq);
    std::string param = name.substr(0, name.find('.'));
    const graph::KernelParam* p = parameter(param);
    if (!p) throw Error(where, "no parameter '" + param + "'; " + parameters);
    bool is_twin = !twin.empty() && name == param + twin &&
                   (p->kind == graph::ParamKind::Ndarray || p->kind == graph::ParamKind::Value);
    if (param != name && p->kind != graph::ParamKind::Argpack && !is_twin)
      throw Error(where, "argument '" + name + "': parameter '" + param + "' is " + describe(*p) +
                             ", not an argpack; only argpack members are set as PARAM.MEMBER");
    for (const auto& [earlier, ignored] : given)
      if (earlier == name) throw Error(where, "argument '" + name + "' is given twice");
    given.emplace_back(name, spec.substr(eq + 1));
  }
  auto text_of = [&](const std::string& name) -> const std::string* {
    for (const auto& [n, text] : given)
      if (n == name) return &text;
    return nullptr;
  };

  Args args;
  for (const graph::KernelParam& p : decl->params) {
    const std::string* text = text_of(p.name);
    std::string what = "argument '" + p.name + "' (" + describe(p) + ")";
    // A resource parameter: the named one, else the one named like the parameter.
    auto resource = [&](const std::string& kind, bool exists_given, bool exists_default,
                        const std::string& choices) {
      if (text && exists_given) return *text;
      if (!text && exists_default) return p.name;
      std::string list = choices.empty() ? "it has none" : "its " + kind + "s: " + choices;
      if (text)
        throw Error(where,
                    what + ": the program has no " + kind + " '" + *text + "' (" + list + ")");
      throw Error(where, "missing " + what + ": the program has no " + kind + " named '" + p.name +
                             "'; give --arg " + p.name + "=NAME (" + list + ")");
    };
    switch (p.kind) {
      case graph::ParamKind::Value: {
        if (!text) throw Error(where, "missing " + what + ": give --arg " + p.name + "=VALUE");
        std::optional<ValueType> type = parse_value_type(p.type);
        if (!type) throw Error(where, what + ": '" + p.type + "' is not a value type");
        args.emplace_back(p.name, parse_value(*text, *type, where, what));
        break;
      }
      case graph::ParamKind::Ndarray:
        args.emplace_back(
            p.name, resource("ndarray", text && doc.ndarray(*text), doc.ndarray(p.name) != nullptr,
                             names_of(doc.ndarrays, [](const auto& x) { return x.name; })));
        break;
      case graph::ParamKind::Texture:
        args.emplace_back(
            p.name, resource("texture", text && doc.texture(*text), doc.texture(p.name) != nullptr,
                             names_of(doc.textures, [](const auto& x) { return x.name; })));
        break;
      case graph::ParamKind::Argpack:
        args.emplace_back(
            p.name, resource("argpack", text && doc.argpack(*text), doc.argpack(p.name) != nullptr,
                             names_of(doc.argpacks, [](const auto& x) { return x.name; })));
        break;
      case graph::ParamKind::Template: {
        std::string fields = names_of(doc.fields, [](const auto& x) { return x.name; });
        if (std::optional<ValueType> type = parse_value_type(p.type); type && p.type != "field") {
          if (!text) throw Error(where, "missing " + what + ": give --arg " + p.name + "=VALUE");
          args.emplace_back(p.name, parse_value(*text, *type, where, what));
          break;
        }
        if (!text && p.type != "field" && !doc.field(p.name))
          throw Error(where, "missing " + what + ": give --arg " + p.name +
                                 "=VALUE (a field's name or a constant)");
        if (p.type == "field" || !text || doc.field(*text)) {
          args.emplace_back(p.name, resource("field", text && doc.field(*text),
                                             doc.field(p.name) != nullptr, fields));
          break;
        }
        // An untyped template: a constant, as a pipeline would write it.
        try {
          args.emplace_back(p.name, Arg(component(*text, Scalar::I64).i));
          break;
        } catch (const std::string&) {
        }
        if (*text == "true" || *text == "false") {
          args.emplace_back(p.name, Arg(*text == "true"));
          break;
        }
        try {
          args.emplace_back(p.name, Arg(component(*text, Scalar::F64).value));
        } catch (const std::string&) {
          throw Error(where,
                      what + ": '" + *text + "' is neither a field of the program nor a number (" +
                          (fields.empty() ? "it has no fields" : "its fields: " + fields) + ")");
        }
        break;
      }
    }
  }

  // Twins of a derived launch: an ndarray's by name, a value's (a tangent) by its type.
  for (const auto& [name, text] : given) {
    const graph::KernelParam* p = parameter(name.substr(0, name.find('.')));
    if (twin.empty() || name != p->name + twin || p->kind == graph::ParamKind::Argpack) continue;
    std::optional<ValueType> type = parse_value_type(p->type);
    if (p->kind == graph::ParamKind::Value && type)
      args.emplace_back(name, parse_value(text, *type, where, "argument '" + name + "'"));
    else
      args.emplace_back(name, Arg(text));
  }

  // Argpack members: set on the argpack each parameter is bound to, read by the member's type.
  for (const auto& [name, text] : given) {
    size_t dot = name.find('.');
    if (dot == std::string::npos) continue;
    if (!twin.empty() && name == name.substr(0, dot) + twin &&
        parameter(name.substr(0, dot))->kind != graph::ParamKind::Argpack)
      continue;  // a twin (above)
    std::string param = name.substr(0, dot), path = name.substr(dot + 1);
    std::string pack;
    for (const auto& [n, value] : args)
      if (n == param) pack = value.resource();
    const graph::ArgpackDecl* instance = doc.argpack(pack);
    int root = instance ? doc.argpack_type(instance->type) : -1;
    if (root < 0) throw Error(where, "argument '" + name + "': '" + pack + "' is not an argpack");
    const ArgpackMember* m = find_member(doc.argpack_types, root, path, nullptr);
    std::string what = "argument '" + name + "'";
    if (!m)
      throw Error(where, what + ": argpack type '" + instance->type + "' has no member '" + path +
                             "' (its members: " +
                             names_of(doc.argpack_types[static_cast<size_t>(root)].members,
                                      [](const ArgpackMember& x) { return x.name; }) +
                             ")");
    if (m->kind == MemberKind::Struct)
      throw Error(where, what + " is a struct: set its members (" + name + ".MEMBER=VALUE)");
    Arg value =
        m->kind == MemberKind::Value
            ? parse_value(text, m->type, where, what + " (" + value_type_name(m->type) + ")")
            : Arg(text);  // an ndarray, texture or argpack by name
    program.set_argpack(pack, path, value);
  }
  return args;
}

}  // namespace loom::cli
