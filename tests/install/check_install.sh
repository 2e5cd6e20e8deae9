#!/usr/bin/env bash
# The install check (CTest test `install`): installs the build tree given as
# $1 into a temporary prefix, then builds tests/install/consumer.c against
# it twice, with CMake (find_package(rig)) and with cc and pkg-config, runs
# both expecting "ok", and checks that progrun was installed and finds its
# library. A kernel (tests/install/kernel) is built against it with
# rig_add_kernel (find_package(rig COMPONENTS kernel)) and with cc and
# pkg-config rig-kernel (the headers alone: no MPI, no library), and the
# installed progrun runs a description that loads it. Then the installed examples (share/rig/examples): progrun checks
# the installed saxpy.json, and the embedding example (examples/embed) is
# built from its installed sources with CMake and with pkg-config and run
# under mpirun -n 2 on the installed saxpy.json, expecting "embed: ok".
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
  "$prefix"/lib*/pkgconfig "$prefix/share/rig" 2>/dev/null; then
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

echo "-- rig.pc"
# No MPI's pkg-config name: MPI's flags are those the build's MPI gave CMake.
if grep -E '^Requires' "$libdir/pkgconfig/rig.pc"; then
  fail "rig.pc requires the modules above (an MPI's .pc name is not portable)"
fi
echo "ok"

echo "-- consumer with pkg-config"
read -r -a pc < <(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs rig) ||
  fail "pkg-config --cflags --libs rig failed"
"$cc" "${cflags[@]}" -o "$tmp/consumer-pc" "$here/consumer.c" "${pc[@]}" ||
  fail "building the consumer with pkg-config's flags (${pc[*]}) failed"
out="$(LD_LIBRARY_PATH="$libdir" "$tmp/consumer-pc")" || fail "consumer (pkg-config) failed"
[[ "$out" == ok ]] || fail "consumer (pkg-config) printed '$out', not ok"
echo "ok"

echo "-- rig-kernel.pc"
read -r -a kpc < <(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs rig-kernel) ||
  fail "pkg-config --cflags --libs rig-kernel failed"
