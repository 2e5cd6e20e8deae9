/* Threads asleep on the worker (rig_engine_watch): each on an eventfd of
 * its own, registered with the word it sleeps on, so that a nudge wakes
 * only those whose word moved. The eventfd is made at a thread's first
 * sleep and closed when the thread ends. */
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/count_wait.h"
#include "rails_internal.h"

/* At most this many asleep at once; more sleep a bounded while instead. */
#define SLEEPERS_MAX 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static rig_sleeper *asleep[SLEEPERS_MAX]; /* under lock */
static _Atomic int nasleep;

static pthread_key_t own_key;
static pthread_once_t own_once = PTHREAD_ONCE_INIT;
static _Thread_local int own_fd = -1;

static void own_close(void *v) {
  close((int)(intptr_t)v - 1);
}

static void own_key_make(void) {
  pthread_key_create(&own_key, own_close);
}

static int own_eventfd(void) {
  pthread_once(&own_once, own_key_make);
  if (own_fd < 0 && (own_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) >= 0)
    pthread_setspecific(own_key, (void *)(intptr_t)(own_fd + 1));
  return own_fd;
}

static bool add(rig_sleeper *s) {
  if (s->fd < 0) return false;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < SLEEPERS_MAX && s->at < 0; i++)
    if (!asleep[i]) s->at = i;
  if (s->at >= 0) {
    asleep[s->at] = s;
    atomic_fetch_add(&nasleep, 1);
  }
  pthread_mutex_unlock(&lock);
  return s->at >= 0;
}

bool rig_sleeper_add(rig_sleeper *s, const _Atomic uint32_t *word, uint32_t seen) {
  *s = (rig_sleeper){.fd = own_eventfd(), .word = word, .seen = seen, .at = -1};
  return add(s);
}

bool rig_sleeper_add_count(rig_sleeper *s, const void *count, uint64_t want) {
  *s = (rig_sleeper){.fd = own_eventfd(), .count = count, .want = want, .at = -1};
  return add(s);
}

bool rig_sleeper_moved(const rig_sleeper *s) {
  int ok;
  if (s->count) return rig_count_seen(s->count, s->want, &ok);
  return !s->word || atomic_load(s->word) != s->seen;
}

void rig_sleeper_sleep(rig_sleeper *s, int also, int64_t timeout_ns) {
  struct pollfd fds[2];
  nfds_t n = 0;
  if (also >= 0) fds[n++] = (struct pollfd){.fd = also, .events = POLLIN};
  if (s->at >= 0) fds[n++] = (struct pollfd){.fd = s->fd, .events = POLLIN};
  struct timespec ts = {(time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000)};
  ppoll(fds, n, &ts, NULL);
}

void rig_sleeper_remove(rig_sleeper *s) {
  if (s->at < 0) return;
  pthread_mutex_lock(&lock);
  asleep[s->at] = NULL;
  atomic_fetch_sub(&nasleep, 1);
  pthread_mutex_unlock(&lock);
  uint64_t v;
  ssize_t got = read(s->fd, &v, sizeof v);
  (void)got;
}

void rig_engine_nudge(void) {
  if (!atomic_load(&nasleep)) return;
  uint64_t one = 1;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < SLEEPERS_MAX; i++) {
    rig_sleeper *s = asleep[i];
    if (s && rig_sleeper_moved(s)) {
      ssize_t n = write(s->fd, &one, sizeof one);
      (void)n;
    }
  }
  pthread_mutex_unlock(&lock);
}
