#!/usr/bin/env bash
# scripts/bench.sh — install what is missing, build (preset default) and run
# every benchmark (build/default/bench/bench_*: bench_codec, bench_core, ...),
# printing one table. bench_remote and bench_rail are MPI programs: they run
# under mpirun after the others, bench_remote with 2 ranks (remote/run,
# remote/run ucx-floor, remote/copy-64MiB), again with RIG_JOB_POLL=1
# (remote/run-after-idle poll) and with 4 (remote/host-64 x4,
# remote/idle-cpu), bench_rail with 2 (the rail/ rows); then both again
# across simulated hosts (scripts/hosts.sh), where they can be made;
# bench_ring with 2 ranks (program/ring-2, program/pipeline) and 4
# (program/ring-4), on this host and across 2 and 4 simulated hosts;
# bench/python_job.py (python/job-run) under mpirun -n 2.
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
  case "$(basename "$bench")" in bench_remote | bench_rail | bench_ring) continue ;; esac # under mpirun, below
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
  # remote/run-after-idle poll: executors polling through the quiet.
  RIG_JOB_POLL=1 RIG_BENCH_NO_HEADER=1 mpirun -n 2 --oversubscribe --bind-to none "$remote" || {
    echo "$remote (RIG_JOB_POLL=1) failed" >&2
    failed=1
  }
fi
rail="$build/bench/bench_rail"
if [[ -x "$rail" && -f "$rail" ]]; then
  # UCX_NET_DEVICES=lo (scripts/lib/env.sh): the rails and their floors
  # never leave loopback. UCX_TLS, when set, is honoured by both.
  RIG_BENCH_NO_HEADER=1 mpirun -n 2 --oversubscribe --bind-to none "$rail" || {
    echo "$rail (mpirun -n 2) failed" >&2
    failed=1
  }
fi
# python/job-run: a job's loaded program run from Python (rig.job) beside
# the same loop written against the C API, in the same two processes
# (bench/python_job.py), where the interpreter has numpy and mpi4py.
pyjob="$build/bench/pyjob_floor.so"
if [[ -f "$pyjob" ]] && /usr/bin/python3 -c 'import numpy, mpi4py' 2>/dev/null; then
  RIG_BENCH_NO_HEADER=1 timeout 600 mpirun -n 2 --oversubscribe --bind-to none \
    /usr/bin/python3 bench/python_job.py "$build" || {
    echo "bench/python_job.py (mpirun -n 2) failed" >&2
    failed=1
  }
fi
# The same MPI rows across simulated hosts (scripts/hosts.sh: TCP between
# network namespaces of this machine), where they can be made: rows named
# "... hosts".
if scripts/hosts.sh up 4 >/dev/null 2>&1; then
  for ranks in 2 4; do
    RIG_BENCH_NO_HEADER=1 scripts/hosts.sh mpirun -n "$ranks" "$remote" || {
      echo "$remote (across $ranks hosts) failed" >&2
      failed=1
    }
  done
  RIG_BENCH_NO_HEADER=1 scripts/hosts.sh mpirun -n 2 "$rail" || {
    echo "$rail (across 2 hosts) failed" >&2
    failed=1
  }
  scripts/hosts.sh down >/dev/null 2>&1 || true
fi
# program/ring-*, program/pipeline: the examples' jobs joined by rails
# beside MPI programs of the same shape, on this host (2 and 4 ranks) and
# across 2 and 4 simulated hosts.
ring="$build/bench/bench_ring"
if [[ -x "$ring" && -f "$ring" ]]; then
  for ranks in 2 4; do
    RIG_BENCH_NO_HEADER=1 timeout 900 mpirun -n "$ranks" --oversubscribe --bind-to none "$ring" || {
      echo "$ring (mpirun -n $ranks) failed" >&2
      failed=1
    }
  done
  # tree/round-trip: the tree's start and end of a run beside MPI's
  # messages of the same size, one run in flight at a time.
  RIG_BENCH_NO_HEADER=1 RIG_BENCH_RING_TREE=1 RIG_JOB_IN_FLIGHT=1 timeout 900 \
    mpirun -n 2 --oversubscribe --bind-to none "$ring" || {
    echo "$ring (tree, mpirun -n 2) failed" >&2
    failed=1
  }
  if scripts/hosts.sh up 4 >/dev/null 2>&1; then
    for ranks in 2 4; do
      RIG_BENCH_NO_HEADER=1 timeout 900 scripts/hosts.sh mpirun --hosts "$ranks" -n "$ranks" "$ring" || {
        echo "$ring (across $ranks hosts) failed" >&2
        failed=1
      }
    done
    RIG_BENCH_NO_HEADER=1 RIG_BENCH_RING_TREE=1 RIG_JOB_IN_FLIGHT=1 timeout 900 \
      scripts/hosts.sh mpirun --hosts 2 -n 2 -x RIG_BENCH_RING_TREE -x RIG_JOB_IN_FLIGHT "$ring" || {
      echo "$ring (tree, across 2 hosts) failed" >&2
      failed=1
    }
    scripts/hosts.sh down >/dev/null 2>&1 || true
  fi
fi
# scale/: a job's cost to machine 0 as it grows, on this host (2 and 4
# ranks) and across 2 to 32 simulated hosts (one rank a host; they share
# this machine's cores: the counts are exact, the times are what the
# cores allow). A size that cannot run here is said and skipped.
scale="$build/bench/bench_scale"
if [[ -x "$scale" && -f "$scale" ]]; then
  for ranks in 2 4; do
    RIG_BENCH_NO_HEADER=1 timeout 600 mpirun -n "$ranks" --oversubscribe --bind-to none "$scale" || {
      echo "$scale (mpirun -n $ranks) failed" >&2
      failed=1
    }
  done
  for hosts in 2 4 8 16 32; do
    scripts/hosts.sh up "$hosts" >/dev/null 2>&1 || break
    RIG_BENCH_NO_HEADER=1 timeout 900 scripts/hosts.sh mpirun --hosts "$hosts" -n "$hosts" "$scale" ||
      echo "$scale (across $hosts hosts) did not run to its end: skipped" >&2
  done
  scripts/hosts.sh down >/dev/null 2>&1 || true
else
  echo "(the rows across hosts are skipped: scripts/hosts.sh cannot make hosts here;" \
    "run scripts/hosts.sh check as root to see why)"
fi
echo "(rows appended to $RIG_BENCH_RESULTS)"
exit "$failed"
