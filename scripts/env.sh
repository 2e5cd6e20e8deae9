# shellcheck shell=bash
# Source it from a shell (bash): `source scripts/env.sh`, or on a
# cluster `source scripts/env.sh --cluster` (the site's network; no
# loopback; mpirun as root only in a root shell). Puts the build
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
# progrun's man page, from the build tree (`man progrun`); the trailing
# colon keeps the system's pages.
case ":${MANPATH:-}:" in
  *":$rig_build/share/man:"*) ;;
  *) export MANPATH="$rig_build/share/man:${MANPATH:-}" ;;
esac
if [[ "${1:-}" == "--cluster" ]]; then
  # On a cluster MPI and UCX take the site's network: the loopback
  # settings this file sets for one machine would cut the hosts apart
  # (docs/jobs.md, "On a cluster"). Those it set before are dropped.
  for rig_var in UCX_NET_DEVICES OMPI_MCA_btl_tcp_if_include OMPI_MCA_oob_tcp_if_include; do
    [[ "${!rig_var:-}" == "lo" ]] && unset "$rig_var"
  done
  unset rig_var
  # A root shell (a container) runs mpirun as root on a cluster too; these
  # are not the network's, and set already they stay.
  if [[ "$(id -u)" == 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
else
  # shellcheck source=scripts/lib/env.sh
  source "$rig_root/scripts/lib/env.sh"
fi
unset rig_root rig_build
