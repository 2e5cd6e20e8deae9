/* The engine: one UCX context (RMA, 64-bit atomics, wake-up) and one worker
 * per process, driven by one rail thread. The thread progresses the worker
 * and pumps every live rail; software transports (TCP, shared memory
 * without direct access) complete RMA only while the target progresses,
 * so it progresses whenever a rail is live. Idle, it watches ~5 us, then
 * arms the worker and sleeps on its event fd and on a wake fd that ready
 * and the engine's callers write. Every other use of the worker (endpoints,
 * remote keys, closing) runs on the thread as a call. The one exception:
 * a thread that calls ready while the rail thread is between turns (or
 * asleep) takes the worker and posts its rail's puts itself, sparing the
 * wake-up of the rail thread (the worker is UCS_THREAD_MODE_SERIALIZED,
 * serialized by worker_lock). */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/sync.h"
#include "rails_internal.h"

/* How long the rail thread watches for work before it sleeps. A ready
 * posts its own puts when the worker is free, so the thread need not be
 * awake for it: a short watch leaves the cores to the programs. */
#define IDLE_SPIN_S 5e-6

typedef struct call {
  struct call *next;
  rig_status (*fn)(void *arg, rig_error *err);
  void *arg;
  rig_error *err;
  rig_status status;
  bool done;
} call;

typedef struct engine {
  int holds;   /* under lock */
  bool shared; /* areas in posix shared memory (rig_ucx_config) */
  ucp_context_h context;
  ucp_worker_h worker;
  void *address;
  size_t address_len;
  int efd, wakefd;
  pthread_t thread;
  bool running; /* under lock: the rail thread was started and not joined */
  _Atomic bool stop;
  _Atomic bool sleeping;
  call *head, *tail; /* under lock */
  pthread_cond_t called;
  rig_rail **live; /* the rail thread's */
  size_t nlive, room;
} engine;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Who uses the worker: the rail thread between its sleeps, or a thread
 * that calls ready and finds the worker free (rig_engine_try). */
static pthread_mutex_t worker_lock = PTHREAD_MUTEX_INITIALIZER;
static engine eng = {.efd = -1, .wakefd = -1};
/* Operations of peers (peer.c) that wait for progress to complete. */
static _Atomic long inflight;
/* Threads waiting in rig_engine_lock: the rail thread lets them have the
 * worker between its turns (a mutex is not fair: relocked at once, it
 * would starve them). */
static _Atomic int lock_wanted;

void rig_engine_wake(void) {
  if (atomic_load(&eng.sleeping) && eng.wakefd >= 0) {
    uint64_t one = 1;
    /* A full counter (EAGAIN) already wakes the thread. */
    ssize_t n = write(eng.wakefd, &one, sizeof one);
    (void)n;
  }
}

/* Runs the calls queued so far. */
static bool run_calls(void) {
  pthread_mutex_lock(&lock);
  call *c = eng.head;
  eng.head = eng.tail = NULL;
  pthread_mutex_unlock(&lock);
  bool any = c != NULL;
  while (c) {
    call *next = c->next;
    rig_status st = c->fn(c->arg, c->err);
    pthread_mutex_lock(&lock);
    c->status = st;
    c->done = true;
    pthread_cond_broadcast(&eng.called);
    pthread_mutex_unlock(&lock);
    c = next;
  }
  return any;
}

static bool calls_queued(void) {
  pthread_mutex_lock(&lock);
  bool any = eng.head != NULL;
  pthread_mutex_unlock(&lock);
  return any;
}

/* A call queued, a count made ready that is not posted, or operations
 * waiting for progress (read without the worker: a stale answer costs one
 * more turn). */
static bool work_pending(void) {
  if (calls_queued() || atomic_load_explicit(&inflight, memory_order_relaxed) > 0) return true;
  for (size_t i = 0; i < eng.nlive; i++) {
    rig_rail *r = eng.live[i];
    uint64_t ready = atomic_load((_Atomic uint64_t *)(r->counts + RIG_RAIL_READY_AT));
    uint64_t posted = atomic_load_explicit(&r->posted_seen, memory_order_relaxed);
    if (ready > posted && ready != RIG_RAIL_RAISED) return true;
    if (atomic_load_explicit(&r->in_flight, memory_order_relaxed)) return true;
  }
  return false;
}

/* Threads that progress the worker themselves for a while (rig_peer_polling):
 * while any does, the rail thread sleeps on its wake-up only, not on the
 * worker's event fd, so that a message that poller takes does not wake it
 * too (a wake-up costs the sender's core what a whole round trip does). */
static _Atomic int pollers;

void rig_engine_polling(bool on) {
  if (on) {
    atomic_fetch_add(&pollers, 1);
    return;
  }
  /* The last poller leaving: the rail thread watches the event fd again. */
  if (atomic_fetch_sub(&pollers, 1) == 1) rig_engine_wake();
}

