/* The job's root cause and its close (failure.h). */
#include "failure.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/env.h"
#include "job_state.h"

/* The kinds a cause may stand for; anything else (a frame from the wire)
 * is a failure of the job. */
static rig_status known(rig_status code) {
  return code == RIG_EINVAL || code == RIG_EMALFORMED || code == RIG_EREFUSED ||
                 code == RIG_ENOMEM || code == RIG_ESYS || code == RIG_ELOST
             ? code
             : RIG_EJOB;
}

void rig_job_said(rig_job *job, int from, const char *cause) {
  struct job_controller *ctrl = job->as_controller;
  if (!ctrl || from < 0 || from >= job->size) return;
  if (!ctrl->said && !(ctrl->said = calloc((size_t)job->size, sizeof *ctrl->said))) return;
  struct job_said *w = &ctrl->said[from];
  if (!w->answered && from != RIG_JOB_CONTROLLER) ctrl->nsaid++; /* the agents that answered */
  w->answered = true;
  if (cause && !w->text[0]) snprintf(w->text, sizeof w->text, "%s", cause);
}

/* The job whose run this thread runs, if any, and that run plus one. */
static _Thread_local const rig_job *running;
static _Thread_local uint64_t running_run;

void rig_job_running(const rig_job *job, uint64_t run) {
  running = job;
  running_run = job ? run + 1 : 0;
}

/* The failure with cause from machine `from` (this one's own when tell),
 * in its run `run` - 1 (0: none known; this machine's own: the run going
 * on here, if any). */
static void fail(rig_job *job, bool tell, int from, uint64_t run, rig_status code,
                 const char *cause) {
  /* A loss seen just after this process was stopped past the bound is
   * the stop's doing: the peers took this machine for gone. */
  char own[RIG_ERROR_MESSAGE_MAX];
  bool stopped = rig_ctl_stalled(&job->c, own, sizeof own);
  if (stopped) {
    cause = own;
    code = RIG_EJOB;
    from = job->rank;
  }
  if (from == job->rank) run = running == job ? running_run : 0;
  /* An empty F_FAIL is an agent's word that it has none (told.c). */
  if (!cause[0]) cause = "a failure without a cause";
  pthread_mutex_lock(&job->lock);
  bool first = !atomic_load(&job->failed) && !job->failure.set;
  if (first) {
    snprintf(job->failure.cause, sizeof job->failure.cause, "%s", cause);
    job->failure.code = known(code);
    job->failure.set = true;
    job->failure.from = from;
    job->failure.run = run;
    job->failure.stopped = stopped;
  }
  bool tells = job->role->took(job, first, tell, from, run, code, cause);
  pthread_mutex_unlock(&job->lock);
  /* Told before anyone learns of it here: a rank that then leaves the job
   * stops its control thread only after these frames are sent. */
  if (tells) job->role->tell(job, known(code), run, cause);
  if (!first) return;
  pthread_mutex_lock(&job->lock);
  atomic_store(&job->failed, true);
  pthread_cond_broadcast(&job->changed);
  void (*user)(void *) = job->failure.user;
  void *user_ctx = job->failure.user_ctx;
  pthread_mutex_unlock(&job->lock);
  /* No program or host wait on a rail's count blocks past the failure. */
  rig_rails_raise_all(job->failure.cause);
  if (job->as_controller && job->as_controller->on_fail) job->as_controller->on_fail(job);
  if (user) user(user_ctx);
}

bool rig_job_took_controller(rig_job *job, bool first, bool tell, int from, uint64_t run,
                             rig_status code, const char *cause) {
  (void)run, (void)code;
  rig_job_said(job, from, cause); /* its record */
  return first && tell;
}

void rig_job_tell_agents(rig_job *job, rig_status code, uint64_t run, const char *cause) {
  (void)code, (void)run, (void)cause; /* the job's cause, as it was taken */
  frame f = {
      .h = {.kind = F_FAIL, .status = (int32_t)job->failure.code, .value = job->failure.run}};
  for (int r = 1; r < job->size; r++)
    rig_ctl_send(&job->c, r, &f, job->failure.cause, strlen(job->failure.cause), NULL);
}

bool rig_job_took_agent(rig_job *job, bool first, bool tell, int from, uint64_t run,
                        rig_status code, const char *cause) {
  /* An agent takes the controller's cause for the job's, which every rank
   * then tells alike, and sends its own there once, even when it came
   * second: machines that failed alike are told together. */
  struct job_agent *agent = job->as_agent;
  if (from == RIG_JOB_CONTROLLER) {
    agent->heard_controller = true;
    if (!first && !job->failure.stopped) {
      snprintf(job->failure.cause, sizeof job->failure.cause, "%s", cause);
      job->failure.code = known(code);
      job->failure.from = from;
      job->failure.run = run;
    }
    pthread_cond_broadcast(&job->changed);
  }
  bool send_own = tell && !agent->told_own;
  agent->told_own |= send_own;
  return send_own;
}

void rig_job_tell_controller(rig_job *job, rig_status code, uint64_t run, const char *cause) {
  frame f = {.h = {.kind = F_FAIL, .status = (int32_t)code, .value = run}};
  rig_ctl_send(&job->c, RIG_JOB_CONTROLLER, &f, cause, strlen(cause), NULL);
}

void rig_job_fail_code(rig_job *job, bool tell, rig_status code, const char *cause) {
  fail(job, tell, job->rank, 0, code, cause);
}

void rig_job_fail_from(rig_job *job, int from, uint64_t run, rig_status code, const char *cause) {
  /* The controller tells every agent; an agent heard it from there. */
  fail(job, job->role->relays, from, run, code, cause);
}

