/* For suites that run under mpirun (mpi_main.c): rank 0 runs the tests,
 * the other ranks are agents of the jobs the tests start. */
#ifndef RIG_MPI_TEST_H
#define RIG_MPI_TEST_H

#include "rig/rig_job.h"
#include "rig_test.h"

/* Starts a job with every rank (the agents join it); NULL on failure. */
rig_job *rig_test_job_start(void);

/* Each suite defines this: what every rank sets up before the first job
 * (devices of its own, say). */
void rig_test_agent_setup(int rank);

#endif