if ((${#kpc[@]} != 1)) || [[ "${kpc[0]}" != -I* ]] ||
  [[ "$(realpath "${kpc[0]#-I}")" != "$(realpath "$prefix/include")" ]]; then
  fail "rig-kernel's flags are '${kpc[*]}', not the headers' -I$prefix/include alone"
fi
echo "ok"

# Builds kernel/fill.c into $1/fill.so beside a copy of kernel/fill.json
# (its ISA this machine's), runs it with the installed progrun and checks
# the output: 7, 8, 9, 10.
run_kernel() {
  local what="$1" dir="$2" want got
  sed "s/x86_64/$(uname -m)/" "$here/kernel/fill.json" >"$dir/fill.json"
  if ldd "$dir/fill.so" | grep -E 'librig|libmpi'; then
    fail "the kernel ($what) links the libraries above"
  fi
  "$prefix/bin/progrun" run "$dir/fill.json" --output "0=$dir/out.bin" --quiet ||
    fail "progrun run of the kernel built with $what failed"
  want="$(printf '\x07\0\0\0\x08\0\0\0\x09\0\0\0\x0a\0\0\0' | od -An -tx1)"
  got="$(od -An -tx1 "$dir/out.bin")"
  [[ "$got" == "$want" ]] || fail "the kernel built with $what wrote$got, not$want"
}

echo "-- a kernel with rig_add_kernel (find_package(rig COMPONENTS kernel))"
cmake -S "$here/kernel" -B "$tmp/kernel-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="${cflags[*]}" >"$tmp/kernel.log" 2>&1 || {
  cat "$tmp/kernel.log" >&2
  fail "configuring the kernel with CMake failed"
}
grep -q '^MPI_' "$tmp/kernel-build/CMakeCache.txt" && fail "find_package(rig COMPONENTS kernel) looked for MPI"
cmake --build "$tmp/kernel-build" >>"$tmp/kernel.log" 2>&1 || {
  cat "$tmp/kernel.log" >&2
  fail "building the kernel with rig_add_kernel failed"
}
[[ -f "$tmp/kernel-build/fill.so" ]] || fail "rig_add_kernel(fill ...) made no fill.so"
run_kernel rig_add_kernel "$tmp/kernel-build"
echo "ok"

echo "-- a kernel with pkg-config rig-kernel"
mkdir -p "$tmp/kernel-pc"
"$cc" "${cflags[@]}" -std=c17 -Wall -Wextra -Werror -shared -fPIC -o "$tmp/kernel-pc/fill.so" \
  "$here/kernel/fill.c" "${kpc[@]}" || fail "building the kernel with pkg-config's flags failed"
run_kernel "pkg-config rig-kernel" "$tmp/kernel-pc"
echo "ok"

echo "-- progrun"
[[ -x "$prefix/bin/progrun" ]] || fail "no $prefix/bin/progrun"
if ldd "$prefix/bin/progrun" | grep -q 'not found'; then
  ldd "$prefix/bin/progrun" >&2
  fail "the installed progrun does not find its libraries"
fi
[[ "$("$prefix/bin/progrun" -V)" == "progrun $(cache CMAKE_PROJECT_VERSION)" ]] ||
  fail "the installed progrun -V does not say progrun $(cache CMAKE_PROJECT_VERSION)"
echo "ok"

echo "-- progrun's man page and bash completion"
man="$prefix/share/man/man1/progrun.1"
[[ -s "$man" ]] || fail "no $man"
if groff -man -Tascii -ww -P-cbou "$man" 2>&1 >/dev/null | grep .; then
  fail "the installed man page renders with the warnings above"
fi
completion="$prefix/share/bash-completion/completions/progrun"
[[ -s "$completion" ]] || fail "no $completion"
got="$(bash -c 'source "$1"; COMP_WORDS=(progrun ch); COMP_CWORD=1; _progrun; echo "${COMPREPLY[*]}"' \
  _ "$completion")"
[[ "$got" == check ]] || fail "the installed completion of 'progrun ch' gave '$got', not check"
echo "ok"

echo "-- examples under share/rig/examples"
examples="$prefix/share/rig/examples"
for f in hello.json saxpy.json stencil.json pipeline.json ring-2.json README.md kernels/hello.so \
  kernels/saxpy.c kernels/saxpy.so kernels/rail_wait.h kernels/rail.c kernels/rail.so slurm/job.sh \
  embed/embed.c embed/describe.c embed/describe.h embed/CMakeLists.txt; do
  [[ -e "$examples/$f" ]] || fail "no $examples/$f"
done
[[ -x "$examples/slurm/job.sh" ]] || fail "$examples/slurm/job.sh is not executable"
out="$("$prefix/bin/progrun" check "$examples/saxpy.json")" || fail "progrun check of the installed saxpy.json failed"
[[ "$out" == ok ]] || fail "progrun check of the installed saxpy.json printed '$out'"
echo "ok"

mpiexec="$(cache MPIEXEC_EXECUTABLE)"
if [[ "$(cache RIG_SANITIZE)" == ON ]]; then
  # Open MPI, UCX and hwloc keep memory past MPI_Finalize (as for the MPI
  # suites: tests/CMakeLists.txt).
  export LSAN_OPTIONS="suppressions=$src/tests/lsan.supp:fast_unwind_on_malloc=0"
fi
run_embed() {
  local what="$1" exe="$2" arg="${3:-$examples/saxpy.json}" out
  out="$(timeout 120 "$mpiexec" -n 2 --oversubscribe --bind-to none "$exe" "$arg" 2>&1)" || {
    echo "$out" >&2
    fail "embed ($what) under mpirun -n 2 failed"
  }
  grep -qx "embed: ok" <<<"$out" || {
    echo "$out" >&2
    fail "embed ($what) did not print 'embed: ok'"
  }
}

echo "-- examples/embed with CMake (find_package(rig)), mpirun -n 2"
cmake -S "$examples/embed" -B "$tmp/embed-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="${cflags[*]}" >"$tmp/embed.log" 2>&1 || {
  cat "$tmp/embed.log" >&2
  fail "configuring examples/embed with CMake failed"
}
cmake --build "$tmp/embed-build" >>"$tmp/embed.log" 2>&1 || {
  cat "$tmp/embed.log" >&2
  fail "building examples/embed with CMake failed"
}
run_embed CMake "$tmp/embed-build/embed"
# The description built in C around the installed kernels.
run_embed "CMake, built in C" "$tmp/embed-build/embed" "$examples/kernels/saxpy.so"
echo "ok"

echo "-- examples/embed with pkg-config, mpirun -n 2"
"$cc" "${cflags[@]}" -std=c17 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -pthread \
  -o "$tmp/embed-pc" "$examples/embed/embed.c" "$examples/embed/describe.c" "${pc[@]}" \
  -Wl,-rpath,"$libdir" ||
  fail "building examples/embed with pkg-config's flags (${pc[*]}) failed"
run_embed pkg-config "$tmp/embed-pc"
echo "ok"
