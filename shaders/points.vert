#version 450
// A point as an instanced screen-aligned quad (no largePoints feature needed, round and
// smooth-edged at any size): six vertices per instance, the point's data per instance.
#extension GL_GOOGLE_include_directive : require
#include "colormap.glsl"

layout(location = 0) in vec3 in_position;
layout(location = 1) in float in_scalar;
layout(location = 2) in vec4 in_rgba;

layout(push_constant) uniform Params {
  mat4 view_proj;
  vec4 color;          // uniform colour (color_mode 0)
  vec2 viewport;       // pixels
  float point_size;    // diameter in pixels
  int color_mode;      // 0 uniform, 1 scalar through a colour map, 2 per-point rgba
  vec2 scalar_range;   // scalar mapped to [0, 1]
  int colormap;
  int shaded;          // 1: lit as a small sphere
} pc;

layout(location = 0) out vec2 out_corner;  // 1 at the nominal radius
layout(location = 1) out vec4 out_color;

void main() {
  const vec2 corners[6] = vec2[](vec2(-1, -1), vec2(1, -1), vec2(1, 1), vec2(-1, -1), vec2(1, 1), vec2(-1, 1));
  vec2 c = corners[gl_VertexIndex];
  float size = pc.point_size + 1.0;  // half a pixel of margin each side for the smooth edge
  vec4 clip = pc.view_proj * vec4(in_position, 1.0);
  clip.xy += c * size / pc.viewport * clip.w;
  gl_Position = clip;
  out_corner = c * size / pc.point_size;
  if (pc.color_mode == 1) {
    float span = pc.scalar_range.y - pc.scalar_range.x;
    float t = span != 0.0 ? (in_scalar - pc.scalar_range.x) / span : 0.5;
    out_color = vec4(colormap(t, pc.colormap), pc.color.a);
  } else if (pc.color_mode == 2) {
    out_color = in_rgba;
  } else {
    out_color = pc.color;
  }
}
