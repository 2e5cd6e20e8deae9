/* The control thread: the one thread of a process that owns the job's MPI
 * traffic. Callers queue frames; the thread sends them (MPI_Isend), takes
 * every frame that arrives (MPI_Iprobe, then MPI_Recv) and hands it on
 * without blocking, sends beats to quiet peers and fails the job when a
 * peer stays silent too long. It spins a little after activity and then
 * sleeps on a futex the queue wakes, up to a millisecond at a time, so an
 * idle job does not burn a core. */
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/env.h"
#include "base/sync.h"
#include "job_internal.h"

#define BEAT_EVERY RIG_JOB_BEAT_S /* seconds of quiet before a beat */
/* The naps of a quiet control thread, longer the longer it is quiet: each
 * wake probes MPI, and an idle job should cost nothing (runs between
 * machines of one host do not come this way: launcher/express.h), while a
 * frame soon after traffic (a request of a load, a run between hosts)
 * should not wait long. A frame to an agent asleep waits up to a nap. */
#define QUIET_SLEEP_NS 200000   /* quiet under 50 ms */
#define IDLE_SLEEP_NS  1000000  /* under a second */
#define LONG_SLEEP_NS  20000000 /* past it */

/* RIG_TRACE=1: every frame but beats is logged on stderr, for debugging. */
static bool trace;

rig_status rig_ctl_send(rig_job *job, int dest, const frame *f, const void *payload, size_t n,
                        rig_error *err) {
  ctl *c = &job->c;
  /* One MPI message a frame, its length an int. */
  if (n > (size_t)INT_MAX - sizeof *f) {
    char cause[128];
    snprintf(cause, sizeof cause, "machine %d: a frame of %zu bytes, more than a message carries",
             job->rank, n);
    rig_job_fail_with(job, true, cause);
    return rig_job_error(job, err);
  }
  outmsg *m = malloc(sizeof *m);
  unsigned char *buf = malloc(sizeof *f + n);
  if (!m || !buf) {
    free(m);
    free(buf);
    rig_job_fail_with(job, false, "out of memory queueing a frame");
    return rig_job_error(job, err);
  }
  /* Only the kind's body is copied: the rest of the union goes as 0s. */
  frame out;
  memset(&out, 0, sizeof out);
  out.h = f->h;
  out.h.job = c->job_id;
  out.h.payload = (uint32_t)n;
  size_t body = offsetof(frame, alloc);
  memcpy((unsigned char *)&out + body, (const unsigned char *)f + body, frame_body_size(f->h.kind));
  memcpy(buf, &out, sizeof out);
  if (n) memcpy(buf + sizeof out, payload, n);
  m->next = NULL;
  m->dest = dest;
  m->len = sizeof out + n;
  m->buf = buf;
  pthread_mutex_lock(&c->lock);
  if (c->tail)
    c->tail->next = m;
  else
    c->head = m;
  c->tail = m;
  pthread_mutex_unlock(&c->lock);
  atomic_fetch_add(&c->wake, 1);
  /* The system call only when the thread may be asleep (it rechecks wake
   * after saying so). */
  if (atomic_load(&c->sleeping)) rig_futex_wake(&c->wake, 1);
  return RIG_OK;
}

/* An MPI failure on the control thread fails the job: no caller waits
 * here for a status, every one waits on the job. */
static rig_status mpi_check(rig_job *job, int rc, const char *call) {
  rig_error err;
  if (rig_mpi_status(rc, call, &err) == RIG_OK) return RIG_OK;
  char cause[RIG_ERROR_MESSAGE_MAX + 32];
  snprintf(cause, sizeof cause, "machine %d: %s", job->rank, err.message);
  rig_job_fail_with(job, false, cause);
  return RIG_EJOB;
}

static bool send_queued(rig_job *job) {
  ctl *c = &job->c;
  pthread_mutex_lock(&c->lock);
  outmsg *m = c->head;
  c->head = c->tail = NULL;
  pthread_mutex_unlock(&c->lock);
  /* Beats are not traffic: a quiet job naps longer and longer (LONG_SLEEP_NS). */
  bool any = false;
  while (m) {
    outmsg *next = m->next;
    if (c->ninflight == c->room) {
      size_t room = c->room ? 2 * c->room : 64;
      MPI_Request *r = realloc(c->reqs, room * sizeof *r);
      if (r) c->reqs = r;
      unsigned char **b = realloc(c->bufs, room * sizeof *b);
      if (b) c->bufs = b;
      if (!r || !b) {
        rig_job_fail_with(job, false, "out of memory sending a frame");
        free(m->buf);
        free(m);
        m = next;
        continue;
      }
      c->room = room;
    }
    MPI_Request req;
    frame_header th;
    memcpy(&th, m->buf, sizeof th); /* the header leads the frame */
    any |= th.kind != F_BEAT;
    if (trace) {
      if (th.kind != F_BEAT)
        fprintf(stderr, "rank %d: send kind %u req %llu to %d\n", job->rank, th.kind,
                (unsigned long long)th.request, m->dest);
    }
    if (mpi_check(job,
                  MPI_Isend(m->buf, (int)m->len, MPI_BYTE, m->dest, RIG_JOB_TAG, c->comm, &req),
                  "MPI_Isend") == RIG_OK) {
      c->reqs[c->ninflight] = req;
      c->bufs[c->ninflight++] = m->buf;
      c->sent[m->dest] = rig_now_s();
    } else {
      free(m->buf);
    }
    free(m);
    m = next;
  }
  return any;
}

