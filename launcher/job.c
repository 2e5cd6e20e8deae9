/* The job: bootstrap (every rank describes its machine, the controller
 * gathers them and makes proxies), the root cause of failure, requests and
 * their replies, serving, and closing. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/env.h"
#include "express.h"
#include "job_internal.h"

static const char *thread_level(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
  }
  return "an unknown level";
}

rig_status rig_mpi_status(int rc, const char *call, rig_error *err) {
  if (rc == MPI_SUCCESS) return RIG_OK;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
    len = snprintf(msg, sizeof msg, "error code %d", rc);
  return rig_error_set(err, RIG_EJOB, "%s failed: %.*s", call, len, msg);
}

/* Waits for a collective of the job's start, within the silence bound: a
 * machine that never joins (stopped, or gone before MPI noticed) fails the
 * start instead of hanging it. A collective left pending is never freed
 * (MPI may still write its buffers): *pending says so, and the caller then
 * keeps the communicator too. */
static rig_status start_wait(MPI_Request *req, const char *call, bool *pending, rig_error *err) {
  double bound = rig_env_get()->job_silence;
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (unsigned polls = 0;; polls++) {
    int done = 0;
    rig_status st = rig_mpi_status(MPI_Test(req, &done, MPI_STATUS_IGNORE), call, err);
    if (st != RIG_OK || done) return st;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double waited = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) * 1e-9;
    if (waited > bound) {
      *pending = true;
      return rig_error_set(err, RIG_EJOB,
                           "the job's start: %s not done after %g s: a machine did not join "
                           "(stopped, or gone)",
                           call, bound);
    }
    /* Polls first (a start takes milliseconds), then naps. */
    struct timespec nap = {0, polls < 1000 ? 10000 : 1000000};
    nanosleep(&nap, NULL);
  }
}

rig_status rig_job_start_wait(MPI_Request *req, const char *call, bool *pending, rig_error *err) {
  return start_wait(req, call, pending, err);
}

/* Keeps the first failure: st if it is one, else s with e's message. */
static rig_status first_failure(rig_status st, rig_status s, const rig_error *e, rig_error *err) {
  if (st != RIG_OK || s == RIG_OK) return st;
  if (err) *err = *e;
  return s;
}

/* ---- failure ------------------------------------------------------------------ */

