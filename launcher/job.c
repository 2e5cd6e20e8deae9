/* The job (docs/jobs.md "The job"): its start (bootstrap.h), which makes
 * the proxies on the controller and the agent elsewhere; the routing of
 * the frames the control thread takes; serving and closing. The files of
 * the job call one way (docs/internals.md "The job layer"): this one is
 * the top. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "base/env.h"
#include "bootstrap.h"
#include "express.h"
#include "express_messages.h"
#include "failure.h"
#include "far_copy.h"
#include "job_state.h"
#include "jobs.h"
#include "machine.h"
#include "proxy.h"
#include "told.h"

/* ---- routing ------------------------------------------------------------------------ */

/* A frame the control thread took (never a beat or a goodbye). */
static void deliver(rig_job *job, int src, const frame *f, const unsigned char *payload) {
  const frame_header *h = &f->h;
  if (h->kind == F_FAIL && h->payload == 0) {
    /* An agent's word that it has no cause of its own (told.c). */
    pthread_mutex_lock(&job->lock);
    rig_job_said(job, src, NULL);
    pthread_mutex_unlock(&job->lock);
  } else if (h->kind == F_FAIL) {
    char cause[RIG_ERROR_MESSAGE_MAX];
    snprintf(cause, sizeof cause, "%.*s", (int)h->payload, (const char *)payload);
    rig_job_fail_from(job, src, h->value, (rig_status)h->status, cause);
  } else {
    job->role->frame(job, src, f, payload);
  }
}

/* The controller's frames: answers to its requests and its proxies'
 * reports. */
static void controller_frame(rig_job *job, int src, const frame *f, const unsigned char *payload) {
  const frame_header *h = &f->h;
  if (h->kind == F_REPLY) {
    /* A copy out's bytes landed: its point is reached (an agent reporting
     * by shared memory waits for this before it reports later work). */
    uint64_t moved = rig_request_answer(job, src, f, payload);
    if (moved) rig_proxy_done(job, src, h->device, moved);
  } else if (h->kind == F_DONE) {
    rig_proxy_done(job, src, h->device, h->value);
  }
}

/* An agent's frames: the controller's work and requests, for its agent. */
static void agent_frame(rig_job *job, int src, const frame *f, const unsigned char *payload) {
  (void)src; /* only the controller talks to an agent (rig_ctl_peer) */
  rig_agent_frame(job->as_agent->agent, f, payload);
}

/* An agent awaits no report: its work comes as the controller's frames. */
static bool agent_busy(rig_job *job) {
  (void)job;
  return false;
}

static void knock(rig_job *job, int dest) {
  if (job->knocks) rig_express_msg_knock(job->knocks, dest);
}

/* Whether each peer of the control thread knocks (rig_ctl_peer). */
static bool knocked_by_all(rig_job *job) {
  if (!job->knocks || job->size < 2) return false;
  for (int r = 0; r < job->size; r++)
    if (rig_ctl_peer(&job->c, r) && !rig_express_msg_knocks(job->knocks, r)) return false;
  return true;
}

/* ---- starting ------------------------------------------------------------------------ */

/* Jobs an agent's thread is still inside work of (a kernel that does not
 * end) when the job failed: kept for it on purpose, never freed. */
static rig_job *abandoned_jobs;
static pthread_mutex_t abandoned_lock = PTHREAD_MUTEX_INITIALIZER;

/* How long a failed job's close waits for an agent's threads to leave
 * their work: work that is over leaves at once; a kernel that does not
 * end is not waited for (docs/jobs.md, "Failure"). */
#define AGENT_GRACE_S 0.5

