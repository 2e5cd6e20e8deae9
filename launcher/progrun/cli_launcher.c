/* How the command was started: its words, and a launch by srun that would
 * make separate jobs (whether a launcher made it a rank of an MPI job is
 * librig's rig_run_under_launcher, the Python package's too). */
#include <stdlib.h>

#include "cli.h"

int cli_argc;
char **cli_argv;

const char *cli_singletons(void) {
  const char *tasks = getenv("SLURM_STEP_NUM_TASKS");
  if (!tasks) tasks = getenv("SLURM_NTASKS");
  /* PMIx (Open MPI, MPICH) or PMI-2 (MPICH's srun --mpi=pmi2) joins them. */
  if (getenv("SLURM_PROCID") && tasks && atoi(tasks) > 1 && !getenv("PMIX_RANK") &&
      !getenv("PMI_RANK"))
    return "started by srun as separate processes, not as one MPI job: run it with "
           "srun --mpi=pmix (or mpirun, mpiexec)";
  return NULL;
}