void rig_job_fail_with(rig_job *job, bool tell, const char *cause) {
  pthread_mutex_lock(&job->lock);
  bool first = !atomic_load(&job->failed) && !job->cause_set;
  if (first) {
    snprintf(job->cause, sizeof job->cause, "%s", cause);
    job->cause_set = true;
  }
  pthread_mutex_unlock(&job->lock);
  if (!first) return;
  /* Told before anyone learns of it here: a rank that then leaves the job
   * stops its control thread only after these frames are sent. */
  if (tell) {
    frame fail = {.h.kind = F_FAIL};
    for (int r = 0; r < job->size; r++)
      if (r != job->rank && (job->rank == 0 || r == 0))
        rig_ctl_send(job, r, &fail, job->cause, strlen(job->cause), NULL);
  }
  pthread_mutex_lock(&job->lock);
  atomic_store(&job->failed, true);
  pthread_cond_broadcast(&job->changed);
  pthread_mutex_unlock(&job->lock);
  /* No program or host wait on a rail's count blocks past the failure. */
  rig_rails_raise_all(job->cause);
  if (job->rank == 0) rig_proxies_lose(job);
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

bool rig_job_failed(const rig_job *job, rig_error *why) {
  if (!atomic_load(&job->failed)) return false;
  if (why) rig_error_set(why, RIG_EJOB, "%s", job->cause);
  return true;
}

rig_status rig_job_error(rig_job *job, rig_error *err) {
  return rig_error_set(err, RIG_EJOB, "%s", job->cause);
}

/* ---- requests ----------------------------------------------------------------- */

static rig_status new_request(rig_job *job, uint64_t id, request **out, rig_error *err) {
  request *r = calloc(1, sizeof *r);
  if (!r) return rig_error_set(err, RIG_ENOMEM, "out of memory for a request");
  r->id = id;
  pthread_mutex_lock(&job->lock);
  r->next = job->requests;
  job->requests = r;
  pthread_mutex_unlock(&job->lock);
  *out = r;
  return RIG_OK;
}

static void unlink_request(rig_job *job, request *r) {
  pthread_mutex_lock(&job->lock);
  for (request **p = &job->requests; *p; p = &(*p)->next)
    if (*p == r) {
      *p = r->next;
      break;
    }
  pthread_mutex_unlock(&job->lock);
}

rig_status rig_request_expect(rig_job *job, uint64_t id, void *into, size_t len, rig_error *err) {
  request *r = NULL;
  rig_status st = new_request(job, id, &r, err);
  if (st == RIG_OK) {
    r->into = into;
    r->into_len = len;
  }
  return st;
}

void rig_request_free(request *r) {
  if (!r) return;
  free(r->payload);
  free(r);
}

void rig_request_answer(rig_job *job, int src, const frame *f, const unsigned char *payload) {
  const frame_header *h = &f->h;
  char cause[RIG_ERROR_MESSAGE_MAX];
  cause[0] = '\0';
  uint64_t moved = 0;
  pthread_mutex_lock(&job->lock);
  request *r = job->requests, **p = &job->requests;
  for (; r && r->id != h->request; p = &r->next, r = r->next) {
  }
  if (r && r->into) {
    /* A copy out: its bytes land before its DONE, which follows; an agent
     * that cannot copy fails the job instead of answering, so any other
     * answer is a broken one. */
    if (h->status == RIG_OK && h->payload == r->into_len) {
      memcpy(r->into, payload, h->payload);
      moved = h->value; /* the copy's value: its bytes are here */
    } else
      snprintf(cause, sizeof cause, "machine %d: a copy out answered with %u bytes of %zu", src,
               h->payload, r->into_len);
    *p = r->next;
    free(r);
  } else if (r) {
    r->payload = malloc(h->payload ? h->payload : 1);
    if (r->payload) {
      memcpy(r->payload, payload, h->payload);
      r->len = h->payload;
      r->status = h->status;
      r->value = h->value;
      r->max_threads = f->reply.max_threads;
      r->arrived_ns = rig_trace_now();
      r->done = true;
    } else {
      /* The waiter wakes on the failure. */
      snprintf(cause, sizeof cause, "out of memory taking a reply");
    }
  }
  pthread_cond_broadcast(&job->changed);
  pthread_mutex_unlock(&job->lock);
  /* An agent reporting by shared memory waits for this before it reports
   * later work (express.h): the copy's point is reached here. */
  if (moved) rig_proxy_done(job, src, h->device, moved);
  if (cause[0]) rig_job_fail_with(job, true, cause);
}

rig_status rig_request_post(rig_job *job, int dest, frame *f, const void *payload, size_t n,
                            request **posted, rig_error *err) {
  if (atomic_load(&job->failed)) return rig_job_error(job, err);
  f->h.request = atomic_fetch_add(&job->next_request, 1) + 1;
  rig_status st = new_request(job, f->h.request, posted, err);
  /* A frame not sent has failed the job: the wait for it ends at once. */
  if (st == RIG_OK) rig_ctl_send(job, dest, f, payload, n, NULL);
  return st;
}

rig_status rig_request_await(rig_job *job, request *r, request **reply, rig_error *err) {
  pthread_mutex_lock(&job->lock);
  while (!r->done && !atomic_load(&job->failed)) pthread_cond_wait(&job->changed, &job->lock);
  bool done = r->done;
  pthread_mutex_unlock(&job->lock);
  unlink_request(job, r);
  if (!done) {
    rig_request_free(r);
    return rig_job_error(job, err);
  }
  if (r->status != RIG_OK) {
    rig_status st =
        rig_error_set(err, (rig_status)r->status, "%.*s", (int)r->len, (const char *)r->payload);
    rig_request_free(r);
    return st;
  }
  *reply = r;
  return RIG_OK;
}

rig_status rig_request(rig_job *job, int dest, frame *f, const void *payload, size_t n,
                       request **reply, rig_error *err) {
  request *r;
  rig_status st = rig_request_post(job, dest, f, payload, n, &r, err);
  return st == RIG_OK ? rig_request_await(job, r, reply, err) : st;
}

/* ---- starting -------------------------------------------------------------------- */

/* The machines' descriptions travel as their fixed-size records, devices
 * after each machine. A rank with none to give (it failed to describe
 * itself) sends 0 bytes, and the controller fails the start. Every rank
 * takes part whatever failed before, so that nobody waits forever; only a
 * controller without room to receive leaves, and its agents then find it
 * silent. */
static rig_status gather(rig_job *job, bool described, rig_error *err) {
  bool root = job->rank == 0;
  rig_status st = RIG_OK;
  rig_error e;
  unsigned char *mine = NULL, *all = NULL;
  int n = 0, *lens = NULL, *offs = NULL;
  if (described) {
    const rig_machine *self = &job->machines[job->rank];
    size_t len = sizeof *self + self->ndevices * sizeof *self->devices;
    mine = malloc(len);
    if (mine) {
      memcpy(mine, self, sizeof *self);
      memcpy(mine + sizeof *self, self->devices, self->ndevices * sizeof *self->devices);
      n = (int)len;
    } else {
      st = rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
    }
  }
  if (root) {
    lens = calloc((size_t)job->size, sizeof *lens);
    offs = calloc((size_t)job->size, sizeof *offs);
    if (!lens || !offs) {
      st =
          first_failure(st, rig_error_set(&e, RIG_ENOMEM, "out of memory starting a job"), &e, err);
      goto out;
    }
  }
  MPI_Request req;
  rig_status s = rig_mpi_status(MPI_Igather(&n, 1, MPI_INT, lens, 1, MPI_INT, 0, job->c.comm, &req),
                                "MPI_Igather", &e);
  if (s == RIG_OK) s = start_wait(&req, "MPI_Igather", &job->start_pending, &e);
  st = first_failure(st, s, &e, err);
  if (s != RIG_OK) goto out;
  if (root) {
    size_t total = 0;
    for (int r = 0; r < job->size; r++) {
      offs[r] = (int)total;
      total += (size_t)lens[r];
    }
    if (!(all = malloc(total ? total : 1))) {
      st =
          first_failure(st, rig_error_set(&e, RIG_ENOMEM, "out of memory starting a job"), &e, err);
      goto out;
    }
  }
  s = rig_mpi_status(
      MPI_Igatherv(mine, n, MPI_BYTE, all, lens, offs, MPI_BYTE, 0, job->c.comm, &req),
      "MPI_Igatherv", &e);
  if (s == RIG_OK) s = start_wait(&req, "MPI_Igatherv", &job->start_pending, &e);
  st = first_failure(st, s, &e, err);
  /* A controller that did not describe itself may have no table to fill. */
  for (int r = 1; root && described && st == RIG_OK && r < job->size; r++) {
    rig_machine *m = &job->machines[r];
    size_t got = (size_t)lens[r];
    if (got < sizeof *m) {
      st = rig_error_set(err, RIG_EJOB, "machine %d could not describe itself", r);
      break;
    }
    memcpy(m, all + offs[r], sizeof *m);
    m->devices = NULL; /* the sender's pointer */
    m->host[sizeof m->host - 1] = m->topology[sizeof m->topology - 1] = '\0';
    if (m->ndevices > (got - sizeof *m) / sizeof *m->devices ||
        got != sizeof *m + m->ndevices * sizeof *m->devices) {
      st = rig_error_set(err, RIG_EJOB, "machine %d: a description of %zu bytes for %zu devices", r,
                         got, m->ndevices);
      m->ndevices = 0;
      break;
    }
    m->devices = calloc(m->ndevices ? m->ndevices : 1, sizeof *m->devices);
    if (!m->devices) {
      st = rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
      m->ndevices = 0;
      break;
    }
    memcpy(m->devices, all + offs[r] + sizeof *m, m->ndevices * sizeof *m->devices);
  }
out:
  /* Buffers MPI may still write stay allocated. */
  if (job->start_pending) return st;
  free(mine);
  free(lens);
  free(offs);
  free(all);
  return st;
}

static void free_job(rig_job *job) {
  rig_proxies_free(job);
  for (request *r = job->requests, *next; r; r = next) {
    next = r->next;
    rig_request_free(r);
  }
  for (int r = 0; job->machines && r < job->size; r++) free(job->machines[r].devices);
  for (int r = 0; job->devices && r < job->size; r++) free(job->devices[r]);
  for (int r = 0; job->proxies && r < job->size; r++) free(job->proxies[r]);
  free(job->machines);
  free(job->devices);
  free(job->proxies);
  if (job->agent) rig_agent_free(job->agent);
  rig_express_free(job->express);
  rig_job_rails_close(job);
  pthread_mutex_destroy(&job->lock);
  pthread_cond_destroy(&job->changed);
  free(job);
}

/* Frees the job's communicator, keeping st if it already failed. */
static rig_status free_comm(rig_job *job, rig_status st, rig_error *err) {
  rig_error e;
  return first_failure(st, rig_mpi_status(MPI_Comm_free(&job->c.comm), "MPI_Comm_free", &e), &e,
                       err);
}

rig_status rig_job_start(MPI_Comm comm, rig_job **out, rig_error *err) {
  int level = MPI_THREAD_SINGLE;
  rig_status st = rig_mpi_status(MPI_Query_thread(&level), "MPI_Query_thread", err);
  if (st != RIG_OK) return st;
  if (level != MPI_THREAD_MULTIPLE)
    return rig_error_set(err, RIG_EJOB,
                         "the job needs MPI_THREAD_MULTIPLE, and MPI granted %s: call "
                         "MPI_Init_thread with MPI_THREAD_MULTIPLE",
                         thread_level(level));
  rig_status env_st = rig_environment_check(err);
  if (env_st != RIG_OK) return env_st;
  rig_job *job = calloc(1, sizeof *job);
  if (!job) return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  pthread_mutex_init(&job->lock, NULL);
  rig_job_rails_init(job);
  pthread_cond_init(&job->changed, NULL);
  MPI_Request req;
  bool pending = false;
  st = rig_mpi_status(MPI_Comm_idup(comm, &job->c.comm, &req), "MPI_Comm_idup", err);
  if (st == RIG_OK) st = start_wait(&req, "MPI_Comm_idup", &pending, err);
  if (st != RIG_OK) {
    if (!pending) free_job(job);
    return st;
  }
  /* The job's failures come back here as codes, not as MPI's abort. */
  st = rig_mpi_status(MPI_Comm_set_errhandler(job->c.comm, MPI_ERRORS_RETURN),
                      "MPI_Comm_set_errhandler", err);
  if (st == RIG_OK)
    st = rig_mpi_status(MPI_Comm_rank(job->c.comm, &job->rank), "MPI_Comm_rank", err);
  if (st == RIG_OK)
    st = rig_mpi_status(MPI_Comm_size(job->c.comm, &job->size), "MPI_Comm_size", err);
  /* An id of this job for its frames: the communicator's context may be
   * one an earlier job freed with frames still on their way. */
  uint64_t id = 0;
  if (st == RIG_OK && job->rank == 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    id = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 16);
    static _Atomic uint64_t serial;
    id += atomic_fetch_add(&serial, 1) * UINT64_C(0x9E3779B97F4A7C15);
  }
  if (st == RIG_OK)
    st = rig_mpi_status(MPI_Ibcast(&id, 1, MPI_UINT64_T, 0, job->c.comm, &req), "MPI_Ibcast", err);
  if (st == RIG_OK) st = start_wait(&req, "MPI_Ibcast", &pending, err);
  if (st != RIG_OK) {
    /* A collective still pending keeps the job's memory and communicator. */
    if (pending) return st;
    st = free_comm(job, st, err);
    free_job(job);
    return st;
  }
  job->c.job_id = id;
  job->machines = calloc((size_t)job->size, sizeof *job->machines);
  job->devices = calloc((size_t)job->size, sizeof *job->devices);
  job->proxies = calloc((size_t)job->size, sizeof *job->proxies);
  st = job->machines && job->devices && job->proxies
           ? RIG_OK
           : rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  if (st == RIG_OK)
    st = rig_machine_describe(&job->machines[job->rank], job->rank, &job->devices[job->rank], err);
  rig_error e;
  st = first_failure(st, gather(job, st == RIG_OK, &e), &e, err);
  /* Like the gather, with every rank whatever failed (then by frames). */
  if (!job->start_pending)
    st = first_failure(st, rig_express_start(job, st == RIG_OK, &e), &e, err);
  for (int r = 1; st == RIG_OK && job->rank == 0 && r < job->size; r++)
    st = rig_proxies_make(job, r, err);
  if (st == RIG_OK && job->rank != 0) st = rig_agent_create(job, &job->agent, err);
  if (st == RIG_OK) st = rig_ctl_start(job, err);
  if (st != RIG_OK && job->start_pending) return st;
  if (st != RIG_OK) {
    st = free_comm(job, st, err);
    free_job(job);
    return st;
  }
  *out = job;
  return RIG_OK;
}

