#!/usr/bin/env bash
# run_install_test.sh BUILD SOURCE WORK LIBDIR BINDIR INCLUDEDIR ABI (the ctest `install_consumer`)
#
# Installs BUILD into WORK/prefix (the runtime component, then the tools), checks the layout,
# compiles a module with the installed `loom`, and builds and runs tests/install/consumer
# against the prefix twice: through find_package(Loom) and through pkg-config. Writes only
# under WORK (a folder of the build tree); LIBDIR, BINDIR and INCLUDEDIR are the build's
# CMAKE_INSTALL_* folders; ABI is libloom's version (major.minor.patch, from loom.h).
set -euo pipefail

if [ $# -ne 7 ]; then
  echo "usage: $0 BUILD SOURCE WORK LIBDIR BINDIR INCLUDEDIR ABI" >&2
  exit 2
fi
build=$1 source=$2 work=$3 libdir=$4 bindir=$5 includedir=$6 abi=$7
soname=libloom.so.${abi%%.*} # libloom.so.<major>
real=libloom.so.$abi
prefix=$work/prefix
cmake=${CMAKE_COMMAND:-cmake}

fail() {
  echo "install_consumer: FAILED: $*" >&2
  exit 1
}
step() { echo "== $*"; }

rm -rf "$work"
mkdir -p "$work"
cd "$work" # nothing the tools write lands in the caller's folder
# Compiled kernels go to a cache of this run, not ~/.cache/loom.
export LOOM_CACHE_DIR=$work/cache

step "install the runtime component alone"
"$cmake" --install "$build" --prefix "$prefix" --component runtime
for f in "$libdir/libloom.so" "$libdir/$soname" "$libdir/$real" \
  "$includedir/loom/loom.h" "$includedir/loom/loom.hpp" "$libdir/cmake/Loom/LoomConfig.cmake" \
  "$libdir/cmake/Loom/LoomConfigVersion.cmake" "$libdir/cmake/Loom/LoomTargets.cmake" \
  "$libdir/pkgconfig/loom.pc"; do
  [ -e "$prefix/$f" ] || fail "the runtime component did not install $f"
done
if [ ! -L "$prefix/$libdir/libloom.so" ] || [ ! -L "$prefix/$libdir/$soname" ]; then
  fail "libloom.so and $soname should be links to $real"
fi
[ "$(readlink "$prefix/$libdir/$soname")" = "$real" ] ||
  fail "$soname points at $(readlink "$prefix/$libdir/$soname")"
readelf -d "$prefix/$libdir/$real" | grep -q 'SONAME.*\['"${soname//./\\.}"'\]' ||
  fail "$real has no SONAME $soname"
[ ! -e "$prefix/$bindir" ] || fail "the runtime component installed $bindir/: $(ls "$prefix/$bindir")"
ls -R "$prefix"

step "the runtime component holds no compiler: no C++ API, no LLVM"
for f in "$prefix/$libdir"/libloom_cpp.so* "$prefix/$includedir/loom/program.h" \
  "$prefix/$libdir/cmake/Loom/LoomCppTargets.cmake"; do
  [ ! -e "$f" ] || fail "the runtime component installed $f (the cpp component's)"
done
if readelf -d "$prefix/$libdir/$real" | grep NEEDED | grep -i -e llvm -e spirv >&2; then
  fail "$real links the compiler's libraries (above)"
fi
# find_package(Loom COMPONENTS cpp) against it fails, saying what to install.
if "$cmake" -S "$source/tests/install/cpp_consumer" -B "$work/cpp-consumer-missing" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/cpp-missing.txt" 2>&1; then
  fail "find_package(Loom COMPONENTS cpp) succeeded with the runtime component alone"
fi
grep -q 'component cpp' "$work/cpp-missing.txt" ||
  fail "find_package(Loom COMPONENTS cpp) without it did not say what to install: $(cat "$work/cpp-missing.txt")"

step "the installed loom.h includes only Vulkan and C standard headers"
grep -E '^[[:space:]]*#[[:space:]]*include' "$prefix/$includedir/loom/loom.h" | while read -r line; do
  case "$line" in
    *'<vulkan/'*'>'* | *'<stddef.h>'* | *'<stdint.h>'* | *'<stdbool.h>'*) echo "  $line" ;;
    *) fail "installed loom.h: '$line' is neither a Vulkan nor a C standard header" ;;
  esac
done

step "the installed loom.hpp includes only loom.h and C/C++ standard headers"
grep -E '^[[:space:]]*#[[:space:]]*include' "$prefix/$includedir/loom/loom.hpp" | while read -r line; do
  case "$line" in
    *'<loom/loom.h>'* | *'<'[a-z_]*'>'*) echo "  $line" ;;
    *) fail "installed loom.hpp: '$line' is neither loom.h nor a standard header" ;;
  esac
done

