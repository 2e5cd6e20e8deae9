/* The launcher that made this process a rank of an MPI job (mpirun,
 * mpiexec, srun --mpi=pmix), read from the environment it gives, before
 * MPI is started: progrun's and the Python package's one reading. */
#include <stdlib.h>
#include <string.h>

#include "rig/rig_run.h"

bool rig_run_under_launcher(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

bool rig_run_rank_is_not_0(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    if (v) return strcmp(v, "0") != 0;
  }
  return false;
}
