/* The polled test driver (polled.h). */
#include "polled.h"

#include "hostcode.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct queued {
  struct queued *next;
  rig_work *w; /* packed */
} queued;

struct rig_polled {
  rig_device *dev;
  _Atomic uint64_t word;
  rig_polled_options opt;
  pthread_mutex_t lock;    /* the queue, the log and the switches */
  pthread_mutex_t running; /* one runner at a time, in order */
  queued *head, *tail;
  size_t nqueued;
  rig_status fail_next;
  bool refuse_room, gate_closed;
  pthread_t sleepers[16]; /* the threads that slept on its points */
  size_t nsleepers;
  char *log;
  size_t log_len, log_room;
};

static void logf_locked(rig_polled *p, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  size_t len = strlen(line);
  if (p->log_len + len + 2 > p->log_room) {
    size_t room = p->log_room ? p->log_room * 2 : 4096;
    while (room < p->log_len + len + 2) room *= 2;
    char *bigger = realloc(p->log, room);
    if (!bigger) return;
    p->log = bigger;
    p->log_room = room;
  }
  memcpy(p->log + p->log_len, line, len);
  p->log_len += len;
  p->log[p->log_len++] = '\n';
  p->log[p->log_len] = 0;
}

#define LOG(p, ...)                                                                                \
  do {                                                                                             \
    pthread_mutex_lock(&(p)->lock);                                                                \
    logf_locked((p), __VA_ARGS__);                                                                 \
    pthread_mutex_unlock(&(p)->lock);                                                              \
  } while (0)

static rig_status polled_alloc(void *st, rig_buffer_kind kind, uint64_t bytes, rig_mem_info *out,
                               rig_error *err) {
  rig_polled *p = st;
  (void)kind;
  pthread_mutex_lock(&p->lock);
  bool refuse = p->refuse_room;
  logf_locked(p, refuse ? "alloc %llu refused" : "alloc %llu", (unsigned long long)bytes);
  pthread_mutex_unlock(&p->lock);
  if (refuse)
    return rig_error_set(err, RIG_ENOMEM, "%s: no room for %llu bytes", rig_device_name(p->dev),
                         (unsigned long long)bytes);
  rig_status s = rig_hostcode_alloc(bytes, out, err);
  if (s == RIG_OK) out->driver = (void *)(uintptr_t)bytes;
  return s;
}

static void polled_free(void *st, const rig_mem_info *mem) {
  rig_polled *p = st;
  LOG(p, "free %llu", (unsigned long long)(uintptr_t)mem->driver);
  rig_hostcode_free(mem);
}

static rig_status polled_image_load(void *st, const void *bytes, size_t len, void **image,
                                    rig_error *err) {
  rig_polled *p = st;
  LOG(p, "image %zu", len);
  return rig_hostcode_image_load(rig_device_name(p->dev), bytes, len, image, err);
}

static rig_status polled_image_entry(void *st, void *image, const char *name, size_t len,
                                     rig_entry *out, rig_error *err) {
  rig_polled *p = st;
  rig_status s = rig_hostcode_image_entry(rig_device_name(p->dev), image, name, len, out, err);
  if (s == RIG_OK) out->max_threads = p->opt.max_threads;
  return s;
}

static void polled_image_unload(void *st, void *image) {
  (void)st;
  rig_hostcode_image_unload(image);
}

static bool polled_can_wait(void *st, const rig_device *other) {
  rig_polled *p = st;
  (void)other;
  return p->opt.can_wait;
}

static void format_waits(const rig_work *w, char *buf, size_t size) {
  size_t at = 0;
  buf[0] = 0;
  for (size_t i = 0; i < w->nwaits && at < size; i++) {
    rig_device *d = rig_device_at(rig_point_device(w->waits[i]));
    int n = snprintf(buf + at, size - at, " %s@%llu", d ? rig_device_name(d) : "?",
                     (unsigned long long)rig_point_value(w->waits[i]));
    if (n < 0) break;
    at += (size_t)n;
  }
}

