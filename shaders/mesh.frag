#version 450
// Two-sided lighting: a key light above and to the left of the viewer (so both slopes of a
// fold facing the viewer read differently), ambient and a small highlight; a cloth reads the
// same from either side, each side in its own colour.

layout(push_constant) uniform Params {
  mat4 view_proj;
  vec4 front;
  vec4 back;
  vec4 eye;
} pc;

layout(location = 0) in vec3 in_position;
layout(location = 1) in vec3 in_normal;
layout(location = 0) out vec4 out_color;

void main() {
  vec3 to_eye = pc.eye.w > 0.5 ? normalize(pc.eye.xyz - in_position) : normalize(-pc.eye.xyz);
  vec3 n = in_normal;
  float len = length(n);
  n = len > 0.0 ? n / len : to_eye;
  if (dot(n, to_eye) < 0.0) n = -n;
  vec4 base = gl_FrontFacing ? pc.front : pc.back;
  vec3 up = abs(to_eye.y) < 0.95 ? vec3(0.0, 1.0, 0.0) : vec3(0.0, 0.0, 1.0);
  up = normalize(up - dot(up, to_eye) * to_eye);
  vec3 left = cross(to_eye, up);
  vec3 l = normalize(to_eye + 0.6 * up + 0.7 * left);
  float diffuse = max(dot(n, l), 0.0);
  float highlight = pow(max(dot(n, normalize(l + to_eye)), 0.0), 40.0);
  vec3 rgb = base.rgb * (0.22 + 0.78 * diffuse) + vec3(0.2 * highlight);
  out_color = vec4(rgb, base.a);
}
