#version 450
#extension GL_GOOGLE_include_directive : require
#include "lighting.glsl"
layout(push_constant) uniform Draw {
  mat4 view_proj;
  ivec4 grid;
  vec4 front;
  vec4 back;
  vec4 eye;
} draw;
layout(location = 0) in vec3 world;
layout(location = 1) in vec3 normal;
layout(location = 2) in vec2 uv;
layout(location = 0) out vec4 colour;

void main() {
  vec3 n = normalize(normal);
  bool front = dot(n, draw.eye.xyz - world) >= 0.0;  // two-sided: light the side we see
  if (!front) n = -n;
  vec3 albedo = front ? draw.front.rgb : draw.back.rgb;
  vec2 band = abs(fract(uv * 8.0) - 0.5);  // a woven check, 8 by 8
  albedo *= 1.0 - 0.3 * smoothstep(0.38, 0.44, max(band.x, band.y));
  colour = vec4(to_display(shade(albedo, n, world, draw.eye.xyz, 0.04, 1.0)), 1.0);
}
