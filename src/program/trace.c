/* Tracing: the process's sink, its bounded record, and the stamps of when
 * each step's point is reached (docs/internals.md "Tracing").
 *
 * A run records under the trace's lock into arrays made with the trace, so
 * that it allocates nothing; when they are full it only counts. A step's
 * reach is the first time any thread of this process saw its point
 * reached: the run itself (work done when its submit returned), whoever
 * waits for it (rig_trace_reached: an executor before its report, the
 * controller when a report comes) and, for the rest, the observer thread,
 * which polls. Each stamp is taken after its point was seen reached, so
 * none is before the true moment; the earliest is kept. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "program_internal.h"

#define TRACE_MAGIC "rigtrace"
#define TRACE_MAX   ((size_t)1 << 24)

typedef struct ttrack {
  uint32_t index; /* the device's table index (never reused) */
  char name[64];
} ttrack;

struct rig_trace {
  pthread_mutex_t lock;
  pthread_cond_t more;    /* an event was recorded, or stop */
  pthread_cond_t settled; /* the observer moved on */
  rig_trace_event *ev;
  rig_point *points; /* per event: a STEP's last point */
  bool *seen;        /* per event: the observer is done with it */
  size_t cap, n, observed;
  size_t unstamped; /* events below are stamped (or instants or given up) */
  uint64_t dropped;
  ttrack tracks[RIG_TRACE_TRACKS];
  size_t ntracks;
  bool observing, stop;
  pthread_t observer;
};

/* The head of the encoded form; tracks then events follow. */
typedef struct thead {
  char magic[8];
  uint32_t ntracks, unused;
  uint64_t nevents, dropped;
} thead;

rig_trace *_Atomic rig_program_tracing;

uint64_t rig_trace_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Rails' stamps in flight: the sink they read stays until they are done. */
static _Atomic int in_stamp;

static void record_instant(rig_trace *t, rig_trace_kind kind, int64_t rail, uint64_t count) {
  uint64_t now = rig_trace_now();
  pthread_mutex_lock(&t->lock);
  if (t->n == t->cap) {
    t->dropped++;
  } else {
    t->ev[t->n] = (rig_trace_event){kind, 0, rail, count, now, now, now};
    t->points[t->n++] = RIG_POINT_REACHED;
    pthread_cond_signal(&t->more);
  }
  pthread_mutex_unlock(&t->lock);
}

static void rail_stamp(int64_t rail, rig_rail_stamp what, uint64_t count) {
  atomic_fetch_add(&in_stamp, 1);
  rig_trace *t = atomic_load(&rig_program_tracing);
  if (t)
    record_instant(t, what == RIG_RAIL_STAMP_READY ? RIG_TRACE_READY : RIG_TRACE_ARRIVED, rail,
                   count);
  atomic_fetch_sub(&in_stamp, 1);
}

void rig_trace_set(rig_trace *t) {
  atomic_store(&rig_program_tracing, t);
  rig_rail_set_stamp(t ? rail_stamp : NULL);
  /* A stamp that read the sink before is done with it before the caller
   * may free it: its record is a lock held a moment. */
  while (atomic_load(&in_stamp) > 0) sched_yield();
}
rig_trace *rig_trace_sink(void) {
  return atomic_load(&rig_program_tracing);
}

/* Stamps event i reached at `now` unless an earlier stamp is there. Under
 * the lock; the observer reads the stamp without it. */
static void stamp(rig_trace *t, size_t i, uint64_t now) {
  uint64_t was = __atomic_load_n(&t->ev[i].reached_ns, __ATOMIC_RELAXED);
  if (!was || now < was) __atomic_store_n(&t->ev[i].reached_ns, now, __ATOMIC_RELAXED);
}

/* Whether pt is at or before one of pts on its device: a device's points
 * are reached in the order of their values. */
static bool covered(rig_point pt, const rig_point *pts, size_t n) {
  for (size_t k = 0; k < n; k++)
    if (pts[k] != RIG_POINT_REACHED && rig_point_device(pts[k]) == rig_point_device(pt) &&
        rig_point_value(pt) <= rig_point_value(pts[k]))
      return true;
  return false;
}

