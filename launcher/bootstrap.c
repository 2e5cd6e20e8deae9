/* The job's start (bootstrap.h): the communicator, the gather of the
 * machines' descriptions, the express exchange. */
#include "bootstrap.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/count_wait.h"
#include "base/env.h"
#include "base/log.h"
#include "express.h"
#include "express_messages.h"
#include "far_copy.h"
#include "job_state.h"
#include "route/route.h"

/* Waits for a collective of the job's start, within the silence bound: a
 * machine that never joins (stopped, or gone before MPI noticed) fails the
 * start instead of hanging it. A collective left pending is never freed
 * (MPI may still write its buffers): *pending says so, and the caller then
 * keeps the communicator too. */
rig_status rig_bootstrap_wait(MPI_Request *req, const char *call, bool *pending, rig_error *err) {
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

rig_status rig_bootstrap_check(rig_error *err) {
  int level = MPI_THREAD_SINGLE;
  rig_status st = rig_mpi_status(MPI_Query_thread(&level), "MPI_Query_thread", err);
  if (st == RIG_OK && level != MPI_THREAD_MULTIPLE)
    st = rig_error_set(err, RIG_EJOB,
                       "the job needs MPI_THREAD_MULTIPLE, and MPI granted %s: call "
                       "MPI_Init_thread with MPI_THREAD_MULTIPLE",
                       thread_level(level));
  return st == RIG_OK ? rig_environment_check(err) : st;
}

/* An id of this job for its frames: the communicator's context may be one
 * an earlier job freed with frames still on their way. */
static uint64_t new_job_id(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t id = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 16);
  static _Atomic uint64_t serial;
  return id + atomic_fetch_add(&serial, 1) * UINT64_C(0x9E3779B97F4A7C15);
}

/* The one place the role is decided: the controller is the job's MPI
 * rank 0, and the root of its collectives; every other rank hosts an
 * agent. Each part of the job then asks which role's state it has. */
static rig_status decide_role(rig_job *job, rig_error *err) {
  if (job->rank == RIG_JOB_CONTROLLER)
    job->as_controller = calloc(1, sizeof *job->as_controller);
  else
    job->as_agent = calloc(1, sizeof *job->as_agent);
  if (!job->as_controller && !job->as_agent)
    return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  job->c.controller = job->as_controller != NULL;
  return RIG_OK;
}

