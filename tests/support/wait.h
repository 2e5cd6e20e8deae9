/* Waiting on a thing, not on time. A test that must see something happen
 * polls that thing (a flag, a count, a line, a process's state) with a
 * bound only a hang reaches, RIG_HANG_S; and where it must see a thread
 * asleep before it acts (a wake-up to test, a peer to lose mid-wait), it
 * asks /proc rather than sleeping "long enough". Header-only: the suites
 * that run under mpirun with a main of their own use it too. */
#ifndef RIG_WAIT_H
#define RIG_WAIT_H

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* A wait this long is a hang, not a slow or loaded machine. */
#define RIG_HANG_S 60.0

static inline double rig_wait_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct rig_wait {
  double start, bound_s;
  unsigned turns;
} rig_wait;

static inline rig_wait rig_wait_begin(double bound_s) {
  rig_wait w = {rig_wait_now_s(), bound_s, 0};
  return w;
}

static inline double rig_wait_seconds(const rig_wait *w) {
  return rig_wait_now_s() - w->start;
}

/* One more turn of a poll: false once the bound has passed. The first
 * turns yield the core; later ones nap a millisecond, so that a long wait
 * leaves the cores to what it waits for. (How often it looks changes only
 * how soon it sees the thing, never whether.) */
static inline bool rig_wait_more(rig_wait *w) {
  if (rig_wait_seconds(w) > w->bound_s) return false;
  if (w->turns++ < 1000) {
    sched_yield();
  } else {
    struct timespec nap = {0, 1000000};
    nanosleep(&nap, NULL);
  }
  return true;
}

/* This thread's id, as /proc/<pid>/task names it. */
static inline pid_t rig_thread_self(void) {
  return (pid_t)syscall(SYS_gettid);
}

/* What /proc says of thread tid of process pid (0: this process) now: its
 * state letter (R, S, D, T, ...; 0 when it cannot be read), and the system
 * call it is blocked in with its first argument (*nr -1 when it is not
 * blocked in one: running, or gone). The kernel names the call only while
 * the thread is off the CPU. */
static inline char rig_thread_state(pid_t pid, pid_t tid, long *nr, unsigned long *arg0) {
  char path[96], line[512];
  if (pid == 0) pid = getpid();
  *nr = -1;
  *arg0 = 0;
  snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
  FILE *f = fopen(path, "r");
  if (f) {
    if (fgets(line, sizeof line, f) && sscanf(line, "%ld %lx", nr, arg0) < 1) *nr = -1;
    fclose(f);
  }
  char state = 0;
  snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
  f = fopen(path, "r");
  if (f) {
    /* "tid (comm) S ...": the comm may hold spaces and parentheses. */
    if (fgets(line, sizeof line, f)) {
      const char *comm_end = strrchr(line, ')');
      if (comm_end && comm_end[1] == ' ') state = comm_end[2];
    }
    fclose(f);
  }
  return state;
}

/* Whether thread tid of process pid (0: this process) is asleep (state S)
 * in system call nr. */
static inline bool rig_thread_asleep_in(pid_t pid, pid_t tid, long nr) {
  long got;
  unsigned long arg0;
  return rig_thread_state(pid, tid, &got, &arg0) == 'S' && got == nr;
}

#endif
