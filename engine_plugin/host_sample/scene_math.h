// The little linear algebra the renderer needs: 3-vectors and column-major 4x4 matrices in
// Vulkan's clip space (y down, depth 0 to 1), world y up.
#pragma once

#include <cmath>

namespace host_sample {

struct Vec3 {
  float x = 0, y = 0, z = 0;
};
inline Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline Vec3 operator*(Vec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
inline float dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline Vec3 cross(Vec3 a, Vec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline Vec3 normalize(Vec3 a) { return a * (1.0f / std::sqrt(dot(a, a))); }

struct Mat4 {
  float m[16] = {};  // column-major: m[column * 4 + row]
  float& at(int row, int column) { return m[column * 4 + row]; }
  float at(int row, int column) const { return m[column * 4 + row]; }
};

inline Mat4 operator*(const Mat4& a, const Mat4& b) {
  Mat4 r;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 4; ++k) r.at(i, j) += a.at(i, k) * b.at(k, j);
  return r;
}

// A right-handed view looking from `eye` at `target`.
inline Mat4 look_at(Vec3 eye, Vec3 target, Vec3 up) {
  Vec3 f = normalize(target - eye);
  Vec3 s = normalize(cross(f, up));
  Vec3 u = cross(s, f);
  Mat4 r;
  r.at(0, 0) = s.x, r.at(0, 1) = s.y, r.at(0, 2) = s.z, r.at(0, 3) = -dot(s, eye);
  r.at(1, 0) = u.x, r.at(1, 1) = u.y, r.at(1, 2) = u.z, r.at(1, 3) = -dot(u, eye);
  r.at(2, 0) = -f.x, r.at(2, 1) = -f.y, r.at(2, 2) = -f.z, r.at(2, 3) = dot(f, eye);
  r.at(3, 3) = 1;
  return r;
}

// Vertical field of view in radians; depth 0 at `near`, 1 at `far`; y flipped for Vulkan.
inline Mat4 perspective(float fov_y, float aspect, float near, float far) {
  float f = 1.0f / std::tan(fov_y / 2);
  Mat4 r;
  r.at(0, 0) = f / aspect;
  r.at(1, 1) = -f;
  r.at(2, 2) = far / (near - far);
  r.at(2, 3) = near * far / (near - far);
  r.at(3, 2) = -1;
  return r;
}

}  // namespace host_sample
