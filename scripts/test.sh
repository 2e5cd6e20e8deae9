#!/usr/bin/env bash
# scripts/test.sh — install what is missing, build, and run every suite.
#
# Usage: scripts/test.sh [--quick]
#
#   (no option)  a single-node Slurm started (scripts/slurm/start.sh) for
#                  the Slurm test
#                default preset: build + CTest (the MPI suites run under
#                  mpirun -n 2..4, the Slurm one under sbatch; the -hosts
#                  ones across 2 and 4 simulated hosts, scripts/hosts.sh,
#                  and the slurm-hosts ones under a Slurm cluster of 4 of
#                  them, scripts/slurm/start.sh --hosts 4, which they start
#                  and stop; or skipped, saying why, where hosts cannot be
#                  made)
#                mpich preset: build + the MPI suites against MPICH
#                  (mpiexec.mpich), on this host; across the hosts, its
#                  ring and the slurm-hosts batch jobs (srun --mpi=pmi2)
#                asan preset: build + CTest under AddressSanitizer and
#                  UndefinedBehaviorSanitizer
#                fuzz preset: build + fuzz_desc for RIG_FUZZ_SECONDS (60)
#                  seconds on a fresh copy of the seed corpus
#   --quick      the default preset only (skips mpich, asan and fuzz)
#   -h, --help   this text
#
# Missing Debian packages are installed with apt-get when run as root;
# otherwise the script names them and exits 1. Network traffic stays on
# loopback (scripts/lib/env.sh), or, across simulated hosts, on their own
# bridge (10.77.0.128/25), removed afterwards. Each stage runs even when an
# earlier one failed; a summary follows, and the exit status is non-zero
# when any stage failed.

# The stage functions are called through run_stage.
# shellcheck disable=SC2317
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/lib/packages.sh
source scripts/lib/packages.sh
# shellcheck source=scripts/lib/env.sh
source scripts/lib/env.sh
# shellcheck source=scripts/lib/hosts.sh
source scripts/lib/hosts.sh

quick=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    -h | --help)
      awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
      exit 0
      ;;
    *)
      echo "test.sh: unknown option $arg (try --help)" >&2
      exit 2
      ;;
  esac
done

rig_install_packages

jobs="$(nproc)"
summary=()
failed=0
fuzz_corpus=
# What failed, test by test, written from stages that run in subshells too.
failures="$(mktemp "${TMPDIR:-/tmp}/rig-failures.XXXXXX")"
trap 'rm -f "$failures"; [[ -z "$fuzz_corpus" ]] || rm -rf "$fuzz_corpus"' EXIT

# Runs stage function $2 under the name $1, timing it and recording the result.
run_stage() {
  local name="$1" fn="$2" start rc
  echo
  echo "==== $name ===="
  start=$SECONDS
  if "$fn"; then rc=0; else rc=$?; fi
  if ((rc == 0)); then
    summary+=("$(printf '%-8s ok     (%ds)' "$name" $((SECONDS - start)))")
  else
    summary+=("$(printf '%-8s FAILED (%ds, status %d)' "$name" $((SECONDS - start)) "$rc")")
    failed=1
  fi
}

# Runs ctest in build preset $1 with the arguments that follow. When it
# fails, the CUnit tests that failed, with their assertions, are kept for the
# summary: CI shows only the end of a long log.
ctest_in() {
  local preset="$1" log
  shift
  if ctest --preset "$preset" "$@"; then return 0; fi
  log="build/$preset/Testing/Temporary/LastTest.log"
  if [[ -f "$log" ]]; then
    awk -v p="$preset" '
      /^[0-9]+\/[0-9]+ Test: / { t = $3 }
      /Test: .*\.\.\.FAILED/ || /^ *[0-9]+\. [^ ]+:[0-9]+ +- / || /^Test (Failed|Timeout)|^\*\*\*/ {
        if (n++ < 60) print "  " p ": " t ": " $0
      }' "$log" >>"$failures"
  fi
  return 1
}

stage_slurm() {
  # The Slurm test needs it: started here, since CI starts with none.
  local envf
  envf="$(scripts/slurm/start.sh | tail -n 1)" || return
  export RIG_SLURM_ENV="$envf" RIG_REQUIRE_SLURM=1
}

