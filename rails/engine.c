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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/array.h"
#include "base/clock.h"
#include "base/sync.h"
#include "rails_internal.h"

/* How long the rail thread watches for work before it sleeps. A ready
 * posts its own puts when the worker is free, so the thread need not be
 * awake for it: a short watch leaves the cores to the programs. */
#define IDLE_SPIN_S 5e-6
/* How long it keeps progressing the worker after its last activity while
 * a live rail's peer reaches this side by emulated RMA (TCP), which lands
 * only by that progress, when no run is said to be in flight
 * (rig_rails_serve): an answer within a round trip costs no wake-up. */
#define SERVE_S 200e-6

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
  int epfd; /* the rail thread sleeps on it: wakefd, and efd while no one watches */
  pthread_t thread;
  bool running; /* under lock: the rail thread was started and not joined */
  _Atomic bool stop;
  _Atomic bool sleeping;
  call *head, *tail; /* under lock */
  pthread_cond_t called;
  rig_array live; /* rig_rail *, the rail thread's */
} engine;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Who uses the worker: the rail thread between its sleeps, or a thread
 * that calls ready and finds the worker free (rig_engine_try). */
static pthread_mutex_t worker_lock = PTHREAD_MUTEX_INITIALIZER;
#define ENGINE_INIT                                                                                \
  { .efd = -1, .wakefd = -1, .epfd = -1, .live = RIG_ARRAY_INIT(rig_rail *, 0) }
static engine eng = ENGINE_INIT;

/* Live rail i. */
static rig_rail *live(size_t i) {
  return ((rig_rail **)eng.live.items)[i];
}

/* A live rail's peer reaches this side by emulated RMA (serving()), as
 * the rail thread last saw. */
static _Atomic bool rails_served;
/* Runs in flight on this process (rig_rails_serve). */
static _Atomic long serving_runs;

void rig_rails_serve(bool on) {
  long was = atomic_fetch_add_explicit(&serving_runs, on ? 1 : -1, memory_order_relaxed);
  /* The first run in flight after a quiet, with rails to serve: the rail
   * thread, asleep on the worker's event, serves from now on, not from
   * the first message (elsewhere it sleeps on: nothing needs it). */
  if (on && was == 0 && atomic_load_explicit(&rails_served, memory_order_relaxed))
    rig_engine_wake();
}

bool rig_engine_serving(void) {
  return atomic_load_explicit(&serving_runs, memory_order_relaxed) > 0;
}

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
  for (size_t i = 0; i < eng.live.n; i++) {
    rig_rail *r = live(i);
    uint64_t ready = atomic_load((_Atomic uint64_t *)(r->counts + RIG_RAIL_READY_AT));
    uint64_t posted = atomic_load_explicit(&r->posted_seen, memory_order_relaxed);
    if (ready > posted && ready != RIG_RAIL_RAISED) return true;
    if (atomic_load_explicit(&r->in_flight, memory_order_relaxed)) return true;
  }
  return false;
}

/* Threads that progress the worker themselves for a while (rig_peer_polling).
 * While any does, the worker's event fd is out of the rail thread's epoll
 * set, so that a message such a thread takes wakes no other (a wake-up
 * costs the sender's core what a whole round trip does). The first poller
 * takes it out, leaving the rail thread asleep: a wake then, at the start
 * of a wait after a quiet, would compete with the wait for the cores. The
 * last one wakes it if it sleeps long (`watching`), and the rail thread
 * naps POLLED_NAP_MS before it puts the fd back, armed: until pollers are
 * done, it naps so, so that polling's end costs the poller nothing and a
 * poller back soon finds the set as it left it. */
#define POLLED_NAP_MS 1
static _Atomic int pollers;
static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic bool efd_in_set; /* under set_lock */
/* The rail thread sleeps long, watching the fd unless a poller took it
 * out; said before it looks at the pollers, so that the last to leave
 * sees it. */
static _Atomic bool watching;
/* The last poller woke the rail thread: it naps once before it watches. */
static _Atomic bool nap_first;

