/* For suites that run under mpirun (mpi_main.c): rank 0 runs the tests,
 * the other ranks are agents of the jobs the tests start. */
#ifndef RIG_MPI_TEST_H
#define RIG_MPI_TEST_H

#include "rig/rig_job.h"
#include "rig_test.h"

/* Starts a job with every rank (the agents join it); NULL on failure. */
rig_job *rig_test_job_start(void);

/* The job suites' shared steps (mpi_job.c): a job started (asserted), the
 * test kernels (RIG_TEST_KERNELS, read once), a close whose status must
 * be RIG_OK, and zeroed pinned host memory. */
rig_job *rig_test_job_start_ok(void);
const void *rig_test_kernels(size_t *len);
/* The test kernels as an image of device `device` of d; its index. */
int64_t rig_test_add_kernels(rig_desc *d, int64_t device);
void rig_test_job_close_ok(rig_job *job);
rig_buffer *rig_test_host_buffer(size_t n);

/* How the job names machine m in messages: "machine 1", or "machine 1
 * (node2)" when its machines are on several hosts (the controller's view). */
const char *rig_test_label(rig_job *job, size_t m, char *buf, size_t n);

/* What the root cause of each agent's last job stood for (rig_job_cause),
 * by rank (codes[0] is left as it is). */
void rig_test_agent_causes(rig_status *codes);

/* Starts a job whose agents each run rig_test_agent_spmd(job, which)
 * before they serve it (work of their own, beside the controller's). */
rig_job *rig_test_job_start_spmd(int which);
/* A suite may define it (weak: none): an agent's part of an SPMD job;
 * true when the part closed the job itself (then it is not served). */
bool rig_test_agent_spmd(rig_job *job, int which);

/* Each suite defines this: what every rank sets up before the first job
 * (devices of its own, say). */
void rig_test_agent_setup(int rank);

#endif