# Whether the -hosts suites run here; they are skipped, saying why, if not.
say_hosts() {
  local why
  why="$(rig_hosts_why_not)"
  if [[ -n "$why" ]]; then echo "the -hosts suites are skipped: $why"; fi
}

stage_default() {
  cmake --preset default || return
  cmake --build --preset default -j"$jobs" || return
  say_hosts
  local rc=0
  # Suites of one process, side by side; the MPI, Slurm and host suites
  # (slurm-hosts among them) one at a time: they bound silences by
  # seconds, share the simulated hosts, and each fills the cores with ranks.
  ctest_in default -j"$jobs" -LE 'mpi|slurm|hosts' || rc=1
  ctest_in default -L 'mpi|slurm|hosts' || rc=1
  return "$rc"
}

# The MPI suites again, against MPICH (the mpich preset), on this host;
# across the simulated hosts, progrun's ring (tests/CMakeLists.txt says
# why the suites are not).
stage_mpich() {
  cmake --preset mpich || return
  cmake --build --preset mpich -j"$jobs" || return
  local rc=0
  ctest_in mpich -L mpi -LE hosts || rc=1
  ctest_in mpich -L hosts || rc=1
  return "$rc"
}

stage_asan() (
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  cmake --preset asan || exit
  cmake --build --preset asan -j"$jobs" || exit
  rc=0
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 ctest_in asan -j"$jobs" -LE 'mpi|slurm|hosts' ||
    rc=1
  # Leaks count under mpirun too: Open MPI's own, which outlive
  # MPI_Finalize, are suppressed by tests/lsan.supp (tests/CMakeLists.txt).
  # The -hosts suites among them: the library's paths across hosts (runs
  # and reports by messages, far copies, rails by TCP, a peer's loss).
  # Not the command's suites across hosts (progrun_mpi-2-hosts and -4-hosts:
  # what they add to progrun_mpi is waiting out silences between hosts,
  # librig's paths there are job-, express-, rail- and *_lost-*-hosts'),
  # nor rail-4-hosts (rail-2-hosts runs the same code between two hosts):
  # under ASan they cost 7 minutes and tell nothing more.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 ctest_in asan -L mpi \
    -E '^(progrun_mpi-[0-9]+-hosts|rail-4-hosts)$' || rc=1
  # Under Slurm the processes are srun's: its leaks are not looked for.
  # The single-node test only: the slurm-hosts ones add Slurm's paths, not
  # librig's.
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 ctest_in asan -L '^slurm$' || rc=1
  exit "$rc"
)

stage_fuzz() {
  cmake --preset fuzz || return
  cmake --build --preset fuzz -j"$jobs" || return
  local seeds=build/fuzz/fuzz/corpus corpus artifacts=build/fuzz/artifacts rc=0
  if [[ ! -d "$seeds" ]]; then
    echo "no seed corpus at $seeds" >&2
    return 1
  fi
  # A fresh corpus outside the source tree: libFuzzer adds files to it.
  corpus="$(mktemp -d "${TMPDIR:-/tmp}/rig-fuzz-corpus.XXXXXX")"
  fuzz_corpus="$corpus"
  cp "$seeds"/* "$corpus"/
  shopt -s nullglob
  local json=(examples/*.json)
  shopt -u nullglob
  if ((${#json[@]})); then cp "${json[@]}" "$corpus"/; fi
  mkdir -p "$artifacts"
  echo "fuzz_desc: ${RIG_FUZZ_SECONDS:-60} s on $(find "$corpus" -type f | wc -l) seeds;" \
    "crashes go to $artifacts/"
  build/fuzz/fuzz/fuzz_desc -max_total_time="${RIG_FUZZ_SECONDS:-60}" \
    -artifact_prefix="$artifacts/" "$corpus" || rc=$?
  rm -rf "$corpus"
  fuzz_corpus=
  return "$rc"
}

run_stage slurm stage_slurm
run_stage default stage_default
if ((quick == 0)); then
  run_stage mpich stage_mpich
  run_stage asan stage_asan
  run_stage fuzz stage_fuzz
fi

echo
echo "==== summary ===="
printf '%s\n' "${summary[@]}"
if [[ -s "$failures" ]]; then
  echo "what failed:"
  cat "$failures"
fi
if ((quick)); then echo "(--quick: mpich, asan and fuzz skipped)"; fi
exit "$failed"
