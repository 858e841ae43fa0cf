// Hand-written C++ baselines (-O3 -march=native), compiled in their own translation unit.
// Each covers a range [begin, end) of its outermost dimension, so the harness can split it
// over a thread pool exactly as Loom splits a launch (or call it whole, serially).
#pragma once

#include <cstdint>

namespace loom::bench {

void copy_f32(const float* src, float* dst, int64_t begin, int64_t end);
// y[i] *= s: one read and one write stream with no write-allocate, the bandwidth of
// kernels that update an array in place.
void scale_f32(float s, float* y, int64_t begin, int64_t end);
void saxpy_f32(float a, const float* x, float* y, int64_t begin, int64_t end);
// out[i][j] = in[i][j] + k * (in[i-1][j] + in[i+1][j] + in[i][j-1] + in[i][j+1] - 4 in[i][j])
// for interior rows i in [row_begin, row_end) and interior columns of a grid `w` wide.
void stencil5_f32(const float* in, float* out, int64_t w, float k, int64_t row_begin,
                  int64_t row_end);

// The sum and the maximum of x[begin, end), for the reduction baselines (a partial per chunk
// of a parallel launch). The sum keeps 32 independent partial sums, as one writes a float sum
// that the compiler may vectorise without -ffast-math; the maximum is a plain loop (integer
// max is associative, so the compiler vectorises it as written).
float sum_f32(const float* x, int64_t begin, int64_t end);
int32_t max_i32(const int32_t* x, int64_t begin, int64_t end);

// mpm88 (Taichi's example, as bench/graphs/mpm88_*.loom.json writes it): the same storage as
// Loom's fields (x, v: f32x2 interleaved; C: f32x2x2, columns one after the other; the grid
// row-major, grid_v interleaved), the same four loops. Each call covers [begin, end) of the
// loop's outermost dimension (particles, or grid rows).
struct Mpm88 {
  int64_t n = 0, grid = 0;
  float dt = 0;
  float* x = nullptr;       // n x 2
  float* v = nullptr;       // n x 2
  float* C = nullptr;       // n x 4
  float* J = nullptr;       // n
  float* grid_v = nullptr;  // grid x grid x 2
  float* grid_m = nullptr;  // grid x grid
};
void mpm88_seed(const Mpm88& s, int64_t begin, int64_t end);
void mpm88_clear_grid(const Mpm88& s, int64_t row_begin, int64_t row_end);
// P2G as Taichi writes it: every particle adds into 9 cells with atomic float adds
// (compare-and-swap loops, as C++ compiles std::atomic_ref<float>::fetch_add).
void mpm88_p2g_atomic(const Mpm88& s, int64_t begin, int64_t end);
// P2G as one hand-optimises it: plain adds into a grid of the caller's own (`grid_v`,
// `grid_m`, laid out as the shared grid), which the caller later adds into the shared one.
void mpm88_p2g_private(const Mpm88& s, float* grid_v, float* grid_m, int64_t begin, int64_t end);
// dst[i] += src[i], src[i] = 0 over [begin, end): one private grid merged into the shared one.
void add_and_clear_f32(float* dst, float* src, int64_t begin, int64_t end);
void mpm88_grid_update(const Mpm88& s, int64_t row_begin, int64_t row_end);
void mpm88_g2p(const Mpm88& s, int64_t begin, int64_t end);

}  // namespace loom::bench
