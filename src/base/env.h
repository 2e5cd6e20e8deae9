/* env.h: the environment variables librig reads, read once and checked in
 * one place (docs/environment.md). Private to librig. */
#ifndef RIG_BASE_ENV_H
#define RIG_BASE_ENV_H

#include <stdbool.h>

#include "rig/rig_base.h"

typedef struct rig_env {
  unsigned workers;     /* RIG_WORKERS: threads of a host launch; 0: from the cpuset */
  unsigned cpu_devices; /* RIG_CPU_DEVICES: how many cpu:N devices (default 2) */
  double job_silence;   /* RIG_JOB_SILENCE: seconds before a silent rank fails the job */
  bool trace;           /* RIG_TRACE: log control frames on stderr */
  bool job_express;     /* RIG_JOB_EXPRESS: runs by shared memory on one host (default 1) */
} rig_env;

/* The beat of a job: ranks with nothing to say send one this often, so a
 * silence bound must be longer. */
#define RIG_JOB_BEAT_S 1.0

/* The environment as read at the first call. Every field holds a valid
 * value (the default where a variable is unset or invalid); the status is
 * the first invalid variable's, with its message, and callers that can fail
 * return it (rig_environment_check). */
const rig_env *rig_env_get(void);

#endif
