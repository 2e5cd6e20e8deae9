/* sync.h: the few waiting primitives every layer of librig shares: a futex
 * word and the processor's spin hint. Private to librig (never installed). */
#ifndef RIG_BASE_SYNC_H
#define RIG_BASE_SYNC_H

#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleeps while *word == expected, at most timeout_ns (< 0: no bound); a
 * spurious return is harmless, callers recheck. */
static inline void rig_futex_wait(_Atomic uint32_t *word, uint32_t expected, int64_t timeout_ns) {
  struct timespec ts, *t = NULL;
  if (timeout_ns >= 0) {
    ts.tv_sec = (time_t)(timeout_ns / 1000000000);
    ts.tv_nsec = (long)(timeout_ns % 1000000000);
    t = &ts;
  }
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, t, NULL, 0);
}

/* Wakes at most n sleepers of word (INT32_MAX: all). */
static inline void rig_futex_wake(_Atomic uint32_t *word, int n) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* The same on a word of memory shared with another process (a mapping of
 * the same segment there): waits and wakes key on the memory, not on this
 * process's address space. */
static inline void rig_futex_wait_shared(_Atomic uint32_t *word, uint32_t expected,
                                         int64_t timeout_ns) {
  struct timespec ts = {(time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000)};
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expected, &ts, NULL, 0);
}

static inline void rig_futex_wake_shared(_Atomic uint32_t *word, int n) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, n, NULL, NULL, 0);
}

/* Joins t if it ends within `seconds`; else detaches it (it may be inside
 * work nobody can stop: a kernel that does not return) and answers false. */
static inline bool rig_join_within(pthread_t t, double seconds) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  long long ns = (long long)until.tv_nsec + (long long)(seconds * 1e9);
  until.tv_sec += (time_t)(ns / 1000000000LL);
  until.tv_nsec = (long)(ns % 1000000000LL);
  if (pthread_timedjoin_np(t, NULL, &until) == 0) return true;
  pthread_detach(t);
  return false;
}

/* One step of a spin loop: lets the sibling hyperthread run. */
static inline void rig_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

#endif
