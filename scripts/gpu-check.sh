#!/usr/bin/env bash
# scripts/gpu-check.sh — the one check of a machine with an NVIDIA GPU
# (docs/cuda.md): configure and build (preset default, in build/gpu unless
# RIG_GPU_BUILD says where), run the cuda suites against the real driver
# (cuda-gpu) and against the driver double (cuda, cuda-2gpu,
# fakecuda-self), run the cuda bench rows (bench_cuda), and print one
# summary. It needs nvcc for the test kernels (the CUDA toolkit; found on
# PATH or in /usr/local/cuda/bin) and the Debian packages of README.md;
# where apt-get cannot reach a mirror, they must be there already. Under 8
# minutes on a machine of 16 cores.
#
# Usage: scripts/gpu-check.sh
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/lib/packages.sh
source scripts/lib/packages.sh
# shellcheck source=scripts/lib/env.sh
source scripts/lib/env.sh

build="${RIG_GPU_BUILD:-build/gpu}"
log="$build/gpu-check.log"
summary=()
status=0
step() { # name, command...: runs it, logs it, records the outcome
  local name="$1" t0 rc
  shift
  t0=$(date +%s)
  echo "== $name: $*" | tee -a "$log"
  "$@" >>"$log" 2>&1
  rc=$?
  summary+=("$(printf '%-28s %s (%ss)' "$name" "$([[ $rc == 0 ]] && echo ok || echo "FAILED ($rc)")" $(($(date +%s) - t0)))")
  ((rc == 0)) || status=1
  return "$rc"
}

mkdir -p "$build"
: >"$log"
if [[ -n "$(rig_missing_packages)" ]]; then
  step packages rig_install_packages || true
fi
export PATH="$PATH:/usr/local/cuda/bin"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,pci.bus_id,driver_version,memory.total --format=csv,noheader |
    tee -a "$log"
else
  echo "no nvidia-smi: the real-driver checks will say why they skip" | tee -a "$log"
fi
jobs=$(nproc)
if step configure cmake --preset default -B "$build" &&
  step build cmake --build "$build" -j"$jobs"; then
  step info "$build/progrun" info
  grep -E '^  cuda:|cuda:' "$log" | tail -n 8
  # The real driver: every test must run, none may skip.
  step cuda-gpu ctest --test-dir "$build" -R '^cuda-gpu$' --output-on-failure -V
  if grep -q 'SKIPPED' <(sed -n '/== cuda-gpu/,/== /p' "$log"); then
    summary+=("cuda-gpu                     SKIPPED tests (see $log)")
    status=1
  fi
  # The GPU example against its CPU twin: the same bytes out.
  ex="$build/examples"
  python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<1024f", *range(1024)))' >"$build/x.bin"
  if step saxpy-cpu "$build/progrun" run "$ex/saxpy.json" --runs 5 --ints 4 \
    --input 0="$build/x.bin" --output 1="$build/y-cpu.bin" &&
    step saxpy-gpu "$build/progrun" run "$ex/cuda/saxpy.json" --runs 5 --ints 4 \
      --input 0="$build/x.bin" --output 1="$build/y-gpu.bin"; then
    step saxpy-same cmp "$build/y-cpu.bin" "$build/y-gpu.bin"
  fi
  step cuda-double ctest --test-dir "$build" -L cuda -E '^cuda-gpu$' --output-on-failure
  step bench-cuda env RIG_BENCH_NO_HEADER= "$build/bench/bench_cuda" "$build/bench-cuda.jsonl"
  sed -n '/== bench-cuda/,$p' "$log" | grep -E '^(name|cuda/)' || true
  if sed -n '/== bench-cuda/,$p' "$log" | grep -q 'skipped'; then
    summary+=("bench-cuda                   SKIPPED rows (see $log)")
    status=1
  fi
fi

echo
echo "gpu-check summary ($(date -u +%FT%TZ), $(hostname)):"
printf '  %s\n' "${summary[@]}"
echo "  log: $log"
exit "$status"
