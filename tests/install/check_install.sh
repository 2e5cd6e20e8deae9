#!/usr/bin/env bash
# The install check (CTest test `install`): installs the build tree given as
# $1 into a temporary prefix, then builds tests/install/consumer.c against
# it twice, with CMake (find_package(rig)) and with cc and pkg-config, runs
# both expecting "ok", and checks that progrun was installed and finds its
# library.
#
# Usage: check_install.sh BUILD_DIR
set -euo pipefail

if (($# != 1)); then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
build="$(cd "$1" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/rig-install.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

# The compiler and sanitizer flags of the build tree: a consumer of an
# instrumented librig links the sanitizer runtimes too.
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
cc="$(cache CMAKE_C_COMPILER)"
cflags=()
if [[ "$(cache RIG_SANITIZE)" == ON ]]; then
  cflags=("-fsanitize=address,undefined" -fno-omit-frame-pointer)
fi

fail() {
  echo "check_install: $*" >&2
  exit 1
}

echo "-- cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || {
  cat "$tmp/install.log" >&2
  fail "cmake --install failed"
}

# Nothing installed may name the build or source tree.
src="$(cache CMAKE_HOME_DIRECTORY)"
if grep -rIl -e "$build" -e "$src/" "$prefix/include" "$prefix"/lib*/cmake \
  "$prefix"/lib*/pkgconfig 2>/dev/null; then
  fail "installed files above name the build or source tree"
fi

libdir=""
for d in "$prefix"/lib "$prefix"/lib64 "$prefix"/lib/*-linux-gnu; do
  if [[ -e "$d/pkgconfig/rig.pc" ]]; then libdir="$d"; fi
done
[[ -n "$libdir" ]] || fail "no rig.pc under $prefix"

echo "-- consumer with CMake (find_package(rig))"
cmake -S "$here" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_C_FLAGS="${cflags[*]}" >"$tmp/cmake.log" 2>&1 || {
  cat "$tmp/cmake.log" >&2
  fail "configuring the consumer with CMake failed"
}
cmake --build "$tmp/cmake-build" >>"$tmp/cmake.log" 2>&1 || {
  cat "$tmp/cmake.log" >&2
  fail "building the consumer with CMake failed"
}
out="$(LD_LIBRARY_PATH="$libdir" "$tmp/cmake-build/consumer")" || fail "consumer (CMake) failed"
[[ "$out" == ok ]] || fail "consumer (CMake) printed '$out', not ok"
echo "ok"

echo "-- consumer with pkg-config"
read -r -a pc < <(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs rig) ||
  fail "pkg-config --cflags --libs rig failed"
"$cc" "${cflags[@]}" -o "$tmp/consumer-pc" "$here/consumer.c" "${pc[@]}" ||
  fail "building the consumer with pkg-config's flags (${pc[*]}) failed"
out="$(LD_LIBRARY_PATH="$libdir" "$tmp/consumer-pc")" || fail "consumer (pkg-config) failed"
[[ "$out" == ok ]] || fail "consumer (pkg-config) printed '$out', not ok"
echo "ok"

echo "-- progrun"
[[ -x "$prefix/bin/progrun" ]] || fail "no $prefix/bin/progrun"
if ldd "$prefix/bin/progrun" | grep -q 'not found'; then
  ldd "$prefix/bin/progrun" >&2
  fail "the installed progrun does not find its libraries"
fi
echo "ok"
