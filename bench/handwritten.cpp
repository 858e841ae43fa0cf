#include "bench/handwritten.h"

#include <algorithm>
#include <limits>

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

float sum_f32(const float* __restrict x, int64_t begin, int64_t end) {
  // One accumulator would chain every add on the one before (and, without fast math, keep the
  // compiler from reordering); 32 lanes keep several vector adds in flight (2 AVX-512 or 4
  // AVX2 registers) and hide the add latency.
  constexpr int kLanes = 32;
  float lane[kLanes] = {};
  int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes)
    for (int k = 0; k < kLanes; ++k) lane[k] += x[i + k];
  float total = 0.0f;
  for (; i < end; ++i) total += x[i];
  for (float v : lane) total += v;
  return total;
}

int32_t max_i32(const int32_t* __restrict x, int64_t begin, int64_t end) {
  int32_t m = std::numeric_limits<int32_t>::min();
  for (int64_t i = begin; i < end; ++i) m = std::max(m, x[i]);
  return m;
}

}  // namespace loom::bench
