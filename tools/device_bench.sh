#!/usr/bin/env bash
# Runs the Vulkan benchmarks on a lent GPU machine (the workplace's `device` tool), where no
# Loom dependency is installed. Prepared here, run there; see bench/README.md "On a GPU".
#
# Here, once (the paths are ignored through .git/info/exclude):
#   .gl/   the Vulkan loader and GL vendor-neutral libraries as .deb files (device README)
#   .gpu/gpu.tar.xz  bin/ (stripped bench binaries) and lib/ (every shared library they need
#          beyond glibc and libstdc++), made by `tools/device_bench.sh pack`
#   .whl/  taichi-1.7.4 and dill wheels for Python 3.12 (the peer), optional
# There: tools/device_bench.sh loom | taichi    (with .gl and .gpu or .whl carried)
set -u
phase=${1:-loom}
here=$(cd "$(dirname "$0")/.." && pwd)

if [ "$phase" = pack ]; then
  rm -rf /tmp/loom-gpu && mkdir -p /tmp/loom-gpu/bin /tmp/loom-gpu/lib "$here/.gpu"
  bins="loom_vulkan_bench loom_reduction_bench loom_render_bench editor_frame_bench"
  for b in $bins; do strip -o /tmp/loom-gpu/bin/$b "$here/build/bench/$b"; done
  for l in $(cd "$here/build/bench" && ldd $bins | awk '/=>/ {print $3}' | sort -u); do
    case $(basename "$l") in
      libc.so* | libm.so* | libdl.so* | libpthread.so* | libgcc_s* | libstdc++*) ;;
      *) cp -L "$l" /tmp/loom-gpu/lib/ ;;
    esac
  done
  strip /tmp/loom-gpu/lib/*
  tar -C /tmp/loom-gpu -cJf "$here/.gpu/gpu.tar.xz" bin lib
  ls -la "$here/.gpu"
  exit 0
fi

for f in "$here"/.gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export XDG_RUNTIME_DIR=/tmp/xdg && mkdir -p "$XDG_RUNTIME_DIR"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
out=${OUT:-/tmp/out}
mkdir -p "$out"

if [ "$phase" = loom ]; then
  mkdir -p /tmp/g && tar -C /tmp/g -xJf "$here/.gpu/gpu.tar.xz"
  export LD_LIBRARY_PATH=/tmp/g/lib
  # The binaries find bench/graphs through the source path they were built in.
  mkdir -p /work && [ -e /work/main ] || ln -s "$here" /work/main
  run() {
    echo "=== $*"
    timeout "$@" 2>&1 | tee -a "$out/loom.txt"
  }
  run 200 /tmp/g/bin/loom_vulkan_bench
  run 60 /tmp/g/bin/loom_reduction_bench --arch vulkan
  run 45 /tmp/g/bin/loom_render_bench
  run 45 /tmp/g/bin/editor_frame_bench
  run 45 /tmp/g/bin/editor_frame_bench --size 3840x2160
elif [ "$phase" = taichi ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site "$here"/.whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site
  for arch in cuda vulkan; do
    echo "=== taichi $arch"
    timeout 150 python3 "$here/bench/taichi_gpu_peer.py" --arch $arch 2>&1 | tee -a "$out/taichi.txt"
  done
fi