/* Whether it took the fd out (it was in). */
static bool efd_out(void) {
  pthread_mutex_lock(&set_lock);
  bool was = atomic_load(&efd_in_set);
  if (was) {
    epoll_ctl(eng.epfd, EPOLL_CTL_DEL, eng.efd, NULL);
    atomic_store(&efd_in_set, false);
  }
  pthread_mutex_unlock(&set_lock);
  return was;
}

/* This thread's polling (rig_engine_polling on, less off). */
static _Thread_local int my_polls;

void rig_engine_polling(bool on) {
  my_polls += on ? 1 : -1;
  if (!on) {
    if (atomic_fetch_sub(&pollers, 1) != 1) return;
    if (atomic_load(&watching)) {
      atomic_store(&nap_first, true);
      rig_engine_wake();
    } else if (atomic_load_explicit(&inflight, memory_order_relaxed) > 0) {
      /* What is in flight now has no one else to progress it. */
      rig_engine_wake();
    }
    /* Else the rail thread serves again at its nap's end (a millisecond
     * at most): a thread that polls comes back to it sooner, within a
     * run (a kernel's wait, the tree's), and a wake each time it stops
     * would cost a thread's wake-up a message. */
    return;
  }
  /* Counted before the set is looked at: the rail thread puts the fd in
   * before it counts (efd_watch_maybe), so one of the two sees the other. */
  atomic_fetch_add(&pollers, 1);
  if (atomic_load(&efd_in_set)) efd_out();
}

/* The rail thread, about to sleep, with the worker held: the event fd in
 * its set and the worker armed when no one polls (false: the worker has
 * events, progress them), else out of it. */
static bool efd_watch_maybe(bool *watched) {
  *watched = false;
  if (atomic_load(&pollers)) {
    if (atomic_load(&efd_in_set)) efd_out();
    return true;
  }
  ucs_status_t st = ucp_worker_arm(eng.worker);
  if (st != UCS_OK) return false;
  pthread_mutex_lock(&set_lock);
  if (!atomic_load(&efd_in_set)) {
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = eng.efd};
    /* Not put in (no memory for it): the thread naps, and tries again. */
    if (epoll_ctl(eng.epfd, EPOLL_CTL_ADD, eng.efd, &ev) == 0) atomic_store(&efd_in_set, true);
  }
  bool in = atomic_load(&efd_in_set);
  pthread_mutex_unlock(&set_lock);
  if (atomic_load(&pollers)) {
    efd_out();
    return true;
  }
  *watched = in;
  return true;
}

/* Whether a thread asleep in rig_engine_watch watches the worker's event
 * fd: one at a time, so that a message wakes one thread. */
static _Atomic bool efd_held;

static void watch(rig_sleeper *me, bool nudged, int64_t timeout_ns);

void rig_engine_watch(const _Atomic uint32_t *word, uint32_t seen, int64_t timeout_ns) {
  rig_sleeper me;
  /* Said before the word is read: a change made after this nudges it. */
  bool nudged = rig_sleeper_add(&me, word, seen);
  if (word && atomic_load(word) != seen) {
    rig_sleeper_remove(&me);
    return;
  }
  watch(&me, nudged, timeout_ns);
}

void rig_engine_watch_count(const void *count, uint64_t c, int64_t timeout_ns) {
  rig_sleeper me;
  bool nudged = rig_sleeper_add_count(&me, count, c);
  if (rig_sleeper_moved(&me)) {
    rig_sleeper_remove(&me);
    return;
  }
  watch(&me, nudged, timeout_ns);
}

