/* A device's executor (executor.h): two threads. The runner takes the
 * device's hand-overs in value order and runs them; work already done (a
 * host run) it reports at once, the rest it passes to the completer, which
 * waits for each hand-over's ends and reports it, in order. With the
 * express path the runner reads its device's ring in this process's own
 * memory, in value order with the frames the control thread queues, and
 * reports by a store into the controller's timeline of the device. */
#include "executor.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/assert.h"
#include "base/clock.h"
#include "base/env.h"
#include "base/sync.h"
#include "express.h"
#include "express_messages.h"
#include "failure.h"
#include "far_copy.h"
#include "job.h"

/* Ends a run may have (the calloc of a frame's run, the ring's array). */
#define RUN_ENDS 64

typedef struct exec_route {
  bool ring; /* hand-overs come into the ring too (else frames alone) */
  /* Reports value v of h done (its ends reached), in value order. */
  void (*report)(executor *e, const handover *h, uint64_t v);
  bool copies_out; /* a copy out by frame is taken (its REPLY cannot be passed) */
  /* How long a hand-over past the next may wait for the one before it. */
  double (*late_s)(void);
  /* Idle, between hand-overs: the worker moved on by this thread while it
   * polls (whether it did something), how long it yields before it
   * sleeps, and how long it then sleeps on the worker (rig_peer_wait)
   * before it sleeps on its bell alone; quiet, whether it sleeps on the
   * worker still once it took a hand-over. */
  bool (*progress)(void);
  void (*polling)(bool on);
  double yield_s, watch_s;
  bool quiet_on_worker;
} exec_route;

struct executor {
  rig_job *job;
  holdings *held;
  uint32_t device;
  queue work, done; /* frames to run; hand-overs run, to report */
  pthread_t runner, completer;
  /* The express path (express.h): hand-overs come from the ring and the
   * work queue, taken in value order. */
  ex_ring *ring;
  ex_timeline *timeline;   /* reports go there, else as DONE frames */
  uint64_t expect;         /* the next value to run */
  _Atomic uint64_t pushed; /* frames queued on work */
  uint64_t popped;         /* and taken */
  double ahead_since;      /* the queue's head is past expect since */
  uint64_t missing;        /* a value that never came (the job fails) */
  uint64_t reported;       /* the last value reported done: they grow */
  const exec_route *route; /* how hand-overs come and reports go (below) */
  bool taken;              /* it took a hand-over: it polls after each one */
  bool poll;               /* RIG_JOB_POLL: once taken, it never sleeps */
  _Atomic bool stopping;
  handover from_ring; /* the hand-over being run, when it came by the ring */
  rig_point ring_ends[RUN_ENDS];
};

void rig_handover_free(handover *h) {
  free(h->payload);
  free(h->ends);
  free(h);
}

/* ---- running a hand-over ----------------------------------------------------------------- */

/* Memory `id`, if n bytes at `offset` lie inside it. */
static rig_status memory_range(executor *e, uint64_t id, uint64_t offset, uint64_t n,
                               rig_buffer **b, rig_error *err) {
  *b = rig_holdings_get(e->held, id).buffer;
  if (!*b) return rig_error_set(err, RIG_EREFUSED, "no memory %llu", (unsigned long long)id);
  if (offset > rig_buffer_length(*b) || n > rig_buffer_length(*b) - offset)
    return rig_error_set(err, RIG_EREFUSED, "%llu bytes at %llu past memory %llu",
                         (unsigned long long)n, (unsigned long long)offset, (unsigned long long)id);
  return RIG_OK;
}

/* Waits until the controller's timeline of the device shows v (or the job
 * failed). */
static void wait_timeline(executor *e, uint64_t v) {
  for (unsigned i = 0; atomic_load_explicit(&e->timeline->value, memory_order_acquire) < v &&
                       !atomic_load(&e->job->failed);
       i++) {
    if (i < 1024) {
      rig_cpu_relax();
    } else {
      struct timespec nap = {0, 20000};
      nanosleep(&nap, NULL);
    }
  }
}