rig_status rig_bootstrap_comm(rig_job *job, MPI_Comm comm, bool *pending, rig_error *err) {
  MPI_Request req;
  MPI_Comm *mine = &job->c.comm;
  rig_status st = rig_mpi_status(MPI_Comm_idup(comm, mine, &req), "MPI_Comm_idup", err);
  if (st == RIG_OK) st = rig_bootstrap_wait(&req, "MPI_Comm_idup", pending, err);
  if (st != RIG_OK) {
    if (!*pending) *mine = MPI_COMM_NULL; /* none was made */
    return st;
  }
  /* The job's failures come back here as codes, not as MPI's abort. */
  st = rig_mpi_status(MPI_Comm_set_errhandler(*mine, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler",
                      err);
  if (st == RIG_OK) st = rig_mpi_status(MPI_Comm_rank(*mine, &job->rank), "MPI_Comm_rank", err);
  if (st == RIG_OK) st = rig_mpi_status(MPI_Comm_size(*mine, &job->size), "MPI_Comm_size", err);
  if (st == RIG_OK) st = decide_role(job, err);
  uint64_t id = st == RIG_OK && job->as_controller ? new_job_id() : 0;
  if (st == RIG_OK)
    st = rig_mpi_status(MPI_Ibcast(&id, 1, MPI_UINT64_T, RIG_JOB_CONTROLLER, *mine, &req),
                        "MPI_Ibcast", err);
  if (st == RIG_OK) st = rig_bootstrap_wait(&req, "MPI_Ibcast", pending, err);
  job->c.job_id = id;
  job->c.rank = job->rank;
  job->c.size = job->size;
  return st;
}

/* Gathers n bytes of every rank at the controller: there *all holds them,
 * rank r's at offs[r], lens[r] long. Every rank takes part whatever failed
 * before (n 0: nothing to give). With the start pending (a rank never
 * joined) the buffers stay: MPI may still write them. */
typedef struct gathered {
  unsigned char *all;
  int *lens, *offs;
} gathered;

static void gathered_free(rig_job *job, gathered *g) {
  if (job->start_pending) return;
  free(g->all);
  free(g->lens);
  free(g->offs);
  *g = (gathered){0};
}

static rig_status gather_bytes(rig_job *job, const void *mine, int n, gathered *g, rig_error *err) {
  bool root = job->as_controller != NULL;
  *g = (gathered){0};
  if (root) {
    g->lens = calloc((size_t)job->size, sizeof *g->lens);
    g->offs = calloc((size_t)job->size, sizeof *g->offs);
    if (!g->lens || !g->offs) {
      free(g->lens);
      free(g->offs);
      /* The agents wait in vain; they find the controller silent. */
      return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
    }
  }
  MPI_Request req;
  bool *pending = &job->start_pending;
  rig_status st = rig_mpi_status(
      MPI_Igather(&n, 1, MPI_INT, g->lens, 1, MPI_INT, RIG_JOB_CONTROLLER, job->c.comm, &req),
      "MPI_Igather", err);
  if (st == RIG_OK) st = rig_bootstrap_wait(&req, "MPI_Igather", pending, err);
  size_t total = 0;
  for (int r = 0; st == RIG_OK && root && r < job->size; r++) {
    g->offs[r] = (int)total;
    total += (size_t)g->lens[r];
  }
  if (st == RIG_OK && root && !(g->all = malloc(total ? total : 1)))
    st = rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  if (st == RIG_OK) {
    st = rig_mpi_status(MPI_Igatherv(mine, n, MPI_BYTE, g->all, g->lens, g->offs, MPI_BYTE,
                                     RIG_JOB_CONTROLLER, job->c.comm, &req),
                        "MPI_Igatherv", err);
    if (st == RIG_OK) st = rig_bootstrap_wait(&req, "MPI_Igatherv", pending, err);
  }
  if (st != RIG_OK) gathered_free(job, g);
  return st;
}

/* Machine r's description from its got bytes: its fixed record, then its
 * devices. */
static rig_status take_machine(rig_machine *m, int r, const unsigned char *bytes, size_t got,
                               rig_error *err) {
  if (got < sizeof *m)
    return rig_error_set(err, RIG_EJOB, "machine %d could not describe itself", r);
  memcpy(m, bytes, sizeof *m);
  m->devices = NULL; /* the sender's pointer */
  m->host[sizeof m->host - 1] = m->topology[sizeof m->topology - 1] = '\0';
  if (m->ndevices > (got - sizeof *m) / sizeof *m->devices ||
      got != sizeof *m + m->ndevices * sizeof *m->devices) {
    size_t n = m->ndevices;
    m->ndevices = 0;
    return rig_error_set(err, RIG_EJOB, "machine %d: a description of %zu bytes for %zu devices", r,
                         got, n);
  }
  m->devices = calloc(m->ndevices ? m->ndevices : 1, sizeof *m->devices);
  if (!m->devices) {
    m->ndevices = 0;
    return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  }
  memcpy(m->devices, bytes + sizeof *m, m->ndevices * sizeof *m->devices);
  return RIG_OK;
}

/* The machines' descriptions travel as their fixed-size records, devices
 * after each machine. A rank with none to give (it failed to describe
 * itself) sends 0 bytes, and the controller fails the start. Every rank
 * takes part whatever failed before, so that nobody waits forever; only a
 * controller without room to receive leaves, and its agents then find it
 * silent. */
rig_status rig_bootstrap_gather(rig_job *job, bool described, rig_error *err) {
  rig_status st = RIG_OK;
  unsigned char *mine = NULL;
  int n = 0;
  if (described) {
    const rig_machine *self = &job->machines[job->rank];
    size_t len = sizeof *self + self->ndevices * sizeof *self->devices;
    if ((mine = malloc(len))) {
      memcpy(mine, self, sizeof *self);
      memcpy(mine + sizeof *self, self->devices, self->ndevices * sizeof *self->devices);
      n = (int)len;
    } else {
      st = rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
    }
  }
  gathered g;
  rig_error e;
  st = rig_first_failure(st, gather_bytes(job, mine, n, &g, &e), &e, err);
  /* A controller that did not describe itself may have no table to fill. */
  for (int r = 1; job->as_controller && described && st == RIG_OK && r < job->size; r++)
    st = take_machine(&job->machines[r], r, g.all + g.offs[r], (size_t)g.lens[r], err);
  gathered_free(job, &g);
  if (!job->start_pending) free(mine);
  return st;
}

/* Broadcasts n bytes from the controller, within the start's bound. */
static rig_status bcast(rig_job *job, void *buf, int n, MPI_Datatype type, rig_error *err) {
  MPI_Request req;
  rig_status st = rig_mpi_status(MPI_Ibcast(buf, n, type, RIG_JOB_CONTROLLER, job->c.comm, &req),
                                 "MPI_Ibcast", err);
  return st == RIG_OK ? rig_bootstrap_wait(&req, "MPI_Ibcast", &job->start_pending, err) : st;
}

/* The cores this process may run on. */
static long host_cores(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? n : 1;
}

rig_status rig_bootstrap_labels(rig_job *job, bool ok, rig_error *err) {
  size_t n = (size_t)job->size;
  enum { HOST = sizeof job->machines->host };
  char(*hosts)[HOST] = calloc(n, HOST);
  job->labels = calloc(n, sizeof *job->labels);
  if (!hosts || !job->labels) {
    free(hosts);
    return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  }
  for (size_t m = 0; ok && job->as_controller && m < n; m++)
    memcpy(hosts[m], job->machines[m].host, HOST);
  rig_status st = n > 1 ? bcast(job, hosts, (int)(n * HOST), MPI_BYTE, err) : RIG_OK;
  bool one_host = true;
  for (size_t m = 0; m < n; m++) {
    hosts[m][HOST - 1] = '\0';
    one_host &= strcmp(hosts[m], hosts[0]) == 0;
  }
  job->one_host = one_host;
  /* Waits spin or yield by how crowded this host is (base/count_wait.h). */
  size_t here = 0;
  for (size_t m = 0; m < n; m++) here += strcmp(hosts[m], hosts[job->rank]) == 0;
  rig_wait_crowded((long)here > host_cores());
  for (size_t m = 0; m < n; m++)
    if (one_host || !hosts[m][0])
      snprintf(job->labels[m], sizeof job->labels[m], "machine %zu", m);
    else
      snprintf(job->labels[m], sizeof job->labels[m], "machine %zu (%s)", m, hosts[m]);
  if (!job->start_pending) free(hosts);
  return st;
}

/* Frees the job's communicator, keeping st if it already failed. */
rig_status rig_bootstrap_free_comm(rig_job *job, rig_status st, rig_error *err) {
  rig_error e;
  return rig_first_failure(st, rig_mpi_status(MPI_Comm_free(&job->c.comm), "MPI_Comm_free", &e), &e,
                           err);
}

/* ---- the express exchange --------------------------------------------------------- */

/* What the controller broadcasts first: its timelines' address length, the
 * stride, its process and where its probe word is (for far copies). */
enum { HEAD_LEN, HEAD_STRIDE, HEAD_PID, HEAD_PROBE, HEAD_N };

/* The controller's timelines to every agent, which maps them. */
static rig_status share_timelines(rig_job *job, express *ex, uint64_t *head, const void *mine,
                                  rig_error *err) {
  bool root = job->as_controller != NULL;
  rig_status st = bcast(job, head, HEAD_N, MPI_UINT64_T, err);
  if (st != RIG_OK || !head[HEAD_LEN]) return st;
  /* Every rank learned the length: all take part, or none. */
  unsigned char *bytes = root ? (unsigned char *)mine : malloc(head[HEAD_LEN]);
  if (!bytes) return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  st = bcast(job, bytes, (int)head[HEAD_LEN], MPI_BYTE, err);
  if (st == RIG_OK && !root) {
    ex->stride = (uint32_t)head[HEAD_STRIDE];
    ex->controller = (int)head[HEAD_PID];
    rig_express_map_timelines(ex, bytes, head[HEAD_LEN], job->rank);
    /* Far copies by CMA where this process may read (and so write) the
     * controller's memory: before the rings go, so the controller sees it. */
    if (ex->my_timelines && rig_far_reaches(ex->controller, head[HEAD_PROBE]))
      for (uint32_t i = 0; i < job->machines[job->rank].ndevices; i++)
        rig_express_my_ring(ex, i)->far = 1;
  }
  if (!root && !job->start_pending) free(bytes);
  return st;
}

/* Every agent's rings to the controller, which maps them. */
static rig_status share_rings(rig_job *job, express *ex, const void *mine, size_t mine_len,
                              rig_error *err) {
  bool root = job->as_controller != NULL;
  gathered g;
  rig_status st = gather_bytes(job, root ? NULL : mine, root ? 0 : (int)mine_len, &g, err);
  for (int r = 1; st == RIG_OK && root && r < job->size; r++)
    rig_express_map_rings(ex, r, g.all + g.offs[r], (size_t)g.lens[r]);
  if (st == RIG_OK) gathered_free(job, &g);
  return st;
}

/* Broadcasts the controller's *bytes (n of them: every rank learns n
 * first); an agent's *bytes is then its own copy (free it). */
static rig_status bcast_bytes(rig_job *job, unsigned char **bytes, uint64_t *n, rig_error *err) {
  rig_status st = bcast(job, n, 1, MPI_UINT64_T, err);
  if (st != RIG_OK || !*n) return st;
  if (job->as_agent && !(*bytes = malloc(*n)))
    return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  return bcast(job, *bytes, (int)*n, MPI_BYTE, err);
}

/* How each agent and the controller reach each other, agreed: every agent
 * offers, the controller chooses and tells. */
static rig_status agree_routes(rig_job *job, express *ex, bool want, rig_error *err) {
  size_t n = 0;
  unsigned char *offer = rig_route_offer(job, ex, want, &n);
  gathered g;
  rig_status st = gather_bytes(job, offer, (int)n, &g, err);
  if (!job->start_pending) free(offer);
  if (st != RIG_OK) return st;
  unsigned char *plan = NULL;
  uint64_t len = 0;
  if (job->as_controller && want && !(plan = rig_route_plan(job, ex, g.all, g.offs, g.lens, &len)))
    st = rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  gathered_free(job, &g);
  /* Every rank takes part: a controller that failed sends a plan of 0. */
  if (st != RIG_OK) len = 0;
  rig_status s = bcast_bytes(job, &plan, &len, err);
  if (s == RIG_OK && job->as_agent && want) rig_route_follow(job, ex, plan, len);
  if (!job->start_pending) free(plan);
  return st != RIG_OK ? st : s;
}

rig_status rig_bootstrap_express(rig_job *job, bool ok, rig_error *err) {
  if (job->size < 2) return RIG_OK;
  bool root = job->as_controller != NULL;
  /* Every rank takes part in every collective below, whatever failed. */
  bool want = ok && job->machines && rig_env_get()->job_express;
  uint64_t head[HEAD_N] = {0, 1, (uint64_t)getpid(), (uint64_t)(uintptr_t)rig_far_probe_word()};
  for (int m = 1; root && want && m < job->size; m++)
    if (job->machines[m].ndevices > head[HEAD_STRIDE])
      head[HEAD_STRIDE] = job->machines[m].ndevices;
  express *ex = rig_express_new(job->size, (uint32_t)head[HEAD_STRIDE]);
  if (ex && !rig_route_init(ex)) { /* every machine by frames until agreed */
    rig_express_free(ex);
    ex = NULL;
  }
  if (!ex) return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  ex->job = job;
  const void *mine = NULL;
  size_t mine_len = 0;
  if (root && want)
    rig_express_make_timelines(ex, &mine, &mine_len);
  else if (!root && want && job->machines[job->rank].ndevices)
    rig_express_make_rings(ex, job->machines[job->rank].ndevices, &mine, &mine_len);
  head[HEAD_LEN] = root ? mine_len : 0;
  rig_status st = share_timelines(job, ex, head, mine, err);
  if (st == RIG_OK) st = share_rings(job, ex, mine, mine_len, err);
  if (st == RIG_OK) st = agree_routes(job, ex, want, err);
  /* A collective left pending may still write the express's areas. */
  if (st == RIG_OK || !job->start_pending) job->express = ex;
  return st;
}
