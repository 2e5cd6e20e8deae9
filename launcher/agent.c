/* The agent: hosts its machine's devices for the controller. Frames come
 * from the control thread and go to queues, so that it never blocks:
 * requests (memory, images, programs, entries, close) to one request
 * thread, in order; the hand-overs of each device to that device's
 * executor, in order, which runs them (a program's run words, copies) and
 * passes their ends to the device's completer, which reports each value
 * done once its work is done, in order. With the express path (express.h)
 * an executor also takes its device's hand-overs from its ring in shared
 * memory, in value order with the frames, and reports by a store into the
 * controller's word. A run the agent refuses or that fails at a step
 * fails the job. */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/sync.h"
#include "express.h"
#include "job_internal.h"

typedef struct item {
  struct item *next;
  frame f;
  unsigned char *payload;
  rig_point *ends; /* for the completer */
  size_t nends;
  bool ring; /* the executor's own: a hand-over read from its ring */
} item;

typedef struct queue {
  pthread_mutex_t lock;
  pthread_cond_t more, empty;
  item *head, *tail;
  size_t busy; /* items taken and not finished */
  bool stop;
} queue;

/* Ends a run may have (the calloc of a frame's run, the ring's array). */
#define RUN_ENDS 64

typedef struct executor {
  struct agent *a;
  uint32_t device;
  queue work, done;
  pthread_t worker, completer;
  /* The express path (express.h): hand-overs come from the ring and the
   * work queue, taken in value order. */
  ex_ring *ring;
  ex_word *done_word;      /* reports go there, else as DONE frames */
  uint64_t expect;         /* the next value to run */
  _Atomic uint64_t pushed; /* frames queued on work */
  uint64_t popped;         /* and taken */
  double ahead_since;      /* the queue's head is past expect since */
  _Atomic bool stopping;
  item ring_item;
  rig_point ring_ends[RUN_ENDS];
} executor;

typedef struct slot {
  rig_buffer *buffer;
  rig_image *image;
  rig_program *program;
} slot;

struct agent {
  rig_job *job;
  size_t ndevices;
  rig_device **devices;
  executor **execs;
  queue requests;
  pthread_t request_thread;
  pthread_mutex_t lock; /* the tables below */
  slot *slots;          /* memory, images and programs, by id - 1 */
  size_t nslots, room;
  rig_trace *trace; /* when the controller traces: this process's sink */
};

/* ---- queues --------------------------------------------------------------------- */

static void queue_init(queue *q) {
  pthread_mutex_init(&q->lock, NULL);
  pthread_cond_init(&q->more, NULL);
  pthread_cond_init(&q->empty, NULL);
}

static void queue_destroy(queue *q) {
  pthread_mutex_destroy(&q->lock);
  pthread_cond_destroy(&q->more);
  pthread_cond_destroy(&q->empty);
}

static void queue_push(queue *q, item *it) {
  pthread_mutex_lock(&q->lock);
  it->next = NULL;
  if (q->tail)
    q->tail->next = it;
  else
    q->head = it;
  q->tail = it;
  pthread_cond_signal(&q->more);
  pthread_mutex_unlock(&q->lock);
}

static item *queue_take(queue *q) {
  pthread_mutex_lock(&q->lock);
  while (!q->head && !q->stop) pthread_cond_wait(&q->more, &q->lock);
  item *it = q->head;
  if (it) {
    q->head = it->next;
    if (!q->head) q->tail = NULL;
    q->busy++;
  }
  pthread_mutex_unlock(&q->lock);
  return it;
}

static void queue_finished(queue *q) {
  pthread_mutex_lock(&q->lock);
  q->busy--;
  if (!q->head && !q->busy) pthread_cond_broadcast(&q->empty);
  pthread_mutex_unlock(&q->lock);
}

static void queue_drain(queue *q) {
  pthread_mutex_lock(&q->lock);
  while (q->head || q->busy) pthread_cond_wait(&q->empty, &q->lock);
  pthread_mutex_unlock(&q->lock);
}