static rig_status run_words(executor *e, handover *h, rig_error *err) {
  if (!h->ends) h->ends = calloc(RUN_ENDS, sizeof *h->ends);
  if (!h->ends) return rig_error_set(err, RIG_ENOMEM, "out of memory for a run");
  return rig_program_run_received(h->payload, h->f.h.payload, rig_holdings_program,
                                  rig_holdings_buffer, e->held, NULL, 0, h->ends, &h->nends, err);
}

static rig_status copy_in(executor *e, const handover *h, rig_error *err) {
  /* The core stages host bytes where the host does not address memory. */
  const frame_copy_in *c = &h->f.copy_in;
  rig_buffer *b;
  rig_status st = memory_range(e, c->memory, c->offset, h->f.h.payload, &b, err);
  return st == RIG_OK ? rig_buffer_write(b, c->offset, h->payload, h->f.h.payload, err) : st;
}

static rig_status copy_out(executor *e, const handover *h, rig_error *err) {
  /* Reports by message could pass its REPLY: the controller sends none. */
  if (!e->route->copies_out)
    return rig_error_set(err, RIG_EREFUSED,
                         "device %u: a copy out by frame, which a machine reached by messages "
                         "does not take",
                         e->device);
  /* The range first: a length past the memory is refused, not tried. */
  const frame_copy_out *c = &h->f.copy_out;
  rig_buffer *b;
  rig_status st = memory_range(e, c->memory, c->offset, c->length, &b, err);
  if (st != RIG_OK) return st;
  unsigned char *bytes = malloc(c->length ? c->length : 1);
  if (!bytes) return rig_error_set(err, RIG_ENOMEM, "out of memory for a copy");
  st = rig_buffer_read(b, c->offset, bytes, c->length, err);
  /* An express agent's REPLY names the copy's value and device: the
   * controller reaches the copy's point once the bytes are there, so the
   * device's earlier work must be reported first. */
  frame_header fh = h->f.h;
  if (st == RIG_OK && e->timeline) wait_timeline(e, fh.value - 1);
  if (st == RIG_OK) {
    frame r = {.h = {.kind = F_REPLY,
                     .request = fh.request,
                     .device = fh.device,
                     .value = e->timeline ? fh.value : 0,
                     .status = RIG_OK}};
    rig_ctl_send(&e->job->c, 0, &r, bytes, c->length, NULL);
  }
  free(bytes);
  return st;
}

static rig_status copy_between(executor *e, handover *h, rig_error *err) {
  const frame_copy *c = &h->f.copy;
  rig_buffer *src = rig_holdings_get(e->held, c->src).buffer;
  rig_buffer *dst = rig_holdings_get(e->held, c->dst).buffer;
  if (!src || !dst) return rig_error_set(err, RIG_EREFUSED, "no memory for a copy");
  h->ends = calloc(1, sizeof *h->ends);
  if (!h->ends) return rig_error_set(err, RIG_ENOMEM, "out of memory for a copy");
  h->nends = 1;
  return rig_buffer_copy_submit(src, c->src_offset, dst, c->dst_offset, c->length, NULL, 0,
                                &h->ends[0], err);
}

/* A copy from the ring (checked): the copy, then (EX_IN) its bytes. */
static rig_status ring_copy(executor *e, const handover *h, rig_error *err) {
  ex_copy c;
  memcpy(&c, h->payload, sizeof c);
  rig_buffer *b;
  rig_status st = memory_range(e, c.memory, c.offset, c.length, &b, err);
  if (st != RIG_OK) return st;
  if (h->f.h.kind == EX_IN)
    return rig_buffer_write(b, c.offset, h->payload + sizeof c, c.length, err);
  return rig_far_copy(e->job->express, h->f.h.kind == EX_IN_FAR, b, c.offset, c.address, c.length,
                      err);
}

/* A slot of the ring is memory the controller's process writes, and so
 * input as a frame is: its length must fit the slot and its kind, its
 * copy's length the bytes it carries. */
