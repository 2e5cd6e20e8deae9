/* The environment: every RIG_* variable librig reads, parsed once, each
 * bounded; an invalid value is an error naming the variable, never
 * ignored. */
#include "env.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static rig_env env = {
    .workers = 0, .cpu_devices = 2, .job_silence = 10.0, .trace = false, .job_express = true};
static rig_error first; /* the first invalid variable; code RIG_OK if none */
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Keeps the first invalid variable's message: "RIG_WORKERS=abc: not a count". */
static void invalid(const char *name, const char *value, const char *why) {
  if (first.code == RIG_OK) rig_error_set(&first, RIG_EINVAL, "%s=%s: %s", name, value, why);
}

/* A count in [lo, hi]. */
static void read_count(const char *name, unsigned lo, unsigned hi, unsigned *out) {
  const char *s = getenv(name);
  if (!s) return;
  char *end;
  errno = 0;
  long long n = strtoll(s, &end, 10);
  if (!*s || *end || errno || n < 0) {
    invalid(name, s, "not a count");
    return;
  }
  if (n < lo || n > hi) {
    char why[64];
    snprintf(why, sizeof why, "outside %u..%u", lo, hi);
    {
      invalid(name, s, why);
      return;
    }
  }
  *out = (unsigned)n;
}

static void read_silence(void) {
  const char *s = getenv("RIG_JOB_SILENCE");
  if (!s) return;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (!*s || *end || errno || !isfinite(v)) {
    invalid("RIG_JOB_SILENCE", s, "not a number of seconds");
    return;
  }
  if (v < RIG_JOB_BEAT_S) {
    invalid("RIG_JOB_SILENCE", s, "below the beat of 1 s");
    return;
  }
  if (v == RIG_JOB_BEAT_S) {
    invalid("RIG_JOB_SILENCE", s, "not above the beat of 1 s");
    return;
  }
  if (v > 86400) {
    invalid("RIG_JOB_SILENCE", s, "more than a day");
    return;
  }
  env.job_silence = v;
}

static void read_flag(const char *name, bool *out) {
  const char *s = getenv(name);
  if (!s) return;
  if ((s[0] == '0' || s[0] == '1') && !s[1])
    *out = s[0] == '1';
  else
    invalid(name, s, "neither 0 nor 1");
}

static void read_all(void) {
  read_count("RIG_WORKERS", 1, 4096, &env.workers);
  read_count("RIG_CPU_DEVICES", 0, 256, &env.cpu_devices);
  read_silence();
  read_flag("RIG_TRACE", &env.trace);
  read_flag("RIG_JOB_EXPRESS", &env.job_express);
}

const rig_env *rig_env_get(void) {
  pthread_once(&once, read_all);
  return &env;
}

rig_status rig_environment_check(rig_error *err) {
  pthread_once(&once, read_all);
  if (first.code == RIG_OK) return RIG_OK;
  return rig_error_set(err, first.code, "%s", first.message);
}
