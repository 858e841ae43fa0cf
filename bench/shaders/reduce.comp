// Hand-written reduction baseline for loom_reduction_bench: the sum of a float array, or the
// maximum of an int array (-DMAX_I32), into one value, the way a GPU programmer writes it.
// Each invocation first folds several elements in a grid-stride loop (coalesced loads: the
// invocations of a workgroup read neighbouring elements), then the subgroup combines its
// values (subgroupAdd / subgroupMax), the workgroup combines its subgroups' values through
// shared memory, and one invocation per workgroup adds its value into the result with one
// atomic. Float atomic add needs GL_EXT_shader_atomic_float (shaderBufferFloat32AtomicAdd);
// without it (-DCAS_ADD) the add is a compare-and-swap loop on the float's bits.
#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#if !defined(MAX_I32) && !defined(CAS_ADD)
#extension GL_EXT_shader_atomic_float : require
#endif

#define WORKGROUP 256
layout(local_size_x = WORKGROUP) in;

#ifdef MAX_I32
#define T int
#define IDENTITY (-2147483647 - 1)
#define COMBINE(a, b) max(a, b)
#define SUBGROUP_COMBINE(v) subgroupMax(v)
#else
#define T float
#define IDENTITY 0.0
#define COMBINE(a, b) ((a) + (b))
#define SUBGROUP_COMBINE(v) subgroupAdd(v)
#endif

layout(std430, set = 0, binding = 0) readonly buffer Input { T x[]; };
#ifdef CAS_ADD
layout(std430, set = 0, binding = 1) buffer Result { uint result_bits; };
#else
layout(std430, set = 0, binding = 1) buffer Result { T result; };
#endif
layout(push_constant) uniform Size { uint n; };

// One slot per subgroup; WORKGROUP slots cover the smallest subgroup size there is (1).
shared T subgroup_values[WORKGROUP];

void main() {
  T v = IDENTITY;
  uint stride = gl_NumWorkGroups.x * WORKGROUP;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) v = COMBINE(v, x[i]);

  v = SUBGROUP_COMBINE(v);
  if (subgroupElect()) subgroup_values[gl_SubgroupID] = v;
  barrier();
  if (gl_LocalInvocationIndex != 0) return;
  // A handful of subgroups (WORKGROUP / subgroup size): one invocation folds them.
  T w = subgroup_values[0];
  for (uint s = 1; s < gl_NumSubgroups; ++s) w = COMBINE(w, subgroup_values[s]);
#if defined(MAX_I32)
  atomicMax(result, w);
#elif defined(CAS_ADD)
  uint seen = result_bits;
  for (;;) {
    uint was = atomicCompSwap(result_bits, seen, floatBitsToUint(uintBitsToFloat(seen) + w));
    if (was == seen) break;
    seen = was;
  }
#else
  atomicAdd(result, w);
#endif
}
