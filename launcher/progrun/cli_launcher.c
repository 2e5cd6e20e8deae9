/* How the command was started: its words, and the launcher that made it a
 * rank of an MPI job (mpirun, mpiexec, srun), read from the environment
 * the launcher gives, before MPI is started. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_argc;
char **cli_argv;

bool cli_under_mpi(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

bool cli_rank_is_not_0(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    if (v) return strcmp(v, "0") != 0;
  }
  return false;
}

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