static void sleep_on_wake_only(void) {
  struct pollfd fd = {.fd = eng.wakefd, .events = POLLIN};
  poll(&fd, 1, 100);
  uint64_t n;
  if (fd.revents & POLLIN) {
    ssize_t got = read(eng.wakefd, &n, sizeof n);
    (void)got;
  }
}

static void sleep_on_worker(void) {
  atomic_store(&eng.sleeping, true);
  /* After saying so, look again: a ready or call just made is not missed. */
  if (!work_pending() && !atomic_load(&eng.stop) && atomic_load(&pollers) > 0) {
    sleep_on_wake_only();
  } else if (!work_pending() && !atomic_load(&eng.stop)) {
    pthread_mutex_lock(&worker_lock);
    ucs_status_t st = ucp_worker_arm(eng.worker);
    pthread_mutex_unlock(&worker_lock);
    if (st == UCS_OK) {
      struct pollfd fds[2] = {{.fd = eng.efd, .events = POLLIN},
                              {.fd = eng.wakefd, .events = POLLIN}};
      /* A bound, so that a lost wake-up costs at most this long. */
      poll(fds, 2, 100);
      uint64_t n;
      if (fds[1].revents & POLLIN) {
        ssize_t got = read(eng.wakefd, &n, sizeof n);
        (void)got;
      }
    }
  }
  atomic_store(&eng.sleeping, false);
}

static void *rail_main(void *arg) {
  (void)arg;
  double last_busy = rig_now_s();
  while (!atomic_load(&eng.stop)) {
    /* The worker is let go between turns, so that a ready on another
     * thread may post its own puts at once. */
    pthread_mutex_lock(&worker_lock);
    bool busy = run_calls();
    while (ucp_worker_progress(eng.worker)) busy = true;
    bool waiting = atomic_load_explicit(&inflight, memory_order_relaxed) > 0;
    for (size_t i = 0; i < eng.nlive; i++) busy |= rig_rail_pump(eng.live[i], &waiting);
    pthread_mutex_unlock(&worker_lock);
    for (int turns = 0; turns < 1000 && atomic_load_explicit(&lock_wanted, memory_order_relaxed);
         turns++)
      sched_yield();
    double now = rig_now_s();
    if (busy) {
      last_busy = now;
      continue;
    }
    /* Operations in flight complete by progress alone: keep progressing,
     * yielding the core to the threads they wait for. */
    if (waiting) {
      sched_yield();
      continue;
    }
    /* Idle for a while: watch for work without holding the worker, so
     * that a ready on another thread finds it free and posts itself. */
    if (now - last_busy < IDLE_SPIN_S) {
      for (int spin = 0; spin < 32 && !work_pending(); spin++) rig_cpu_relax();
      continue;
    }
    sleep_on_worker();
  }
  pthread_mutex_lock(&worker_lock);
  run_calls();
  pthread_mutex_unlock(&worker_lock);
  return NULL;
}

void rig_engine_lock(void) {
  atomic_fetch_add_explicit(&lock_wanted, 1, memory_order_relaxed);
  pthread_mutex_lock(&worker_lock);
  atomic_fetch_sub_explicit(&lock_wanted, 1, memory_order_relaxed);
}

void rig_engine_unlock(void) {
  pthread_mutex_unlock(&worker_lock);
}

void rig_engine_inflight(long delta) {
  atomic_fetch_add_explicit(&inflight, delta, memory_order_relaxed);
}

bool rig_engine_try(void) {
  return pthread_mutex_trylock(&worker_lock) == 0;
}

void rig_engine_untry(void) {
  pthread_mutex_unlock(&worker_lock);
}

static void engine_destroy(void) {
  if (eng.address) ucp_worker_release_address(eng.worker, eng.address);
  if (eng.worker) ucp_worker_destroy(eng.worker);
  if (eng.context) ucp_cleanup(eng.context);
  if (eng.wakefd >= 0) close(eng.wakefd);
  free(eng.live);
  pthread_cond_destroy(&eng.called);
  eng = (engine){.efd = -1, .wakefd = -1};
}

/* At exit the rail thread stops: an engine still held then (abandoned
 * areas keep it: a failed rail's) must not progress UCX while the
 * libraries' destructors tear UCX down, or the process may crash as it
 * exits. Nothing is freed: the process is ending. */
static void stop_at_exit(void) {
  pthread_mutex_lock(&lock);
  bool running = eng.running;
  eng.running = false;
  pthread_mutex_unlock(&lock);
  if (!running || pthread_equal(pthread_self(), eng.thread)) return;
  atomic_store(&eng.stop, true);
  atomic_store(&eng.sleeping, true);
  rig_engine_wake();
  pthread_join(eng.thread, NULL);
}

static void register_stop_at_exit(void) {
  atexit(stop_at_exit);
}