static rig_status check_slot(const handover *h, rig_error *err) {
  uint32_t len = h->f.h.payload, kind = h->f.h.kind;
  unsigned long long v = (unsigned long long)h->f.h.value;
  const char *why = NULL;
  ex_copy c;
  switch (kind) {
    case EX_WORDS:
      break;
    case EX_IN:
      if (len < sizeof c || len > EX_SLOT_BYTES) break;
      memcpy(&c, h->payload, sizeof c);
      if (c.length != len - sizeof c)
        return rig_error_set(err, RIG_EREFUSED,
                             "device %u: hand-over %llu from the ring: a copy of %llu bytes in a "
                             "slot of %u",
                             h->f.h.device, v, (unsigned long long)c.length, len);
      break;
    case EX_IN_FAR:
    case EX_OUT_FAR:
      if (len != sizeof c) why = "not a far copy's";
      break;
    case EX_DONE:
      if (len != 0) why = "a mark carries none";
      break;
    default:
      return rig_error_set(err, RIG_EREFUSED, "device %u: hand-over %llu from the ring: kind %u",
                           h->f.h.device, v, kind);
  }
  if (len > EX_SLOT_BYTES)
    why = "more than a slot holds";
  else if (kind == EX_IN && len < sizeof c)
    why = "too few for a copy";
  if (!why) return RIG_OK;
  return rig_error_set(err, RIG_EREFUSED, "device %u: hand-over %llu from the ring: %u bytes, %s",
                       h->f.h.device, v, len, why);
}

static rig_status run_handover(executor *e, handover *h, rig_error *err) {
  if (h->from_ring) {
    rig_status st = check_slot(h, err);
    if (st != RIG_OK) return st;
  }
  switch (h->f.h.kind) {
    case F_WORDS:
    case EX_WORDS:
      return run_words(e, h, err);
    case F_COPY_IN:
      return copy_in(e, h, err);
    case F_COPY_OUT:
      return copy_out(e, h, err);
    case F_COPY:
      return copy_between(e, h, err);
    case EX_DONE:
      return RIG_OK; /* the controller copied */
    case EX_IN:
    case EX_IN_FAR:
    case EX_OUT_FAR:
      return ring_copy(e, h, err);
  }
  return rig_error_set(err, RIG_EREFUSED, "a hand-over of kind %u", h->f.h.kind);
}

static bool all_reached(const handover *h) {
  for (size_t i = 0; i < h->nends; i++)
    if (!rig_point_reached(h->ends[i])) return false;
  return true;
}

/* ---- the routes (route.h): how hand-overs come and reports go -------------------------------- */

/* How long an executor whose hand-overs come by message yields after its
 * last one (a round trip by message is longer than one by memory: a
 * shorter watch sleeps through the next one, and every wake-up adds to
 * the next round trip), and how long it sleeps on the worker before it
 * sleeps on its bell alone. */
#define YIELD_MESSAGES_S 200e-6
#define WATCH_S          10e-3

static void report_by_frame(executor *e, const handover *h, uint64_t v) {
  (void)h;
  frame done = {.h = {.kind = F_DONE, .device = e->device, .value = v}};
  rig_ctl_send(&e->job->c, 0, &done, NULL, 0, NULL);
}

/* A store into the controller's timeline. A copy out's bytes go in a
 * REPLY frame, which moves the timeline there once they landed: a later
 * report must not pass it, so it is waited for (or the job's failure). */
static void report_by_memory(executor *e, const handover *h, uint64_t v) {
  if (h->f.h.kind != F_COPY_OUT)
    rig_express_report(e->timeline, v);
  else
    wait_timeline(e, v);
}

static void report_by_message(executor *e, const handover *h, uint64_t v) {
  (void)h;
  rig_error err;
  if (rig_express_msg_report(e->job->express, e->device, v, &err) != RIG_OK)
    rig_job_fail_here(e->job, &err);
}

static double a_second(void) {
  return 1.0;
}
/* Messages may come late (another host): they have the silence bound. */
static double the_silence_bound(void) {
  return rig_env_get()->job_silence;
}
static bool no_progress(void) {
  return false;
}
static void no_polling(bool on) {
  (void)on;
}

static const exec_route by_frames = {.ring = false,
                                     .report = report_by_frame,
                                     .copies_out = true,
                                     .late_s = a_second,
                                     .progress = no_progress,
                                     .polling = no_polling};