static void free_job(rig_job *job) {
  /* The job's messages and rails stop before what they reach goes (a late
   * loss names a machine by its label): the controller's express lives
   * with its proxies (their link), an agent's in the job. */
  struct job_controller *ctrl = job->as_controller;
  struct job_agent *ag = job->as_agent;
  rig_express_msg_forget(ctrl && ctrl->link ? ctrl->link->express : NULL);
  rig_proxies_free(job);
  rig_requests_free(job);
  bool failed = atomic_load(&job->failed);
  if (ag && ag->agent && failed && !rig_agent_free_within(ag->agent, AGENT_GRACE_S)) {
    pthread_mutex_lock(&abandoned_lock);
    job->abandoned_next = abandoned_jobs;
    abandoned_jobs = job;
    pthread_mutex_unlock(&abandoned_lock);
    return;
  }
  if (ag && ag->agent && !failed) rig_agent_free(ag->agent);
  rig_express_msg_forget(job->express);
  if (job->express) rig_far_free(job->express);
  rig_express_free(job->express);
  rig_job_rails_close(job);
  rig_tree_free(job);
  /* No part of it is reached now (each left as it went). */
  rig_jobs_remove(job);
  for (int r = 0; job->machines && r < job->size; r++) free(job->machines[r].devices);
  free(job->labels);
  for (int r = 0; job->devices && r < job->size; r++) free(job->devices[r]);
  for (int r = 0; ctrl && ctrl->proxies && r < job->size; r++) free(ctrl->proxies[r]);
  free(job->machines);
  free(job->devices);
  if (ctrl) {
    free(ctrl->proxies);
    free(ctrl->said);
  }
  free(ctrl);
  free(ag);
  pthread_mutex_destroy(&job->lock);
  pthread_cond_destroy(&job->changed);
  free(job);
}

static rig_job *new_job(rig_error *err) {
  rig_job *job = calloc(1, sizeof *job);
  if (!job) {
    rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
    return NULL;
  }
  pthread_mutex_init(&job->lock, NULL);
  pthread_cond_init(&job->changed, NULL);
  rig_job_rails_init(job);
  job->c.comm = MPI_COMM_NULL;
  job->tree.comm = MPI_COMM_NULL;
  job->c.failed = &job->failed;
  /* busy is the role's, set with it (rig_job_start). */
  job->c.hooks = (ctl_hooks){job, deliver, NULL, rig_job_fail_hook, knock, rig_job_bye};
  return job;
}

/* The controller's part of the start: a proxy of every agent's devices,
 * lost when the job fails. */
static rig_status controller_start(rig_job *job, rig_error *err) {
  job->as_controller->on_fail = rig_proxies_lose;
  rig_status st = RIG_OK;
  for (int r = 1; st == RIG_OK && r < job->size; r++) st = rig_proxies_make(job, r, err);
  return st;
}

/* An agent's: its agent, which serves the controller's frames. */
static rig_status agent_start(rig_job *job, rig_error *err) {
  return rig_agent_create(job, &job->as_agent->agent, err);
}

static const struct job_role controller_role, agent_role;

/* Every machine described and gathered, the express exchange, then the
 * role's part (the proxies or the agent), and the control thread. */
static rig_status start_parts(rig_job *job, rig_error *err) {
  job->machines = calloc((size_t)job->size, sizeof *job->machines);
  job->devices = calloc((size_t)job->size, sizeof *job->devices);
  struct job_controller *ctrl = job->as_controller;
  if (ctrl) ctrl->proxies = calloc((size_t)job->size, sizeof *ctrl->proxies);
  rig_status st = job->machines && job->devices && (!ctrl || ctrl->proxies)
                      ? RIG_OK
                      : rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  if (st == RIG_OK)
    st = rig_machine_describe(&job->machines[job->rank], job->rank, &job->devices[job->rank], err);
  /* Found by its messages and its chores before any part listens; a
   * failure here is told by the gather, as every rank's is. */
  if (st == RIG_OK) st = rig_jobs_add(job, err);
  rig_error e;
  st = rig_first_failure(st, rig_bootstrap_gather(job, st == RIG_OK, &e), &e, err);
  if (!job->start_pending)
    st = rig_first_failure(st, rig_bootstrap_labels(job, st == RIG_OK, &e), &e, err);
  /* Like the gather, with every rank whatever failed (then by frames). */
  if (!job->start_pending)
    st = rig_first_failure(st, rig_bootstrap_express(job, st == RIG_OK, &e), &e, err);
  /* The tree's communicator, whatever failed (collective). */
  if (!job->start_pending)
    st = rig_first_failure(st, rig_tree_start(job, &job->start_pending, &e), &e, err);
  if (st == RIG_OK) st = job->role->start(job, err);
  job->c.labels = (const char(*)[RIG_JOB_LABEL])job->labels;
  job->knocks = ctrl && ctrl->link ? ctrl->link->express : job->express;
  job->c.knocked_by_all = knocked_by_all(job);
  if (st == RIG_OK) st = rig_ctl_start(&job->c, err);
  return st;
}

