#version 450
// A round sprite shaded like a small ball; slow particles deep blue, fast ones pale cyan.
// Alpha is coverage (alpha to coverage with multisampling) for smooth edges.
#extension GL_GOOGLE_include_directive : require
#include "lighting.glsl"
layout(location = 0) in vec2 corner;
layout(location = 1) in float speed;
layout(location = 0) out vec4 colour;

void main() {
  float r = length(corner);
  if (r > 1.0) discard;
  vec3 slow = vec3(0.05, 0.22, 0.85);
  vec3 fast = vec3(0.55, 0.95, 1.0);
  vec3 albedo = mix(slow, fast, speed);
  float facing = sqrt(1.0 - r * r);
  vec3 lit = albedo * (0.45 + 0.55 * facing) + vec3(0.25) * pow(facing, 12.0);
  colour = vec4(to_display(lit), 1.0 - smoothstep(0.75, 1.0, r));
}