static const exec_route by_memory = {.ring = true,
                                     .report = report_by_memory,
                                     .copies_out = true,
                                     .late_s = a_second,
                                     .progress = no_progress,
                                     .polling = no_polling,
                                     .yield_s = 50e-6,
                                     .watch_s = 0,
                                     .quiet_on_worker = false};
static const exec_route by_messages = {.ring = true,
                                       .report = report_by_message,
                                       .copies_out = false,
                                       .late_s = the_silence_bound,
                                       .progress = rig_peer_progress,
                                       .polling = rig_peer_polling,
                                       .yield_s = YIELD_MESSAGES_S,
                                       .watch_s = WATCH_S,
                                       .quiet_on_worker = true};

/* Reports the work of h done (its ends reached), as the route does. */
static void report(executor *e, const handover *h) {
  /* Its ends are reached: a trace stamps its steps so before the report
   * leaves, never after the controller has it. */
  rig_trace_reached(h->ends, h->nends);
  uint64_t v = h->f.h.value;
  /* Reports go in value order (the runner takes them so, the completer
   * keeps it). */
  rig_assert(v > e->reported);
  e->reported = v;
  e->route->report(e, h, v);
}

/* A ring's hand-over handed to the completer: the copy keeps its ends. */
static handover *keep_ring_handover(const handover *h) {
  handover *c = calloc(1, sizeof *c);
  if (c) c->ends = calloc(h->nends ? h->nends : 1, sizeof *c->ends);
  if (!c || !c->ends) {
    free(c);
    return NULL;
  }
  c->f = h->f;
  c->f.h.payload = 0;
  memcpy(c->ends, h->ends, h->nends * sizeof *c->ends);
  c->nends = h->nends;
  return c;
}

/* ---- taking hand-overs in value order ------------------------------------------------------ */

/* Whether the queue's head is the next value. One past it has waited a
 * second for its predecessor, which never came by the ring: the job fails
 * (a broken protocol), and it is taken all the same. Under the queue's
 * lock. */
static bool head_is_next(const queue_link *head, void *ctx) {
  executor *e = ctx;
  uint64_t v = ((const handover *)head)->f.h.value;
  if (v > e->expect) {
    double now = rig_now_s();
    if (!e->ahead_since) e->ahead_since = now;
    if (now - e->ahead_since <= e->route->late_s()) return false;
    e->missing = e->expect;
  }
  e->popped++;
  e->ahead_since = 0;
  if (v >= e->expect) e->expect = v + 1;
  return true;
}

/* The next value's hand-over if it is there, by frame or in the ring. */
static handover *peek_next(executor *e) {
  if (atomic_load_explicit(&e->pushed, memory_order_acquire) != e->popped) {
    handover *h = (handover *)rig_queue_take_if(&e->work, head_is_next, e);
    if (e->missing) {
      rig_error err;
      rig_error_set(&err, RIG_EJOB, "device %u: hand-over %llu never came", e->device,
                    (unsigned long long)e->missing);
      rig_job_fail_here(e->job, &err);
      e->missing = 0;
    }
    if (h) return h;
  }
  const ex_slot *s = rig_express_peek(e->ring, e->expect);
  if (!s) return NULL;
  handover *h = &e->from_ring;
  /* The ring gives the next value only (rig_express_peek). */
  rig_assert(atomic_load_explicit(&s->value, memory_order_relaxed) == e->expect);
  h->f =
      (frame){.h = {.kind = s->kind, .device = e->device, .value = e->expect, .payload = s->len}};
  h->payload = (unsigned char *)s->bytes;
  h->ends = e->ring_ends;
  h->nends = 0;
  h->from_ring = true;
  e->expect++;
  return h;
}

/* Sleeps on the ring's bell, seen at `bell`, at most 100 ms (a lost wake
 * costs that): the hand-over there first if one is. Whether the bell rang. */
