/* A fault of the process's own (SIGSEGV, SIGBUS, SIGFPE, SIGILL: a host
 * kernel whose parameters disagree with its code, say) is named before
 * the rank dies: `progrun: machine 1: step 3: kernel "saxpy" on cpu:0:
 * SIGSEGV at 0x10` (docs/jobs.md, "Failure"). The handler only writes: what
 * runs is recorded by librig before each call (rig_working_describe). In a
 * job a thread of its own then tells the job, so that rank 0 names it too,
 * and the handler waits a moment for it. The rank still dies of the
 * signal: its memory cannot be trusted after a fault. */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_job.h"

#define LINE_MAX_BYTES 512

static int machine = -1; /* -1: no job */
static char label[128];  /* how the job names this machine, once it is known */
static int tell_fds[2] = {-1, -1}, ack_fds[2] = {-1, -1};
static rig_job *_Atomic told_job; /* NULL once the job is closed */

/* Appends s (NUL kept), as a signal handler may. */
static void put(char *buf, size_t *at, const char *s) {
  while (*s && *at + 1 < LINE_MAX_BYTES) buf[(*at)++] = *s++;
  buf[*at] = '\0';
}

static void put_number(char *buf, size_t *at, unsigned long long v, unsigned base) {
  char digits[24], *d = digits + sizeof digits;
  *--d = '\0';
  do *--d = "0123456789abcdef"[v % base];
  while ((v /= base) && d > digits);
  put(buf, at, d);
}

static const char *signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    default:
      return "SIGILL";
  }
}

static void on_fault(int sig, siginfo_t *info, void *uc) {
  (void)uc;
  char line[LINE_MAX_BYTES];
  size_t at = 0, what_at;
  line[0] = '\0';
  put(line, &at, "progrun: ");
  what_at = at;
  if (label[0]) {
    put(line, &at, label);
    put(line, &at, ": ");
  } else if (machine >= 0) {
    put(line, &at, "machine ");
    put_number(line, &at, (unsigned long long)machine, 10);
    put(line, &at, ": ");
  }
  char running[RIG_PART_LABEL_MAX + 80];
  bool in_work = rig_working_describe(running, sizeof running);
  if (in_work) {
    put(line, &at, running);
    put(line, &at, ": ");
  }
  put(line, &at, signal_name(sig));
  put(line, &at, " at 0x");
  put_number(line, &at, (unsigned long long)(uintptr_t)info->si_addr, 16);
  /* The job hears it without "progrun: "; stderr, a line. */
  if (tell_fds[1] >= 0) {
    ssize_t w = write(tell_fds[1], line + what_at, at - what_at);
    (void)w;
  }
  line[at++] = '\n';
  ssize_t w = write(STDERR_FILENO, line, at);
  (void)w;
  /* Outside any kernel the fault is progrun's own (or a library's): its
   * stack, for the report (backtrace was loaded at the arm, so that it
   * allocates nothing here). */
  if (!in_work) {
    void *frames[32];
    backtrace_symbols_fd(frames, backtrace(frames, 32), STDERR_FILENO);
  }
  if (tell_fds[1] >= 0) {
    struct pollfd p = {ack_fds[0], POLLIN, 0};
    poll(&p, 1, 2000);
  }
  /* SA_RESETHAND: the fault, again, now ends the process as it would. */
}

/* Tells the job the handler's line, then lets the handler go on. */
static void *tell_main(void *arg) {
  (void)arg;
  char what[LINE_MAX_BYTES];
  ssize_t n;
  while ((n = read(tell_fds[0], what, sizeof what - 1)) < 0 && errno == EINTR) {
  }
  if (n <= 0) return NULL;
  what[n] = '\0';
  rig_job *job = atomic_load(&told_job);
  if (job) rig_job_fail(job, "%s", what);
  /* The control thread sends the frame at once; a moment for it. */
  struct timespec moment = {0, 300000000};
  nanosleep(&moment, NULL);
  char b = 1;
  ssize_t w = write(ack_fds[1], &b, 1);
  (void)w;
  return NULL;
}

void cli_fault_arm(int m) {
  machine = m;
  void *frame;
  backtrace(&frame, 1); /* loads what backtrace needs now, not in the handler */
  struct sigaction sa = {0};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) sigaction(sigs[i], &sa, NULL);
}

void cli_fault_tell(rig_job *job) {
  if (tell_fds[0] >= 0 || pipe2(tell_fds, O_CLOEXEC) != 0) return;
  if (pipe2(ack_fds, O_CLOEXEC) != 0) {
    close(tell_fds[0]);
    close(tell_fds[1]);
    tell_fds[0] = tell_fds[1] = -1;
    return;
  }
  snprintf(label, sizeof label, "%s", rig_job_label(job, rig_job_rank(job)));
  atomic_store(&told_job, job);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&t, &attr, tell_main, NULL) != 0) {
    close(tell_fds[1]);
    tell_fds[1] = -1; /* the handler then only writes its line */
  }
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void cli_fault_untell(void) {
  atomic_store(&told_job, NULL);
}
