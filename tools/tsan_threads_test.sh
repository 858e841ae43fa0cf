#!/usr/bin/env bash
# The C ABI's thread test (tests/c_api/c_api_threads_test.cpp: one runtime used from two
# threads at once, on the CPU and on Vulkan) under ThreadSanitizer. libloom.so and the test
# are built with gcc -fsanitize=thread in BUILD_TSAN (only libloom and what it links: no
# compiler, no LLVM), and run on the modules an ordinary BUILD writes. Any report fails.
# Not in CI (building the runtime a third time is minutes): run it after changing how the
# C ABI deals with threads.
#   tools/tsan_threads_test.sh [BUILD [BUILD_TSAN]]    (defaults: build, build-tsan)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
tsan=${2:-build-tsan}
jobs=${JOBS:-$(nproc)}
cmake --build "$build" --target c_api_test_modules -j "$jobs"
if [ ! -f "$tsan/build.ninja" ]; then
  CC=gcc CXX=g++ cmake -S . -B "$tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLOOM_SANITIZE=thread >/dev/null
fi
cmake --build "$tsan" --target loom_plugin -j "$jobs"
plugin_dir=$PWD/$tsan/engine_plugin/c_api
g++ -std=c++20 -O1 -g -fsanitize=thread -pthread -I engine_plugin/include -I . \
  -DLOOM_TEST_MODULES="\"$PWD/$build/tests/c_api/modules\"" tests/c_api/c_api_threads_test.cpp \
  -o "$tsan/c_api_threads_test" -L "$plugin_dir" -lloom -Wl,-rpath,"$plugin_dir" \
  -lgtest -lgtest_main -lvulkan
# setarch -R: without address randomisation, which ThreadSanitizer's fixed memory layout
# cannot always live with (vm.mmap_rnd_bits 28 and up).
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  setarch "$(uname -m)" -R "$tsan/c_api_threads_test"
echo "tsan_threads_test: no data race reported"
