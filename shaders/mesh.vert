#version 450

layout(location = 0) in vec3 in_position;
layout(location = 1) in vec3 in_normal;

layout(push_constant) uniform Params {
  mat4 view_proj;
  vec4 front;   // colour of front faces (counter-clockwise, as OBJ files wind them)
  vec4 back;
  vec4 eye;     // xyz: camera position; w: 1 for a perspective camera, 0 orthographic (xyz: view direction)
} pc;

layout(location = 0) out vec3 out_position;
layout(location = 1) out vec3 out_normal;

void main() {
  gl_Position = pc.view_proj * vec4(in_position, 1.0);
  out_position = in_position;
  out_normal = in_normal;
}
