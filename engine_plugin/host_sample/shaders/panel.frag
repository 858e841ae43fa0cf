#version 450
// Texture panels show the fractal module's image (texel row 0 at the bottom); flat panels a
// colour with faint grid lines every tenth.
layout(set = 0, binding = 1) uniform sampler2D fractal;
layout(push_constant) uniform Draw {
  mat4 view_proj;
  vec4 origin;
  vec4 axis_u;
  vec4 axis_v;
  vec4 colour;
} draw;
layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 colour;

void main() {
  if (draw.origin.w > 0.5) {
    colour = vec4(texture(fractal, uv).rgb, 1.0);
    return;
  }
  vec2 line = abs(fract(uv * 10.0 + 0.5) - 0.5) / fwidth(uv * 10.0);
  float grid = 1.0 - clamp(min(line.x, line.y), 0.0, 1.0);
  colour = vec4(draw.colour.rgb * (1.0 + 0.35 * grid * draw.colour.w), 1.0);
}
