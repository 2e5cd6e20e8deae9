#!/usr/bin/env bash
# The Slurm batch example, for real: sbatch --wait of examples/slurm/job.sh
# running srun --mpi=pmix -n 3 progrun on the saxpy example, on the
# single-node Slurm that scripts/slurm/start.sh runs. Exit 77 (skipped)
# when no Slurm runs here, unless RIG_REQUIRE_SLURM says it must.
set -euo pipefail
build="$1"
src="$2"
envf="${RIG_SLURM_ENV:-/tmp/progrun-slurm/env.sh}"
if [[ ! -f "$envf" ]] || ! command -v sbatch >/dev/null; then
  if [[ -n "${RIG_REQUIRE_SLURM:-}" ]]; then
    echo "no single-node Slurm here ($envf): scripts/slurm/start.sh starts one" >&2
    exit 1
  fi
  echo "SKIPPED: no single-node Slurm here (scripts/slurm/start.sh starts one)"
  exit 77
fi
# shellcheck source=/dev/null
source "$envf"
tmp="$(mktemp -d /tmp/rig-slurm.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp/x.bin" <<'PY'
import struct, sys
open(sys.argv[1], "wb").write(struct.pack("<1024f", *[float(i) for i in range(1024)]))
PY
cd "$tmp"
rc=0
timeout 180 sbatch --wait --ntasks=3 --output="$tmp/job.out" --chdir="$tmp" \
  --export="ALL,PROGRUN=$build/progrun" "$src/examples/slurm/job.sh" \
  "$build/examples/saxpy.json" --runs 3 --ints 4 --input "0=$tmp/x.bin" \
  --output "1=$tmp/y{rank}.bin" || rc=$?
cat "$tmp/job.out" 2>/dev/null || true
if ((rc != 0)); then
  echo "sbatch --wait failed with status $rc" >&2
  exit 1
fi
for r in 0 1 2; do
  [[ -s "$tmp/y$r.bin" ]] || { echo "no output of machine $r" >&2; exit 1; }
done
cmp "$tmp/y0.bin" "$tmp/y1.bin" && cmp "$tmp/y0.bin" "$tmp/y2.bin"
grep -q "machine 2: runs 3" "$tmp/job.out" || { echo "no summary of machine 2" >&2; exit 1; }
echo "slurm: 3 machines ran the example under srun --mpi=pmix, outputs equal"
