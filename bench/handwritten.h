// Hand-written C++ baselines (-O3 -march=native, OpenMP over the same thread count as
// Loom's pool), compiled in their own translation unit.
#pragma once

#include <cstdint>

namespace loom::bench {

void set_baseline_threads(int threads);
void copy_f32(const float* src, float* dst, int64_t n);
// y[i] *= s: one read and one write stream with no write-allocate, the fair bandwidth
// baseline for kernels that update an array in place (saxpy, stencils into warm memory).
void scale_f32(float s, float* y, int64_t n);
void saxpy_f32(float a, const float* x, float* y, int64_t n);
// out[i][j] = in[i][j] + k * (in[i-1][j] + in[i+1][j] + in[i][j-1] + in[i][j+1] - 4 in[i][j])
// on the interior of an h x w grid.
void stencil5_f32(const float* in, float* out, int64_t h, int64_t w, float k);

}  // namespace loom::bench
