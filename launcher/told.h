/* A failure told once (docs/jobs.md, "Failure"): the controller names the
 * machines that failed alike together; an agent says nothing once the
 * controller took the cause. The public half is in rig_job.h. */
#ifndef RIG_TOLD_H
#define RIG_TOLD_H

typedef struct rig_job rig_job;

/* The control thread's hook: rank src's goodbye came. */
void rig_job_bye(rig_job *job, int src);

#endif