static bool sleep_on_bell(executor *e, uint32_t bell, handover **h) {
  atomic_store(&e->ring->sleeping, 1);
  atomic_thread_fence(memory_order_seq_cst);
  if ((*h = peek_next(e)) || atomic_load(&e->stopping)) {
    atomic_store(&e->ring->sleeping, 0);
    return true;
  }
  rig_futex_wait_shared(&e->ring->bell, bell, 100000000L);
  atomic_store(&e->ring->sleeping, 0);
  return atomic_load(&e->ring->bell) != bell;
}

/* The next hand-over in value order, from the ring or the queue: polled
 * about 50 us after the last, then slept for on the ring's bell (which the
 * controller rings after a hand-over, and the control thread after a
 * frame). An executor whose hand-overs come by message progresses the
 * worker itself meanwhile, and sleeps on its event fd (rig_peer_wait) with
 * the bell for a while: a message then wakes this thread and no other.
 * Only a ring starts the polling again: a sleep that ran out sleeps on,
 * and one that never took a hand-over sleeps from the start (a device no
 * program uses keeps the worker from the busy ones). Quiet, one that took
 * hand-overs by message still sleeps on the worker, beside the rail
 * thread: a hand-over after a long quiet then costs one wake, not two.
 * With RIG_JOB_POLL, one that took a hand-over never sleeps: no wake. */
static handover *wait_next(executor *e) {
  double idle_since = 0;
  bool polling = false;   /* this thread progresses the worker (rig_peer_polling) */
  bool quiet = !e->taken; /* slept, and no ring since: sleeps on */
  for (unsigned spin = 0;; spin++) {
    uint32_t bell = atomic_load(&e->ring->bell);
    handover *h = peek_next(e);
    if (h || atomic_load(&e->stopping)) {
      if (polling) e->route->polling(false);
      e->taken |= h != NULL;
      return h;
    }
    /* Quiet, one that takes hand-overs by message and took one sleeps on
     * the worker still (not counted as polling: the rail thread watches
     * too), so that the next one, however late, wakes it at once. */
    if (quiet && e->route->quiet_on_worker && e->taken) {
      if (e->route->progress()) continue;
      rig_peer_wait(&e->ring->bell, bell, 100000000L);
      if (atomic_load(&e->ring->bell) != bell) {
        quiet = false;
        spin = 0;
        idle_since = 0;
      }
      continue;
    }
    if (quiet) {
      quiet = !sleep_on_bell(e, bell, &h);
      e->taken |= h != NULL;
      if (h) return h;
      spin = 0;
      idle_since = 0;
      continue;
    }
    /* About a microsecond of spinning, then yields: on a host with fewer
     * cores than busy threads, the work this waits for may need this one. */
    if (spin < 256) {
      rig_cpu_relax();
      continue;
    }
    if (!polling) {
      e->route->polling(true);
      polling = true;
    }
    if (e->route->progress()) continue;
    double now = rig_now_s();
    if (!idle_since) idle_since = now;
    /* Polling (RIG_JOB_POLL), it yields for as long as the job lasts. */
    if (e->poll || now - idle_since < e->route->yield_s) {
      sched_yield();
      continue;
    }
    /* For a while more it sleeps on the worker: its next hand-over is
     * likely soon. Idle longer, it leaves the worker to the rail thread
     * (or a busier executor) and sleeps on the bell, as one that takes
     * hand-overs from memory does. */
    if (now - idle_since < e->route->watch_s) {
      rig_peer_wait(&e->ring->bell, bell, (int64_t)(e->route->watch_s * 1e9));
      continue;
    }
    if (polling) e->route->polling(false);
    polling = false;
    quiet = true;
  }
}

/* ---- the threads ---------------------------------------------------------------------------- */

static void *runner_main(void *arg) {
  executor *e = arg;
  handover *h;
  while ((h = e->ring ? wait_next(e) : (handover *)rig_queue_take(&e->work))) {
    rig_error err;
    if (!atomic_load(&e->job->failed) && run_handover(e, h, &err) != RIG_OK)
      rig_job_fail_here(e->job, &err);
    if (!h->from_ring) rig_queue_finished(&e->work);
    /* Work already done (a host run) is reported now, when nothing before
     * it waits in the completer: a hand-off less. */
    if (!atomic_load(&e->job->failed) && all_reached(h) && rig_queue_idle(&e->done)) {
      report(e, h);
      if (!h->from_ring) rig_handover_free(h);
      continue;
    }
    if (h->from_ring && !(h = keep_ring_handover(h))) {
      rig_job_fail_with(e->job, true, "out of memory for a run");
      continue;
    }
    rig_queue_push(&e->done, &h->link); /* in order, also when it failed */
  }
  return NULL;
}

