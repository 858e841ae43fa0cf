#version 450
// The cloth: positions are the cloth module's field x (f32x3, AoS), bound straight as the
// vertex buffer; the same buffer read as storage gives each vertex its grid neighbours, so
// the normals follow the simulation with no copy and no CPU work.
layout(location = 0) in vec3 position;
layout(set = 0, binding = 0) readonly buffer ClothField { float x[]; } cloth;
layout(push_constant) uniform Draw {
  mat4 view_proj;
  ivec4 grid;  // rows, columns of the field: vertex i * columns + j is x[i, j]
  vec4 front;
  vec4 back;
  vec4 eye;
} draw;
layout(location = 0) out vec3 world;
layout(location = 1) out vec3 normal;
layout(location = 2) out vec2 uv;

vec3 at(int i, int j) {
  i = clamp(i, 0, draw.grid.x - 1);
  j = clamp(j, 0, draw.grid.y - 1);
  int k = 3 * (i * draw.grid.y + j);
  return vec3(cloth.x[k], cloth.x[k + 1], cloth.x[k + 2]);
}

void main() {
  int i = gl_VertexIndex / draw.grid.y;
  int j = gl_VertexIndex % draw.grid.y;
  normal = cross(at(i, j + 1) - at(i, j - 1), at(i + 1, j) - at(i - 1, j));
  world = position;
  uv = vec2(i, j) / vec2(max(draw.grid.xy - 1, 1));
  gl_Position = draw.view_proj * vec4(position, 1.0);
}
