// The empty dispatch of loom_vulkan_bench: what a dispatch costs with no work in it, recorded
// by hand, the baseline of Loom's per-launch overhead.
#version 450
layout(local_size_x_id = 0) in;

void main() {}
