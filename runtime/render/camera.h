// The viewport's camera: planar (pan and zoom, world y up) for 2-d data, orbit (turn, pan and
// zoom around a target, world y up) for 3-d data. The app feeds it input in pixels of the
// viewport rectangle (drag deltas, scroll steps at the cursor), so it works the same in a
// window, in a sub-rectangle of the editor and offscreen.
#pragma once

#include <cstdint>

#include "runtime/render/math.h"

namespace loom::render {

enum class CameraMode : uint8_t { Planar, Orbit };
enum class DragButton : uint8_t { Left, Middle, Right };

class Camera {
 public:
  CameraMode mode = CameraMode::Planar;
  Vec3 target;                  // world point at the viewport's centre (orbit: turned around)
  float view_height = 2.0f;     // planar: world units the viewport shows vertically
  float distance = 4.0f;        // orbit: from the target to the eye
  float yaw = 0.0f;             // orbit, radians about world y; 0 looks down -z
  float pitch = 0.0f;           // orbit, radians above the xz plane, within +-89 degrees
  float fov_y = 0.7854f;        // orbit: vertical field of view (45 degrees)
  float depth_range = 1000.0f;  // planar: visible z within target.z +- this

  // Left drag turns an orbit camera and pans a planar one; middle and right drag pan.
  void drag(DragButton button, float dx, float dy, const Rect& viewport);
  // Scroll steps (positive: closer); a planar camera keeps the world point under the cursor
  // (frame pixels) where it is.
  void scroll(float steps, float cursor_x, float cursor_y, const Rect& viewport);
  void pan(float dx, float dy, const Rect& viewport);  // the content follows the cursor
  void orbit(float dx, float dy);                      // pixels; about 0.3 degrees per pixel
  // Frames `bounds` in a viewport of this aspect (width / height), with a small margin; an
  // orbit camera keeps its direction.
  void fit(const Bounds& bounds, float aspect);

  Vec3 eye() const;  // orbit: the eye position; planar: a point far in front of the plane
  Mat4 view_projection(float aspect) const;
  Mat4 view_projection(const Rect& viewport) const;
  // Frame pixel -> world point on the plane z = target.z (planar cameras).
  Vec3 world_at(float x, float y, const Rect& viewport) const;
};

}  // namespace loom::render
