#version 450
// Particles as instanced round sprites on a panel: the MPM module's fields x (positions in
// [0, 1]^2) and v (velocities), bound straight as per-instance vertex buffers.
layout(location = 0) in vec2 particle;
layout(location = 1) in vec2 velocity;
layout(push_constant) uniform Draw {
  mat4 view_proj;
  vec4 origin;  // the panel's corner (x = 0, y = 0); w: the sprites' radius
  vec4 axis_u;  // x = 1; w: the speed shown brightest
  vec4 axis_v;  // y = 1
  vec4 colour;
} draw;
layout(location = 0) out vec2 corner;
layout(location = 1) out float speed;

const vec2 kCorners[6] = vec2[](vec2(-1, -1), vec2(1, -1), vec2(1, 1), vec2(-1, -1), vec2(1, 1), vec2(-1, 1));

void main() {
  corner = kCorners[gl_VertexIndex];
  vec3 u = draw.axis_u.xyz;
  vec3 v = draw.axis_v.xyz;
  vec3 lift = normalize(cross(u, v)) * 0.004;  // just in front of the panel
  vec3 centre = draw.origin.xyz + particle.x * u + particle.y * v + lift;
  vec3 world = centre + (corner.x * normalize(u) + corner.y * normalize(v)) * draw.origin.w;
  speed = clamp(length(velocity) / draw.axis_u.w, 0.0, 1.0);
  gl_Position = draw.view_proj * vec4(world, 1.0);
}
