#!/usr/bin/env bash
# Runs a test across K simulated hosts (scripts/hosts.sh):
#   on_hosts.sh K COMMAND...
# makes hosts node1..nodeK (those up are kept), then runs COMMAND with
# RIG_HOSTS=K and RIG_TEST_MPIEXEC an mpirun over those hosts
# (scripts/lib/hosts-mpirun, or hosts-mpiexec-mpich), which COMMAND may be. Where hosts cannot be
# made here it says why and exits 77: CTest's skip (SKIP_RETURN_CODE).
set -euo pipefail
if (($# < 2)); then
  echo "usage: on_hosts.sh K COMMAND..." >&2
  exit 2
fi
k="$1"
shift
scripts="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../scripts" && pwd)"
rc=0
"$scripts/hosts.sh" up "$k" || rc=$?
if ((rc == 77)); then
  echo "skipped: no simulated hosts here (see above)"
  exit 77
elif ((rc != 0)); then
  echo "on_hosts.sh: scripts/hosts.sh up $k failed (status $rc)" >&2
  exit 1
fi
# The build's MPI's launcher (RIG_TEST_MPI, tests/CMakeLists.txt).
launcher="$scripts/lib/hosts-mpirun"
if [[ "${RIG_TEST_MPI:-}" == mpich ]]; then launcher="$scripts/lib/hosts-mpiexec-mpich"; fi
export RIG_HOSTS="$k" RIG_TEST_MPIEXEC="$launcher"
exec "$@"
