# shellcheck shell=bash
# Source it from a shell (bash): `source scripts/env.sh`. Puts the build
# tree's progrun (build/default, or $RIG_BUILD_DIR) first on PATH, so that
# `progrun`, `mpirun -n 4 progrun ...` and `sbatch examples/slurm/job.sh
# ...` find it, and keeps the network traffic of MPI and UCX on loopback
# and lets mpirun run as root (scripts/lib/env.sh). Sourcing it twice adds
# nothing twice.
rig_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rig_build="${RIG_BUILD_DIR:-$rig_root/build/default}"
case ":$PATH:" in
  *":$rig_build:"*) ;;
  *) export PATH="$rig_build:$PATH" ;;
esac
# shellcheck source=scripts/lib/env.sh
source "$rig_root/scripts/lib/env.sh"
unset rig_root rig_build
