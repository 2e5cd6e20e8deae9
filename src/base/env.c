/* The environment: every RIG_* variable librig reads, in one table (name,
 * kind, default, bounds, meaning) from which come the parsing, the
 * refusals and docs/environment.md's table (rig_env_markdown; the test
 * `base` compares the two). An invalid value is an error naming the
 * variable, never ignored. */
#include "env.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum var_kind {
  VAR_COUNT,   /* an unsigned field, in [lo, hi] */
  VAR_SECONDS, /* a double field, in [lo, hi] */
  VAR_FLAG,    /* a bool field: 0 or 1 */
  VAR_LIBRARY, /* a char[RIG_ENV_PATH_MAX] field: a name dlopen takes */
  VAR_LEVEL,   /* an unsigned field: a log level's name (rig_log_level) */
  VAR_TLS,     /* a char[RIG_ENV_TLS_MAX] field: a list of UCX transports */
} var_kind;

typedef struct var {
  const char *name;
  var_kind kind;
  size_t at; /* the field's offset in rig_env */
  double fallback;
  const char *fallback_text; /* the default as the doc says it, when not a number */
  double lo, hi;
  const char *lo_why; /* why the floor, when it is not obvious */
  const char *what;   /* the doc's meaning */
} var;

#define AT(field) offsetof(rig_env, field)

static const var vars[] = {
    {"RIG_WORKERS", VAR_COUNT, AT(workers), 0,
     "the cores of the process's cpuset, within its cgroup CPU quota", 1, 4096, NULL,
     "threads that run a host launch's groups (the worker pool and the caller)"},
    {"RIG_CPU_DEVICES", VAR_COUNT, AT(cpu_devices), 2, NULL, 0, 256, NULL,
     "how many `cpu:N` devices a machine has"},
    {"RIG_JOB_SILENCE", VAR_SECONDS, AT(job_silence), 10, NULL, RIG_JOB_SILENCE_MIN_S, 86400,
     "three of the job's 1 s beats",
     "seconds a rank may be silent before the job fails (`run 7: machine 3: silent for 10 s`); "
     "every rank of `progrun` then ends, with exit status 1, within this bound and a few "
     "seconds, even while the controller's own devices are busy (docs/jobs.md, \"Failure\"). It "
     "also bounds the job's start (a machine that never joins fails `rig_job_start`: `the job's "
     "start: MPI_Igather not done after 10 s: a machine did not join (stopped, or gone)`) and how "
     "long a rail's release waits for its peer's (docs/rails.md)"},
    {"RIG_JOB_FANOUT", VAR_COUNT, AT(job_fanout), 4, NULL, 1, 1024, NULL,
     "children of a machine in the job's tree, which starts and ends machine-local runs and "
     "shares the bytes every machine needs (docs/jobs.md, \"Jobs of many machines\"): machine "
     "0 sends K messages a run, the last machine starts log_K N hops after the first; `1` is a "
     "chain"},
    {"RIG_JOB_IN_FLIGHT", VAR_COUNT, AT(job_in_flight), 2, NULL, 1, 2, NULL,
     "runs of a job of machine-local runs in flight at once (docs/jobs.md, \"Jobs of many "
     "machines\"): run r starts on a machine once run r - W is done on every machine, so that "
     "the tree's start and end of a run are off the path of the next (`2`, as a rail's and "
     "a program's two copies allow), or only once run r - 1 is (`1`); machine 0's value is "
     "the job's"},
    {"RIG_JOB_EXPRESS", VAR_FLAG, AT(job_express), 1, NULL, 0, 1, NULL,
     "runs, copies and done reports between machines of one host by shared memory "
     "(docs/jobs.md, \"Runs by shared memory\"); `0` sends them all as frames of the control "
     "protocol"},
    {"RIG_JOB_POLL", VAR_FLAG, AT(job_poll), 0, NULL, 0, 1, NULL,
     "an agent's executors that took a run never sleep while the job is open: they poll for "
     "the next (yielding the core), as an MPI receiver does, so that a run after a quiet "
     "costs no thread's wake-up; each such executor then keeps a core busy (docs/jobs.md, "
     "\"Idle machines\")"},
    {"RIG_LOG", VAR_LEVEL, AT(log_level), RIG_LOG_WARN, "`warn`", 0, 0, NULL,
     "the most detailed lines librig logs on stderr (or to the application's handler, "
     "`rig_log_set_handler`): `error`, `warn` (a transport's warnings), `info` (the route each "
     "machine's runs take), `debug` (every control frame); each line whole, never holding a "
     "thread of librig when stderr blocks"},
    {"RIG_TRACE", VAR_FLAG, AT(trace), 0, NULL, 0, 1, NULL,
     "logs every control frame but beats, for debugging a job: as `RIG_LOG=debug`"},
    {"RIG_CUDA_LIBRARY", VAR_LIBRARY, AT(cuda_library), 0, "`libcuda.so.1`", 0, 0, NULL,
     "the CUDA driver library the `cuda` backend opens (docs/cuda.md, \"Loading the driver\"); "
     "the tests name their driver double with it"},
    {"RIG_UCX_TLS", VAR_TLS, AT(ucx_tls), 0, "`UCX_TLS`'s", 0, 0, NULL,
     "the UCX transports of librig's rails and messages, in the place of `UCX_TLS`, which is "
     "then left to an MPI that runs on UCX too (MPICH's `ch4:ucx`, Open MPI's `pml ucx`); "
     "taken as `UCX_TLS` is (docs/rails.md, \"Memory\")"},
};

