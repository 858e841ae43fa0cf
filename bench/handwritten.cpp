#include "bench/handwritten.h"

#include <algorithm>
#include <atomic>
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

namespace {

// The quadratic B-spline weights of one axis at fractional position f in [0.5, 1.5).
inline void weights(float f, float w[3]) {
  w[0] = 0.5f * (1.5f - f) * (1.5f - f);
  w[1] = 0.75f - (f - 1.0f) * (f - 1.0f);
  w[2] = 0.5f * (f - 0.5f) * (f - 0.5f);
}

struct Constants {
  float inv_dx, dx, p_vol, inv_dx2;
  explicit Constants(const Mpm88& s)
      : inv_dx(static_cast<float>(s.grid)),
        dx(1.0f / static_cast<float>(s.grid)),
        p_vol(0.25f * dx * dx),
        inv_dx2(inv_dx * inv_dx) {}
};

template <bool kAtomic>
inline void p2g(const Mpm88& s, float* __restrict gv, float* __restrict gm, int64_t begin,
                int64_t end) {
  const Constants k(s);
  const int64_t g = s.grid;
  for (int64_t p = begin; p < end; ++p) {
    const float px = s.x[2 * p] * k.inv_dx, py = s.x[2 * p + 1] * k.inv_dx;
    const int bx = static_cast<int>(px - 0.5f), by = static_cast<int>(py - 0.5f);
    const float fx = px - static_cast<float>(bx), fy = py - static_cast<float>(by);
    float wx[3], wy[3];
    weights(fx, wx);
    weights(fy, wy);
    const float stress = -s.dt * 4.0f * 400.0f * k.p_vol * (s.J[p] - 1.0f) * k.inv_dx2;
    const float* c = s.C + 4 * p;  // columns (c0, c1)
    const float a00 = stress + k.p_vol * c[0], a10 = k.p_vol * c[1], a01 = k.p_vol * c[2],
                a11 = stress + k.p_vol * c[3];
    const float mvx = s.v[2 * p] * k.p_vol, mvy = s.v[2 * p + 1] * k.p_vol;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        const float dx = (static_cast<float>(i) - fx) * k.dx,
                    dy = (static_cast<float>(j) - fy) * k.dx;
        const float w = wx[i] * wy[j];
        const float mx = w * (mvx + a00 * dx + a01 * dy), my = w * (mvy + a10 * dx + a11 * dy);
        const int64_t cell = (bx + i) * g + (by + j);
        if constexpr (kAtomic) {
          std::atomic_ref<float>(gv[2 * cell]).fetch_add(mx, std::memory_order_relaxed);
          std::atomic_ref<float>(gv[2 * cell + 1]).fetch_add(my, std::memory_order_relaxed);
          std::atomic_ref<float>(gm[cell]).fetch_add(w * k.p_vol, std::memory_order_relaxed);
        } else {
          gv[2 * cell] += mx;
          gv[2 * cell + 1] += my;
          gm[cell] += w * k.p_vol;
        }
      }
  }
}

}  // namespace

void mpm88_seed(const Mpm88& s, int64_t begin, int64_t end) {
  int64_t cols = 64;
  while (s.n / cols > 2 * cols) cols *= 2;
  const float sx = 0.4f / static_cast<float>(cols), sy = 0.4f / static_cast<float>(s.n / cols);
  for (int64_t i = begin; i < end; ++i) {
    s.x[2 * i] = 0.2f + (static_cast<float>(i % cols) + 0.5f) * sx;
    s.x[2 * i + 1] = 0.2f + (static_cast<float>(i / cols) + 0.5f) * sy;
    s.v[2 * i] = 0.0f;
    s.v[2 * i + 1] = -1.0f;
    s.J[i] = 1.0f;
    for (int c = 0; c < 4; ++c) s.C[4 * i + c] = 0.0f;
  }
}

void mpm88_clear_grid(const Mpm88& s, int64_t row_begin, int64_t row_end) {
  for (int64_t c = row_begin * s.grid; c < row_end * s.grid; ++c) {
    s.grid_v[2 * c] = 0.0f;
    s.grid_v[2 * c + 1] = 0.0f;
    s.grid_m[c] = 0.0f;
  }
}

void mpm88_p2g_atomic(const Mpm88& s, int64_t begin, int64_t end) {
  p2g<true>(s, s.grid_v, s.grid_m, begin, end);
}

void mpm88_p2g_private(const Mpm88& s, float* grid_v, float* grid_m, int64_t begin, int64_t end) {
  p2g<false>(s, grid_v, grid_m, begin, end);
}

void add_and_clear_f32(float* __restrict dst, float* __restrict src, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    dst[i] += src[i];
    src[i] = 0.0f;
  }
}

void mpm88_grid_update(const Mpm88& s, int64_t row_begin, int64_t row_end) {
  const int64_t g = s.grid;
  for (int64_t i = row_begin; i < row_end; ++i)
    for (int64_t j = 0; j < g; ++j) {
      const int64_t c = i * g + j;
      const float m = s.grid_m[c];
      float vx = s.grid_v[2 * c], vy = s.grid_v[2 * c + 1];
      if (m > 0.0f) {
        vx /= m;
        vy /= m;
      }
      vy -= s.dt * 9.8f;
      if ((i < 3 && vx < 0.0f) || (i > g - 3 && vx > 0.0f)) vx = 0.0f;
      if ((j < 3 && vy < 0.0f) || (j > g - 3 && vy > 0.0f)) vy = 0.0f;
      s.grid_v[2 * c] = vx;
      s.grid_v[2 * c + 1] = vy;
    }
}

void mpm88_g2p(const Mpm88& s, int64_t begin, int64_t end) {
  const Constants k(s);
  const int64_t g = s.grid;
  for (int64_t p = begin; p < end; ++p) {
    const float px = s.x[2 * p] * k.inv_dx, py = s.x[2 * p + 1] * k.inv_dx;
    const int bx = static_cast<int>(px - 0.5f), by = static_cast<int>(py - 0.5f);
    const float fx = px - static_cast<float>(bx), fy = py - static_cast<float>(by);
    float wx[3], wy[3];
    weights(fx, wx);
    weights(fy, wy);
    float nvx = 0, nvy = 0, c00 = 0, c10 = 0, c01 = 0, c11 = 0;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        const float dx = (static_cast<float>(i) - fx) * k.dx,
                    dy = (static_cast<float>(j) - fy) * k.dx;
        const float w = wx[i] * wy[j];
        const int64_t cell = (bx + i) * g + (by + j);
        const float gx = s.grid_v[2 * cell], gy = s.grid_v[2 * cell + 1];
        nvx += w * gx;
        nvy += w * gy;
        const float q = 4.0f * k.inv_dx2 * w;
        c00 += gx * dx * q;
        c10 += gy * dx * q;
        c01 += gx * dy * q;
        c11 += gy * dy * q;
      }
    s.v[2 * p] = nvx;
    s.v[2 * p + 1] = nvy;
    s.x[2 * p] += nvx * s.dt;
    s.x[2 * p + 1] += nvy * s.dt;
    s.J[p] *= 1.0f + s.dt * (c00 + c11);
    float* c = s.C + 4 * p;
    c[0] = c00;
    c[1] = c10;
    c[2] = c01;
    c[3] = c11;
  }
}

}  // namespace loom::bench
