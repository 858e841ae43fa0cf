#version 450
// A texture on a world-space rectangle (z = rect_z), two triangles from the vertex index.

layout(push_constant) uniform Params {
  mat4 view_proj;
  vec4 rect;         // world x0, y0, x1, y1; texel row 0 at y0
  vec4 values;       // x, y: value range mapped to [0, 1]; z: w coordinate of the slice; w: quad z
  ivec4 mode;        // x: 0 colour, 1 first channel through a colour map, 2 red-green; y: colour map
} pc;

layout(location = 0) out vec2 out_uv;

void main() {
  const vec2 corners[6] = vec2[](vec2(0, 0), vec2(1, 0), vec2(1, 1), vec2(0, 0), vec2(1, 1), vec2(0, 1));
  vec2 c = corners[gl_VertexIndex];
  gl_Position = pc.view_proj * vec4(mix(pc.rect.xy, pc.rect.zw, c), pc.values.w, 1.0);
  out_uv = c;
}
