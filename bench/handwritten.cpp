#include "bench/handwritten.h"

namespace loom::bench {

void copy_f32(const float* __restrict src, float* __restrict dst, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) dst[i] = src[i];
}

void scale_f32(float s, float* __restrict y, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) y[i] *= s;
}

void saxpy_f32(float a, const float* __restrict x, float* __restrict y, int64_t begin,
               int64_t end) {
  for (int64_t i = begin; i < end; ++i) y[i] = a * x[i] + y[i];
}

void stencil5_f32(const float* __restrict in, float* __restrict out, int64_t w, float k,
                  int64_t row_begin, int64_t row_end) {
  for (int64_t i = row_begin; i < row_end; ++i) {
    const float* row = in + i * w;
    float* o = out + i * w;
    for (int64_t j = 1; j < w - 1; ++j)
      o[j] = row[j] + k * (row[j - w] + row[j + w] + row[j - 1] + row[j + 1] - 4.0f * row[j]);
  }
}

}  // namespace loom::bench