static rig_status engine_make(rig_error *err) {
  static pthread_once_t at_exit = PTHREAD_ONCE_INIT;
  pthread_once(&at_exit, register_stop_at_exit);
  ucp_config_t *config;
  rig_status rs = rig_ucx_config(&config, &eng.shared, err);
  if (rs != RIG_OK) return rs;
  ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
                         .features = UCP_FEATURE_RMA | UCP_FEATURE_AMO64 | UCP_FEATURE_WAKEUP |
                                     UCP_FEATURE_AM,
                         .mt_workers_shared = 1};
  pthread_cond_init(&eng.called, NULL);
  ucs_status_t st = ucp_init(&params, config, &eng.context);
  ucp_config_release(config);
  if (st != UCS_OK) {
    engine_destroy();
    return rig_ucx_error(err, "ucp_init", st);
  }
  ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                            .thread_mode = UCS_THREAD_MODE_SERIALIZED};
  const char *what = "ucp_worker_create";
  if ((st = ucp_worker_create(eng.context, &wp, &eng.worker)) != UCS_OK ||
      (what = "ucp_worker_get_efd", st = ucp_worker_get_efd(eng.worker, &eng.efd)) != UCS_OK ||
      (what = "ucp_worker_get_address",
       st = ucp_worker_get_address(eng.worker, (ucp_address_t **)&eng.address, &eng.address_len)) !=
          UCS_OK) {
    engine_destroy();
    return rig_ucx_error(err, what, st);
  }
  eng.wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (eng.wakefd < 0) {
    engine_destroy();
    return rig_error_set(err, RIG_ESYS, "cannot make the rail thread's wake-up: %s",
                         strerror(errno));
  }
  atomic_store(&eng.stop, false);
  if (pthread_create(&eng.thread, NULL, rail_main, NULL) != 0) {
    engine_destroy();
    return rig_error_set(err, RIG_ESYS, "cannot start the rail thread");
  }
  eng.running = true;
  return RIG_OK;
}

rig_status rig_engine_hold(rig_error *err) {
  pthread_mutex_lock(&lock);
  rig_status st = eng.holds ? RIG_OK : engine_make(err);
  if (st == RIG_OK) eng.holds++;
  pthread_mutex_unlock(&lock);
  return st;
}

void rig_engine_drop(void) {
  pthread_mutex_lock(&lock);
  bool last = --eng.holds == 0;
  pthread_mutex_unlock(&lock);
  if (!last) return;
  pthread_mutex_lock(&lock);
  bool running = eng.running;
  eng.running = false;
  pthread_mutex_unlock(&lock);
  atomic_store(&eng.stop, true);
  atomic_store(&eng.sleeping, true);
  rig_engine_wake();
  if (running) pthread_join(eng.thread, NULL);
  pthread_mutex_lock(&lock);
  /* A hold taken while the thread stopped restarts it below. */
  bool again = eng.holds > 0;
  engine_destroy();
  rig_error err;
  if (again && engine_make(&err) != RIG_OK) eng.holds = 0;
  pthread_mutex_unlock(&lock);
}

ucp_context_h rig_engine_context(void) {
  return eng.context;
}

ucp_worker_h rig_engine_worker(void) {
  return eng.worker;
}

bool rig_engine_shared(void) {
  return eng.shared;
}

void rig_engine_worker_address(const void **bytes, size_t *len) {
  *bytes = eng.address;
  *len = eng.address_len;
}

rig_status rig_engine_call(rig_status (*fn)(void *arg, rig_error *err), void *arg, rig_error *err) {
  if (pthread_equal(pthread_self(), eng.thread)) return fn(arg, err);
  call c = {.fn = fn, .arg = arg, .err = err};
  pthread_mutex_lock(&lock);
  if (eng.tail)
    eng.tail->next = &c;
  else
    eng.head = &c;
  eng.tail = &c;
  pthread_mutex_unlock(&lock);
  uint64_t one = 1;
  ssize_t n = write(eng.wakefd, &one, sizeof one);
  (void)n;
  pthread_mutex_lock(&lock);
  /* The rail thread never blocks but on its bounded poll: the call runs. */
  while (!c.done) pthread_cond_wait(&eng.called, &lock);
  pthread_mutex_unlock(&lock);
  return c.status;
}

rig_status rig_engine_add(rig_rail *r, rig_error *err) {
  if (eng.nlive == eng.room) {
    size_t room = eng.room ? 2 * eng.room : 16;
    rig_rail **bigger = realloc(eng.live, room * sizeof *bigger);
    if (!bigger) return rig_error_set(err, RIG_ENOMEM, "out of memory for a rail");
    eng.live = bigger;
    eng.room = room;
  }
  eng.live[eng.nlive++] = r;
  return RIG_OK;
}

void rig_engine_remove(rig_rail *r) {
  for (size_t i = 0; i < eng.nlive; i++)
    if (eng.live[i] == r) {
      eng.live[i] = eng.live[--eng.nlive];
      return;
    }
}