void rig_trace_reached(const rig_point *pts, size_t n) {
  /* Untraced, this load is all it costs. */
  if (!n || !atomic_load_explicit(&rig_program_tracing, memory_order_relaxed)) return;
  atomic_fetch_add(&in_stamp, 1);
  rig_trace *t = atomic_load(&rig_program_tracing);
  if (t) {
    pthread_mutex_lock(&t->lock);
    /* Read under the lock: after every recorded event's submit time, and
     * after every stamp there (which it could not lower). */
    uint64_t now = rig_trace_now();
    if (t->unstamped < t->observed) t->unstamped = t->observed;
    bool before = true; /* every event so far is stamped */
    for (size_t i = t->unstamped; i < t->n; i++) {
      const rig_trace_event *e = &t->ev[i];
      bool tracked = e->kind == RIG_TRACE_STEP || e->kind == RIG_TRACE_HANDOVER;
      if (tracked && !e->reached_ns && covered(t->points[i], pts, n)) stamp(t, i, now);
      if (before && (!tracked || e->reached_ns))
        t->unstamped = i + 1;
      else
        before = false;
    }
    pthread_mutex_unlock(&t->lock);
  }
  atomic_fetch_sub(&in_stamp, 1);
}

/* Whether step i's point is done with: stamped already (by its run or a
 * waiter), reached (stamped now), or of a device that is lost or gone
 * (never stamped). */
static bool look(rig_trace *t, size_t i) {
  if (__atomic_load_n(&t->ev[i].reached_ns, __ATOMIC_RELAXED)) return true;
  rig_point pt = t->points[i];
  if (rig_point_reached(pt)) {
    uint64_t now = rig_trace_now();
    pthread_mutex_lock(&t->lock);
    stamp(t, i, now);
    pthread_mutex_unlock(&t->lock);
    return true;
  }
  rig_device *dev = rig_device_at(rig_point_device(pt));
  return !dev || rig_device_is_lost(dev, NULL);
}

/* Polls every recorded step not yet seen reached, whatever its order: a
 * step of one device is stamped when it ends even while a step recorded
 * before it, on another device, has not. Polls yield while steps end
 * often, then nap 20 us, so that a long wait does not cost a core; a
 * blocking wait on one point would stamp the others late. */
static void *observe(void *arg) {
  rig_trace *t = arg;
  unsigned idle = 0;
  pthread_mutex_lock(&t->lock);
  while (!t->stop) {
    if (t->observed == t->n) {
      pthread_cond_wait(&t->more, &t->lock);
      continue;
    }
    size_t from = t->observed, to = t->n;
    pthread_mutex_unlock(&t->lock);
    /* Events below `to` are written: only this thread changes them now. */
    bool any = false;
    for (size_t i = from; i < to; i++) {
      if (t->seen[i]) continue;
      uint32_t kind = t->ev[i].kind;
      if ((kind != RIG_TRACE_STEP && kind != RIG_TRACE_HANDOVER) || look(t, i)) {
        t->seen[i] = true;
        any = true;
      }
    }
    size_t first = from;
    while (first < to && t->seen[first]) first++;
    if (any) {
      idle = 0;
    } else if (++idle < 200) {
      sched_yield();
    } else {
      struct timespec nap = {0, 20000};
      nanosleep(&nap, NULL);
    }
    pthread_mutex_lock(&t->lock);
    t->observed = first;
    pthread_cond_broadcast(&t->settled);
  }
  pthread_mutex_unlock(&t->lock);
  return NULL;
}

/* The lock and the conditions, the settle bound on CLOCK_MONOTONIC. */
static bool trace_sync_init(rig_trace *t) {
  pthread_condattr_t ca;
  if (pthread_condattr_init(&ca) != 0) return false;
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  bool ok = pthread_mutex_init(&t->lock, NULL) == 0;
  ok = ok && pthread_cond_init(&t->more, &ca) == 0;
  ok = ok && pthread_cond_init(&t->settled, &ca) == 0;
  pthread_condattr_destroy(&ca);
  return ok;
}

