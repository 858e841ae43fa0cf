// A count of the compiler's elementary steps on this thread: instructions a walk, a pass or the
// verifier looks at, positions a search goes through (Block::index_of, an input pin or a name
// looked for), instructions moved to make room (Block::insert, Block::remove). It is how tests
// hold compile time linear in a document's size without a clock
// (tests/passes/linear_work_test.cpp): the steps for 4N nodes stay near 4 times those for N,
// where one quadratic step makes them 16 times as many, on any machine, however loaded.
#pragma once

#include <cstdint>

namespace loom::ir {

namespace detail {
inline thread_local uint64_t work_steps = 0;
}  // namespace detail

inline void count_work(uint64_t steps = 1) { detail::work_steps += steps; }

// Steps counted on this thread so far; tests take differences.
inline uint64_t work_count() { return detail::work_steps; }

}  // namespace loom::ir
