#!/usr/bin/env bash
# A Slurm batch script running a job file (docs/jobs.md, "Job files") on
# one node per machine: first `progrun info` on every node of the
# allocation (each node's host, CPUs and UCX transports, in the job's
# output), then the job file itself. Copy it and adjust the #SBATCH lines:
# --nodes is the job file's count of machines.
#
#   source scripts/env.sh --cluster   # the build's progrun on PATH (sbatch passes it on)
#   sbatch examples/slurm/jobfile.sh build/default/examples/ring-4.json --runs 100
#
# progrun is taken from PATH, or from $PROGRUN when set. The job file's
# outputs are written where it says, relative to its folder, by the
# machine that has them; `{rank}` in an --output path gives each machine
# its own file. srun starts the tasks with PMIx (or what SLURM_MPI_TYPE
# names: pmi2 for a progrun built against MPICH). The network is left to
# MPI and UCX (set UCX_NET_DEVICES, OMPI_MCA_btl_tcp_if_include where the
# nodes have several: docs/jobs.md, "On a cluster").
#SBATCH --job-name=progrun-jobfile
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --output=progrun-%j.out
set -euo pipefail

progrun="${PROGRUN:-progrun}"
mpi="${SLURM_MPI_TYPE:-pmix}"
echo "job $SLURM_JOB_ID: $SLURM_NTASKS tasks on $SLURM_JOB_NODELIST (batch host $(hostname))"
# Not bound to the one CPU Slurm gives a task: a machine runs threads of
# its own (docs/jobs.md, "On a cluster").
srun --mpi="$mpi" --cpu-bind=none -K "$progrun" info
# -K: a task that fails ends the others at once.
exec srun --mpi="$mpi" --cpu-bind=none -K "$progrun" "$@"
