// Hand-written saxpy for loom_vulkan_bench: y[i] = fma(a, x[i], y[i]), one invocation per
// element. A 16M-element array needs more workgroups than a dimension allows (65,535 on many
// devices), so the grid is two-dimensional and flattened, as a GPU programmer writes it.
#version 450
layout(local_size_x_id = 0) in;
layout(push_constant) uniform Args {
  float a;
  uint n;
} args;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i < args.n) y[i] = fma(args.a, x[i], y[i]);
}