/* Nothing queued or being handled. */
static bool queue_idle(queue *q) {
  pthread_mutex_lock(&q->lock);
  bool idle = !q->head && !q->busy;
  pthread_mutex_unlock(&q->lock);
  return idle;
}

static void queue_stop(queue *q) {
  pthread_mutex_lock(&q->lock);
  q->stop = true;
  pthread_cond_broadcast(&q->more);
  pthread_mutex_unlock(&q->lock);
}

static void item_free(item *it) {
  free(it->payload);
  free(it->ends);
  free(it);
}

/* ---- answers ---------------------------------------------------------------------- */

static void reply(agent *a, const frame *req, rig_status st, uint64_t value, uint32_t max_threads,
                  const void *payload, size_t n) {
  frame f = {
      .h = {.kind = F_REPLY, .request = req->h.request, .value = value, .status = (int32_t)st},
      .reply.max_threads = max_threads};
  rig_ctl_send(a->job, 0, &f, payload, n, NULL);
}

static void refuse(agent *a, const frame *req, const rig_error *err) {
  reply(a, req, err->code, 0, 0, err->message, strlen(err->message));
}

/* The job fails with this machine's reason. */
static void fail(agent *a, const rig_error *err) {
  char cause[RIG_ERROR_MESSAGE_MAX + 32];
  snprintf(cause, sizeof cause, "machine %d: %s", a->job->rank, err->message);
  rig_job_fail_with(a->job, true, cause);
}

/* ---- tables ------------------------------------------------------------------------- */

/* Ids count from 1, never reused: a late frame cannot reach a later slot. */
static rig_status add_slot(agent *a, slot s, uint64_t *id, rig_error *err) {
  pthread_mutex_lock(&a->lock);
  if (a->nslots == a->room) {
    size_t room = a->room ? 2 * a->room : 64;
    slot *bigger = realloc(a->slots, room * sizeof *bigger);
    if (!bigger) {
      pthread_mutex_unlock(&a->lock);
      return rig_error_set(err, RIG_ENOMEM, "out of memory on machine %d", a->job->rank);
    }
    a->slots = bigger;
    a->room = room;
  }
  a->slots[a->nslots++] = s;
  *id = a->nslots;
  pthread_mutex_unlock(&a->lock);
  return RIG_OK;
}

static slot get_slot(agent *a, uint64_t id) {
  slot s = {0};
  pthread_mutex_lock(&a->lock);
  if (id >= 1 && id <= a->nslots) s = a->slots[id - 1];
  pthread_mutex_unlock(&a->lock);
  return s;
}

static slot take_slot(agent *a, uint64_t id) {
  slot s = {0};
  pthread_mutex_lock(&a->lock);
  if (id >= 1 && id <= a->nslots) {
    s = a->slots[id - 1];
    memset(&a->slots[id - 1], 0, sizeof s);
  }
  pthread_mutex_unlock(&a->lock);
  return s;
}

static rig_program *program_of(void *ctx, uint64_t id) {
  return get_slot(ctx, id).program;
}

static rig_buffer *region_of(void *ctx, uint64_t id) {
  return get_slot(ctx, id).buffer;
}

static rig_device *device_of(void *ctx, int64_t id) {
  agent *a = ctx;
  return id >= 0 && (size_t)id < a->ndevices ? a->devices[id] : NULL;
}

/* ---- requests ------------------------------------------------------------------------- */

