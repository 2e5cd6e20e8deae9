# shellcheck shell=bash
# Source it from a shell (bash): `source scripts/env.sh`. Puts the build
# tree's progrun (build/default, or $RIG_BUILD_DIR) first on PATH, so that
# `progrun`, `mpirun -n 4 progrun ...` and `sbatch examples/slurm/job.sh
# ...` find it, and keeps the network traffic of MPI and UCX on loopback
# and lets mpirun run as root (scripts/lib/env.sh); build/default/python
# goes on PYTHONPATH for the package rig. Sourcing it twice adds nothing
# twice.
rig_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rig_build="${RIG_BUILD_DIR:-$rig_root/build/default}"
case ":$PATH:" in
  *":$rig_build:"*) ;;
  *) export PATH="$rig_build:$PATH" ;;
esac
# The Python package rig (docs/python.md), from the build tree.
case ":${PYTHONPATH:-}:" in
  *":$rig_build/python:"*) ;;
  *) export PYTHONPATH="$rig_build/python${PYTHONPATH:+:$PYTHONPATH}" ;;
esac
# shellcheck source=scripts/lib/env.sh
source "$rig_root/scripts/lib/env.sh"
unset rig_root rig_build
