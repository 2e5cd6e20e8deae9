/* librig's log (log.h): leveled lines, each whole, to a handler the
 * application sets or to stderr. Lines for stderr are queued in a bounded
 * buffer that a thread of the log's own writes, one write(2) a line: a
 * caller (the control thread between two beats) never waits on a stderr
 * that blocks (a launcher stopped, its pipe full). What does not fit is
 * counted and said once stderr takes lines again. */
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "env.h"

#define QUEUE_BYTES (256u * 1024u)

static struct {
  pthread_mutex_t lock;
  pthread_cond_t more, drained;
  char prefix[64];
  rig_log_fn *fn;
  void *ctx;
  /* The queue: whole lines, newline included, back to back in a ring. */
  char ring[QUEUE_BYTES];
  size_t head, used;
  size_t writing; /* bytes the writer took and has not written yet */
  size_t dropped; /* lines that did not fit since the last said */
  bool started, failed_start;
  pthread_t writer;
} log_state = {.lock = PTHREAD_MUTEX_INITIALIZER,
               .more = PTHREAD_COND_INITIALIZER,
               .drained = PTHREAD_COND_INITIALIZER,
               .prefix = "librig"};

static const char *const level_names[] = {"error", "warn", "info", "debug"};

const char *rig_log_level_name(rig_log_level level) {
  return (unsigned)level <= RIG_LOG_DEBUG ? level_names[level] : "?";
}

bool rig_log_enabled(rig_log_level level) {
  const rig_env *e = rig_env_get();
  rig_log_level most = e->trace && e->log_level < RIG_LOG_DEBUG ? RIG_LOG_DEBUG : e->log_level;
  return level <= most;
}

void rig_log_set_handler(rig_log_fn *fn, void *ctx) {
  pthread_mutex_lock(&log_state.lock);
  log_state.fn = fn;
  log_state.ctx = ctx;
  pthread_mutex_unlock(&log_state.lock);
}

void rig_log_set_prefix(const char *prefix) {
  pthread_mutex_lock(&log_state.lock);
  snprintf(log_state.prefix, sizeof log_state.prefix, "%s", prefix ? prefix : "");
  pthread_mutex_unlock(&log_state.lock);
}

/* Writes n bytes to stderr, whole unless it fails. */
static void write_all(const char *p, size_t n) {
  while (n) {
    ssize_t w = write(STDERR_FILENO, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= (size_t)w;
  }
}

/* The writer: takes the oldest line (up to the ring's end), writes it
 * unlocked, and says how many were dropped when the queue had no room. */
static void *writer_main(void *arg) {
  (void)arg;
  char line[RIG_LOG_LINE_MAX + 2];
  pthread_mutex_lock(&log_state.lock);
  for (;;) {
    while (!log_state.used && !log_state.dropped)
      pthread_cond_wait(&log_state.more, &log_state.lock);
    size_t n = 0;
    if (log_state.used) {
      size_t tail = (log_state.head + QUEUE_BYTES - log_state.used) % QUEUE_BYTES;
      while (n < log_state.used && n < sizeof line) {
        char ch = log_state.ring[(tail + n) % QUEUE_BYTES];
        line[n++] = ch;
        if (ch == '\n') break;
      }
      log_state.used -= n;
      log_state.writing = n;
    } else {
      n = (size_t)snprintf(line, sizeof line, "%s%s%zu log lines dropped: stderr took none\n",
                           log_state.prefix, log_state.prefix[0] ? ": " : "", log_state.dropped);
      if (n >= sizeof line) n = sizeof line - 1;
      log_state.dropped = 0;
      log_state.writing = n;
    }
    pthread_mutex_unlock(&log_state.lock);
    write_all(line, n);
    pthread_mutex_lock(&log_state.lock);
    log_state.writing = 0;
    if (!log_state.used) pthread_cond_broadcast(&log_state.drained);
  }
  return NULL;
}

/* Queues a whole line for the writer; under the lock. */
static void queue_line(const char *line, size_t n) {
  if (!log_state.started && !log_state.failed_start) {
    /* The writer takes no signal: they belong to the application. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    log_state.started = pthread_create(&log_state.writer, &attr, writer_main, NULL) == 0;
    log_state.failed_start = !log_state.started;
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
  }
  if (!log_state.started) {
    write_all(line, n); /* no thread to spare: as stdio would */
    return;
  }
  if (n > QUEUE_BYTES - log_state.used) {
    log_state.dropped++;
  } else {
    for (size_t i = 0; i < n; i++) log_state.ring[(log_state.head + i) % QUEUE_BYTES] = line[i];
    log_state.head = (log_state.head + n) % QUEUE_BYTES;
    log_state.used += n;
  }
  pthread_cond_signal(&log_state.more);
}

static void emit(rig_log_level level, bool prefixed, const char *fmt, va_list ap) {
  char line[RIG_LOG_LINE_MAX + 2];
  pthread_mutex_lock(&log_state.lock);
  int at = prefixed && log_state.prefix[0]
               ? snprintf(line, RIG_LOG_LINE_MAX, "%s: ", log_state.prefix)
               : 0;
  int k = vsnprintf(line + at, RIG_LOG_LINE_MAX - (size_t)at, fmt, ap);
  size_t n = (size_t)at + (k < 0 ? 0 : (size_t)k);
  if (n >= RIG_LOG_LINE_MAX) n = RIG_LOG_LINE_MAX - 1;
  while (n && line[n - 1] == '\n') n--;
  line[n] = '\0';
  if (log_state.fn) {
    rig_log_fn *fn = log_state.fn;
    void *ctx = log_state.ctx;
    pthread_mutex_unlock(&log_state.lock);
    fn(ctx, level, line);
    return;
  }
  line[n++] = '\n';
  queue_line(line, n);
  pthread_mutex_unlock(&log_state.lock);
}

void rig_log(rig_log_level level, const char *fmt, ...) {
  if (!rig_log_enabled(level)) return;
  va_list ap;
  va_start(ap, fmt);
  emit(level, true, fmt, ap);
  va_end(ap);
}

void rig_log_raw(rig_log_level level, const char *fmt, ...) {
  if (!rig_log_enabled(level)) return;
  va_list ap;
  va_start(ap, fmt);
  emit(level, false, fmt, ap);
  va_end(ap);
}

bool rig_log_flush(double timeout_s) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  long long ns = (long long)until.tv_nsec + (long long)(timeout_s * 1e9);
  until.tv_sec += (time_t)(ns / 1000000000LL);
  until.tv_nsec = (long)(ns % 1000000000LL);
  pthread_mutex_lock(&log_state.lock);
  int rc = 0;
  while ((log_state.used || log_state.writing) && rc == 0)
    rc = pthread_cond_timedwait(&log_state.drained, &log_state.lock, &until);
  bool empty = !log_state.used && !log_state.writing;
  pthread_mutex_unlock(&log_state.lock);
  return empty;
}

void rig_log_now(const char *fmt, ...) {
  char line[RIG_LOG_LINE_MAX + 2];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(line, RIG_LOG_LINE_MAX, fmt, ap);
  va_end(ap);
  size_t n = k < 0 ? 0 : (size_t)k;
  if (n >= RIG_LOG_LINE_MAX) n = RIG_LOG_LINE_MAX - 1;
  line[n++] = '\n';
  write_all(line, n);
}
