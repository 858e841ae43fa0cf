// The little linear algebra the render loop needs: 3-vectors, column-major 4x4 matrices
// laid out as GLSL reads them, and projections for Vulkan's clip space (y down, depth 0..1).
#pragma once

#include <cmath>
#include <limits>

namespace loom::render {

struct Vec3 {
  float x = 0, y = 0, z = 0;
  friend Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
  friend Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
  friend Vec3 operator*(Vec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
  friend Vec3 operator*(float s, Vec3 a) { return a * s; }
};

inline float dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline Vec3 cross(Vec3 a, Vec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline float length(Vec3 a) { return std::sqrt(dot(a, a)); }
inline Vec3 normalize(Vec3 a) {
  float l = length(a);
  return l > 0 ? a * (1.0f / l) : a;
}

struct Vec4 {
  float x = 0, y = 0, z = 0, w = 0;
};

// Column-major: m[column * 4 + row].
struct Mat4 {
  float m[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  float& at(int row, int col) { return m[col * 4 + row]; }
  float at(int row, int col) const { return m[col * 4 + row]; }
  friend Mat4 operator*(const Mat4& a, const Mat4& b) {
    Mat4 r;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        float s = 0;
        for (int k = 0; k < 4; ++k) s += a.at(i, k) * b.at(k, j);
        r.at(i, j) = s;
      }
    return r;
  }
  Vec4 operator*(Vec4 v) const {
    return {at(0, 0) * v.x + at(0, 1) * v.y + at(0, 2) * v.z + at(0, 3) * v.w,
            at(1, 0) * v.x + at(1, 1) * v.y + at(1, 2) * v.z + at(1, 3) * v.w,
            at(2, 0) * v.x + at(2, 1) * v.y + at(2, 2) * v.z + at(2, 3) * v.w,
            at(3, 0) * v.x + at(3, 1) * v.y + at(3, 2) * v.z + at(3, 3) * v.w};
  }
};

Mat4 look_at(Vec3 eye, Vec3 target, Vec3 up);
// Vertical field of view in radians; right-handed view space (looking down -z).
Mat4 perspective(float fov_y, float aspect, float near, float far);
Mat4 orthographic(float left, float right, float bottom, float top, float near, float far);

// An axis-aligned box; empty until something is added.
struct Bounds {
  Vec3 min{std::numeric_limits<float>::max(), std::numeric_limits<float>::max(),
           std::numeric_limits<float>::max()};
  Vec3 max{std::numeric_limits<float>::lowest(), std::numeric_limits<float>::lowest(),
           std::numeric_limits<float>::lowest()};
  bool empty() const { return min.x > max.x; }
  void add(Vec3 p);
  void add(const Bounds& b);
  Vec3 center() const { return (min + max) * 0.5f; }
  Vec3 size() const { return empty() ? Vec3{} : max - min; }
};

// A rectangle in pixels of a frame, origin at the top-left corner.
struct Rect {
  float x = 0, y = 0, width = 0, height = 0;
};

}  // namespace loom::render
