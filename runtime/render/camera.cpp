#include "runtime/render/camera.h"

#include <algorithm>

namespace loom::render {

namespace {

constexpr float kMaxPitch = 1.5533f;  // 89 degrees: never straight down, where yaw is undefined
constexpr float kRadiansPerPixel = 0.0055f;
constexpr float kZoomPerStep = 0.85f;
constexpr float kMargin = 1.08f;

float aspect_of(const Rect& r) { return r.height > 0 ? r.width / r.height : 1.0f; }

}  // namespace

void Camera::drag(DragButton button, float dx, float dy, const Rect& viewport) {
  if (button == DragButton::Left && mode == CameraMode::Orbit)
    orbit(dx, dy);
  else
    pan(dx, dy, viewport);
}

void Camera::pan(float dx, float dy, const Rect& viewport) {
  if (viewport.height <= 0) return;
  if (mode == CameraMode::Planar) {
    float scale = view_height / viewport.height;
    target = target + Vec3{-dx * scale, dy * scale, 0};
    return;
  }
  // The world distance one pixel covers at the target's depth.
  float scale = 2.0f * distance * std::tan(fov_y * 0.5f) / viewport.height;
  Vec3 forward = normalize(target - eye());
  Vec3 right = normalize(cross(forward, {0, 1, 0}));
  Vec3 up = cross(right, forward);
  target = target + right * (-dx * scale) + up * (dy * scale);
}

void Camera::orbit(float dx, float dy) {
  yaw -= dx * kRadiansPerPixel;
  pitch = std::clamp(pitch + dy * kRadiansPerPixel, -kMaxPitch, kMaxPitch);
}

void Camera::scroll(float steps, float cursor_x, float cursor_y, const Rect& viewport) {
  float factor = std::pow(kZoomPerStep, steps);
  if (mode == CameraMode::Orbit) {
    distance = std::max(distance * factor, 1e-6f);
    return;
  }
  Vec3 fixed = world_at(cursor_x, cursor_y, viewport);
  view_height = std::max(view_height * factor, 1e-9f);
  target = fixed + (target - fixed) * factor;
}

void Camera::fit(const Bounds& bounds, float aspect) {
  if (bounds.empty()) return;
  aspect = aspect > 0 ? aspect : 1.0f;
  Vec3 size = bounds.size();
  target = bounds.center();
  if (mode == CameraMode::Planar) {
    view_height = std::max({size.y, size.x / aspect, 1e-6f}) * kMargin;
    depth_range = std::max(size.z, std::max(size.x, size.y)) * 2.0f + 1.0f;
    return;
  }
  // The nearest eye on the current direction that sees every corner of the box.
  Vec3 back = normalize(eye() - target);  // towards the eye
  Vec3 right = normalize(cross(Vec3{0, 1, 0}, back));
  Vec3 up = cross(back, right);
  float tan_y = std::tan(0.5f * fov_y), tan_x = tan_y * aspect;
  float needed = 1e-6f;
  for (int k = 0; k < 8; ++k) {
    Vec3 c{k & 1 ? bounds.max.x : bounds.min.x, k & 2 ? bounds.max.y : bounds.min.y,
           k & 4 ? bounds.max.z : bounds.min.z};
    Vec3 d = c - target;
    float toward = dot(d, back);
    needed = std::max(
        {needed, toward + std::abs(dot(d, right)) / tan_x, toward + std::abs(dot(d, up)) / tan_y});
  }
  distance = needed * kMargin;
}

Vec3 Camera::eye() const {
  if (mode == CameraMode::Planar) return target + Vec3{0, 0, depth_range};
  float c = std::cos(pitch);
  return target + Vec3{c * std::sin(yaw), std::sin(pitch), c * std::cos(yaw)} * distance;
}

Mat4 Camera::view_projection(float aspect) const {
  aspect = aspect > 0 ? aspect : 1.0f;
  if (mode == CameraMode::Planar) {
    float h = 0.5f * view_height, w = h * aspect;
    Mat4 view;
    view.at(0, 3) = -target.x, view.at(1, 3) = -target.y, view.at(2, 3) = -target.z;
    return orthographic(-w, w, -h, h, -depth_range, depth_range) * view;
  }
  // Near and far scale with the distance, keeping the depth buffer's precision where we look.
  return perspective(fov_y, aspect, distance * 0.01f, distance * 100.0f) *
         look_at(eye(), target, {0, 1, 0});
}

Mat4 Camera::view_projection(const Rect& viewport) const {
  return view_projection(aspect_of(viewport));
}

Vec3 Camera::world_at(float x, float y, const Rect& viewport) const {
  if (viewport.width <= 0 || viewport.height <= 0) return target;
  float scale = view_height / viewport.height;
  float u = x - (viewport.x + 0.5f * viewport.width), v = y - (viewport.y + 0.5f * viewport.height);
  return target + Vec3{u * scale, -v * scale, 0};
}

}  // namespace loom::render
