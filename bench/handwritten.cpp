#include "bench/handwritten.h"

#include <omp.h>

namespace loom::bench {

void set_baseline_threads(int threads) { omp_set_num_threads(threads); }

void copy_f32(const float* __restrict src, float* __restrict dst, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
}

void scale_f32(float s, float* __restrict y, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] *= s;
}

void saxpy_f32(float a, const float* __restrict x, float* __restrict y, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

void stencil5_f32(const float* __restrict in, float* __restrict out, int64_t h, int64_t w, float k) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 1; i < h - 1; ++i) {
    const float* row = in + i * w;
    float* o = out + i * w;
    for (int64_t j = 1; j < w - 1; ++j)
      o[j] = row[j] + k * (row[j - w] + row[j + w] + row[j - 1] + row[j + 1] - 4.0f * row[j]);
  }
}

}  // namespace loom::bench