static void *completer_main(void *arg) {
  executor *e = arg;
  handover *h;
  while ((h = (handover *)rig_queue_take(&e->done))) {
    rig_error err;
    bool ok = !atomic_load(&e->job->failed);
    /* A device lost fails the job at once, whatever the others still run. */
    if (ok && rig_points_wait(h->ends, h->nends, &err) != RIG_OK) {
      rig_job_fail_here(e->job, &err);
      ok = false;
    }
    if (ok) report(e, h);
    rig_handover_free(h);
    rig_queue_finished(&e->done);
  }
  return NULL;
}

rig_status rig_executor_start(rig_job *job, holdings *table, uint32_t device, executor **out,
                              rig_error *err) {
  executor *e = calloc(1, sizeof *e);
  if (!e) return rig_error_set(err, RIG_ENOMEM, "machine %d: out of memory", job->rank);
  e->job = job;
  e->held = table;
  e->device = device;
  e->poll = rig_env_get()->job_poll;
  /* The route, chosen once: by frames the work queue alone; else the
   * device's ring too, and (by memory) the controller's timeline. */
  job_route route = rig_express_route(job->express, job->rank);
  e->route = route == ROUTE_MEMORY     ? &by_memory
             : route == ROUTE_MESSAGES ? &by_messages
                                       : &by_frames;
  e->ring = e->route->ring ? rig_express_my_ring(job->express, device) : NULL;
  e->timeline =
      route == ROUTE_MEMORY ? rig_express_my_timeline(job->express, job->rank, device) : NULL;
  if (e->route->ring && (!e->ring || (route == ROUTE_MEMORY && !e->timeline))) {
    free(e);
    return rig_error_set(err, RIG_EJOB, "machine %d: device %u has no place in the job's express",
                         job->rank, device);
  }
  e->expect = 1;
  rig_queue_init(&e->work);
  rig_queue_init(&e->done);
  bool runner = pthread_create(&e->runner, NULL, runner_main, e) == 0;
  if (runner && pthread_create(&e->completer, NULL, completer_main, e) == 0) {
    *out = e;
    return RIG_OK;
  }
  if (runner) {
    /* The runner is idle: nothing was queued yet. */
    rig_queue_stop(&e->work);
    atomic_store(&e->stopping, true);
    if (e->ring) rig_express_ring_wake(e->ring);
    pthread_join(e->runner, NULL);
  }
  rig_queue_destroy(&e->work);
  rig_queue_destroy(&e->done);
  free(e);
  return rig_error_set(err, RIG_ESYS, "machine %d: cannot start a device's executor", job->rank);
}

void rig_executor_push(executor *e, handover *h) {
  rig_queue_push(&e->work, &h->link);
  if (e->ring) {
    atomic_fetch_add_explicit(&e->pushed, 1, memory_order_release);
    rig_express_ring_wake(e->ring);
  }
}

void rig_executor_drain(executor *e) {
  rig_queue_drain(&e->work);
  rig_queue_drain(&e->done);
}

void rig_executor_stop(executor *e) {
  rig_executor_stop_within(e, -1);
}

bool rig_executor_stop_within(executor *e, double grace) {
  rig_queue_stop(&e->work);
  atomic_store(&e->stopping, true);
  if (e->ring) rig_express_ring_wake(e->ring);
  rig_queue_stop(&e->done);
  if (grace < 0) {
    pthread_join(e->runner, NULL);
    pthread_join(e->completer, NULL);
  } else {
    bool runner = rig_join_within(e->runner, grace);
    bool completer = rig_join_within(e->completer, runner ? grace : 0);
    if (!runner || !completer) return false;
  }
  rig_queue_destroy(&e->work);
  rig_queue_destroy(&e->done);
  free(e);
  return true;
}