static bool complete_sends(rig_job *job) {
  ctl *c = &job->c;
  bool any = false;
  for (size_t i = 0; i < c->ninflight;) {
    int flag = 0;
    if (mpi_check(job, MPI_Test(&c->reqs[i], &flag, MPI_STATUS_IGNORE), "MPI_Test") != RIG_OK)
      flag = 1;
    if (flag) {
      frame_header th;
      memcpy(&th, c->bufs[i], sizeof th);
      any |= th.kind != F_BEAT;
      free(c->bufs[i]);
      c->reqs[i] = c->reqs[c->ninflight - 1];
      c->bufs[i] = c->bufs[c->ninflight - 1];
      c->ninflight--;
    } else {
      i++;
    }
  }
  return any;
}

static void dispatch(rig_job *job, int src, const frame *f, const unsigned char *payload) {
  const frame_header *h = &f->h;
  if (h->kind == F_BYE) {
    job->c.byes++;
    return;
  }
  /* Leaving: what still comes is drained, not acted on. */
  if (h->kind == F_BEAT || atomic_load(&job->c.stop)) return;
  if (h->kind == F_FAIL) {
    char cause[RIG_ERROR_MESSAGE_MAX];
    snprintf(cause, sizeof cause, "%.*s", (int)h->payload, (const char *)payload);
    /* The controller tells every agent; an agent heard it from there. */
    rig_job_fail_with(job, job->rank == 0, cause);
    return;
  }
  if (job->rank != 0) {
    rig_agent_frame(job->agent, f, payload);
  } else if (h->kind == F_REPLY) {
    rig_request_answer(job, src, f, payload);
  } else if (h->kind == F_DONE) {
    rig_proxy_done(job, src, h->device, h->value);
  }
}

static bool receive(rig_job *job) {
  ctl *c = &job->c;
  bool any = false;
  for (int i = 0; i < 64; i++) {
    int flag = 0;
    MPI_Status st;
    if (mpi_check(job, MPI_Iprobe(MPI_ANY_SOURCE, RIG_JOB_TAG, c->comm, &flag, &st),
                  "MPI_Iprobe") != RIG_OK ||
        !flag)
      break;
    int n = 0;
    /* MPI_UNDEFINED (negative) as 0 bytes: MPI_Recv then fails as truncated. */
    if (mpi_check(job, MPI_Get_count(&st, MPI_BYTE, &n), "MPI_Get_count") != RIG_OK) break;
    if (n < 0) n = 0;
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf) {
      rig_job_fail_with(job, false, "out of memory receiving a frame");
      break;
    }
    if (mpi_check(
            job, MPI_Recv(buf, n, MPI_BYTE, st.MPI_SOURCE, RIG_JOB_TAG, c->comm, MPI_STATUS_IGNORE),
            "MPI_Recv") != RIG_OK) {
      free(buf);
      break;
    }
    c->heard[st.MPI_SOURCE] = rig_now_s();
    frame f;
    if ((size_t)n >= sizeof f) {
      memcpy(&f, buf, sizeof f);
      const frame_header *h = &f.h;
      if (trace && h->kind != F_BEAT)
        fprintf(stderr, "rank %d job %llx: got kind %u req %llu job %llx from %d\n", job->rank,
                (unsigned long long)c->job_id, h->kind, (unsigned long long)h->request,
                (unsigned long long)h->job, st.MPI_SOURCE);
      if (sizeof f + h->payload == (size_t)n && h->job == c->job_id)
        dispatch(job, st.MPI_SOURCE, &f, buf + sizeof f);
    }
    free(buf);
    any |= (size_t)n < sizeof f || f.h.kind != F_BEAT;
  }
  return any;
}

/* Beats to quiet peers; a peer silent past the bound fails the job. The
 * controller watches every agent, an agent the controller. */
