/* A failure told once (told.h): the controller tells the root cause for
 * every machine, naming together the machines that said the same; an
 * agent leaves silent once the controller took the cause and said
 * goodbye, and tells it only when the controller is out of reach. */
#include "told.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/env.h"
#include "failure.h"
#include "job_state.h"

/* How long an agent waits for the controller's goodbye at least: longer
 * than the controller waits for the words (each agent that can be reached
 * answers at once, its own cause or that it has none). */
#define TOLD_AT_LEAST_S 4.0

/* How long the controller's goodbye may take to go out. */
#define GOODBYE_S 1.0

void rig_job_bye(rig_job *job, int src) {
  if (!atomic_load(&job->failed)) return; /* a close that went well */
  pthread_mutex_lock(&job->lock);
  job->role->bye(job, src);
  pthread_cond_broadcast(&job->changed);
  pthread_mutex_unlock(&job->lock);
}

void rig_job_bye_controller(rig_job *job, int src) {
  rig_job_said(job, src, NULL); /* its record */
}

void rig_job_bye_agent(rig_job *job, int src) {
  if (src == RIG_JOB_CONTROLLER) job->as_agent->bye_from_controller = true;
}

static void nap_ms(void) {
  struct timespec ms = {0, 1000000};
  nanosleep(&ms, NULL);
}

/* ---- the controller ------------------------------------------------------------- */

/* Where machine m's label stands in text, followed by ':' (so that
 * "machine 1" is not found in "machine 12: "): its offset, or -1. */
static long label_at(const rig_job *job, int m, const char *text) {
  const char *label = rig_job_label(job, m);
  size_t n = strlen(label);
  for (const char *at = strstr(text, label); at; at = strstr(at + 1, label))
    if (at[n] == ':') return at - text;
  return -1;
}

/* Whether machine m said what the root said, but for its own label. */
static bool alike(const rig_job *job, int root, long root_at, int m) {
  const char *a = job->failure.cause, *b = job->as_controller->said[m].text;
  long at = label_at(job, m, b);
  if (at != root_at || strncmp(a, b, (size_t)at) != 0) return false;
  return strcmp(a + at + strlen(rig_job_label(job, root)),
                b + at + strlen(rig_job_label(job, m))) == 0;
}

/* "0-3,5" into out: the machines alike, as ranges. */
static void ranges(const bool *in, int n, char *out, size_t size) {
  size_t at = 0;
  out[0] = '\0';
  for (int m = 0; m < n; m++) {
    if (!in[m]) continue;
    if (at + 32 >= size) { /* the rest cut, and said to be */
      snprintf(out + at, size - at, ",...");
      return;
    }
    int last = m;
    while (last + 1 < n && in[last + 1]) last++;
    at += (size_t)snprintf(out + at, size - at, at ? ",%d" : "%d", m);
    if (last > m) at += (size_t)snprintf(out + at, size - at, "-%d", last);
    m = last;
  }
}

void rig_job_told_cause(rig_job *job, double seconds, rig_error *out) {
  double until = rig_now_s() + seconds;
  rig_error told, *why = &told;
  /* Only the controller heard what each machine said: an agent tells the
   * cause as it has it (the controller's, failure.c). */
  struct job_controller *ctrl = job->as_controller;
  pthread_mutex_lock(&job->lock);
  while (ctrl && ctrl->nsaid < job->size - 1 && rig_now_s() < until) {
    pthread_mutex_unlock(&job->lock);
    nap_ms();
    pthread_mutex_lock(&job->lock);
  }
  rig_error_set(why, RIG_EJOB, "%s", job->failure.cause);
  int root = job->failure.from;
  long root_at = ctrl && ctrl->said && root >= 0 && root < job->size
                     ? label_at(job, root, job->failure.cause)
                     : -1;
  bool *in = root_at >= 0 ? calloc((size_t)job->size, sizeof *in) : NULL;
  int alikes = 0;
  for (int m = 0; in && m < job->size; m++)
    if (m == root || (ctrl->said[m].text[0] && alike(job, root, root_at, m)))
      in[m] = true, alikes++;
  if (alikes > 1) {
    char list[256];
    ranges(in, job->size, list, sizeof list);
    rig_error_set(why, RIG_EJOB, "%.*smachines %s%s", (int)root_at, job->failure.cause, list,
                  job->failure.cause + root_at + strlen(rig_job_label(job, root)));
  }
  free(in);
  /* Machines named together are the job's cause from now on, on every
   * rank: an agent takes the controller's latest for its own (failure.c),
   * so that each tells the same cause, not its own. */
  bool renamed = ctrl && alikes > 1;
  if (renamed) snprintf(job->failure.cause, sizeof job->failure.cause, "%s", told.message);
  rig_status code = job->failure.code;
  pthread_mutex_unlock(&job->lock);
  if (renamed) {
    frame f = {.h = {.kind = F_FAIL, .status = (int32_t)code}};
    for (int r = 1; r < job->size; r++)
      rig_ctl_send(&job->c, r, &f, told.message, strlen(told.message), NULL);
  }
  if (out) *out = told;
}

void rig_job_goodbye(rig_job *job) {
  rig_ctl_goodbye(&job->c, GOODBYE_S);
}

/* ---- an agent --------------------------------------------------------------------- */

bool rig_job_await_told(rig_job *job) {
  return atomic_load(&job->failed) && job->role->await_told(job);
}

bool rig_job_await_told_controller(rig_job *job) {
  (void)job; /* the controller is told by no one */
  return false;
}

bool rig_job_await_told_agent(rig_job *job) {
  struct job_agent *agent = job->as_agent;
  /* Longer than the controller waits for the words, so that its goodbye
   * can come after it. */
  double bound = rig_env_get()->job_silence;
  double until = rig_now_s() + (bound > TOLD_AT_LEAST_S ? bound : TOLD_AT_LEAST_S);
  pthread_mutex_lock(&job->lock);
  /* Its word to the controller, after its own cause if it had one (the
   * frames go in order): nothing of its own. */
  bool none = !agent->told_own;
  agent->told_own = true;
  pthread_mutex_unlock(&job->lock);
  if (none) {
    frame f = {.h = {.kind = F_FAIL}};
    rig_ctl_send(&job->c, RIG_JOB_CONTROLLER, &f, NULL, 0, NULL);
  }
  pthread_mutex_lock(&job->lock);
  while (!(agent->heard_controller && agent->bye_from_controller) && rig_now_s() < until) {
    pthread_mutex_unlock(&job->lock);
    nap_ms();
    pthread_mutex_lock(&job->lock);
  }
  bool told = agent->heard_controller && agent->bye_from_controller;
  pthread_mutex_unlock(&job->lock);
  return told;
}