static rig_status polled_submit(void *st, const rig_work *w, rig_error *err) {
  rig_polled *p = st;
  char waits[400];
  format_waits(w, waits, sizeof waits);
  pthread_mutex_lock(&p->lock);
  if (p->fail_next != RIG_OK) {
    rig_status code = p->fail_next;
    p->fail_next = RIG_OK;
    logf_locked(p, "submit %llu refused", (unsigned long long)w->value);
    pthread_mutex_unlock(&p->lock);
    return rig_error_set(err, code, "%s: refused the submit", rig_device_name(p->dev));
  }
  queued *q = malloc(sizeof *q);
  void *packed = malloc(rig_work_bytes(w));
  if (!q || !packed) {
    pthread_mutex_unlock(&p->lock);
    free(q);
    free(packed);
    return rig_error_set(err, RIG_ENOMEM, "out of memory");
  }
  q->w = (rig_work *)rig_work_pack(w, packed);
  q->next = NULL;
  if (p->tail)
    p->tail->next = q;
  else
    p->head = q;
  p->tail = q;
  p->nqueued++;
  logf_locked(p, "%s %llu waits%s", w->sub ? "submit" : "copy", (unsigned long long)w->value,
              waits);
  pthread_mutex_unlock(&p->lock);
  return RIG_OK;
}

static bool run_one(rig_polled *p) {
  pthread_mutex_lock(&p->lock);
  queued *q = p->head;
  if (q) {
    p->head = q->next;
    if (!p->head) p->tail = NULL;
    p->nqueued--;
  }
  pthread_mutex_unlock(&p->lock);
  if (!q) return false;
  bool ok = true;
  for (size_t i = 0; i < q->w->nwaits; i++)
    if (rig_point_wait(q->w->waits[i], NULL) != RIG_OK) ok = false;
  rig_error err;
  if (ok && !rig_device_is_lost(p->dev, NULL)) {
    bool words = false;
    for (size_t i = 0; q->w->sub && i < rig_submission_nparts(q->w->sub); i++)
      words |= rig_submission_part(q->w->sub, i)->kind == RIG_WORK_WORDS;
    if (!words && rig_hostcode_run(q->w, &err) != RIG_OK)
      rig_device_lose(p->dev, "%s", err.message);
  }
  LOG(p, "run %llu%s", (unsigned long long)q->w->value, ok ? "" : " skipped");
  atomic_store_explicit(&p->word, q->w->value, memory_order_release);
  rig_device_signal(p->dev);
  free(q->w);
  free(q);
  return true;
}

size_t rig_polled_run(rig_polled *p, size_t n) {
  size_t ran = 0;
  pthread_mutex_lock(&p->running);
  while (ran < n && !rig_device_is_lost(p->dev, NULL) && run_one(p)) ran++;
  pthread_mutex_unlock(&p->running);
  return ran;
}

static void polled_sleep(void *st, uint64_t value, int64_t timeout_ns) {
  rig_polled *p = st;
  pthread_mutex_lock(&p->lock);
  bool closed = p->gate_closed, known = false;
  for (size_t i = 0; i < p->nsleepers && !known; i++)
    known = pthread_equal(p->sleepers[i], pthread_self());
  if (!known && p->nsleepers < sizeof p->sleepers / sizeof *p->sleepers)
    p->sleepers[p->nsleepers++] = pthread_self();
  pthread_mutex_unlock(&p->lock);
  if (!closed && pthread_mutex_trylock(&p->running) == 0) {
    while (atomic_load(&p->word) < value && !rig_device_is_lost(p->dev, NULL) && run_one(p)) {
    }
    pthread_mutex_unlock(&p->running);
    return;
  }
  struct timespec ts = {0, timeout_ns < 1000000 ? timeout_ns : 1000000};
  nanosleep(&ts, NULL);
}

