/* The process's open jobs (jobs.c): a process may hold several jobs, and
 * what reaches it without naming one finds it here: the handlers of UCX
 * messages by the job's id (c.job_id, in every message), the waiting
 * threads' chores by visiting every job. Each job is held once, from its
 * start to its free, under one lock; what of a job the handlers may use
 * its parts say, each set and cleared under that lock (the express its
 * messages reach, job->heard; its tree's, tree.heard, with its mailbox,
 * tree.runs_made; its runs' chores, tree.runs_open): once a part is
 * cleared no handler uses it, and it may go. The lock is never held
 * across a call that waits for the rails' engine: the handlers run on a
 * thread that holds it. */
#ifndef RIG_JOBS_H
#define RIG_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "rig/rig_base.h"

typedef struct rig_job rig_job;

/* Open jobs at most. */
#define RIG_JOBS_MAX 64

/* The job is found from now on (RIG_EREFUSED: too many at once). */
rig_status rig_jobs_add(rig_job *job, rig_error *err);
/* The job is found no more (nothing if it was not). */
void rig_jobs_remove(rig_job *job);

void rig_jobs_lock(void);
void rig_jobs_unlock(void);
/* Under the lock: the open job of that id (NULL: none); whether job is
 * open (a context that may outlive its job compares it, never reads it). */
rig_job *rig_jobs_find(uint64_t id);
bool rig_jobs_holds(const rig_job *job);

/* fn(job, ctx) for every open job, under the lock; none when another
 * thread holds it (false): a waiting thread never blocks on the table. */
bool rig_jobs_try_each(void (*fn)(rig_job *job, void *ctx), void *ctx);

#endif