int rig_job_rank(const rig_job *job) {
  return job->rank;
}

size_t rig_job_machines(const rig_job *job) {
  return (size_t)job->size;
}

const rig_machine *rig_job_machine(const rig_job *job, size_t m) {
  if (m >= (size_t)job->size) return NULL;
  if (job->rank != 0 && (int)m != job->rank) return NULL;
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
  if (job->rank == 0)
    return rig_error_set(err, RIG_EINVAL, "the controller serves no one: rig_job_serve on rank 0");
  pthread_mutex_lock(&job->lock);
  while (!job->closed && !atomic_load(&job->failed)) pthread_cond_wait(&job->changed, &job->lock);
  pthread_mutex_unlock(&job->lock);
  return atomic_load(&job->failed) ? rig_job_error(job, err) : RIG_OK;
}

rig_status rig_job_close(rig_job *job, rig_error *err) {
  rig_status st = RIG_OK;
  /* Rails first: their ends drop together, before the agents close (an
   * agent's ends left by a failure are dropped here on its side). */
  rig_job_rails_close(job);
  rig_job_rails_init(job);
  if (job->rank == 0) {
    /* CLOSE goes after every frame queued before it: each agent answers
     * once its earlier work is done. Work handed over by shared memory is
     * waited for here first (a wait ends when the job fails). */
    rig_express_drain(job);
    for (int r = 1; r < job->size && !atomic_load(&job->failed); r++) {
      frame req = {.h.kind = F_CLOSE};
      request *reply = NULL;
      if (rig_request(job, r, &req, NULL, 0, &reply, err) == RIG_OK) rig_request_free(reply);
    }
    if (atomic_load(&job->failed))
      st = rig_job_error(job, err);
    else {
      /* Nothing more goes to the agents' proxies. */
      pthread_mutex_lock(&job->lock);
      snprintf(job->cause, sizeof job->cause, "the job is closed");
      pthread_mutex_unlock(&job->lock);
      rig_proxies_lose(job);
    }
  } else if (atomic_load(&job->failed)) {
    st = rig_job_error(job, err);
  }
  /* A communicator with frames on their way must not be freed: its
   * context could go to a later one, and them with it. */
  if (rig_ctl_stop(job)) st = free_comm(job, st, err);
  free_job(job);
  return st;
}