static void do_alloc(agent *a, const frame *f) {
  rig_error err;
  rig_buffer *b;
  rig_device *d = device_of(a, f->h.device);
  if (!d) {
    rig_error_set(&err, RIG_EREFUSED, "no device %u on machine %d", f->h.device, a->job->rank);
    refuse(a, f, &err);
    return;
  }
  /* Memory of the host is shared with the controller where the express
   * path is up: it copies in and out of it itself (express.h). */
  const void *address = NULL;
  size_t len = 0;
  b = f->h.device == 0 ? rig_express_alloc(a->job->express, f->alloc.bytes, &address, &len) : NULL;
  if (!b &&
      rig_buffer_create(d, (rig_buffer_kind)f->alloc.kind, f->alloc.bytes, &b, &err) != RIG_OK) {
    refuse(a, f, &err);
    return;
  }
  uint64_t id;
  if (add_slot(a, (slot){.buffer = b}, &id, &err) != RIG_OK) {
    rig_buffer_release(b);
    refuse(a, f, &err);
    return;
  }
  reply(a, f, RIG_OK, id, 0, address, len);
}

static void do_image(agent *a, const frame *f, const unsigned char *bytes) {
  rig_error err;
  rig_device *d = device_of(a, f->h.device);
  size_t n = f->h.payload;
  slot s = {0};
  rig_status st;
  if (!d) {
    st = rig_error_set(&err, RIG_EREFUSED, "no device %u on machine %d", f->h.device, a->job->rank);
  } else if (n >= 11 && memcmp(bytes, "rig.remote\n", 11) == 0) {
    st = rig_program_load_received(bytes, n, device_of, a, rig_job_rails(a->job), &s.program, &err);
  } else {
    st = rig_image_load(d, bytes, n, &s.image, &err);
  }
  uint64_t id;
  if (st == RIG_OK && (st = add_slot(a, s, &id, &err)) != RIG_OK) {
    rig_program_release(s.program);
    rig_image_release(s.image);
  }
  if (st != RIG_OK) {
    refuse(a, f, &err);
    return;
  }
  reply(a, f, RIG_OK, id, 0, NULL, 0);
}

static void do_entry(agent *a, const frame *f, const unsigned char *name) {
  rig_error err;
  uint64_t image = f->entry.image;
  size_t n = f->h.payload;
  slot s = get_slot(a, image);
  if (s.program) {
    /* A program's functions: "run", and "launch:<i>" for the threads the
     * i-th launch's function may have. */
    uint32_t threads[1];
    unsigned long i;
    char text[32];
    snprintf(text, sizeof text, "%.*s", (int)(n < 31 ? n : 31), (const char *)name);
    if (n == 3 && memcmp(name, "run", 3) == 0) {
      reply(a, f, RIG_OK, image, 0, NULL, 0);
    } else if (sscanf(text, "launch:%lu", &i) == 1 &&
               i < rig_program_threads(s.program, threads, 0)) {
      uint32_t *all = calloc(i + 1, sizeof *all);
      if (all) rig_program_threads(s.program, all, i + 1);
      reply(a, f, RIG_OK, 0, all ? all[i] : 0, NULL, 0);
      free(all);
    } else {
      rig_error_set(&err, RIG_EREFUSED, "machine %d: a program has no function \"%s\"",
                    a->job->rank, text);
      refuse(a, f, &err);
    }
    return;
  }
  rig_entry e;
  if (!s.image) {
    rig_error_set(&err, RIG_EREFUSED, "machine %d: no image %llu", a->job->rank,
                  (unsigned long long)image);
    refuse(a, f, &err);
  } else if (rig_image_entry(s.image, (const char *)name, n, &e, &err) != RIG_OK) {
    refuse(a, f, &err);
  } else {
    reply(a, f, RIG_OK, e.value, e.max_threads, NULL, 0);
  }
}

/* Every hand-over queued before the request is done. */
static void drain_handovers(agent *a) {
  for (size_t d = 0; d < a->ndevices; d++)
    if (a->execs[d]) {
      queue_drain(&a->execs[d]->work);
      queue_drain(&a->execs[d]->done);
    }
}

static void do_close(agent *a, const frame *f) {
  drain_handovers(a);
  reply(a, f, RIG_OK, 0, 0, NULL, 0);
  pthread_mutex_lock(&a->job->lock);
  a->job->closed = true;
  pthread_cond_broadcast(&a->job->changed);
  pthread_mutex_unlock(&a->job->lock);
}

