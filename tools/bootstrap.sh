#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine:
#   tools/bootstrap.sh run    install what is missing, build, open the editor on the MPM sample
#                             (headless: run the heat sample, writing PNG frames and timings)
#   tools/bootstrap.sh test   install what is missing, build, run the whole test suite; then the
#                             quality gates (docs/quality-gates.md): the sanitizer build
#                             (clang, ASan + UBSan) and the whole suite under it, and every
#                             fuzz target for LOOM_FUZZ_SECONDS (60) from its corpus
#   tools/bootstrap.sh quick  install what is missing, build, run the test suite: no sanitizers
#                             (as LOOM_SKIP_SANITIZERS=1 test)
# CI (CI=true) always runs every gate: it ignores quick and LOOM_SKIP_SANITIZERS.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-run}
build=${LOOM_BUILD_DIR:-build}
packages=(cmake ninja-build g++ ccache pkg-config llvm-15-dev zlib1g-dev libgtest-dev libgmock-dev
          libbenchmark-dev libzstd-dev libedit-dev libxml2-dev
          libffi-dev libtinfo-dev
          spirv-headers spirv-tools libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers
          libglfw3-dev libtinyobjloader-dev glslang-tools xvfb libimgui-dev libstb-dev fonts-dejavu-core
          python3 python3-jsonschema
          clang libclang-rt-14-dev clang-tidy clang-format)

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

# Runs a step and says how long it took (docs/quality-gates.md quotes these).
timed() {
  local what=$1 start=$SECONDS
  shift
  "$@"
  echo "== $what: $((SECONDS - start)) s"
}

export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/loom-ccache}
# Paths relative to the checkout on the compiler's command line. The main build keeps ccache's
# default of hashing the build directory: its objects name their split-DWARF .dwo files from
# the directory they were compiled in, and an object another checkout compiled would send gdb
# to that checkout's .dwo (gone once it is deleted: no frames, no source lines). The sanitizer
# build has no .dwo files, so a fresh clone elsewhere (CI) may hit what another compiled.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
unset CCACHE_NOHASHDIR  # whatever the caller set: see above
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
timed "build" cmake --build "$build" -j "$(nproc)"

# The sanitizer build: clang, ASan + UBSan (no recovery) everywhere, compiled for libFuzzer
# too so the same build links the fuzz targets. -O1 and line tables keep it quick to build
# and its reports readable; the benchmarks are left out.
asan_build=${LOOM_ASAN_BUILD_DIR:-build-asan}
build_sanitized() {
  CC=clang CXX=clang++ cmake -S . -B "$asan_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
    -DLOOM_SANITIZE=address,undefined -DLOOM_FUZZ=ON -DLOOM_BUILD_BENCH=OFF >/dev/null
  # The sanitizers' options (cmake/Sanitizers.cmake; reports fail, leaks of the libraries we
  # load are suppressed in tests/sanitizers/): gtest discovery runs the binaries at build time.
  . "$asan_build/sanitizer_env.sh"
  CCACHE_NOHASHDIR=true cmake --build "$asan_build" -j "$(nproc)"
}

# The whole test suite of one build, ctest's other arguments after the folder; each run gets
# its own offline cache, so runs never share state.
run_suite() {
  export LOOM_CACHE_DIR="$PWD/$1/test-cache"
  # CI has lavapipe: a test that finds no Vulkan device fails instead of skipping
  # (tests/README.md); a developer's machine without one skips those with the reason.
  if [ "${CI:-}" = "true" ]; then export LOOM_REQUIRE_VULKAN=1; fi
  rm -rf "$LOOM_CACHE_DIR"
  ctest --test-dir "$1" --output-on-failure -j "$(nproc)" "${@:2}"
}

# One fuzz target from its corpus for LOOM_FUZZ_SECONDS: new inputs go to $work/corpus, a
# crashing one to $work/artifacts/ (add it to the corpus: tests/fuzz/README.md).
fuzz_one() {
  local target=$1 seed=$2 work=$3 dict=()
  mkdir -p "$work/corpus" "$work/artifacts"
  [ -f "tests/fuzz/${seed##*/}.dict" ] && dict=("-dict=tests/fuzz/${seed##*/}.dict")
  if "$target" -max_total_time="$LOOM_FUZZ_SECONDS" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
       "${dict[@]}" -artifact_prefix="$work/artifacts/" "$work/corpus" "$seed" >"$work/fuzz.log" 2>&1; then
    echo "${target##*/}: $(grep -o 'number_of_executed_units: *[0-9]*' "$work/fuzz.log" | grep -o '[0-9]*$') executions, no finding"
    return 0
  fi
  echo "${target##*/}: FINDING (input in $work/artifacts/, log $work/fuzz.log)"
  tail -n 60 "$work/fuzz.log"
  return 1
}
export -f fuzz_one

# Every fuzz target, as many at once as there are cores; any finding fails the run.
run_fuzzers() {
  export LOOM_FUZZ_SECONDS=${LOOM_FUZZ_SECONDS:-60}
  local target name
  for target in "$asan_build"/tests/fuzz/fuzz_*; do
    name=${target##*/fuzz_}
    printf '%s\n' "$target" "tests/fuzz/corpus/$name" "$asan_build/fuzz/$name"
  done | xargs -d '\n' -n 3 -P "$(nproc)" bash -c 'fuzz_one "$@"' _
}

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
  test|quick)
    timed "test suite" run_suite "$build"
    timed "clang-tidy" tools/check_tidy.sh "$build"
    if [ "${CI:-}" != "true" ] && { [ "$mode" = quick ] || [ "${LOOM_SKIP_SANITIZERS:-0}" = "1" ]; }; then
      echo "sanitizer build and fuzzing skipped (CI runs them; docs/quality-gates.md)"
      exit 0
    fi
    timed "sanitizer build" build_sanitized
    timed "test suite under ASan + UBSan" run_suite "$asan_build"
    timed "fuzzing" run_fuzzers
    ;;
  *)
    echo "usage: tools/bootstrap.sh run|test|quick" >&2
    exit 2
    ;;
esac
