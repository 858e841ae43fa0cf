#include "runtime/host/extent_check.h"

#include <cstring>
#include <string>

namespace loom::host {

namespace {

// What the kernel's 32-bit code computes for `v + plus`.
int64_t plus_32(int64_t v, int32_t plus) {
  if (plus == 0) return v;
  return static_cast<int32_t>(static_cast<uint32_t>(v) + static_cast<uint32_t>(plus));
}

}  // namespace

int64_t range_bound_value(const RangeBound& b, const LaunchContext& ctx) {
  switch (b.kind) {
    case RangeBound::Kind::Const: return b.value;
    case RangeBound::Kind::Arg: {
      int32_t v = 0;
      std::memcpy(&v, ctx.params[b.value] + b.offset, sizeof v);
      return plus_32(v, b.plus);
    }
    case RangeBound::Kind::Shape: return plus_32(ctx.resources[b.value].shape[b.offset], b.plus);
  }
  return 0;
}

namespace {

std::string resource_words(const KernelABI& abi, int32_t slot, const std::string& name) {
  const ResourceDesc& r = abi.resources[static_cast<size_t>(slot)];
  std::string words = std::string(resource_kind_name(r.kind)) + " '" + name + "'";
  if (r.param_offset >= 0) words += " (argpack member)";
  return words;
}

// " plus 2", " minus 1", "" for 0.
std::string plus_words(int64_t plus) {
  if (plus == 0) return "";
  return (plus > 0 ? " plus " : " minus ") + std::to_string(plus > 0 ? plus : -plus);
}

// "the loop up to the extent of ndarray 'p.a' along dimension 0 minus 1 (7)", with the index's
// constant offset.
std::string loop_words(const KernelABI& abi, const ExtentAssumption& e, int64_t end) {
  if (e.loop < 0) return "a constant index";
  const RangeBound& b = e.end[static_cast<size_t>(e.loop)];
  std::string words = "the loop up to ";
  switch (b.kind) {
    case RangeBound::Kind::Const: words += std::to_string(end); break;
    case RangeBound::Kind::Arg:
      words += "parameter '" + e.bound_name + "'" + plus_words(b.plus) + " (" +
               std::to_string(end) + ")";
      break;
    case RangeBound::Kind::Shape:
      words += "the extent of " + resource_words(abi, static_cast<int32_t>(b.value), e.bound_name) +
               " along dimension " + std::to_string(b.offset) + plus_words(b.plus) + " (" +
               std::to_string(end) + ")";
      break;
  }
  words += plus_words(e.high);
  return words;
}

}  // namespace

void check_extent_assumptions(const KernelABI& abi, const LaunchContext& ctx) {
  for (const ExtentAssumption& e : abi.extent_assumptions) {
    if (!e.checked) continue;
    // The access runs only when every loop around it runs at least once.
    bool runs = true;
    for (size_t k = 0; runs && k < e.end.size(); ++k)
      runs = range_bound_value(e.end[k], ctx) > range_bound_value(e.begin[k], ctx);
    if (!runs) continue;
    int64_t first = e.low, last = e.high, end = 0;
    if (e.loop >= 0) {
      end = range_bound_value(e.end[static_cast<size_t>(e.loop)], ctx);
      first += range_bound_value(e.begin[static_cast<size_t>(e.loop)], ctx);
      last += end - 1;
    }
    int64_t extent = ctx.resources[e.slot].shape[e.dim];
    if (first >= 0 && last < extent) continue;
    Place place;
    place.kernel = abi.name;
    std::string what = resource_words(abi, e.slot, e.name);
    if (first < 0)
      throw ExtentError(place, what + " is indexed from " + std::to_string(first) +
                                   " along dimension " + std::to_string(e.dim) + " by " +
                                   loop_words(abi, e, end) + "; nothing was launched");
    throw ExtentError(place, what + " has extent " + std::to_string(extent) + " along dimension " +
                                 std::to_string(e.dim) + ", but the kernel indexes it up to " +
                                 std::to_string(last) + " with " + loop_words(abi, e, end) +
                                 "; bind one at least " + std::to_string(last + 1) +
                                 " long (nothing was launched)");
  }
}

}  // namespace loom::host