/* The trace the controller asked for becomes this process's sink. */
static void do_trace_start(agent *a, const frame *f) {
  rig_error err;
  /* The controller's message names this machine. */
  if (a->trace) {
    rig_error_set(&err, RIG_EINVAL, "a trace started twice");
    refuse(a, f, &err);
  } else if (f->h.value > SIZE_MAX ||
             rig_trace_make((size_t)f->h.value, &a->trace, &err) != RIG_OK) {
    if (f->h.value > SIZE_MAX)
      rig_error_set(&err, RIG_EINVAL, "a trace of %llu events", (unsigned long long)f->h.value);
    refuse(a, f, &err);
  } else {
    rig_trace_set(a->trace);
    reply(a, f, RIG_OK, 0, 0, NULL, 0);
  }
}

/* The trace, once the hand-overs before the request are done and every
 * step's reach seen (or a bound passed: those steps show no work). */
static void do_trace(agent *a, const frame *f) {
  rig_error err;
  uint8_t *bytes = NULL;
  size_t len = 0;
  if (!a->trace) {
    rig_error_set(&err, RIG_EINVAL, "no trace started");
    refuse(a, f, &err);
    return;
  }
  drain_handovers(a);
  rig_trace_settle(a->trace, 10000);
  if (rig_trace_encode(a->trace, &bytes, &len, &err) != RIG_OK) {
    refuse(a, f, &err);
    return;
  }
  reply(a, f, RIG_OK, 0, 0, bytes, len);
  free(bytes);
}

static void rail_answer(rig_job *job, const frame *req, rig_status st, const void *payload,
                        size_t n) {
  reply(job->agent, req, st, 0, 0, payload, n);
}

static void *request_main(void *arg) {
  agent *a = arg;
  item *it;
  while ((it = queue_take(&a->requests))) {
    const frame *f = &it->f;
    slot s;
    switch (f->h.kind) {
      case F_ALLOC:
        do_alloc(a, f);
        break;
      case F_IMAGE:
        do_image(a, f, it->payload);
        break;
      case F_ENTRY:
        do_entry(a, f, it->payload);
        break;
      case F_CLOSE:
        do_close(a, f);
        break;
      case F_TRACE_START:
        do_trace_start(a, f);
        break;
      case F_TRACE:
        do_trace(a, f);
        break;
      case F_RAIL_MAKE:
      case F_RAIL_ATTACH:
      case F_RAIL_RELEASE:
        rig_agent_rail(a->job, f, it->payload, rail_answer);
        break;
      case F_FREE:
        s = take_slot(a, f->release.id);
        rig_buffer_release(s.buffer);
        break;
      case F_UNLOAD:
        s = take_slot(a, f->release.id);
        rig_program_release(s.program);
        rig_image_release(s.image);
        break;
      default:
        break;
    }
    item_free(it);
    queue_finished(&a->requests);
  }
  return NULL;
}

/* ---- hand-overs -------------------------------------------------------------------------- */

/* Memory `id`, if n bytes at `offset` lie inside it. */
static rig_status memory_range(agent *a, uint64_t id, uint64_t offset, uint64_t n, rig_buffer **b,
                               rig_error *err) {
  *b = get_slot(a, id).buffer;
  if (!*b) return rig_error_set(err, RIG_EREFUSED, "no memory %llu", (unsigned long long)id);
  if (offset > rig_buffer_length(*b) || n > rig_buffer_length(*b) - offset)
    return rig_error_set(err, RIG_EREFUSED, "%llu bytes at %llu past memory %llu",
                         (unsigned long long)n, (unsigned long long)offset, (unsigned long long)id);
  return RIG_OK;
}

/* Waits until the controller's word of the device shows v (or the job
 * failed). */