static rig_status trace_alloc(size_t capacity, rig_trace **out, rig_error *err) {
  if (capacity < 1 || capacity > TRACE_MAX)
    return rig_error_set(err, RIG_EINVAL, "a trace of %zu events (1 to %zu)", capacity, TRACE_MAX);
  rig_trace *t = calloc(1, sizeof *t);
  if (t) t->ev = calloc(capacity, sizeof *t->ev);
  if (t) t->points = calloc(capacity, sizeof *t->points);
  if (t) t->seen = calloc(capacity, sizeof *t->seen);
  if (!t || !t->ev || !t->points || !t->seen || !trace_sync_init(t)) {
    if (t) free(t->ev), free(t->points), free(t->seen);
    free(t);
    return rig_error_set(err, RIG_ENOMEM, "out of memory for a trace of %zu events", capacity);
  }
  t->cap = capacity;
  *out = t;
  return RIG_OK;
}

rig_status rig_trace_make(size_t capacity, rig_trace **out, rig_error *err) {
  rig_status st = trace_alloc(capacity, out, err);
  if (st != RIG_OK) return st;
  rig_trace *t = *out;
  if (pthread_create(&t->observer, NULL, observe, t) != 0) {
    rig_trace_free(t);
    *out = NULL;
    return rig_error_set(err, RIG_ESYS, "cannot start a trace's observer thread");
  }
  t->observing = true;
  return RIG_OK;
}

void rig_trace_free(rig_trace *t) {
  if (!t) return;
  if (t->observing) {
    pthread_mutex_lock(&t->lock);
    t->stop = true;
    pthread_cond_broadcast(&t->more);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->observer, NULL);
  }
  pthread_mutex_destroy(&t->lock);
  pthread_cond_destroy(&t->more);
  pthread_cond_destroy(&t->settled);
  free(t->ev);
  free(t->points);
  free(t->seen);
  free(t);
}

bool rig_trace_settle(rig_trace *t, unsigned timeout_ms) {
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_sec += timeout_ms / 1000;
  until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
  if (until.tv_nsec >= 1000000000) until.tv_sec++, until.tv_nsec -= 1000000000;
  pthread_mutex_lock(&t->lock);
  int rc = 0;
  while (t->observing && t->observed < t->n && rc != ETIMEDOUT)
    rc = pthread_cond_timedwait(&t->settled, &t->lock, &until);
  bool all = !t->observing || t->observed == t->n;
  pthread_mutex_unlock(&t->lock);
  return all;
}

/* The track of dev, made at its first step; RIG_TRACE_TRACKS when full. */
static size_t track_of(rig_trace *t, const rig_device *dev) {
  uint32_t index = rig_device_index(dev);
  for (size_t i = 0; i < t->ntracks; i++)
    if (t->tracks[i].index == index) return i;
  if (t->ntracks == RIG_TRACE_TRACKS) return RIG_TRACE_TRACKS;
  ttrack *k = &t->tracks[t->ntracks];
  k->index = index;
  snprintf(k->name, sizeof k->name, "%s", rig_device_name(dev));
  return t->ntracks++;
}

void rig_program_trace_step(rig_trace *t, rig_trace_kind kind, const rig_device *dev, int64_t step,
                            uint64_t run, uint64_t begin, rig_point pt) {
  /* Work done by the time its submit returned (the host's) is reached
   * then: looked at before the clock is read, so the stamp is not early. */
  bool done = rig_point_reached(pt);
  uint64_t submitted = rig_trace_now();
  pthread_mutex_lock(&t->lock);
  size_t track = track_of(t, dev);
  if (t->n == t->cap || track == RIG_TRACE_TRACKS) {
    t->dropped++;
  } else {
    t->ev[t->n] =
        (rig_trace_event){kind, (uint32_t)track, step, run, begin, submitted, done ? submitted : 0};
    t->points[t->n++] = pt;
    pthread_cond_signal(&t->more);
  }
  pthread_mutex_unlock(&t->lock);
}

void rig_program_trace_run(rig_trace *t, uint64_t run) {
  record_instant(t, RIG_TRACE_RUN, -1, run);
}

