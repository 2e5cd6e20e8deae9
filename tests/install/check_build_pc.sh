#!/usr/bin/env bash
# The build tree's pkg-config files (CTest test `pkgconfig-build-tree`):
# rig-kernel.pc and rig.pc in a build tree name its real folders, the
# sources' include/ and the folder librig is built in, wherever the tree
# is. A kernel (tests/install/kernel/fill.c) built with `pkg-config
# --cflags rig-kernel` of a tree configured elsewhere (a temporary folder,
# at another depth than build/default) runs with BUILD_DIR's progrun, and
# a program (tests/install/consumer.c) built with `pkg-config --cflags
# --libs rig` of BUILD_DIR runs on its librig.
# Usage: check_build_pc.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/rig-build-pc.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
cc="$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")"
cflags=()
if [[ "$(sed -n 's/^RIG_SANITIZE:[A-Z]*=//p' "$build/CMakeCache.txt")" == ON ]]; then
  cflags=("-fsanitize=address,undefined" -fno-omit-frame-pointer)
fi
fail() {
  echo "check_build_pc: $*" >&2
  exit 1
}
src="$(sed -n 's/^CMAKE_HOME_DIRECTORY:[A-Z]*=//p' "$build/CMakeCache.txt")"
# Configured only: its .pc files are written at the configure.
cmake -S "$src" -B "$tmp/elsewhere" -DCMAKE_C_COMPILER="$cc" -DRIG_TESTS=OFF -DRIG_BENCH=OFF \
  >"$tmp/configure.log" 2>&1 || {
  cat "$tmp/configure.log" >&2
  fail "configuring a tree in $tmp/elsewhere failed"
}

echo "-- a kernel with pkg-config --cflags rig-kernel"
read -r -a kpc < <(PKG_CONFIG_PATH="$tmp/elsewhere" pkg-config --cflags rig-kernel) ||
  fail "pkg-config --cflags rig-kernel failed"
mkdir "$tmp/kernel"
sed "s/x86_64/$(uname -m)/" "$here/kernel/fill.json" >"$tmp/kernel/fill.json"
"$cc" "${cflags[@]}" -std=c17 -Wall -Wextra -Werror -shared -fPIC -o "$tmp/kernel/fill.so" \
  "$here/kernel/fill.c" "${kpc[@]}" || fail "building the kernel with '${kpc[*]}' failed"
"$build/progrun" run "$tmp/kernel/fill.json" --output "0=$tmp/kernel/out.bin" --quiet ||
  fail "progrun run of the kernel failed"
want="$(printf '\x07\0\0\0\x08\0\0\0\x09\0\0\0\x0a\0\0\0' | od -An -tx1)"
got="$(od -An -tx1 "$tmp/kernel/out.bin")"
[[ "$got" == "$want" ]] || fail "the kernel wrote$got, not$want"
echo "ok"

echo "-- a program with pkg-config --cflags --libs rig"
export PKG_CONFIG_PATH="$build"
read -r -a pc < <(pkg-config --cflags --libs rig) || fail "pkg-config --cflags --libs rig failed"
libdir="$(pkg-config --variable=libdir rig)"
"$cc" "${cflags[@]}" -std=c17 -o "$tmp/consumer" "$here/consumer.c" "${pc[@]}" \
  -Wl,-rpath,"$libdir" || fail "building the consumer with '${pc[*]}' failed"
out="$("$tmp/consumer")" || fail "the consumer failed"
[[ "$out" == ok ]] || fail "the consumer printed '$out', not ok"
[[ "$(realpath "$libdir")" == "$(realpath "$build")" ]] ||
  fail "rig.pc's libdir is $libdir, not the build tree $build"
echo "ok"