static void wait_word(executor *e, uint64_t v) {
  for (unsigned i = 0; atomic_load_explicit(&e->done_word->word, memory_order_acquire) < v &&
                       !atomic_load(&e->a->job->failed);
       i++) {
    if (i < 1024) {
      rig_cpu_relax();
    } else {
      struct timespec nap = {0, 20000};
      nanosleep(&nap, NULL);
    }
  }
}

static rig_status run_handover(executor *e, item *it, rig_error *err) {
  agent *a = e->a;
  const frame *f = &it->f;
  switch (f->h.kind) {
    case F_WORDS: {
      size_t room = RUN_ENDS;
      if (!it->ends) it->ends = calloc(room, sizeof *it->ends);
      if (!it->ends) return rig_error_set(err, RIG_ENOMEM, "out of memory for a run");
      return rig_program_run_received(it->payload, f->h.payload, program_of, region_of, a, NULL, 0,
                                      it->ends, &it->nends, err);
    }
    case F_COPY_IN: {
      /* The core stages host bytes where the host does not address memory. */
      const frame_copy_in *c = &f->copy_in;
      rig_buffer *b;
      rig_status st = memory_range(a, c->memory, c->offset, f->h.payload, &b, err);
      return st == RIG_OK ? rig_buffer_write(b, c->offset, it->payload, f->h.payload, err) : st;
    }
    case F_COPY_OUT: {
      /* The range first: a length past the memory is refused, not tried. */
      const frame_copy_out *c = &f->copy_out;
      rig_buffer *b;
      rig_status st = memory_range(a, c->memory, c->offset, c->length, &b, err);
      if (st != RIG_OK) return st;
      unsigned char *bytes = malloc(c->length ? c->length : 1);
      if (!bytes) return rig_error_set(err, RIG_ENOMEM, "out of memory for a copy");
      st = rig_buffer_read(b, c->offset, bytes, c->length, err);
      /* An express agent's REPLY names the copy's value and device: the
       * controller reaches the copy's point once the bytes are there, so
       * the device's earlier work must be reported first. */
      frame_header h = f->h;
      if (st == RIG_OK && e->done_word) wait_word(e, h.value - 1);
      if (st == RIG_OK) {
        frame r = {.h = {.kind = F_REPLY,
                         .request = h.request,
                         .device = h.device,
                         .value = e->done_word ? h.value : 0,
                         .status = RIG_OK}};
        rig_ctl_send(a->job, 0, &r, bytes, c->length, NULL);
      }
      free(bytes);
      return st;
    }
    case F_COPY: {
      const frame_copy *c = &f->copy;
      rig_buffer *src = get_slot(a, c->src).buffer, *dst = get_slot(a, c->dst).buffer;
      if (!src || !dst) return rig_error_set(err, RIG_EREFUSED, "no memory for a copy");
      it->ends = calloc(1, sizeof *it->ends);
      if (!it->ends) return rig_error_set(err, RIG_ENOMEM, "out of memory for a copy");
      it->nends = 1;
      return rig_buffer_copy_submit(src, c->src_offset, dst, c->dst_offset, c->length, NULL, 0,
                                    &it->ends[0], err);
    }
    case EX_WORDS:
      return rig_program_run_received(it->payload, f->h.payload, program_of, region_of, a, NULL, 0,
                                      it->ends, &it->nends, err);
    case EX_DONE:
      return RIG_OK; /* the controller copied */
    case EX_IN:
    case EX_IN_FAR:
    case EX_OUT_FAR: {
      /* From the ring: the copy, then (EX_IN) its bytes. */
      ex_copy c;
      memcpy(&c, it->payload, sizeof c);
      rig_buffer *b;
      rig_status st = memory_range(a, c.memory, c.offset, c.length, &b, err);
      if (st != RIG_OK) return st;
      if (f->h.kind == EX_IN)
        return rig_buffer_write(b, c.offset, it->payload + sizeof c, c.length, err);
      return rig_express_far(a->job->express, f->h.kind == EX_IN_FAR, b, c.offset, c.address,
                             c.length, err);
    }
  }
  return rig_error_set(err, RIG_EREFUSED, "a hand-over of kind %u", f->h.kind);
}

