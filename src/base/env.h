/* env.h: the environment variables librig reads, read once and checked in
 * one place, the table of env.c (docs/environment.md). Private to librig. */
#ifndef RIG_BASE_ENV_H
#define RIG_BASE_ENV_H

#include <stdbool.h>
#include <stdio.h>

#include "rig/rig_base.h"

/* The longest RIG_CUDA_LIBRARY, with its NUL (PATH_MAX). */
#define RIG_ENV_PATH_MAX 4096
/* The longest RIG_UCX_TLS, with its NUL. */
#define RIG_ENV_TLS_MAX 512

typedef struct rig_env {
  unsigned workers;       /* RIG_WORKERS: threads of a host launch; 0: from the cpuset */
  unsigned cpu_devices;   /* RIG_CPU_DEVICES: how many cpu:N devices (default 2) */
  double job_silence;     /* RIG_JOB_SILENCE: seconds before a silent rank fails the job */
  unsigned job_fanout;    /* RIG_JOB_FANOUT: the children of a machine in the job's tree */
  unsigned job_in_flight; /* RIG_JOB_IN_FLIGHT: runs of a job in flight at once */
  bool trace;             /* RIG_TRACE: log control frames (debug lines) */
  unsigned log_level;     /* RIG_LOG: the most detailed level logged (rig_log_level) */
  bool job_express;       /* RIG_JOB_EXPRESS: runs by shared memory on one host (default 1) */
  bool job_poll;          /* RIG_JOB_POLL: executors poll, never sleep, once they took a run */
  /* RIG_CUDA_LIBRARY: the driver the cuda backend opens; empty: its default */
  char cuda_library[RIG_ENV_PATH_MAX];
  /* RIG_UCX_TLS: librig's UCX transports; empty: UCX_TLS's */
  char ucx_tls[RIG_ENV_TLS_MAX];
} rig_env;

/* The beat of a job: ranks with nothing to say send one this often, so a
 * silence bound must be longer. */
#define RIG_JOB_BEAT_S 1.0
/* The least silence bound: three beats, so that a healthy machine's beat
 * is always seen within it, late by a busy machine's scheduling too. */
#define RIG_JOB_SILENCE_MIN_S (3 * RIG_JOB_BEAT_S)

/* The environment as read at the first call. Every field holds a valid
 * value (the default where a variable is unset or invalid); the status is
 * the first invalid variable's, with its message, and callers that can fail
 * return it (rig_environment_check). */
const rig_env *rig_env_get(void);

/* Reads every variable of the table through lookup (getenv, or a test's):
 * *env holds each valid value, else the default; RIG_EINVAL with the
 * first invalid one ("RIG_WORKERS=abc: not a count"). */
rig_status rig_env_read(const char *(*lookup)(const char *name), rig_env *env, rig_error *err);

/* The table as docs/environment.md shows it (markdown: a head row, then
 * one row per variable). */
void rig_env_markdown(FILE *f);

#endif