step "install the tools component"
"$cmake" --install "$build" --prefix "$prefix" --component tools
for t in loom loom-module; do
  [ -x "$prefix/$bindir/$t" ] || fail "the tools component did not install $bindir/$t"
done
# A path of the source or build tree compiled into an installed binary would be read at run
# time from where the package was built, not from the install.
for f in "$prefix/$bindir"/* "$prefix/$libdir/$real"; do
  if readelf -p .rodata "$f" 2>/dev/null | grep -F -e "$source" -e "$build" >&2; then
    fail "$f holds a path of the source or build tree (above)"
  fi
done

step "the installed tools run from the prefix"
"$prefix/$bindir/loom" --help >"$work/loom-help.txt" || fail "loom --help exited $?"
grep -q compile "$work/loom-help.txt" || fail "loom --help does not list 'compile'"
"$prefix/$bindir/loom" compile "$source/assets/graphs/heat.loom.json" --arch cpu -o "$work/heat.loommod"
"$prefix/$bindir/loom-module" info "$work/heat.loommod" | tee "$work/info.txt"
"$prefix/$bindir/loom-module" run "$work/heat.loommod" --steps 2
# The editor is installed with the tools where it was built.
if [ -e "$prefix/$bindir/loom-editor" ]; then
  "$prefix/$bindir/loom-editor" --help >/dev/null || fail "loom-editor --help exited $?"
fi
# The kernels the consumer must list, as loom-module names them ("kernel diffuse: ...").
expected=$(sed -n 's/^kernel \([^:]*\):.*/kernel \1/p' "$work/info.txt")
[ -n "$expected" ] || fail "loom-module info listed no kernels"

# check_consumer NAME BINARY [MODULE]: runs it on MODULE (heat.loommod) without
# LD_LIBRARY_PATH; it must load libloom from the prefix and print every kernel loom-module
# info printed, in order.
check_consumer() {
  local name=$1 binary=$2 module=${3:-$work/heat.loommod}
  local resolved
  resolved=$(env -u LD_LIBRARY_PATH ldd "$binary" | sed -n "s/.*${soname//./\\.} => \\(.*\\) (0x.*/\\1/p")
  if [ -z "$resolved" ] || [ "$(realpath "$resolved")" != "$(realpath "$prefix/$libdir/$soname")" ]; then
    fail "$name: $soname resolves to '$resolved', not into the prefix"
  fi
  env -u LD_LIBRARY_PATH "$binary" "$module" | tee "$work/$name.out" ||
    fail "$name exited non-zero"
  [ "$(grep '^kernel ' "$work/$name.out")" = "$expected" ] ||
    fail "$name printed other kernels than loom-module info: $(grep '^kernel ' "$work/$name.out")"
  grep -q '^ran pipeline step$' "$work/$name.out" || fail "$name did not run pipeline step"
}

step "find_package(Loom): configure, build and run the consumer"
"$cmake" -S "$source/tests/install/consumer" -B "$work/cmake-consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_BUILD_TYPE=Release
grep -qF "Loom_DIR:PATH=$prefix/$libdir/cmake/Loom" "$work/cmake-consumer/CMakeCache.txt" ||
  fail "find_package(Loom) found $(grep Loom_DIR "$work/cmake-consumer/CMakeCache.txt")"
"$cmake" --build "$work/cmake-consumer" --verbose
# The imported target's full library path gives the consumer its run path into the prefix.
check_consumer find_package "$work/cmake-consumer/loom_consumer"
# A graph document: the installed libloom.so compiles it with the installed `loom`, found as
# <libdir>/../bin/loom (neither $LOOM_COMPILER nor PATH leads to one here).
LOOM_COMPILER='' PATH=/usr/bin:/bin check_consumer document "$work/cmake-consumer/loom_consumer" \
  "$source/assets/graphs/heat.loom.json"

step "pkg-config: build and run the consumer"
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
pkg-config --modversion loom
mkdir -p "$work/pkg-config-consumer"
# pkg-config gives no run path; the consumer takes loom.pc's libdir as its own. Its flags
# are split into words on purpose, as in a makefile.
set -x
# shellcheck disable=SC2046
cc -std=c99 -Wall -Wextra -Werror -pedantic "$source/tests/install/consumer/main.c" \
  -o "$work/pkg-config-consumer/loom_consumer" $(pkg-config --cflags --libs loom) \
  -Wl,-rpath,"$(pkg-config --variable=libdir loom)"
set +x
check_consumer pkg-config "$work/pkg-config-consumer/loom_consumer"

