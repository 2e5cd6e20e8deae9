#!/usr/bin/env bash
# scripts/bench.sh — install what is missing, build (preset default) and run
# every benchmark (build/default/bench/bench_*: bench_codec, bench_core, ...),
# printing one table. bench_remote is an MPI program: it runs under mpirun,
# with 2 ranks (remote/run) and with 4 (remote/host-64 x4), after the others.
# Each row is also appended as a JSON line to
# $RIG_BENCH_RESULTS (default bench/results.jsonl). A row that misses its
# target says FAIL in the table; the script fails only when a benchmark
# cannot run. Files beside the binaries that are not bench_* (the kernels
# bench_core loads, core_kernels.so) are not run.
#
# Usage: scripts/bench.sh
#   RIG_BENCH_BUILD=DIR  configure (preset default) and build in DIR instead
#                        of build/default
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/lib/packages.sh
source scripts/lib/packages.sh
# shellcheck source=scripts/lib/env.sh
source scripts/lib/env.sh

rig_install_packages
build="${RIG_BENCH_BUILD:-build/default}"
cmake --preset default -B "$build"
cmake --build "$build" -j"$(nproc)"

export RIG_BENCH_RESULTS="${RIG_BENCH_RESULTS:-$root/bench/results.jsonl}"
shopt -s nullglob
benches=("$build"/bench/bench_*)
shopt -u nullglob

echo
printf '%-22s %-6s %12s %12s %7s %7s  %-16s %s\n' name unit median floor ratio samples target ok
failed=0
for bench in "${benches[@]}"; do
  [[ -x "$bench" && -f "$bench" ]] || continue
  if [[ "$(basename "$bench")" == bench_remote ]]; then continue; fi # under mpirun, below
  RIG_BENCH_NO_HEADER=1 "$bench" || {
    echo "$bench failed" >&2
    failed=1
  }
done
remote="$build/bench/bench_remote"
if [[ -x "$remote" && -f "$remote" ]]; then
  for ranks in 2 4; do
    RIG_BENCH_NO_HEADER=1 mpirun -n "$ranks" --oversubscribe --bind-to none "$remote" || {
      echo "$remote (mpirun -n $ranks) failed" >&2
      failed=1
    }
  done
fi
echo "(rows appended to $RIG_BENCH_RESULTS)"
exit "$failed"