static bool all_reached(const item *it) {
  for (size_t i = 0; i < it->nends; i++)
    if (!rig_point_reached(it->ends[i])) return false;
  return true;
}

/* Reports the work of it done: a store into the controller's word, or a
 * DONE frame. A copy out's bytes go in a REPLY frame, which moves the word
 * there once they landed: a later report must not pass it, so it is waited
 * for (or the job's failure). */
static void report(executor *e, const item *it) {
  uint64_t v = it->f.h.value;
  if (!e->done_word) {
    frame done = {.h = {.kind = F_DONE, .device = e->device, .value = v}};
    rig_ctl_send(e->a->job, 0, &done, NULL, 0, NULL);
    return;
  }
  if (it->f.h.kind != F_COPY_OUT) {
    rig_express_report(e->done_word, v);
    return;
  }
  wait_word(e, v);
}

/* A ring's hand-over handed to the completer: the copy keeps its ends. */
static item *ring_copy(const item *it) {
  item *c = calloc(1, sizeof *c);
  if (c) c->ends = calloc(it->nends ? it->nends : 1, sizeof *c->ends);
  if (!c || !c->ends) {
    free(c);
    return NULL;
  }
  c->f = it->f;
  c->f.h.payload = 0;
  memcpy(c->ends, it->ends, it->nends * sizeof *c->ends);
  c->nends = it->nends;
  return c;
}

/* The queue's head if it is the next value. One past it has waited a
 * second for its predecessor, which never came by the ring: the job fails
 * (a broken protocol), and it is taken all the same. */
static item *from_queue(executor *e) {
  queue *q = &e->work;
  item *it = NULL;
  bool lost = false;
  uint64_t missing = e->expect;
  pthread_mutex_lock(&q->lock);
  if (q->head && q->head->f.h.value > e->expect) {
    double now = rig_now_s();
    if (!e->ahead_since)
      e->ahead_since = now;
    else
      lost = now - e->ahead_since > 1.0;
  }
  if (q->head && (q->head->f.h.value <= e->expect || lost)) {
    it = q->head;
    q->head = it->next;
    if (!q->head) q->tail = NULL;
    q->busy++;
    e->popped++;
    e->ahead_since = 0;
    if (it->f.h.value >= e->expect) e->expect = it->f.h.value + 1;
  }
  pthread_mutex_unlock(&q->lock);
  if (lost) {
    rig_error err;
    rig_error_set(&err, RIG_EJOB, "device %u: hand-over %llu never came", e->device,
                  (unsigned long long)missing);
    fail(e->a, &err);
  }
  return it;
}

static item *look(executor *e) {
  if (atomic_load_explicit(&e->pushed, memory_order_acquire) != e->popped) {
    item *it = from_queue(e);
    if (it) return it;
  }
  const ex_slot *s = rig_express_peek(e->ring, e->expect);
  if (!s) return NULL;
  item *it = &e->ring_item;
  it->f =
      (frame){.h = {.kind = s->kind, .device = e->device, .value = e->expect, .payload = s->len}};
  it->payload = (unsigned char *)s->bytes;
  it->ends = e->ring_ends;
  it->nends = 0;
  it->ring = true;
  e->expect++;
  return it;
}

/* The next hand-over in value order, from the ring or the queue: polled
 * about 50 us after the last, then slept for on the ring's bell (which the
 * controller rings after a hand-over, and the control thread after a
 * frame), a sleep bounded so that a lost wake costs at most that. */
