#version 450

layout(push_constant) uniform Params {
  mat4 view_proj;
  vec4 color;
  vec2 viewport;
  float point_size;
  int color_mode;
  vec2 scalar_range;
  int colormap;
  int shaded;
} pc;

layout(location = 0) in vec2 in_corner;
layout(location = 1) in vec4 in_color;
layout(location = 0) out vec4 out_color;

void main() {
  float r = length(in_corner);
  // Coverage falls from 1 to 0 across one pixel at the rim.
  float pixel = 2.0 / max(pc.point_size, 1.0);
  float coverage = clamp((1.0 - r) / pixel + 0.5, 0.0, 1.0);
  if (coverage <= 0.0) discard;
  vec3 rgb = in_color.rgb;
  if (pc.shaded != 0) {
    vec3 n = vec3(in_corner.x, -in_corner.y, sqrt(max(0.0, 1.0 - r * r)));
    float light = max(dot(n, normalize(vec3(-0.4, 0.5, 0.77))), 0.0);
    rgb *= 0.45 + 0.55 * light;
  }
  out_color = vec4(rgb, in_color.a * coverage);
}
