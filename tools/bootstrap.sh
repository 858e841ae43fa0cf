#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine:
#   tools/bootstrap.sh run    install what is missing, build, open the editor on the MPM sample
#                             (headless: run the heat sample, writing PNG frames and timings)
#   tools/bootstrap.sh test   install what is missing, build, run the whole test suite
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-run}
build=${LOOM_BUILD_DIR:-build}
packages=(cmake ninja-build g++ ccache pkg-config llvm-15-dev zlib1g-dev libgtest-dev libgmock-dev
          libbenchmark-dev libzstd-dev libedit-dev libxml2-dev
          libffi-dev libtinfo-dev
          spirv-headers spirv-tools libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers
          libglfw3-dev libtinyobjloader-dev glslang-tools xvfb libimgui-dev libstb-dev fonts-dejavu-core
          python3 python3-jsonschema)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/loom-ccache}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)"

case "$mode" in
  run)
    if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
      # A display: the editor on the MPM sample, playing.
      exec "$build/editor/app/loom-editor" assets/graphs/mpm88.loom.json --play
    fi
    # Headless: the heat sample, a PNG frame every 20 steps, timings and statistics.
    mkdir -p "$build/frames"
    "$build/tools/loom/loom" run assets/graphs/heat.loom.json --steps 200 --stats \
      --png "temperature=$build/frames/heat_%04d.png" --every 20 \
      --dump "temperature=$build/heat_temperature.npy"
    ;;
  test)
    # Each test gets its own offline cache so runs never share state.
    export LOOM_CACHE_DIR="$PWD/$build/test-cache"
    rm -rf "$LOOM_CACHE_DIR"
    ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
    ;;
  *)
    echo "usage: tools/bootstrap.sh run|test" >&2
    exit 2
    ;;
esac
