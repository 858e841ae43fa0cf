// Checks, at every launch, the extents a kernel's code assumes (KernelABI::extent_assumptions,
// found by the compiler) against the ndarrays, pack members and values bound to it, so an
// ndarray shorter than the loop that indexes it is refused before anything runs instead of
// being read or written out of bounds.
#pragma once

#include "runtime/common/error.h"
#include "runtime/common/kernel_abi.h"

namespace loom::host {

// What a launch refused for its extents throws (the C ABI reports LOOM_ERROR_INVALID_ARGUMENT).
class ExtentError : public Error {
 public:
  using Error::Error;
};

// The value of one range bound at a launch (`ctx`'s parameter bytes and resource extents).
int64_t range_bound_value(const RangeBound& b, const LaunchContext& ctx);

// Throws ExtentError naming the kernel, the resource (a pack member by its path), what bounds
// the loop that indexes it, and both extents. `ctx` holds the launch's bindings: its resource
// views (argpack members already read from their packs) and parameter bytes. A few integer
// compares per recorded entry; kernels without entries cost nothing.
void check_extent_assumptions(const KernelABI& abi, const LaunchContext& ctx);

}  // namespace loom::host
