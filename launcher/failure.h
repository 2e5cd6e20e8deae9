/* The job's end (docs/jobs.md "Failure"): its root cause, the first
 * failure anywhere, which every rank learns; or, on an agent, the
 * controller's close. Both under the job's lock, waking whoever waits on
 * the job. */
#ifndef RIG_FAILURE_H
#define RIG_FAILURE_H

#include <stdbool.h>

#include "rig/rig_base.h"
#include "rig/rig_job.h"

typedef struct rig_job rig_job;

/* Sets the root cause (first call only) and what it stands for (code:
 * RIG_EJOB, or a kind rig_job_fail_as gave), tells every other rank when
 * tell, raises this process's rails and runs the job's on_fail. */
void rig_job_fail_code(rig_job *job, bool tell, rig_status code, const char *cause);
/* The same for a cause that came from machine `from` (its F_FAIL), in
 * its run `run` - 1 there (0: in none, or not known). */
void rig_job_fail_from(rig_job *job, int from, uint64_t run, rig_status code, const char *cause);
/* This thread runs run `run` (the caller's number) of job's, between its
 * rig_job_run_begin and rig_job_run_end (job NULL: no run): a failure the
 * thread makes is the run's own, told as of that run (a silence the
 * control thread finds is not). */
void rig_job_running(const rig_job *job, uint64_t run);
/* Each machine's word on the failure, as the controller heard it
 * (told.c): `from` said cause (NULL: its goodbye came), under job->lock. */
struct job_said {
  bool answered;
  char text[RIG_ERROR_MESSAGE_MAX];
};
void rig_job_said(rig_job *job, int from, const char *cause);
/* Each role's part of a failure (struct job_role's took and tell): the
 * controller records each machine's cause and tells the job's to every
 * agent; an agent takes the controller's and tells its own there once. */
bool rig_job_took_controller(rig_job *job, bool first, bool tell, int from, uint64_t run,
                             rig_status code, const char *cause);
void rig_job_tell_agents(rig_job *job, rig_status code, uint64_t run, const char *cause);
bool rig_job_took_agent(rig_job *job, bool first, bool tell, int from, uint64_t run,
                        rig_status code, const char *cause);
void rig_job_tell_controller(rig_job *job, rig_status code, uint64_t run, const char *cause);
/* The same, standing for RIG_EJOB. */
void rig_job_fail_with(rig_job *job, bool tell, const char *cause);
/* The same as the control thread's hook: err gets the root cause. */
rig_status rig_job_fail_hook(rig_job *job, bool tell, const char *cause, rig_error *err);
/* The job fails with this machine's reason: "<its label>: <why>". */
void rig_job_fail_here(rig_job *job, const rig_error *why);
/* err, UCX's failure to reach machine `to` from machine `from` (an
 * endpoint's), with the two machines named and the setting that chooses
 * UCX's network between hosts: "<err> (machine 0 (node1) to machine 1
 * (node2); UCX_NET_DEVICES=lo names ...)". Only a message of UCX's. */
void rig_job_unreached(const rig_job *job, int from, int to, rig_error *err);
/* The job's root cause as RIG_EJOB. */
rig_status rig_job_error(rig_job *job, rig_error *err);
/* An agent: the controller closed the job. */
void rig_job_mark_closed(rig_job *job);
/* An agent: waits until the job is closed or failed; whether it failed. */
bool rig_job_wait_end(rig_job *job);

#endif
