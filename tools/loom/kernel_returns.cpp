#include "tools/loom/kernel_returns.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace loom::cli {

namespace {

// The shortest text that reads back as the same value of the component's own type (an f32
// prints as `0.1`, not as the double nearest to it).
std::string component_text(const KernelResult& r, Scalar s, size_t c) {
  if (s == Scalar::Bool) return r.ints[c] ? "true" : "false";
  if (is_unsigned_int(s)) return std::to_string(static_cast<uint64_t>(r.ints[c]));
  if (is_int(s)) return std::to_string(r.ints[c]);
  char buf[64];
  std::to_chars_result end =
      s == Scalar::F32 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(r.values[c]))
                       : std::to_chars(buf, buf + sizeof buf, r.values[c]);
  return std::string(buf, end.ptr);
}

}  // namespace

std::string format_return_value(const KernelResult& r, size_t index) {
  size_t first = 0;
  for (size_t i = 0; i < index; ++i) first += static_cast<size_t>(r.types[i].components());
  ValueType t = r.types[index];
  auto component = [&](int k) {
    return component_text(r, t.scalar, first + static_cast<size_t>(k));
  };
  if (t.is_scalar()) return component(0);
  // Vectors as a list; matrices as a list of columns (components are column-major).
  std::string text = "[";
  for (int col = 0; col < t.cols; ++col) {
    if (col) text += ", ";
    if (t.is_matrix()) text += "[";
    for (int row = 0; row < t.rows; ++row)
      text += (row ? ", " : "") + component(col * t.rows + row);
    if (t.is_matrix()) text += "]";
  }
  return text + "]";
}

std::string format_returns(const KernelResult& r) {
  std::string text;
  for (size_t i = 0; i < r.names.size(); ++i)
    text += (i ? ", " : "") + r.names[i] + " = " + format_return_value(r, i);
  return text;
}

void ReturnLog::add(const Program& program, const std::string& name, int run) {
  for (const LaunchReturns& r : program.last_returns(name)) {
    if (every_) {
      std::string when = run > 0 ? name + " " + std::to_string(run) : name;
      std::printf("%s #%zu %s: %s\n", when.c_str(), r.launch + 1, r.kernel.c_str(),
                  format_returns(r.result).c_str());
    }
    auto same = [&](const Last& x) { return x.pipeline == name && x.returns.launch == r.launch; };
    auto it = std::find_if(last_.begin(), last_.end(), same);
    if (it == last_.end())
      last_.push_back(Last{name, r});
    else
      it->returns = r;
  }
}

void ReturnLog::print_last(std::FILE* out) const {
  if (last_.empty()) return;
  std::fprintf(out, "returns of the last run of each launch:\n");
  for (const Last& x : last_)
    std::fprintf(out, "  %s #%zu %s: %s\n", x.pipeline.c_str(), x.returns.launch + 1,
                 x.returns.kernel.c_str(), format_returns(x.returns.result).c_str());
}

}  // namespace loom::cli
