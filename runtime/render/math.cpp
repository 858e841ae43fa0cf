#include "runtime/render/math.h"

#include <algorithm>

namespace loom::render {

Mat4 look_at(Vec3 eye, Vec3 target, Vec3 up) {
  Vec3 f = normalize(target - eye);
  Vec3 s = normalize(cross(f, up));
  Vec3 u = cross(s, f);
  Mat4 r;
  r.at(0, 0) = s.x, r.at(0, 1) = s.y, r.at(0, 2) = s.z, r.at(0, 3) = -dot(s, eye);
  r.at(1, 0) = u.x, r.at(1, 1) = u.y, r.at(1, 2) = u.z, r.at(1, 3) = -dot(u, eye);
  r.at(2, 0) = -f.x, r.at(2, 1) = -f.y, r.at(2, 2) = -f.z, r.at(2, 3) = dot(f, eye);
  return r;
}

Mat4 perspective(float fov_y, float aspect, float near, float far) {
  float t = 1.0f / std::tan(fov_y * 0.5f);
  Mat4 r;
  r.at(0, 0) = t / aspect;
  r.at(1, 1) = -t;  // Vulkan's y points down
  r.at(2, 2) = far / (near - far);
  r.at(2, 3) = near * far / (near - far);
  r.at(3, 2) = -1;
  r.at(3, 3) = 0;
  return r;
}

Mat4 orthographic(float left, float right, float bottom, float top, float near, float far) {
  Mat4 r;
  r.at(0, 0) = 2 / (right - left);
  r.at(0, 3) = -(right + left) / (right - left);
  r.at(1, 1) = -2 / (top - bottom);
  r.at(1, 3) = (top + bottom) / (top - bottom);
  r.at(2, 2) = 1 / (near - far);
  r.at(2, 3) = near / (near - far);
  return r;
}

void Bounds::add(Vec3 p) {
  if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) return;
  min = {std::min(min.x, p.x), std::min(min.y, p.y), std::min(min.z, p.z)};
  max = {std::max(max.x, p.x), std::max(max.y, p.y), std::max(max.z, p.z)};
}

void Bounds::add(const Bounds& b) {
  if (b.empty()) return;
  add(b.min);
  add(b.max);
}

}  // namespace loom::render