static item *take_next(executor *e) {
  double idle_since = 0;
  for (unsigned spin = 0;; spin++) {
    uint32_t bell = atomic_load(&e->ring->bell);
    item *it = look(e);
    if (it) return it;
    if (atomic_load(&e->stopping)) return NULL;
    /* About a microsecond of spinning, then yields: on a host with fewer
     * cores than busy threads, the work this waits for may need this one. */
    if (spin < 256) {
      rig_cpu_relax();
      continue;
    }
    sched_yield();
    double now = rig_now_s();
    if (!idle_since) idle_since = now;
    if (now - idle_since < 50e-6) continue;
    atomic_store(&e->ring->sleeping, 1);
    atomic_thread_fence(memory_order_seq_cst);
    if ((it = look(e)) || atomic_load(&e->stopping)) {
      atomic_store(&e->ring->sleeping, 0);
      return it;
    }
    rig_futex_wait_shared(&e->ring->bell, bell, 100000000L);
    atomic_store(&e->ring->sleeping, 0);
    idle_since = 0;
    spin = 0;
  }
}

static void *worker_main(void *arg) {
  executor *e = arg;
  item *it;
  while ((it = e->ring ? take_next(e) : queue_take(&e->work))) {
    rig_error err;
    if (!atomic_load(&e->a->job->failed)) {
      if (run_handover(e, it, &err) != RIG_OK) fail(e->a, &err);
    }
    if (!it->ring) queue_finished(&e->work);
    /* Work already done (a host run) is reported now, when nothing before
     * it waits in the completer: a hand-off less. */
    if (!atomic_load(&e->a->job->failed) && all_reached(it) && queue_idle(&e->done)) {
      report(e, it);
      if (!it->ring) item_free(it);
      continue;
    }
    if (it->ring && !(it = ring_copy(it))) {
      rig_job_fail_with(e->a->job, true, "out of memory for a run");
      continue;
    }
    queue_push(&e->done, it); /* in order, also when it failed */
  }
  return NULL;
}

static void *completer_main(void *arg) {
  executor *e = arg;
  item *it;
  while ((it = queue_take(&e->done))) {
    rig_error err;
    bool ok = !atomic_load(&e->a->job->failed);
    for (size_t i = 0; ok && i < it->nends; i++)
      if (rig_point_wait(it->ends[i], &err) != RIG_OK) {
        fail(e->a, &err);
        ok = false;
      }
    if (ok) report(e, it);
    item_free(it);
    queue_finished(&e->done);
  }
  return NULL;
}

/* Device `device`'s executor, started at its first hand-over. */
static rig_status executor_of(agent *a, uint32_t device, executor **out, rig_error *err) {
  if (device >= a->ndevices)
    return rig_error_set(err, RIG_EREFUSED, "machine %d: a hand-over to no device %u", a->job->rank,
                         device);
  if ((*out = a->execs[device])) return RIG_OK;
  executor *e = calloc(1, sizeof *e);
  if (!e) return rig_error_set(err, RIG_ENOMEM, "machine %d: out of memory", a->job->rank);
  e->a = a;
  e->device = device;
  e->ring = rig_express_my_ring(a->job->express, device);
  e->done_word = e->ring ? rig_express_my_word(a->job->express, a->job->rank, device) : NULL;
  e->expect = 1;
  queue_init(&e->work);
  queue_init(&e->done);
  if (pthread_create(&e->worker, NULL, worker_main, e) != 0) {
    queue_destroy(&e->work);
    queue_destroy(&e->done);
    free(e);
    return rig_error_set(err, RIG_ESYS, "machine %d: cannot start a device's executor",
                         a->job->rank);
  }
  if (pthread_create(&e->completer, NULL, completer_main, e) != 0) {
    /* The worker is idle: nothing was queued yet. */
    queue_stop(&e->work);
    pthread_join(e->worker, NULL);
    queue_destroy(&e->work);
    queue_destroy(&e->done);
    free(e);
    return rig_error_set(err, RIG_ESYS, "machine %d: cannot start a device's executor",
                         a->job->rank);
  }
  *out = a->execs[device] = e;
  return RIG_OK;
}