/* Sleeps on the worker as rig_engine_watch says, me registered. */
static void watch(rig_sleeper *me, bool nudged, int64_t timeout_ns) {
  bool holds = false, uncounted = false, on_efd = false, polls = my_polls > 0;
  rig_engine_lock();
  /* Events already there are this thread's to progress: no sleep. */
  bool progressed = ucp_worker_progress(eng.worker) != 0;
  ucs_status_t st = progressed ? UCS_ERR_BUSY : UCS_OK;
  if (st == UCS_OK) {
    /* A poller watches the worker unless another does; one that does not
     * poll (a quiet waiter) watches it beside the rail thread while no
     * one polls, so that a message wakes it at once however late; one
     * that cannot be nudged watches it always. */
    if (!nudged)
      on_efd = true;
    else if (polls)
      holds = on_efd = !atomic_exchange(&efd_held, true);
    else
      on_efd = !atomic_load(&pollers);
    if (on_efd && (st = ucp_worker_arm(eng.worker)) != UCS_OK && holds) {
      atomic_store(&efd_held, false);
      holds = false;
    }
    /* A poller that does not watch sleeps on its nudge alone and counts
     * as no poller meanwhile, so that the rail thread watches when the
     * one that does leaves. */
    uncounted = polls && !on_efd;
  }
  rig_engine_unlock();
  if (progressed) rig_engine_nudge();
  if (uncounted) rig_engine_polling(false);
  if (st == UCS_OK) {
    /* Without a nudge of its own (no eventfd, or too many asleep) a thread
     * watches the worker too, a millisecond at most. */
    if (!nudged && timeout_ns > 1000000) timeout_ns = 1000000;
    rig_sleeper_sleep(me, on_efd ? eng.efd : -1, timeout_ns);
  }
  if (holds) atomic_store(&efd_held, false);
  if (uncounted) rig_engine_polling(true);
  rig_sleeper_remove(me);
}

bool rig_engine_turn_pumping(void) {
  if (!rig_engine_try()) return false;
  bool any = ucp_worker_progress(eng.worker) != 0, waiting = false;
  /* Under the worker the live rails are the rail thread's as much. */
  for (size_t i = 0; i < eng.live.n; i++) any |= rig_rail_pump(live(i), &waiting);
  rig_engine_untry();
  /* A count or word it moved may be another thread's, asleep. */
  if (any) rig_engine_nudge();
  return any;
}

/* A poller's turn pumps the rails too: the rail thread keeps off the
 * worker while it polls (polled_nap). */
bool rig_engine_turn(void) {
  return rig_engine_turn_pumping();
}

/* Sleeps until woken or the worker has events. While threads poll it
 * naps without touching the worker (whose lock a preempted holder would
 * keep from them), until they are done. */
static void sleep_on_worker(void) {
  atomic_store(&eng.sleeping, true);
  /* After saying so, look again: a ready or call just made is not missed. */
  while (!work_pending() && !atomic_load(&eng.stop)) {
    bool watched = false;
    if (atomic_exchange(&nap_first, false)) {
      if (atomic_load(&efd_in_set)) efd_out();
    } else if (!atomic_load(&pollers)) {
      atomic_store(&watching, true);
      pthread_mutex_lock(&worker_lock);
      bool armed = efd_watch_maybe(&watched);
      pthread_mutex_unlock(&worker_lock);
      if (!armed) {
        atomic_store(&watching, false);
        break;
      }
      if (!watched) atomic_store(&watching, false);
    } else if (atomic_load(&efd_in_set)) {
      efd_out();
    }
    struct epoll_event ev[2];
    /* A bound, so that a lost wake-up costs at most this long. */
    int n = epoll_wait(eng.epfd, ev, 2, watched ? 100 : POLLED_NAP_MS);
    for (int i = 0; i < n; i++)
      if (ev[i].data.fd == eng.wakefd) {
        uint64_t v;
        ssize_t got = read(eng.wakefd, &v, sizeof v);
        (void)got;
      }
    atomic_store(&watching, false);
    if (n != 0 || watched) break;
  }
  atomic_store(&eng.sleeping, false);
}

/* Whether a live rail's peer reaches this side by emulated RMA. */
static bool serving(void) {
  for (size_t i = 0; i < eng.live.n; i++)
    if (live(i)->peer.link && rig_endpoint_emulated(live(i)->peer.link)) return true;
  return false;
}

/* While threads progress the worker themselves (pollers), the rail
 * thread keeps off it: they complete what is in flight and post what is
 * ready (rig_engine_turn pumps the rails), so that a message is taken by
 * the thread that waits for it and wakes no other, and the two never
 * hand the worker's lock to and fro. It runs only what they cannot (its
 * calls), pumps what was left when the worker is free, and naps on its
 * wake fd. */
