/* The job's root cause and its close (failure.h). */
#include "failure.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/env.h"
#include "job.h"

/* The kinds a cause may stand for; anything else (a frame from the wire)
 * is a failure of the job. */
static rig_status known(rig_status code) {
  return code == RIG_EINVAL || code == RIG_EMALFORMED || code == RIG_EREFUSED ||
                 code == RIG_ENOMEM || code == RIG_ESYS || code == RIG_ELOST
             ? code
             : RIG_EJOB;
}

void rig_job_fail_code(rig_job *job, bool tell, rig_status code, const char *cause) {
  /* A loss seen just after this process was stopped past the bound is
   * the stop's doing: the peers took this machine for gone. */
  char own[RIG_ERROR_MESSAGE_MAX];
  bool stopped = rig_ctl_stalled(&job->c, own, sizeof own);
  if (stopped) {
    cause = own;
    code = RIG_EJOB;
  }
  pthread_mutex_lock(&job->lock);
  bool first = !atomic_load(&job->failed) && !job->cause_set;
  if (first) {
    snprintf(job->cause, sizeof job->cause, "%s", cause);
    job->cause_code = known(code);
    job->cause_set = true;
    job->stopped = stopped;
  }
  pthread_mutex_unlock(&job->lock);
  if (!first) return;
  /* Told before anyone learns of it here: a rank that then leaves the job
   * stops its control thread only after these frames are sent. */
  if (tell) {
    frame fail = {.h = {.kind = F_FAIL, .status = (int32_t)job->cause_code}};
    for (int r = 0; r < job->size; r++)
      if (r != job->rank && (job->rank == 0 || r == 0))
        rig_ctl_send(&job->c, r, &fail, job->cause, strlen(job->cause), NULL);
  }
  pthread_mutex_lock(&job->lock);
  atomic_store(&job->failed, true);
  pthread_cond_broadcast(&job->changed);
  void (*user)(void *) = job->user_on_fail;
  void *user_ctx = job->user_on_fail_ctx;
  pthread_mutex_unlock(&job->lock);
  /* No program or host wait on a rail's count blocks past the failure. */
  rig_rails_raise_all(job->cause);
  if (job->on_fail) job->on_fail(job);
  if (user) user(user_ctx);
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

rig_status rig_job_cause(const rig_job *job, rig_error *why) {
  if (!atomic_load(&job->failed)) return RIG_OK;
  if (why) rig_error_set(why, job->cause_code, "%s", job->cause);
  return job->cause_code;
}

bool rig_job_failed(const rig_job *job, rig_error *why) {
  if (!atomic_load(&job->failed)) return false;
  if (why) rig_error_set(why, RIG_EJOB, "%s", job->cause);
  return true;
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
  bool stopped = job->cause_set && job->stopped;
  if (stopped && why) rig_error_set(why, RIG_EJOB, "%s", job->cause);
  pthread_mutex_unlock(&job->lock);
  return stopped;
}

rig_status rig_job_error(rig_job *job, rig_error *err) {
  return rig_error_set(err, RIG_EJOB, "%s", job->cause);
}

void rig_job_mark_closed(rig_job *job) {
  atomic_store(&job->as_agent.closed_ns, (int64_t)(rig_now_s() * 1e9));
  atomic_store(&job->closing, true);
  pthread_mutex_lock(&job->lock);
  job->as_agent.closed = true;
  pthread_cond_broadcast(&job->changed);
  pthread_mutex_unlock(&job->lock);
}

bool rig_job_wait_end(rig_job *job) {
  pthread_mutex_lock(&job->lock);
  while (!job->as_agent.closed && !atomic_load(&job->failed))
    pthread_cond_wait(&job->changed, &job->lock);
  pthread_mutex_unlock(&job->lock);
  return atomic_load(&job->failed);
}

void rig_job_on_failure(rig_job *job, void (*fn)(void *ctx), void *ctx) {
  pthread_mutex_lock(&job->lock);
  job->user_on_fail = fn;
  job->user_on_fail_ctx = ctx;
  bool now = atomic_load(&job->failed) && fn;
  pthread_mutex_unlock(&job->lock);
  if (now) fn(ctx);
}
