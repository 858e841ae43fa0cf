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

}  // namespace loom::bench
