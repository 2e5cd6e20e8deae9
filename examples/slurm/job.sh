#!/usr/bin/env bash
# A Slurm batch script running progrun on every task of the allocation:
# one task is one machine of the job (task 0, the controller, reads FILE;
# the others are agents). Copy it and adjust the #SBATCH lines:
#
#   source scripts/env.sh     # the build's progrun on PATH (sbatch passes it on)
#   sbatch examples/slurm/job.sh my-program.json --runs 100 --output '1=y{rank}.bin'
#
# progrun is taken from PATH, or from $PROGRUN when set.
#
# On a real cluster run one task per node (--ntasks-per-node=1), or one per
# GPU: `sbatch -N 4 --ntasks-per-node=1 examples/slurm/job.sh ...` (the
# command line's options win over the #SBATCH lines). srun must start the
# tasks with PMIx so that they form one MPI job; a progrun built against
# MPICH takes PMI-2 instead: `SLURM_MPI_TYPE=pmi2 sbatch ...` (srun reads
# SLURM_MPI_TYPE; sbatch passes the environment on).
#SBATCH --job-name=progrun
#SBATCH --ntasks=3
#SBATCH --output=progrun-%j.out
set -euo pipefail

# Network traffic of this example stays on the loopback interface; on a
# cluster, name the fabric's devices instead (or leave these unset).
export UCX_NET_DEVICES="${UCX_NET_DEVICES:-lo}"
export OMPI_MCA_btl_tcp_if_include="${OMPI_MCA_btl_tcp_if_include:-lo}"
export OMPI_MCA_oob_tcp_if_include="${OMPI_MCA_oob_tcp_if_include:-lo}"

# -K: a task that fails ends the others at once.
exec srun --mpi="${SLURM_MPI_TYPE:-pmix}" -K "${PROGRUN:-progrun}" "$@"
