#version 450
#extension GL_GOOGLE_include_directive : require
#include "colormap.glsl"

// Compiled twice: 2-d textures, and with TEXTURE_3D a slice of a 3-d texture (a w
// coordinate at the slice's centre: exact with nearest and linear filtering alike).
#ifdef TEXTURE_3D
layout(set = 0, binding = 0) uniform texture3D image_3d;
#else
layout(set = 0, binding = 0) uniform texture2D image_2d;
#endif
layout(set = 0, binding = 1) uniform sampler image_sampler;

layout(push_constant) uniform Params {
  mat4 view_proj;
  vec4 rect;
  vec4 values;
  ivec4 mode;
} pc;

layout(location = 0) in vec2 in_uv;
layout(location = 0) out vec4 out_color;

void main() {
#ifdef TEXTURE_3D
  vec4 texel = texture(sampler3D(image_3d, image_sampler), vec3(in_uv, pc.values.z));
#else
  vec4 texel = texture(sampler2D(image_2d, image_sampler), in_uv);
#endif
  float span = pc.values.y - pc.values.x;
  vec4 v = span != 0.0 ? (texel - pc.values.x) / span : vec4(0.5);
  if (pc.mode.x == 1) out_color = vec4(colormap(v.r, pc.mode.y), 1.0);
  else if (pc.mode.x == 2) out_color = vec4(clamp(v.rg, 0.0, 1.0), 0.0, 1.0);
  else out_color = vec4(clamp(v.rgb, 0.0, 1.0), clamp(texel.a, 0.0, 1.0));
}