size_t rig_trace_count(const rig_trace *t) {
  return t->n;
}
const rig_trace_event *rig_trace_events(const rig_trace *t) {
  return t->ev;
}
uint64_t rig_trace_dropped(const rig_trace *t) {
  return t->dropped;
}
size_t rig_trace_tracks(const rig_trace *t) {
  return t->ntracks;
}
const char *rig_trace_track(const rig_trace *t, size_t i) {
  return i < t->ntracks ? t->tracks[i].name : NULL;
}

/* ---- the encoded form -------------------------------------------------------- */

rig_status rig_trace_encode(rig_trace *t, uint8_t **bytes, size_t *len, rig_error *err) {
  pthread_mutex_lock(&t->lock);
  size_t n = sizeof(thead) + t->ntracks * sizeof(char[64]) + t->n * sizeof(rig_trace_event);
  uint8_t *b = calloc(1, n);
  if (b) {
    thead h = {.ntracks = (uint32_t)t->ntracks, .nevents = t->n, .dropped = t->dropped};
    memcpy(h.magic, TRACE_MAGIC, 8);
    memcpy(b, &h, sizeof h);
    uint8_t *at = b + sizeof h;
    for (size_t i = 0; i < t->ntracks; i++, at += 64) memcpy(at, t->tracks[i].name, 64);
    if (t->n) memcpy(at, t->ev, t->n * sizeof *t->ev);
  }
  pthread_mutex_unlock(&t->lock);
  if (!b) return rig_error_set(err, RIG_ENOMEM, "out of memory encoding a trace");
  *bytes = b;
  *len = n;
  return RIG_OK;
}

static rig_status malformed(rig_trace *t, rig_error *err, const char *why, unsigned long long v) {
  rig_trace_free(t);
  return rig_error_set(err, RIG_EINVAL, "a malformed trace: %s %llu", why, v);
}

rig_status rig_trace_decode(const void *bytes, size_t len, size_t capacity, rig_trace **out,
                            rig_error *err) {
  thead h;
  if (len < sizeof h) return rig_error_set(err, RIG_EINVAL, "a malformed trace: %zu bytes", len);
  memcpy(&h, bytes, sizeof h);
  if (memcmp(h.magic, TRACE_MAGIC, 8) != 0)
    return rig_error_set(err, RIG_EINVAL, "a malformed trace: no magic");
  if (h.ntracks > RIG_TRACE_TRACKS)
    return rig_error_set(err, RIG_EINVAL, "a malformed trace: %u tracks", h.ntracks);
  if (h.nevents > capacity || h.nevents > TRACE_MAX)
    return rig_error_set(err, RIG_EINVAL, "a malformed trace: %llu events, more than %zu",
                         (unsigned long long)h.nevents, capacity);
  size_t want = sizeof h + h.ntracks * (size_t)64 + h.nevents * sizeof(rig_trace_event);
  if (len != want)
    return rig_error_set(err, RIG_EINVAL, "a malformed trace: %zu bytes, not %zu", len, want);
  rig_trace *t;
  rig_status st = trace_alloc(h.nevents ? h.nevents : 1, &t, err);
  if (st != RIG_OK) return st;
  const uint8_t *at = (const uint8_t *)bytes + sizeof h;
  for (size_t i = 0; i < h.ntracks; i++, at += 64) {
    if (!memchr(at, 0, 64)) return malformed(t, err, "an unterminated name of track", i);
    memcpy(t->tracks[i].name, at, 64);
  }
  t->ntracks = h.ntracks;
  if (h.nevents) memcpy(t->ev, at, h.nevents * sizeof *t->ev);
  for (size_t i = 0; i < h.nevents; i++) {
    const rig_trace_event *e = &t->ev[i];
    if (e->kind < RIG_TRACE_STEP || e->kind > RIG_TRACE_ARRIVED)
      return malformed(t, err, "an event of kind", e->kind);
    bool tracked = e->kind == RIG_TRACE_STEP || e->kind == RIG_TRACE_HANDOVER;
    if (tracked && e->track >= h.ntracks) return malformed(t, err, "an event of track", e->track);
    if (e->submitted_ns < e->begin_ns || (e->reached_ns && e->reached_ns < e->submitted_ns))
      return malformed(t, err, "times out of order at event", i);
  }
  t->n = t->observed = h.nevents;
  t->dropped = h.dropped;
  *out = t;
  return RIG_OK;
}
