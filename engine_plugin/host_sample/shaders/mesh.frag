#version 450
#extension GL_GOOGLE_include_directive : require
#include "lighting.glsl"
layout(push_constant) uniform Draw {
  mat4 view_proj;
  vec4 place;
  vec4 colour_a;  // w: the highlight's strength
  vec4 colour_b;
  vec4 eye;
} draw;
layout(location = 0) in vec3 world;
layout(location = 1) in vec3 normal;
layout(location = 0) out vec4 colour;

void main() {
  colour = vec4(to_display(shade(draw.colour_a.rgb, normalize(normal), world, draw.eye.xyz, draw.colour_a.w, 1.0)), 1.0);
}