rig_status rig_job_start(MPI_Comm comm, rig_job **out, rig_error *err) {
  rig_status st = rig_bootstrap_check(err);
  if (st != RIG_OK) return st;
  rig_job *job = new_job(err);
  if (!job) return RIG_ENOMEM;
  bool pending = false;
  st = rig_bootstrap_comm(job, comm, &pending, err);
  /* A collective still pending keeps the job's memory and communicator. */
  if (st != RIG_OK && pending) return st;
  if (st == RIG_OK) {
    /* The role's behaviour goes with the role's state (bootstrap.c), before
     * anything that may fail the job. */
    job->role = job->as_controller ? &controller_role : &agent_role;
    job->c.hooks.busy = job->role->busy;
    st = start_parts(job, err);
  }
  if (st != RIG_OK && job->start_pending) return st;
  if (st != RIG_OK) {
    if (job->c.comm != MPI_COMM_NULL) st = rig_bootstrap_free_comm(job, st, err);
    free_job(job);
    return st;
  }
  *out = job;
  return RIG_OK;
}

double rig_job_silence(void) {
  return rig_env_get()->job_silence;
}

int rig_job_rank(const rig_job *job) {
  return job->rank;
}

size_t rig_job_machines(const rig_job *job) {
  return (size_t)job->size;
}

const rig_machine *rig_job_machine(const rig_job *job, size_t m) {
  if (m >= (size_t)job->size) return NULL;
  if (job->as_agent && (int)m != job->rank) return NULL; /* an agent knows its own */
  return &job->machines[m];
}

rig_device *rig_job_device(rig_job *job, size_t machine, size_t index) {
  const rig_machine *m = rig_job_machine(job, machine);
  if (!m || index >= m->ndevices || !job->devices[machine]) return NULL;
  return job->devices[machine][index];
}

rig_device *rig_job_device_named(rig_job *job, size_t machine, const char *name) {
  const rig_machine *m = rig_job_machine(job, machine);
  for (size_t i = 0; m && i < m->ndevices; i++)
    if (strcmp(m->devices[i].name, name) == 0) return rig_job_device(job, machine, i);
  return NULL;
}

/* ---- serving and closing ------------------------------------------------------- */

rig_status rig_job_serve(rig_job *job, rig_error *err) {
  return job->role->serve(job, err);
}

static rig_status controller_serve(rig_job *job, rig_error *err) {
  (void)job;
  return rig_error_set(err, RIG_EINVAL, "the controller serves no one: rig_job_serve on rank 0");
}

static rig_status agent_serve(rig_job *job, rig_error *err) {
  return rig_job_wait_end(job) ? rig_job_error(job, err) : RIG_OK;
}

/* CLOSE to every agent at once, then each answer awaited: an agent that
 * closed early waits for the controller's goodbye only as long as the
 * slowest agent takes, not as long as all of them one after another. */
