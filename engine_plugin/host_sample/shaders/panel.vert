#version 450
// A flat rectangle in the world, two triangles from gl_VertexIndex: origin + s*u + t*v.
layout(push_constant) uniform Draw {
  mat4 view_proj;
  vec4 origin;  // w: 1 shows the texture, 0 the flat colour with a grid
  vec4 axis_u;
  vec4 axis_v;
  vec4 colour;
} draw;
layout(location = 0) out vec2 uv;

const vec2 kCorners[6] = vec2[](vec2(0, 0), vec2(1, 0), vec2(1, 1), vec2(0, 0), vec2(1, 1), vec2(0, 1));

void main() {
  uv = kCorners[gl_VertexIndex];
  vec3 world = draw.origin.xyz + uv.x * draw.axis_u.xyz + uv.y * draw.axis_v.xyz;
  gl_Position = draw.view_proj * vec4(world, 1.0);
}