/* ---- the agent ------------------------------------------------------------------------------ */

void rig_agent_frame(agent *a, const frame *f, const unsigned char *payload) {
  const frame_header *h = &f->h;
  if (h->kind == F_PING) {
    /* Answered here, on the control thread, so that the times it gives
     * are as near the frame's arrival and its answer's leaving as can be. */
    uint64_t t[2] = {rig_trace_now(), 0};
    t[1] = rig_trace_now();
    reply(a, f, RIG_OK, 0, 0, t, sizeof t);
    return;
  }
  item *it = calloc(1, sizeof *it);
  if (it) it->payload = malloc(h->payload ? h->payload : 1);
  if (!it || !it->payload) {
    free(it);
    rig_job_fail_with(a->job, true, "out of memory taking a frame");
    return;
  }
  it->f = *f;
  if (h->payload) memcpy(it->payload, payload, h->payload);
  switch (h->kind) {
    case F_WORDS:
    case F_COPY_IN:
    case F_COPY_OUT:
    case F_COPY: {
      executor *e;
      rig_error err;
      if (executor_of(a, h->device, &e, &err) != RIG_OK) {
        item_free(it);
        rig_job_fail_with(a->job, true, err.message);
        return;
      }
      queue_push(&e->work, it);
      if (e->ring) {
        atomic_fetch_add_explicit(&e->pushed, 1, memory_order_release);
        rig_express_ring_wake(e->ring);
      }
      return;
    }
    default:
      queue_push(&a->requests, it);
  }
}

rig_status rig_agent_create(rig_job *job, agent **out, rig_error *err) {
  agent *a = calloc(1, sizeof *a);
  if (!a) return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  a->job = job;
  a->ndevices = job->machines[job->rank].ndevices;
  a->devices = job->devices[job->rank];
  a->execs = calloc(a->ndevices ? a->ndevices : 1, sizeof *a->execs);
  if (!a->execs) {
    free(a);
    return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  }
  pthread_mutex_init(&a->lock, NULL);
  queue_init(&a->requests);
  if (pthread_create(&a->request_thread, NULL, request_main, a) != 0) {
    queue_destroy(&a->requests);
    pthread_mutex_destroy(&a->lock);
    free(a->execs);
    free(a);
    return rig_error_set(err, RIG_ESYS, "cannot start the agent's request thread");
  }
  /* With rings, every device's executor runs from the start: hand-overs
   * reach it with no thread in between. */
  for (uint32_t d = 0; d < a->ndevices && rig_express_my_ring(job->express, d); d++) {
    executor *e;
    rig_status st = executor_of(a, d, &e, err);
    if (st != RIG_OK) {
      rig_agent_free(a);
      return st;
    }
  }
  *out = a;
  return RIG_OK;
}

void rig_agent_free(agent *a) {
  queue_stop(&a->requests);
  pthread_join(a->request_thread, NULL);
  for (size_t d = 0; d < a->ndevices; d++) {
    executor *e = a->execs[d];
    if (!e) continue;
    queue_stop(&e->work);
    atomic_store(&e->stopping, true);
    if (e->ring) rig_express_ring_wake(e->ring);
    pthread_join(e->worker, NULL);
    queue_stop(&e->done);
    pthread_join(e->completer, NULL);
    queue_destroy(&e->work);
    queue_destroy(&e->done);
    free(e);
  }
  /* What the controller left loaded goes now (after its work). */
  for (size_t i = 0; i < a->nslots; i++) {
    rig_program_release(a->slots[i].program);
    rig_image_release(a->slots[i].image);
    rig_buffer_release(a->slots[i].buffer);
  }
  free(a->slots);
  free(a->execs);
  if (a->trace) {
    rig_trace_set(NULL);
    rig_trace_free(a->trace);
  }
  queue_destroy(&a->requests);
  pthread_mutex_destroy(&a->lock);
  free(a);
}
