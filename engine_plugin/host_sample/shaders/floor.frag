#version 450
// The floor: a checkerboard of colour_a and colour_b, the soft shadow of the sphere at the
// origin (radius eye.w), fading into the background with distance.
#extension GL_GOOGLE_include_directive : require
#include "lighting.glsl"
layout(push_constant) uniform Draw {
  mat4 view_proj;
  vec4 place;
  vec4 colour_a;  // w: checker squares per world unit
  vec4 colour_b;
  vec4 eye;       // w: the radius of the sphere at the origin that casts the shadow
} draw;
layout(location = 0) in vec3 world;
layout(location = 1) in vec3 normal;
layout(location = 0) out vec4 colour;

void main() {
  vec2 cell = floor(world.xz * draw.colour_a.w);
  vec3 albedo = mod(cell.x + cell.y, 2.0) == 0.0 ? draw.colour_a.rgb : draw.colour_b.rgb;
  // Distance from the sphere's centre to the ray towards the sun: a soft-edged shadow.
  float t = max(dot(-world, kSunDirection), 0.0);
  float miss = length(world + kSunDirection * t);
  float shadow = mix(0.25, 1.0, smoothstep(draw.eye.w * 0.7, draw.eye.w * 1.15, miss));
  vec3 lit = to_display(shade(albedo, vec3(0.0, 1.0, 0.0), world, draw.eye.xyz, 0.08, shadow));
  float fog = smoothstep(2.0, 4.5, length(world - draw.eye.xyz));
  colour = vec4(mix(lit, kBackground, fog), 1.0);
}