static void close_agents(rig_job *job, rig_error *err) {
  request **posted = calloc((size_t)job->size, sizeof *posted);
  for (int r = 1; r < job->size && !atomic_load(&job->failed); r++) {
    frame req = {.h.kind = F_CLOSE};
    request *reply = NULL;
    if (posted) {
      if (rig_request_post(job, r, &req, NULL, 0, &posted[r], err) != RIG_OK) break;
    } else if (rig_request(job, r, &req, NULL, 0, &reply, err) == RIG_OK) {
      rig_request_free(reply); /* out of memory: one after another */
    }
  }
  for (int r = 1; posted && r < job->size; r++) {
    request *reply = NULL;
    if (posted[r] && rig_request_await(job, posted[r], &reply, err) == RIG_OK)
      rig_request_free(reply);
  }
  free(posted);
}

/* The controller's close: every agent closed after its work. */
static rig_status controller_close(rig_job *job, rig_error *err) {
  /* CLOSE goes after every frame queued before it: each agent answers
   * once its earlier work is done. Work handed over by shared memory is
   * waited for here first (a wait ends when the job fails). */
  rig_proxies_drain(job, -1);
  close_agents(job, err);
  if (atomic_load(&job->failed)) return rig_job_error(job, err);
  /* Nothing more goes to the agents' proxies. */
  pthread_mutex_lock(&job->lock);
  snprintf(job->failure.cause, sizeof job->failure.cause, "the job is closed");
  pthread_mutex_unlock(&job->lock);
  rig_proxies_lose(job);
  return RIG_OK;
}

/* An agent's close: after the controller's, or the job's failure. */
static rig_status agent_close(rig_job *job, rig_error *err) {
  if (atomic_load(&job->failed)) return rig_job_error(job, err);
  if (atomic_load(&job->closing)) return RIG_OK;
  /* An agent leaving before the controller closed the job would leave
   * the others waiting for it in a run: its leaving is the job's
   * failure, told before its goodbye. */
  rig_job_fail(job, "%s: left the job (rig_job_close) before the controller closed it",
               rig_job_label(job, job->rank));
  return rig_job_error(job, err);
}

static const struct job_role controller_role = {
    .frame = controller_frame,
    .start = controller_start,
    .serve = controller_serve,
    .close = controller_close,
    .busy = rig_proxies_busy,
    .took = rig_job_took_controller,
    .tell = rig_job_tell_agents,
    .relays = true, /* it tells every agent; an agent heard it from there */
    .bye = rig_job_bye_controller,
    .await_told = rig_job_await_told_controller,
};
static const struct job_role agent_role = {
    .frame = agent_frame,
    .start = agent_start,
    .serve = agent_serve,
    .close = agent_close,
    .busy = agent_busy,
    .took = rig_job_took_agent,
    .tell = rig_job_tell_controller,
    .relays = false,
    .bye = rig_job_bye_agent,
    .await_told = rig_job_await_told_agent,
};

rig_status rig_job_close(rig_job *job, rig_error *err) {
  /* Rails first: their ends drop together, before the agents close (an
   * agent's ends left by a failure are dropped here on its side). */
  rig_job_rails_close(job);
  rig_job_rails_init(job);
  rig_status st = job->role->close(job, err);
  atomic_store(&job->closing, true);
  /* A communicator with frames on their way must not be freed: its
   * context could go to a later one, and them with it. */
  ctl_end end = rig_ctl_stop(&job->c);
  if (end == CTL_STUCK) {
    /* The control thread is still in MPI and reaches the job through its
     * hooks: the job is left whole, on the abandoned list, not freed. */
    rig_job_fail(job,
                 "%s: the job's control thread did not end within %.0f s of its close: a "
                 "call into MPI did not return (a peer gone)",
                 rig_job_label(job, job->rank), rig_env_get()->job_silence + RIG_CTL_STOP_MARGIN_S);
    if (st == RIG_OK) st = rig_job_error(job, err);
    pthread_mutex_lock(&abandoned_lock);
    job->abandoned_next = abandoned_jobs;
    abandoned_jobs = job;
    pthread_mutex_unlock(&abandoned_lock);
    return st;
  }
  if (end == CTL_IDLE) st = rig_bootstrap_free_comm(job, st, err);
  free_job(job);
  return st;
}