static const rig_driver polled_driver = {
    .name = "polled",
    .alloc = polled_alloc,
    .free = polled_free,
    .image_load = polled_image_load,
    .image_entry = polled_image_entry,
    .image_unload = polled_image_unload,
    .can_wait = polled_can_wait,
    .submit = polled_submit,
    .sleep = polled_sleep,
};

rig_status rig_polled_open(const rig_polled_options *opt, rig_device **dev, rig_polled **out,
                           rig_error *err) {
  static _Atomic unsigned counter;
  rig_host(); /* the core starts first, so the host is device 0 */
  rig_polled *p = calloc(1, sizeof *p);
  if (!p) return rig_error_set(err, RIG_ENOMEM, "out of memory");
  if (opt) p->opt = *opt;
  pthread_mutex_init(&p->lock, NULL);
  pthread_mutex_init(&p->running, NULL);
  rig_device_facts f = {.numa = -1};
  snprintf(f.name, sizeof f.name, "polled:%u", atomic_fetch_add(&counter, 1));
  snprintf(f.arch, sizeof f.arch, "%s", p->opt.arch ? p->opt.arch : "polled");
  f.budget = 1u << 30;
  f.maps_host = f.host_addresses = true;
  f.runs_copies = f.runs_fills = f.runs_launches = true;
  f.runs_words = p->opt.runs_words;
  f.max_shared = RIG_HOST_MAX_SHARED;
  rig_status st = rig_device_register(&polled_driver, p, &f, &p->word, &p->dev, err);
  if (st != RIG_OK) {
    free(p);
    return st;
  }
  *dev = p->dev;
  *out = p;
  return RIG_OK;
}

size_t rig_polled_queued(rig_polled *p) {
  pthread_mutex_lock(&p->lock);
  size_t n = p->nqueued;
  pthread_mutex_unlock(&p->lock);
  return n;
}

void rig_polled_fail_next_submit(rig_polled *p, rig_status code) {
  pthread_mutex_lock(&p->lock);
  p->fail_next = code;
  pthread_mutex_unlock(&p->lock);
}

void rig_polled_fault(rig_polled *p, const char *reason) {
  LOG(p, "fault %s", reason);
  rig_device_lose(p->dev, "%s", reason);
  pthread_mutex_lock(&p->lock);
  queued *q = p->head;
  p->head = p->tail = NULL;
  p->nqueued = 0;
  pthread_mutex_unlock(&p->lock);
  while (q) {
    queued *next = q->next;
    free(q->w);
    free(q);
    q = next;
  }
}

void rig_polled_refuse_room(rig_polled *p, bool refuse) {
  pthread_mutex_lock(&p->lock);
  p->refuse_room = refuse;
  pthread_mutex_unlock(&p->lock);
}

void rig_polled_gate(rig_polled *p, bool closed) {
  pthread_mutex_lock(&p->lock);
  p->gate_closed = closed;
  pthread_mutex_unlock(&p->lock);
}

size_t rig_polled_sleepers(rig_polled *p) {
  pthread_mutex_lock(&p->lock);
  size_t n = p->nsleepers;
  pthread_mutex_unlock(&p->lock);
  return n;
}

const char *rig_polled_log(rig_polled *p) {
  return p->log ? p->log : "";
}

void rig_polled_log_clear(rig_polled *p) {
  pthread_mutex_lock(&p->lock);
  p->log_len = 0;
  if (p->log) p->log[0] = 0;
  pthread_mutex_unlock(&p->lock);
}

long rig_polled_log_find(rig_polled *p, const char *line) {
  pthread_mutex_lock(&p->lock);
  long index = -1, i = 0;
  const char *s = p->log;
  size_t len = strlen(line);
  while (s && *s) {
    const char *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) : strlen(s);
    if (n == len && memcmp(s, line, len) == 0) {
      index = i;
      break;
    }
    i++;
    s = nl ? nl + 1 : s + n;
  }
  pthread_mutex_unlock(&p->lock);
  return index;
}