#define NVARS (sizeof vars / sizeof *vars)

static void set_default(const var *v, rig_env *env) {
  void *field = (char *)env + v->at;
  switch (v->kind) {
    case VAR_COUNT:
      *(unsigned *)field = (unsigned)v->fallback;
      break;
    case VAR_SECONDS:
      *(double *)field = v->fallback;
      break;
    case VAR_FLAG:
      *(bool *)field = v->fallback != 0;
      break;
    case VAR_LIBRARY:
    case VAR_TLS:
      *(char *)field = '\0'; /* empty: the backend's own default */
      break;
    case VAR_LEVEL:
      *(unsigned *)field = (unsigned)v->fallback;
      break;
  }
}

/* Parses s into v's field of env, or says why not ("not a count"). */
static bool parse(const var *v, const char *s, rig_env *env, char *why, size_t size) {
  void *field = (char *)env + v->at;
  char *end;
  errno = 0;
  switch (v->kind) {
    case VAR_COUNT: {
      long long n = strtoll(s, &end, 10);
      if (!*s || *end || errno || n < 0) return snprintf(why, size, "not a count"), false;
      if (n < v->lo || n > v->hi)
        return snprintf(why, size, "outside %.0f..%.0f", v->lo, v->hi), false;
      *(unsigned *)field = (unsigned)n;
      return true;
    }
    case VAR_SECONDS: {
      double x = strtod(s, &end);
      if (!*s || *end || errno || !isfinite(x))
        return snprintf(why, size, "not a number of seconds"), false;
      if (x < v->lo) return snprintf(why, size, "below %g s, %s", v->lo, v->lo_why), false;
      if (x > v->hi) return snprintf(why, size, "above %g s", v->hi), false;
      *(double *)field = x;
      return true;
    }
    case VAR_FLAG:
      if (!((s[0] == '0' || s[0] == '1') && !s[1]))
        return snprintf(why, size, "neither 0 nor 1"), false;
      *(bool *)field = s[0] == '1';
      return true;
    case VAR_LIBRARY:
      if (strlen(s) >= RIG_ENV_PATH_MAX)
        return snprintf(why, size, "longer than %d bytes", RIG_ENV_PATH_MAX - 1), false;
      memcpy(field, s, strlen(s) + 1);
      return true;
    case VAR_TLS:
      if (strlen(s) >= RIG_ENV_TLS_MAX)
        return snprintf(why, size, "longer than %d bytes", RIG_ENV_TLS_MAX - 1), false;
      memcpy(field, s, strlen(s) + 1);
      return true;
    case VAR_LEVEL:
      for (unsigned l = RIG_LOG_ERROR; l <= RIG_LOG_DEBUG; l++)
        if (strcmp(s, rig_log_level_name((rig_log_level)l)) == 0) {
          *(unsigned *)field = l;
          return true;
        }
      return snprintf(why, size, "not error, warn, info or debug"), false;
  }
  return false;
}

rig_status rig_env_read(const char *(*lookup)(const char *name), rig_env *env, rig_error *err) {
  rig_status st = RIG_OK;
  for (size_t i = 0; i < NVARS; i++) {
    const var *v = &vars[i];
    set_default(v, env);
    const char *s = lookup(v->name);
    char why[96];
    if (!s || parse(v, s, env, why, sizeof why)) continue;
    /* Keeps the first invalid variable's message: "RIG_WORKERS=abc: not a count". */
    if (st == RIG_OK) st = rig_error_set(err, RIG_EINVAL, "%s=%.200s: %s", v->name, s, why);
    set_default(v, env);
  }
  return st;
}

/* The values a variable may take, as the doc's table says them. */
static void valid_text(const var *v, char *out, size_t size) {
  switch (v->kind) {
    case VAR_COUNT:
      snprintf(out, size, "a count, %.0f to %.0f", v->lo, v->hi);
      break;
    case VAR_SECONDS:
      snprintf(out, size, "a number of seconds, at least %g (%s), at most %g", v->lo, v->lo_why,
               v->hi);
      break;
    case VAR_FLAG:
      snprintf(out, size, "`0` or `1`");
      break;
    case VAR_LIBRARY:
      snprintf(out, size,
               "a library's file name or path, as `dlopen` takes it, at most %d bytes; empty: "
               "the default",
               RIG_ENV_PATH_MAX - 1);
      break;
    case VAR_LEVEL:
      snprintf(out, size, "`error`, `warn`, `info` or `debug`");
      break;
    case VAR_TLS:
      snprintf(out, size,
               "a list as `UCX_TLS` takes it, without `sysv`, at most %d bytes; empty: "
               "`UCX_TLS`'s",
               RIG_ENV_TLS_MAX - 1);
      break;
  }
}

void rig_env_markdown(FILE *f) {
  fputs("| variable | what | default | valid values |\n|---|---|---|---|\n", f);
  for (size_t i = 0; i < NVARS; i++) {
    const var *v = &vars[i];
    char valid[160];
    valid_text(v, valid, sizeof valid);
    fprintf(f, "| `%s` | %s | ", v->name, v->what);
    if (v->fallback_text)
      fputs(v->fallback_text, f);
    else
      fprintf(f, "%g", v->fallback);
    fprintf(f, " | %s |\n", valid);
  }
}

static rig_env env;
static rig_error first; /* the first invalid variable; code RIG_OK if none */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *from_environ(const char *name) {
  return getenv(name);
}

static void read_all(void) {
  rig_env_read(from_environ, &env, &first);
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