static void polled_nap(void) {
  if (work_pending() && rig_engine_try()) {
    bool waiting = false;
    for (size_t i = 0; i < eng.live.n; i++) rig_rail_pump(live(i), &waiting);
    rig_engine_untry();
  }
  atomic_store(&eng.sleeping, true);
  if (atomic_load(&efd_in_set)) efd_out();
  if (atomic_load(&pollers) && !calls_queued() && !atomic_load(&eng.stop)) {
    struct epoll_event ev[2];
    int n = epoll_wait(eng.epfd, ev, 2, POLLED_NAP_MS);
    for (int i = 0; i < n; i++)
      if (ev[i].data.fd == eng.wakefd) {
        uint64_t v;
        ssize_t got = read(eng.wakefd, &v, sizeof v);
        (void)got;
      }
  }
  atomic_store(&eng.sleeping, false);
}

static void *rail_main(void *arg) {
  (void)arg;
  /* For top -H and the tests: the thread that serves the rails. */
  pthread_setname_np(pthread_self(), "rig-rail");
  double last_busy = rig_now_s();
  while (!atomic_load(&eng.stop)) {
    if (atomic_load_explicit(&pollers, memory_order_relaxed) && !calls_queued()) {
      polled_nap();
      last_busy = rig_now_s();
      continue;
    }
    /* The worker is let go between turns, so that a ready on another
     * thread may post its own puts at once. */
    pthread_mutex_lock(&worker_lock);
    bool busy = run_calls();
    bool progressed = false;
    while (ucp_worker_progress(eng.worker)) progressed = true;
    busy |= progressed;
    bool waiting = atomic_load_explicit(&inflight, memory_order_relaxed) > 0;
    for (size_t i = 0; i < eng.live.n; i++) busy |= rig_rail_pump(live(i), &waiting);
    atomic_store_explicit(&rails_served, serving(), memory_order_relaxed);
    pthread_mutex_unlock(&worker_lock);
    /* A count or word it moved may be a thread's, asleep on it. */
    if (progressed) rig_engine_nudge();
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
    /* Peers reached by emulated RMA land their bytes and counts only by
     * this process's progress: while a run is in flight (or shortly after
     * the last activity) it goes on, yielding between turns, unless a
     * thread progresses the worker itself (a rail wait, the tree's). */
    if (atomic_load_explicit(&rails_served, memory_order_relaxed) &&
        !atomic_load_explicit(&pollers, memory_order_relaxed) &&
        (rig_engine_serving() || now - last_busy < SERVE_S)) {
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
  if (eng.epfd >= 0) close(eng.epfd);
  rig_array_free(&eng.live);
  pthread_cond_destroy(&eng.called);
  eng = (engine)ENGINE_INIT;
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
  rs = rig_rail_msg_listen(eng.worker, err);
  if (rs != RIG_OK) {
    engine_destroy();
    return rs;
  }
  eng.wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  eng.epfd = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event wake = {.events = EPOLLIN, .data.fd = eng.wakefd},
                     worker = {.events = EPOLLIN, .data.fd = eng.efd};
  if (eng.wakefd < 0 || eng.epfd < 0 ||
      epoll_ctl(eng.epfd, EPOLL_CTL_ADD, eng.wakefd, &wake) != 0 ||
      epoll_ctl(eng.epfd, EPOLL_CTL_ADD, eng.efd, &worker) != 0) {
    int e = errno;
    engine_destroy();
    return rig_error_set(err, RIG_ESYS, "cannot make the rail thread's wake-up: %s", strerror(e));
  }
  atomic_store(&efd_in_set, true);
  atomic_store(&eng.stop, false);
  if (pthread_create(&eng.thread, NULL, rail_main, NULL) != 0) {
    engine_destroy();
    return rig_error_set(err, RIG_ESYS, "cannot start the rail thread");
  }
  eng.running = true;
  rig_rails_wait_lend();
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
  if (!rig_array_push(&eng.live, &r))
    return rig_error_set(err, RIG_ENOMEM, "out of memory for a rail");
  return RIG_OK;
}

void rig_engine_remove(rig_rail *r) {
  for (size_t i = 0; i < eng.live.n; i++)
    if (live(i) == r) {
      rig_array_remove(&eng.live, i);
      return;
    }
}