void rig_job_fail_with(rig_job *job, bool tell, const char *cause) {
  rig_job_fail_code(job, tell, RIG_EJOB, cause);
}

rig_status rig_job_fail_hook(rig_job *job, bool tell, const char *cause, rig_error *err) {
  rig_job_fail_with(job, tell, cause);
  return rig_job_error(job, err);
}

const char *rig_job_label(const rig_job *job, int m) {
  return job->labels && m >= 0 && m < job->size ? job->labels[m] : "a machine";
}

void rig_job_unreached(const rig_job *job, int m_from, int m, rig_error *err) {
  if (!strstr(err->message, "UCX: ")) return;
  /* Room for every part whole: the message is cut to its size at the end. */
  char from[RIG_JOB_LABEL], msg[RIG_ERROR_MESSAGE_MAX + 4 * RIG_JOB_LABEL + 512];
  snprintf(from, sizeof from, "%s", rig_job_label(job, m_from));
  const char *dev = getenv("UCX_NET_DEVICES"), *tls = rig_env_get()->ucx_tls;
  snprintf(msg, sizeof msg,
           "%s (%s to %.*s; UCX_NET_DEVICES%s%.64s names the network device UCX takes between "
           "hosts%s%.64s%s)",
           err->message, from, (int)RIG_JOB_LABEL, rig_job_label(job, m), dev ? "=" : " (unset)",
           dev ? dev : "", tls[0] ? ", RIG_UCX_TLS=" : "", tls,
           dev && strcmp(dev, "lo") == 0 ? ": lo reaches no other host" : "");
  rig_error_set(err, err->code, "%s", msg);
}

void rig_job_fail_here(rig_job *job, const rig_error *why) {
  char cause[RIG_ERROR_MESSAGE_MAX + RIG_JOB_LABEL];
  snprintf(cause, sizeof cause, "%s: %s", rig_job_label(job, job->rank), why->message);
  rig_job_fail_with(job, true, cause);
}

rig_status rig_job_fail(rig_job *job, const char *fmt, ...) {
  char cause[RIG_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cause, sizeof cause, fmt, ap);
  va_end(ap);
  rig_job_fail_with(job, true, cause);
  return RIG_EJOB;
}

rig_status rig_job_fail_as(rig_job *job, rig_status code, const char *fmt, ...) {
  char cause[RIG_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cause, sizeof cause, fmt, ap);
  va_end(ap);
  rig_job_fail_code(job, true, code, cause);
  return RIG_EJOB;
}

/* The cause may change on an agent (the controller's replaces its own):
 * read under the lock. */
static rig_status cause_read(const rig_job *job, rig_error *why) {
  pthread_mutex_t *lock = (pthread_mutex_t *)&job->lock;
  pthread_mutex_lock(lock);
  rig_status code = job->failure.code;
  if (why) rig_error_set(why, code, "%s", job->failure.cause);
  pthread_mutex_unlock(lock);
  return code;
}

rig_status rig_job_cause(const rig_job *job, rig_error *why) {
  if (!atomic_load(&job->failed)) return RIG_OK;
  return cause_read(job, why);
}

bool rig_job_failed(const rig_job *job, rig_error *why) {
  if (!atomic_load(&job->failed)) return false;
  cause_read(job, why);
  if (why) why->code = RIG_EJOB;
  return true;
}

bool rig_job_failed_in_run(const rig_job *job, uint64_t *run) {
  if (!atomic_load(&job->failed)) return false;
  pthread_mutex_t *lock = (pthread_mutex_t *)&job->lock;
  pthread_mutex_lock(lock);
  uint64_t r = job->failure.run;
  pthread_mutex_unlock(lock);
  if (r && run) *run = r - 1;
  return r != 0;
}

bool rig_job_stopped(rig_job *job, rig_error *why) {
  char own[RIG_ERROR_MESSAGE_MAX];
  /* Before the control thread turns again: its stamp is stale. After: the
   * cause it set is the stop. */
  if (rig_ctl_stalled(&job->c, own, sizeof own)) {
    if (why) rig_error_set(why, RIG_EJOB, "%s", own);
    return true;
  }
  pthread_mutex_lock(&job->lock);
  bool stopped = job->failure.set && job->failure.stopped;
  if (stopped && why) rig_error_set(why, RIG_EJOB, "%s", job->failure.cause);
  pthread_mutex_unlock(&job->lock);
  return stopped;
}

rig_status rig_job_error(rig_job *job, rig_error *err) {
  cause_read(job, err);
  if (err) err->code = RIG_EJOB;
  return RIG_EJOB;
}

void rig_job_mark_closed(rig_job *job) {
  atomic_store(&job->as_agent->closed_ns, (int64_t)(rig_now_s() * 1e9));
  atomic_store(&job->closing, true);
  pthread_mutex_lock(&job->lock);
  job->as_agent->closed = true;
  pthread_cond_broadcast(&job->changed);
  pthread_mutex_unlock(&job->lock);
}

bool rig_job_wait_end(rig_job *job) {
  pthread_mutex_lock(&job->lock);
  while (!job->as_agent->closed && !atomic_load(&job->failed))
    pthread_cond_wait(&job->changed, &job->lock);
  pthread_mutex_unlock(&job->lock);
  return atomic_load(&job->failed);
}

void rig_job_on_failure(rig_job *job, void (*fn)(void *ctx), void *ctx) {
  pthread_mutex_lock(&job->lock);
  job->failure.user = fn;
  job->failure.user_ctx = ctx;
  bool now = atomic_load(&job->failed) && fn;
  pthread_mutex_unlock(&job->lock);
  if (now) fn(ctx);
}
