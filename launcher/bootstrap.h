/* The job's start (docs/jobs.md "The job"): its communicator and id, the
 * machines' descriptions gathered at the controller, and the express
 * exchange. Each step is collective: every rank takes part whatever
 * failed before, and each wait is bounded by RIG_JOB_SILENCE, so that a
 * machine that never joins fails the start instead of hanging it. */
#ifndef RIG_BOOTSTRAP_H
#define RIG_BOOTSTRAP_H

#include <mpi.h>
#include <stdbool.h>

#include "rig/rig_base.h"

typedef struct rig_job rig_job;

/* Keeps the first failure: st if it is one, else s with e's message. */
static inline rig_status rig_first_failure(rig_status st, rig_status s, const rig_error *e,
                                           rig_error *err) {
  if (st != RIG_OK || s == RIG_OK) return st;
  if (err) *err = *e;
  return s;
}

/* Before anything is made: MPI grants MPI_THREAD_MULTIPLE (the job's
 * control and rail threads call MPI and UCX beside the caller's) and the
 * environment's settings are valid. */
rig_status rig_bootstrap_check(rig_error *err);
/* Waits for a collective of the start within the silence bound
 * (*pending: it never completed, its buffers stay). */
rig_status rig_bootstrap_wait(MPI_Request *req, const char *call, bool *pending, rig_error *err);
/* The job's own communicator (a duplicate of comm, errors returned), its
 * rank, size and id. On failure with *pending the duplicate is kept. */
rig_status rig_bootstrap_comm(rig_job *job, MPI_Comm comm, bool *pending, rig_error *err);
/* This machine described, and every machine's description gathered at the
 * controller (described false: this rank has none to give). */
rig_status rig_bootstrap_gather(rig_job *job, bool described, rig_error *err);
/* After the gather: every machine's name in messages (job->labels,
 * control.h), which names hosts when the job spans several (ok false:
 * the controller has no machines to name). */
rig_status rig_bootstrap_labels(rig_job *job, bool ok, rig_error *err);
/* After the gather, before the proxies: each agent makes its rings and
 * the controller its words, each sends the other its area's address, each
 * maps the other's where it can. Fails only as MPI fails; UCX failing
 * leaves job->express NULL or its areas NULL, and frames do the rest
 * (ok false: this rank offers nothing). */
rig_status rig_bootstrap_express(rig_job *job, bool ok, rig_error *err);
/* Frees the job's communicator, keeping st if it already failed. */
rig_status rig_bootstrap_free_comm(rig_job *job, rig_status st, rig_error *err);

#endif
