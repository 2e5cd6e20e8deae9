/* The control thread (control.h): callers queue frames; the thread sends
 * them (MPI_Isend), takes every frame that arrives (MPI_Iprobe, then
 * MPI_Recv) and hands it to the job without blocking, sends beats to quiet
 * peers and fails the job when a peer stays silent too long. It spins a
 * little after activity and then sleeps on a futex the queue wakes, so an
 * idle job does not burn a core. */
#include "control.h"

#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/array.h"
#include "base/clock.h"
#include "base/env.h"
#include "base/log.h"
#include "base/sync.h"

#define BEAT_EVERY RIG_JOB_BEAT_S /* seconds of quiet before a beat */
/* The naps of a quiet control thread, longer the longer it is quiet: each
 * wake probes MPI, and an idle job should cost nothing (runs between
 * machines of one host do not come this way: express.h), while a frame
 * soon after traffic (a request of a load, a run between hosts) should not
 * wait long. A frame to an agent asleep waits up to a nap. */
#define QUIET_SLEEP_NS 200000   /* quiet under 50 ms */
#define IDLE_SLEEP_NS  1000000  /* under a second */
#define LONG_SLEEP_NS  20000000 /* past it */
/* Past it, where every peer knocks before a frame (rig_ctl_knock): then
 * only beats and the silence bound need the thread, and each wake costs
 * an idle job an MPI probe. */
#define KNOCKED_SLEEP_NS 200000000

/* A frame queued to go: header then payload in buf. */
typedef struct outmsg {
  queue_link link;
  int dest;
  size_t len;
  unsigned char *buf;
} outmsg;

/* RIG_TRACE=1 (RIG_LOG=debug): every frame but beats is logged, for
 * debugging; through the log, which never blocks this thread. */
static bool trace;

rig_status rig_mpi_status(int rc, const char *call, rig_error *err) {
  if (rc == MPI_SUCCESS) return RIG_OK;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
    len = snprintf(msg, sizeof msg, "error code %d", rc);
  return rig_error_set(err, RIG_EJOB, "%s failed: %.*s", call, len, msg);
}

static rig_status fail(ctl *c, bool tell, const char *cause, rig_error *err) {
  return c->hooks.fail(c->hooks.job, tell, cause, err);
}