static void watch(rig_job *job, double now) {
  ctl *c = &job->c;
  for (int r = 0; r < job->size; r++) {
    if (r == job->rank || (job->rank != 0 && r != 0)) continue;
    if (now - c->sent[r] > BEAT_EVERY) {
      frame beat = {.h.kind = F_BEAT};
      rig_ctl_send(job, r, &beat, NULL, 0, NULL);
    }
    double silence_bound = rig_env_get()->job_silence;
    if (!atomic_load(&job->failed) && now - c->heard[r] > silence_bound) {
      char cause[128];
      snprintf(cause, sizeof cause, "machine %d: silent for %g s", r, silence_bound);
      rig_job_fail_with(job, true, cause);
    }
  }
}

static void *control_main(void *arg) {
  rig_job *job = arg;
  ctl *c = &job->c;
  double last_busy = rig_now_s(), last_watch = 0, stop_at = 0;
  for (;;) {
    uint32_t seen = atomic_load(&c->wake);
    bool busy = send_queued(job);
    busy |= complete_sends(job);
    busy |= receive(job);
    double now = rig_now_s();
    bool leaving = atomic_load(&c->stop);
    if (!leaving && now - last_watch > 0.1) {
      watch(job, now);
      last_watch = now;
    }
    if (leaving) {
      pthread_mutex_lock(&c->lock);
      bool empty = c->head == NULL;
      pthread_mutex_unlock(&c->lock);
      /* The controller talks with every agent, an agent with the controller. */
      int peers = job->rank == 0 ? job->size - 1 : 1;
      if (empty && c->ninflight == 0 && c->byes >= peers) {
        c->quiet = true;
        break;
      }
      /* A peer that is gone never answers: give up on it. */
      if (!stop_at) stop_at = now;
      if (now - stop_at > 5.0) break;
    }
    if (busy) {
      last_busy = now;
      continue;
    }
    /* Just after traffic an answer is likely soon: poll, but yielding, so
     * that the threads this traffic woke get a core. */
    double idle = now - last_busy;
    if (idle < 1e-3 || (!leaving && !atomic_load(&job->failed) && rig_proxies_busy(job))) {
      sched_yield();
      continue;
    }
    /* Asleep until a frame is queued, or a while passes to probe. */
    atomic_store(&c->sleeping, true);
    if (atomic_load(&c->wake) == seen)
      rig_futex_wait(&c->wake, seen,
                     idle < 0.05  ? QUIET_SLEEP_NS
                     : idle < 1.0 ? IDLE_SLEEP_NS
                                  : LONG_SLEEP_NS);
    atomic_store(&c->sleeping, false);
  }
  return NULL;
}

rig_status rig_ctl_start(rig_job *job, rig_error *err) {
  ctl *c = &job->c;
  trace = rig_env_get()->trace;
  pthread_mutex_init(&c->lock, NULL);
  c->heard = calloc((size_t)job->size, sizeof *c->heard);
  c->sent = calloc((size_t)job->size, sizeof *c->sent);
  rig_status st = RIG_OK;
  if (!c->heard || !c->sent) {
    st = rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  } else {
    double now = rig_now_s();
    for (int r = 0; r < job->size; r++) c->heard[r] = c->sent[r] = now;
    if (pthread_create(&c->thread, NULL, control_main, job) != 0)
      st = rig_error_set(err, RIG_ESYS, "cannot start the job's control thread");
  }
  if (st != RIG_OK) {
    free(c->heard);
    free(c->sent);
    c->heard = c->sent = NULL;
    pthread_mutex_destroy(&c->lock);
    return st;
  }
  c->started = true;
  return RIG_OK;
}

bool rig_ctl_stop(rig_job *job) {
  ctl *c = &job->c;
  if (!c->started) return false;
  frame bye = {.h.kind = F_BYE};
  for (int r = 0; r < job->size; r++)
    if (r != job->rank && (job->rank == 0 || r == 0)) rig_ctl_send(job, r, &bye, NULL, 0, NULL);
  atomic_store(&c->stop, true);
  atomic_fetch_add(&c->wake, 1);
  rig_futex_wake(&c->wake, 1);
  pthread_join(c->thread, NULL);
  c->started = false;
  /* Sends still in flight (a peer gone) keep their buffers: MPI may still
   * read them. */
  if (c->quiet) {
    free(c->reqs);
    free(c->bufs);
  }
  free(c->heard);
  free(c->sent);
  for (outmsg *m = c->head, *next; m; m = next) {
    next = m->next;
    free(m->buf);
    free(m);
  }
  pthread_mutex_destroy(&c->lock);
  return c->quiet;
}
