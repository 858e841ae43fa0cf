// Hand-written particle-to-grid scatter for loom_vulkan_bench, the shape of mpm88's P2G: each
// particle adds its quadratic B-spline weights, and its velocity times them, to the 3x3 grid
// cells around it with float atomic adds (GL_EXT_shader_atomic_float where the device has
// shaderBufferFloat32AtomicAdd; -DCAS_ADD: a compare-and-swap loop on the bits).
#version 450
#ifndef CAS_ADD
#extension GL_EXT_shader_atomic_float : require
#endif
layout(local_size_x_id = 0) in;
layout(push_constant) uniform Args {
  uint n;     // particles
  uint grid;  // cells per side
} args;
layout(std430, binding = 0) readonly buffer X { vec2 x[]; };
layout(std430, binding = 1) readonly buffer V { vec2 v[]; };
#ifdef CAS_ADD
layout(std430, binding = 2) buffer GM { uint gm[]; };
layout(std430, binding = 3) buffer GV { uint gv[]; };  // two words per cell
#define ADD(buf, at, value)                                                       \
  {                                                                               \
    uint seen = buf[at];                                                          \
    for (;;) {                                                                    \
      uint got = atomicCompSwap(buf[at], seen, floatBitsToUint(uintBitsToFloat(seen) + (value))); \
      if (got == seen) break;                                                     \
      seen = got;                                                                 \
    }                                                                             \
  }
#else
layout(std430, binding = 2) buffer GM { float gm[]; };
layout(std430, binding = 3) buffer GV { float gv[]; };  // two floats per cell
#define ADD(buf, at, value) atomicAdd(buf[at], value)
#endif

void main() {
  uint p = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (p >= args.n) return;
  vec2 xp = x[p] * float(args.grid);
  ivec2 base = ivec2(xp - 0.5);
  vec2 f = xp - vec2(base);
  vec2 w[3] = vec2[3](0.5 * (1.5 - f) * (1.5 - f), 0.75 - (f - 1.0) * (f - 1.0), 0.5 * (f - 0.5) * (f - 0.5));
  vec2 vel = v[p];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      float weight = w[i].x * w[j].y;
      uint cell = uint(base.x + i) * args.grid + uint(base.y + j);
      ADD(gm, cell, weight);
      ADD(gv, 2 * cell, weight * vel.x);
      ADD(gv, 2 * cell + 1, weight * vel.y);
    }
}
