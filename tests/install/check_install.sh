#!/usr/bin/env bash
# The install check (CTest test `install`): installs the build tree given as
# $1 into a temporary prefix, then builds tests/install/consumer.c against
# it twice, with CMake (find_package(rig)) and with cc and pkg-config, runs
# both expecting "ok", and checks that progrun was installed and finds its
# library. Then the installed examples (share/rig/examples): progrun checks
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
for f in saxpy.json stencil.json pipeline.json ring-2.json README.md kernels/saxpy.c \
  kernels/saxpy.so kernels/rail_wait.h kernels/rail.c kernels/rail.so slurm/job.sh \
  embed/embed.c embed/CMakeLists.txt; do
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
  local what="$1" exe="$2" out
  out="$(timeout 120 "$mpiexec" -n 2 --oversubscribe --bind-to none "$exe" "$examples/saxpy.json" 2>&1)" || {
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
echo "ok"

echo "-- examples/embed with pkg-config, mpirun -n 2"
"$cc" "${cflags[@]}" -std=c17 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -pthread \
  -o "$tmp/embed-pc" "$examples/embed/embed.c" "${pc[@]}" -Wl,-rpath,"$libdir" ||
  fail "building examples/embed with pkg-config's flags (${pc[*]}) failed"
run_embed pkg-config "$tmp/embed-pc"
echo "ok"
