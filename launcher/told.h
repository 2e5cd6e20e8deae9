/* A failure told once (docs/jobs.md, "Failure"): the controller names the
 * machines that failed alike together; an agent says nothing once the
 * controller took the cause. The public half is in rig_job.h. */
#ifndef RIG_TOLD_H
#define RIG_TOLD_H

#include <stdbool.h>

typedef struct rig_job rig_job;

/* The control thread's hook: rank src's goodbye came. */
void rig_job_bye(rig_job *job, int src);

/* Each role's part of it and of rig_job_await_told (struct job_role's bye
 * and await_told): the controller records the goodbye and awaits no one;
 * an agent awaits the controller's cause and goodbye. */
void rig_job_bye_controller(rig_job *job, int src);
void rig_job_bye_agent(rig_job *job, int src);
bool rig_job_await_told_controller(rig_job *job);
bool rig_job_await_told_agent(rig_job *job);

#endif
