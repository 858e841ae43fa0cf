// The build id: a hash of the compiler, runtime and API sources (and the LLVM version),
// computed at build time. Part of every offline cache key, so entries written by another
// build of Loom are never trusted, without anyone bumping a version by hand.
#pragma once

namespace loom {

const char* build_id();  // 32 hex digits

}  // namespace loom