step "install the cpp component (the C++ API with the compiler)"
"$cmake" --install "$build" --prefix "$prefix" --component cpp
cpp_real=$(cd "$prefix/$libdir" && ls libloom_cpp.so.*.*.*)
for f in "$libdir/libloom_cpp.so" "$libdir/$cpp_real" "$libdir/cmake/Loom/LoomCppTargets.cmake" \
  "$libdir/pkgconfig/loom-cpp.pc" "$includedir/loom/program.h" "$includedir/loom/tape.h" \
  "$includedir/loom/aot_module.h"; do
  [ -e "$prefix/$f" ] || fail "the cpp component did not install $f"
done
readelf -d "$prefix/$libdir/$cpp_real" | grep -q 'SONAME.*\[libloom_cpp\.so\.' ||
  fail "$cpp_real has no SONAME libloom_cpp.so.N"
if readelf -p .rodata "$prefix/$libdir/$cpp_real" 2>/dev/null | grep -F -e "$source" -e "$build" >&2; then
  fail "$cpp_real holds a path of the source or build tree (above)"
fi
# Exports: the loom:: API, none of the SPIRV-Tools or std:: code linked into it.
nm -D --defined-only -C "$prefix/$libdir/$cpp_real" >"$work/cpp-exports.txt"
grep -q 'loom::Program::load_file' "$work/cpp-exports.txt" || fail "$cpp_real does not export loom::Program"
if grep -v -e ' loom::' -e 'for loom::' "$work/cpp-exports.txt" | grep ' [TDBWVR] ' >&2; then
  fail "$cpp_real exports symbols outside namespace loom (above)"
fi

step "the installed C++ API headers include only <loom/...> and standard headers"
for h in "$prefix/$includedir"/loom/*.h; do
  [ "$(basename "$h")" = loom.h ] && continue
  grep -E '^[[:space:]]*#[[:space:]]*include' "$h" | while read -r line; do
    case "$line" in
      *'<loom/'*'.h>'*) [ -e "$prefix/$includedir/$(echo "$line" | sed 's/.*<\(loom\/[^>]*\)>.*/\1/')" ] ||
        fail "$(basename "$h"): '$line' is not installed" ;;
      *'<'[a-z_]*'>'*) ;;
      *) fail "installed $(basename "$h"): '$line' is neither <loom/...> nor a standard header" ;;
    esac
  done
  echo "  $(basename "$h"): $(grep -c '#include' "$h") includes, all installed or standard"
done

step "find_package(Loom COMPONENTS cpp): build and run the C++ consumer"
"$cmake" -S "$source/tests/install/cpp_consumer" -B "$work/cpp-consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_BUILD_TYPE=Release
"$cmake" --build "$work/cpp-consumer" --verbose
# check_cpp_consumer NAME BINARY: it must load libloom_cpp from the prefix, compile and run
# heat.loom.json on the CPU, catch a loom::Error, and write a module the C consumer runs.
check_cpp_consumer() {
  local name=$1 binary=$2 resolved
  resolved=$(env -u LD_LIBRARY_PATH ldd "$binary" | sed -n 's/.*libloom_cpp\.so[.0-9]* => \(.*\) (0x.*/\1/p')
  if [ -z "$resolved" ] || [ "$(realpath "$resolved")" != "$(realpath "$prefix/$libdir/$cpp_real")" ]; then
    fail "$name: libloom_cpp resolves to '$resolved', not into the prefix"
  fi
  env -u LD_LIBRARY_PATH "$binary" "$source/assets/graphs/heat.loom.json" temperature 3 \
    "$work/$name.loommod" | tee "$work/$name.out" || fail "$name exited non-zero"
  grep -q '^backend cpu$' "$work/$name.out" || fail "$name did not run on the CPU"
  grep -q '^resource temperature$' "$work/$name.out" || fail "$name did not list the document's fields"
  grep -q "^caught loom::Error: .*no_such_kernel" "$work/$name.out" ||
    fail "$name did not catch the loom::Error naming the unknown kernel"
  env -u LD_LIBRARY_PATH "$work/cmake-consumer/loom_consumer" "$work/$name.loommod" |
    tee "$work/$name-module.out" || fail "the C consumer did not run the module $name wrote"
  grep -q '^ran pipeline step$' "$work/$name-module.out" || fail "the module $name wrote has no pipeline step"
}
check_cpp_consumer cpp-find-package "$work/cpp-consumer/loom_cpp_consumer"

step "pkg-config loom-cpp: build and run the C++ consumer"
pkg-config --modversion loom-cpp
mkdir -p "$work/pkg-config-cpp-consumer"
set -x
# shellcheck disable=SC2046
c++ -Wall -Wextra -Werror "$source/tests/install/cpp_consumer/main.cpp" \
  -o "$work/pkg-config-cpp-consumer/loom_cpp_consumer" $(pkg-config --cflags --libs loom-cpp) \
  -Wl,-rpath,"$(pkg-config --variable=libdir loom-cpp)"
set +x
check_cpp_consumer cpp-pkg-config "$work/pkg-config-cpp-consumer/loom_cpp_consumer"

echo "install_consumer: passed"
