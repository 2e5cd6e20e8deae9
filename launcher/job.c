/* The job: bootstrap (every rank describes its machine, the controller
 * gathers them and makes proxies), the root cause of failure, requests and
 * their replies, serving, and closing. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
        rig_ctl_send(job, r, &fail, job->cause, strlen(job->cause));
  }
  pthread_mutex_lock(&job->lock);
  atomic_store(&job->failed, true);
  pthread_cond_broadcast(&job->changed);
  pthread_mutex_unlock(&job->lock);
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

static request *new_request(rig_job *job, uint64_t id) {
  request *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->id = id;
  pthread_mutex_lock(&job->lock);
  r->next = job->requests;
  job->requests = r;
  pthread_mutex_unlock(&job->lock);
  return r;
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

request *rig_request_expect(rig_job *job, uint64_t id, void *into, size_t len) {
  request *r = new_request(job, id);
  if (r) {
    r->into = into;
    r->into_len = len;
  }
  return r;
}

void rig_request_free(request *r) {
  if (!r) return;
  free(r->payload);
  free(r);
}

void rig_request_answer(rig_job *job, const frame *f, const unsigned char *payload) {
  const frame_header *h = &f->h;
  pthread_mutex_lock(&job->lock);
  request *r = job->requests, **p = &job->requests;
  for (; r && r->id != h->request; p = &r->next, r = r->next) {
  }
  if (r) {
    r->status = h->status;
    r->value = h->value;
    r->max_threads = f->reply.max_threads;
    if (r->into) {
      /* A copy out: its bytes land before its DONE, which follows. */
      if (h->status == RIG_OK && h->payload == r->into_len) memcpy(r->into, payload, h->payload);
      *p = r->next;
      free(r);
    } else {
      r->payload = malloc(h->payload ? h->payload : 1);
      if (r->payload) memcpy(r->payload, payload, h->payload);
      r->len = h->payload;
      r->done = true;
    }
  }
  pthread_cond_broadcast(&job->changed);
  pthread_mutex_unlock(&job->lock);
}

rig_status rig_request(rig_job *job, int dest, frame *f, const void *payload, size_t n,
                       request **reply, rig_error *err) {
  if (atomic_load(&job->failed)) return rig_job_error(job, err);
  f->h.request = atomic_fetch_add(&job->next_request, 1) + 1;
  request *r = new_request(job, f->h.request);
  if (!r) return rig_error_set(err, RIG_ENOMEM, "out of memory for a request");
  rig_ctl_send(job, dest, f, payload, n);
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

/* ---- starting -------------------------------------------------------------------- */

/* The machines' descriptions travel as their fixed-size records, devices
 * after each machine. */
static rig_status gather(rig_job *job, rig_error *err) {
  rig_machine *self = &job->machines[job->rank];
  size_t len = sizeof *self + self->ndevices * sizeof *self->devices;
  unsigned char *mine = malloc(len);
  if (!mine) return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  memcpy(mine, self, sizeof *self);
  memcpy(mine + sizeof *self, self->devices, self->ndevices * sizeof *self->devices);
  int n = (int)len, *lens = NULL, *offs = NULL;
  unsigned char *all = NULL;
  if (job->rank == 0) {
    lens = calloc((size_t)job->size, sizeof *lens);
    offs = calloc((size_t)job->size, sizeof *offs);
  }
  MPI_Gather(&n, 1, MPI_INT, lens, 1, MPI_INT, 0, job->c.comm);
  size_t total = 0;
  if (job->rank == 0) {
    for (int r = 0; r < job->size; r++) {
      offs[r] = (int)total;
      total += (size_t)lens[r];
    }
    all = malloc(total ? total : 1);
  }
  MPI_Gatherv(mine, n, MPI_BYTE, all, lens, offs, MPI_BYTE, 0, job->c.comm);
  rig_status st = RIG_OK;
  if (job->rank == 0) {
    for (int r = 1; r < job->size && st == RIG_OK; r++) {
      rig_machine *m = &job->machines[r];
      memcpy(m, all + offs[r], sizeof *m);
      m->devices = calloc(m->ndevices ? m->ndevices : 1, sizeof *m->devices);
      if (!m->devices) {
        st = rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
        break;
      }
      memcpy(m->devices, all + offs[r] + sizeof *m, m->ndevices * sizeof *m->devices);
    }
  }
  free(mine);
  free(lens);
  free(offs);
  free(all);
  return st;
}

static void free_job(rig_job *job) {
  if (job->link) atomic_store(&job->link->job, NULL);
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
  pthread_mutex_destroy(&job->lock);
  pthread_cond_destroy(&job->changed);
  free(job);
}

rig_status rig_job_start(MPI_Comm comm, rig_job **out, rig_error *err) {
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
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
  pthread_cond_init(&job->changed, NULL);
  MPI_Comm_dup(comm, &job->c.comm);
  MPI_Comm_set_errhandler(job->c.comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(job->c.comm, &job->rank);
  MPI_Comm_size(job->c.comm, &job->size);
  job->c.rank = job->rank;
  job->c.size = job->size;
  /* An id of this job for its frames: the communicator's context may be
   * one an earlier job freed with frames still on their way. */
  uint64_t id = 0;
  if (job->rank == 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    id = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 16);
    static _Atomic uint64_t serial;
    id += atomic_fetch_add(&serial, 1) * UINT64_C(0x9E3779B97F4A7C15);
  }
  MPI_Bcast(&id, 1, MPI_UINT64_T, 0, job->c.comm);
  job->c.job_id = id;
  job->machines = calloc((size_t)job->size, sizeof *job->machines);
  job->devices = calloc((size_t)job->size, sizeof *job->devices);
  job->proxies = calloc((size_t)job->size, sizeof *job->proxies);
  rig_status st = job->machines && job->devices && job->proxies
                      ? RIG_OK
                      : rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  /* Every rank takes part in the gather, also one that failed to describe
   * itself, so that nobody waits forever. */
  if (st == RIG_OK)
    st = rig_machine_describe(&job->machines[job->rank], job->rank, &job->devices[job->rank], err);
  rig_status gathered = gather(job, err);
  if (st == RIG_OK) st = gathered;
  for (int r = 1; st == RIG_OK && job->rank == 0 && r < job->size; r++)
    st = rig_proxies_make(job, r, err);
  if (st == RIG_OK && job->rank != 0 && !(job->agent = rig_agent_create(job)))
    st = rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  if (st == RIG_OK) st = rig_ctl_start(job, err);
  if (st != RIG_OK) {
    MPI_Comm_free(&job->c.comm);
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
  if (job->rank == 0) {
    /* CLOSE goes after every frame queued before it: each agent answers
     * once its earlier work is done. */
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
  if (rig_ctl_stop(job)) MPI_Comm_free(&job->c.comm);
  free_job(job);
  return st;
}