rig_status rig_ctl_send(ctl *c, int dest, const frame *f, const void *payload, size_t n,
                        rig_error *err) {
  /* One MPI message a frame, its length an int. */
  if (n > (size_t)INT_MAX - sizeof *f) {
    char cause[RIG_JOB_LABEL + 96];
    snprintf(cause, sizeof cause, "%s: a frame of %zu bytes, more than a message carries",
             c->labels[c->rank], n);
    return fail(c, true, cause, err);
  }
  outmsg *m = malloc(sizeof *m);
  unsigned char *buf = malloc(sizeof *f + n);
  if (!m || !buf) {
    free(m);
    free(buf);
    return fail(c, false, "out of memory queueing a frame", err);
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
  m->dest = dest;
  m->len = sizeof out + n;
  m->buf = buf;
  rig_queue_push(&c->out, &m->link);
  atomic_fetch_add(&c->wake, 1);
  /* The system call only when the thread may be asleep (it rechecks wake
   * after saying so). */
  if (atomic_load(&c->sleeping)) rig_futex_wake(&c->wake, 1);
  return RIG_OK;
}

/* An MPI failure on the control thread fails the job: no caller waits
 * here for a status, every one waits on the job. */
static rig_status mpi_check(ctl *c, int rc, const char *call) {
  rig_error err;
  if (rig_mpi_status(rc, call, &err) == RIG_OK) return RIG_OK;
  char cause[RIG_ERROR_MESSAGE_MAX + RIG_JOB_LABEL];
  snprintf(cause, sizeof cause, "%s: %s", c->labels[c->rank], err.message);
  fail(c, false, cause, NULL);
  return RIG_EJOB;
}

/* A frame MPI is sending, and its buffer, which MPI reads until it is done. */
typedef struct ctl_send {
  MPI_Request req;
  unsigned char *buf;
} ctl_send;

static ctl_send *send_at(ctl *c, size_t i) {
  return rig_array_at(&c->sends, i);
}

/* Room for one more send in flight. */
static bool make_room(ctl *c) {
  if (rig_array_reserve(&c->sends, 1)) return true;
  fail(c, false, "out of memory sending a frame", NULL);
  return false;
}

static uint32_t kind_of(const unsigned char *buf) {
  frame_header h;
  memcpy(&h, buf, sizeof h); /* the header leads the frame */
  return h.kind;
}

static bool send_queued(ctl *c) {
  queue_link *all = rig_queue_take_all(&c->out);
  /* Beats are not traffic: a quiet job naps longer and longer (LONG_SLEEP_NS). */
  bool any = false;
  while (all) {
    outmsg *m = (outmsg *)all;
    all = all->next;
    if (!make_room(c)) {
      free(m->buf);
      free(m);
      continue;
    }
    MPI_Request req;
    uint32_t kind = kind_of(m->buf);
    /* After its BYE a peer frees the communicator, whose context a later
     * job's may take: a frame sent then would land in that job (a failure
     * found while closing, say: a peer's endpoint closing first). */
    if (c->bye_sent[m->dest]) {
      if (trace)
        rig_log(RIG_LOG_DEBUG, "rank %d: kind %u to %d after its BYE: not sent", c->rank, kind,
                m->dest);
      free(m->buf);
      free(m);
      continue;
    }
    c->bye_sent[m->dest] = kind == F_BYE;
    any |= kind != F_BEAT;
    if (trace && kind != F_BEAT) {
      frame_header th;
      memcpy(&th, m->buf, sizeof th);
      rig_log(RIG_LOG_DEBUG, "rank %d: send kind %u req %llu to %d", c->rank, kind,
              (unsigned long long)th.request, m->dest);
    }
    if (mpi_check(c, MPI_Isend(m->buf, (int)m->len, MPI_BYTE, m->dest, RIG_JOB_TAG, c->comm, &req),
                  "MPI_Isend") == RIG_OK) {
      rig_array_push(&c->sends, &(ctl_send){req, m->buf}); /* make_room's room */
      c->sent[m->dest] = rig_now_s();
      /* Beats need no knock: the silence bound is seconds, and a knock
       * would keep a quiet peer polling. */
      if (c->hooks.knock && kind != F_BEAT) c->hooks.knock(c->hooks.job, m->dest);
    } else {
      free(m->buf);
    }
    free(m);
  }
  return any;
}

static bool complete_sends(ctl *c) {
  bool any = false;
  for (size_t i = 0; i < c->sends.n;) {
    ctl_send *s = send_at(c, i);
    int flag = 0;
    if (mpi_check(c, MPI_Test(&s->req, &flag, MPI_STATUS_IGNORE), "MPI_Test") != RIG_OK) flag = 1;
    if (flag) {
      any |= kind_of(s->buf) != F_BEAT;
      if (kind_of(s->buf) == F_BYE) atomic_fetch_add(&c->byes_out, 1);
      free(s->buf);
      rig_array_remove(&c->sends, i);
    } else {
      i++;
    }
  }
  return any;
}

static void dispatch(ctl *c, int src, const frame *f, const unsigned char *payload) {
  if (f->h.kind == F_BYE) {
    c->byes++;
    if (c->hooks.bye) c->hooks.bye(c->hooks.job, src);
    return;
  }
  /* Leaving: what still comes is drained, not acted on. */
  if (f->h.kind == F_BEAT || atomic_load(&c->stop)) return;
  c->hooks.deliver(c->hooks.job, src, f, payload);
}

/* One frame waiting at MPI, taken: false when none is, or it failed. */
static bool receive_one(ctl *c, bool *any) {
  int flag = 0;
  MPI_Status st;
  if (mpi_check(c, MPI_Iprobe(MPI_ANY_SOURCE, RIG_JOB_TAG, c->comm, &flag, &st), "MPI_Iprobe") !=
          RIG_OK ||
      !flag)
    return false;
  int n = 0;
  /* MPI_UNDEFINED (negative) as 0 bytes: MPI_Recv then fails as truncated. */
  if (mpi_check(c, MPI_Get_count(&st, MPI_BYTE, &n), "MPI_Get_count") != RIG_OK) return false;
  if (n < 0) n = 0;
  unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
  if (!buf) {
    fail(c, false, "out of memory receiving a frame", NULL);
    return false;
  }
  if (mpi_check(c,
                MPI_Recv(buf, n, MPI_BYTE, st.MPI_SOURCE, RIG_JOB_TAG, c->comm, MPI_STATUS_IGNORE),
                "MPI_Recv") != RIG_OK) {
    free(buf);
    return false;
  }
  c->heard[st.MPI_SOURCE] = rig_now_s();
  frame f;
  if ((size_t)n >= sizeof f) {
    memcpy(&f, buf, sizeof f);
    const frame_header *h = &f.h;
    if (trace && h->kind != F_BEAT)
      rig_log(RIG_LOG_DEBUG, "rank %d job %llx: got kind %u req %llu job %llx from %d", c->rank,
              (unsigned long long)c->job_id, h->kind, (unsigned long long)h->request,
              (unsigned long long)h->job, st.MPI_SOURCE);
    if (sizeof f + h->payload == (size_t)n && h->job == c->job_id)
      dispatch(c, st.MPI_SOURCE, &f, buf + sizeof f);
  }
  free(buf);
  *any |= (size_t)n < sizeof f || f.h.kind != F_BEAT;
  return true;
}

static bool receive(ctl *c) {
  bool any = false;
  for (int i = 0; i < 64 && receive_one(c, &any); i++) {
  }
  return any;
}

bool rig_ctl_peer(const ctl *c, int r) {
  return r != c->rank && (c->controller || r == RIG_JOB_CONTROLLER);
}

/* Beats to quiet peers; a peer silent past the bound fails the job. The
 * controller watches every agent, an agent the controller. */
static void watch(ctl *c, double now) {
  for (int r = 0; r < c->size; r++) {
    if (!rig_ctl_peer(c, r)) continue;
    if (now - c->sent[r] > BEAT_EVERY) {
      frame beat = {.h.kind = F_BEAT};
      rig_ctl_send(c, r, &beat, NULL, 0, NULL);
    }
    double silence_bound = rig_env_get()->job_silence;
    if (!atomic_load(c->failed) && now - c->heard[r] > silence_bound) {
      char cause[RIG_JOB_LABEL + 96];
      snprintf(cause, sizeof cause, "%s: silent for %g s", c->labels[r], silence_bound);
      fail(c, true, cause, NULL);
    }
  }
}

/* A gap in this thread's own turns past which the process itself was
 * stopped (SIGSTOP, a debugger) or starved: its naps are 0.2 s at most. */
#define STALL_S 2.0

/* The cause of this machine's own stop of `gap` seconds. */
static void stall_cause(ctl *c, double gap, double bound, char *cause, size_t n) {
  snprintf(cause, n,
           "%s: stopped for %.0f s, past the %g s silence bound: the other machines took it "
           "for gone",
           c->labels[c->rank], gap, bound);
}

/* This process did not run for `gap` seconds. Its peers are not blamed
 * for it: what they sent meanwhile waits to be read, so their silence is
 * counted from the end of the gap. A gap past the silence bound is the
 * job's failure, this machine's own: its peers took it for gone. */
static void stalled(ctl *c, double gap, double now) {
  for (int r = 0; r < c->size; r++) {
    c->heard[r] += gap;
    if (c->heard[r] > now) c->heard[r] = now;
  }
  double bound = rig_env_get()->job_silence;
  if (gap <= bound || atomic_load(c->failed)) return;
  char cause[RIG_JOB_LABEL + 128];
  stall_cause(c, gap, bound, cause, sizeof cause);
  fail(c, true, cause, NULL);
}

/* Another thread may see the stop's consequence (a peer's loss) before
 * this one turns: the stamp tells it. The thread fails the job for a stop
 * before it stamps the turn after it, so either the stamp is stale or the
 * job's cause is already the stop. */
bool rig_ctl_stalled(ctl *c, char *cause, size_t n) {
  if (!c->started || atomic_load(&c->stop)) return false;
  double gap = rig_now_s() - (double)atomic_load(&c->turn_ns) * 1e-9;
  double bound = rig_env_get()->job_silence;
  if (gap <= bound) return false;
  stall_cause(c, gap, bound, cause, n);
  return true;
}

/* Leaving: whether every frame is out and every peer said goodbye. */
static bool all_said(ctl *c) {
  bool empty = rig_queue_idle(&c->out);
  return empty && c->sends.n == 0 && c->byes >= c->peers;
}

/* Asleep until a frame is queued, or a nap passes to probe: longer the
 * longer it has been idle. */
static void nap(ctl *c, uint32_t seen, double idle) {
  atomic_store(&c->sleeping, true);
  if (atomic_load(&c->wake) == seen)
    rig_futex_wait(&c->wake, seen,
                   idle < 0.05         ? QUIET_SLEEP_NS
                   : idle < 1.0        ? IDLE_SLEEP_NS
                   : c->knocked_by_all ? KNOCKED_SLEEP_NS
                                       : LONG_SLEEP_NS);
  atomic_store(&c->sleeping, false);
}

void rig_ctl_knock(ctl *c) {
  atomic_fetch_add(&c->knocks, 1);
  atomic_store(&c->knocked, true);
  atomic_fetch_add(&c->wake, 1);
  if (atomic_load(&c->sleeping)) rig_futex_wake(&c->wake, 1);
}

static void *control_main(void *arg) {
  ctl *c = arg;
  double last_busy = rig_now_s(), last_watch = 0, stop_at = 0, last_turn = rig_now_s();
  for (;;) {
    uint32_t seen = atomic_load(&c->wake);
    double turn = rig_now_s();
    if (turn - last_turn > STALL_S) stalled(c, turn - last_turn, turn);
    last_turn = turn;
    atomic_store(&c->turn_ns, (int64_t)(turn * 1e9));
    /* A knock is traffic: its frame comes soon, and is polled for. */
    bool busy = atomic_exchange(&c->knocked, false);
    busy |= send_queued(c);
    busy |= complete_sends(c);
    busy |= receive(c);
    double now = rig_now_s();
    bool leaving = atomic_load(&c->stop);
    if (!leaving && now - last_watch > 0.1) {
      watch(c, now);
      last_watch = now;
    }
    if (leaving) {
      if (all_said(c)) {
        c->quiet = true;
        break;
      }
      /* A peer that is gone never answers: give up on it after as long as
       * a peer may be silent (a controller still closing its other agents,
       * slow under a sanitizer, is not gone), sooner once the job failed:
       * the ranks that can answer have. */
      if (!stop_at) stop_at = now;
      if (now - stop_at > (atomic_load(c->failed) ? 2.0 : rig_env_get()->job_silence)) break;
    }
    if (busy) {
      last_busy = now;
      continue;
    }
    /* Just after traffic an answer is likely soon: poll, but yielding, so
     * that the threads this traffic woke get a core. */
    double idle = now - last_busy;
    if (idle < 1e-3 || (!leaving && !atomic_load(c->failed) && c->hooks.busy(c->hooks.job))) {
      sched_yield();
      continue;
    }
    nap(c, seen, idle);
  }
  return NULL;
}

rig_status rig_ctl_start(ctl *c, rig_error *err) {
  trace = rig_log_enabled(RIG_LOG_DEBUG);
  rig_queue_init(&c->out);
  rig_array_init(&c->sends, sizeof(ctl_send), 0);
  c->heard = calloc((size_t)c->size, sizeof *c->heard);
  c->sent = calloc((size_t)c->size, sizeof *c->sent);
  c->bye_sent = calloc((size_t)c->size, sizeof *c->bye_sent);
  rig_status st = RIG_OK;
  if (!c->heard || !c->sent || !c->bye_sent) {
    st = rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  } else {
    double now = rig_now_s();
    for (int r = 0; r < c->size; r++) c->heard[r] = c->sent[r] = now;
    c->peers = 0;
    for (int r = 0; r < c->size; r++) c->peers += rig_ctl_peer(c, r);
    atomic_store(&c->turn_ns, (int64_t)(now * 1e9));
    if (pthread_create(&c->thread, NULL, control_main, c) != 0)
      st = rig_error_set(err, RIG_ESYS, "cannot start the job's control thread");
  }
  if (st != RIG_OK) {
    free(c->heard);
    free(c->sent);
    free(c->bye_sent);
    c->heard = c->sent = NULL;
    c->bye_sent = NULL;
    rig_queue_destroy(&c->out);
    return st;
  }
  c->started = true;
  return RIG_OK;
}

/* Sends a stop gave up on, with their buffers: MPI may still read them
 * (one entry per job that closed with a peer gone, so few). */
typedef struct abandoned {
  struct abandoned *next;
  ctl_send *sends;
  size_t n;
} abandoned;
static abandoned *abandoned_sends;
static pthread_mutex_t abandoned_lock = PTHREAD_MUTEX_INITIALIZER;

static void abandon(ctl *c) {
  abandoned *a = malloc(sizeof *a);
  if (!a) return; /* then they are lost, as MPI's own would be */
  size_t n = c->sends.n;
  *a = (abandoned){NULL, rig_array_take(&c->sends), n};
  pthread_mutex_lock(&abandoned_lock);
  a->next = abandoned_sends;
  abandoned_sends = a;
  pthread_mutex_unlock(&abandoned_lock);
}

void rig_ctl_goodbye(ctl *c, double bound) {
  if (!c->started) return;
  frame bye = {.h.kind = F_BYE};
  int peers = 0;
  for (int r = 0; r < c->size; r++)
    if (rig_ctl_peer(c, r) && rig_ctl_send(c, r, &bye, NULL, 0, NULL) == RIG_OK) peers++;
  atomic_fetch_add(&c->wake, 1);
  rig_futex_wake(&c->wake, 1);
  double until = rig_now_s() + bound;
  while (atomic_load(&c->byes_out) < peers && rig_now_s() < until) {
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
}

ctl_end rig_ctl_stop(ctl *c) {
  if (!c->started) return CTL_BUSY;
  frame bye = {.h.kind = F_BYE};
  for (int r = 0; r < c->size; r++)
    if (rig_ctl_peer(c, r)) rig_ctl_send(c, r, &bye, NULL, 0, NULL);
  atomic_store(&c->stop, true);
  atomic_fetch_add(&c->wake, 1);
  rig_futex_wake(&c->wake, 1);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  double wait_s =
      c->stop_wait_s > 0 ? c->stop_wait_s : rig_env_get()->job_silence + RIG_CTL_STOP_MARGIN_S;
  until.tv_sec += (time_t)wait_s;
  until.tv_nsec += (long)((wait_s - (double)(time_t)wait_s) * 1e9);
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  if (pthread_timedjoin_np(c->thread, NULL, &until) != 0) return CTL_STUCK;
  c->started = false;
  /* Sends still in flight (a peer gone) keep their buffers: MPI may still
   * read them. They are kept on purpose, on a list of their own, not
   * leaked. */
  if (c->quiet) {
    rig_array_free(&c->sends);
  } else {
    abandon(c);
  }
  free(c->heard);
  free(c->sent);
  free(c->bye_sent);
  for (queue_link *l = rig_queue_take_all(&c->out), *next; l; l = next) {
    next = l->next;
    free(((outmsg *)l)->buf);
    free(l);
  }
  rig_queue_destroy(&c->out);
  return c->quiet ? CTL_IDLE : CTL_BUSY;
}
