// Hand-written 5-point stencil for loom_vulkan_bench, on a rows x cols grid in row-major
// order: out = c + k * (n + s + w + e - 4c) at every interior point, one invocation each; a
// workgroup is a row segment (x along the row, so neighbouring invocations read neighbouring
// elements), rows along y.
#version 450
layout(local_size_x_id = 0) in;
layout(push_constant) uniform Args {
  float k;
  uint rows;
  uint cols;
} args;
layout(std430, binding = 0) readonly buffer Src { float src[]; };
layout(std430, binding = 1) writeonly buffer Dst { float dst[]; };

void main() {
  uint j = gl_GlobalInvocationID.x + 1;
  uint i = gl_GlobalInvocationID.y + 1;
  if (i + 1 >= args.rows || j + 1 >= args.cols) return;
  uint at = i * args.cols + j;
  float c = src[at];
  dst[at] = c + args.k * (src[at - args.cols] + src[at + args.cols] + src[at - 1] + src[at + 1] - 4.0 * c);
}
