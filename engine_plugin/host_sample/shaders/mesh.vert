#version 450
// Static meshes (the sphere, the floor): position and normal, placed by a uniform scale and
// a translation.
layout(location = 0) in vec3 position;
layout(location = 1) in vec3 in_normal;
layout(push_constant) uniform Draw {
  mat4 view_proj;
  vec4 place;  // xyz translation, w scale
  vec4 colour_a;  // the fragment shader's
  vec4 colour_b;
  vec4 eye;
} draw;
layout(location = 0) out vec3 world;
layout(location = 1) out vec3 normal;

void main() {
  world = position * draw.place.w + draw.place.xyz;
  normal = in_normal;
  gl_Position = draw.view_proj * vec4(world, 1.0);
}
