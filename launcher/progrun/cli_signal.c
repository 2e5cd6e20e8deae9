/* SIGINT and SIGTERM during a run (docs/cli.md, "Interrupts"): the
 * handler only writes the signal's number into a pipe; a thread of its
 * own reads it and, holding the lock the running thread takes while it
 * changes the times and the files, tells the interrupt (cli_job.h). Once
 * the running thread has settled (its end is being told, its files
 * committed), a first signal comes too late and is let pass; any second
 * one ends the process as the signal does, so that a stuck end can still
 * be stopped (under srun, not Slurm's own second SIGTERM: see
 * slurm_stepd). Under a job SIGCONT is taken too, without the lock: Open
 * MPI's mpirun sends it a second before the SIGTERM that ends a job. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli_job.h"

MPI_Comm cli_interrupt_comm = MPI_COMM_NULL;

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static int fds[2] = {-1, -1};
static pthread_t watcher;
static bool armed;
static atomic_int received;
static atomic_bool settled;
static cli_interrupt_fn handler_fn;
static void (*cont_fn)(void *ctx);
static void *handler_ctx;
static struct sigaction old_int, old_term, old_cont;
static void (*_Atomic gone_fn)(void *ctx);
static _Atomic pid_t parent; /* at the arm: the launcher, whose loss gone_fn tells */

/* What goes through the pipe: the signal, and who sent it (one write, so
 * whole). */
typedef struct caught {
  int sig;
  pid_t from; /* 0: the kernel, or unknown */
} caught;

static _Atomic pid_t last_from;

static void pass(int sig, const siginfo_t *info) {
  caught c = {sig, info && info->si_code <= 0 ? info->si_pid : 0};
  ssize_t w = write(fds[1], &c, sizeof c);
  (void)w;
}

/* Under srun: the step daemon (this process's parent at the arm), whose
 * SIGTERM comes twice when Slurm ends a job (the step's, then the job's,
 * milliseconds apart). The second is no order to die at once: Slurm's
 * SIGKILL, KillWait seconds on, is. 0: not under srun. */
static _Atomic pid_t slurm_stepd;

static void on_signal(int sig, siginfo_t *info, void *uc) {
  (void)uc;
  int saved = errno;
  pid_t stepd = atomic_load(&slurm_stepd);
  if (sig == SIGCONT) {
    pass(sig, info);
  } else if (sig == SIGTERM && stepd && info && info->si_code <= 0 && info->si_pid == stepd &&
             atomic_load(&received) > 0) {
    /* Slurm's second SIGTERM: the first is being told. */
  } else if (atomic_fetch_add(&received, 1) > 0) {
    signal(sig, SIG_DFL);
    raise(sig);
  } else if (!atomic_load(&settled)) {
    pass(sig, info);
  }
  errno = saved;
}

_Noreturn void cli_die_of(int sig) {
  fflush(stdout);
  fflush(stderr);
  rig_log_flush(1.0);
  signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  pthread_sigmask(SIG_UNBLOCK, &one, NULL);
  raise(sig);
  _exit(128 + sig); /* not reached: the signal's default ends the process */
}

/* How long a rank signalled by another process than its launcher waits
 * for the launcher's own signal: mpirun sends it a second after its
 * SIGCONT. */
#define AWAIT_LAUNCHER_S 3

_Noreturn void cli_await_launcher(int sig) {
  fflush(stdout);
  fflush(stderr);
  /* The launcher's signal, a second one, ends the process (on_signal). */
  struct timespec left = {AWAIT_LAUNCHER_S, 0};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
  cli_die_of(sig);
}

bool cli_interrupt_from_launcher(void) {
  pid_t from = atomic_load(&last_from);
  return from != 0 && from == getppid();
}

/* How often the thread looks whether the launcher is still there. */
#define PARENT_LOOK_MS 500

/* Whether the parent this process had at the arm is gone (it was
 * re-parented to init or a subreaper). */
static bool launcher_gone(void) {
  pid_t was = atomic_load(&parent);
  return atomic_load(&gone_fn) && was > 1 && getppid() != was;
}

static void *watch(void *arg) {
  (void)arg;
  for (;;) {
    caught c = {0, 0};
    struct pollfd in = {fds[0], POLLIN, 0};
    int ready = poll(&in, 1, PARENT_LOOK_MS);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      if (!launcher_gone()) continue;
      pthread_mutex_lock(&hold_lock);
      if (!atomic_load(&settled)) atomic_load (&gone_fn)(handler_ctx); /* ends the process */
      pthread_mutex_unlock(&hold_lock);
      atomic_store(&parent, 0); /* settled: told once at most */
      continue;
    }
    ssize_t n = read(fds[0], &c, sizeof c);
    if (n < 0 && errno == EINTR) continue;
    if (n != (ssize_t)sizeof c || c.sig == 0) return NULL;
    int sig = c.sig;
    atomic_store(&last_from, c.from);
    if (sig == SIGCONT) {
      cont_fn(handler_ctx);
      continue;
    }
    pthread_mutex_lock(&hold_lock);
    if (!atomic_load(&settled)) handler_fn(sig, handler_ctx); /* ends the process */
    pthread_mutex_unlock(&hold_lock);
  }
}

void cli_interrupt_on_gone(void (*fn)(void *ctx)) {
  atomic_store(&parent, getppid());
  atomic_store(&gone_fn, fn);
}

int cli_interrupt_arm(cli_interrupt_fn fn, void (*on_cont)(void *ctx), void *ctx) {
  if (armed || pipe2(fds, O_CLOEXEC) != 0) return CLI_EXIT_FAIL;
  atomic_store(&gone_fn, NULL);
  handler_fn = fn;
  cont_fn = on_cont;
  handler_ctx = ctx;
  atomic_store(&received, 0);
  atomic_store(&settled, false);
  atomic_store(&slurm_stepd, getenv("SLURM_STEP_ID") && getenv("SLURM_JOB_ID") ? getppid() : 0);
  /* The watcher takes no signal: they land on the threads that run. */
  sigset_t both, old;
  sigemptyset(&both);
  sigaddset(&both, SIGINT);
  sigaddset(&both, SIGTERM);
  sigaddset(&both, SIGCONT);
  pthread_sigmask(SIG_BLOCK, &both, &old);
  int e = pthread_create(&watcher, NULL, watch, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (e != 0) {
    close(fds[0]);
    close(fds[1]);
    return CLI_EXIT_FAIL;
  }
  struct sigaction sa = {0};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_RESTART | SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  if (on_cont) sigaction(SIGCONT, &sa, &old_cont);
  armed = true;
  return CLI_EXIT_OK;
}

void cli_interrupt_disarm(void) {
  if (!armed) return;
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  if (cont_fn) sigaction(SIGCONT, &old_cont, NULL);
  caught stop = {0, 0};
  ssize_t w = write(fds[1], &stop, sizeof stop);
  (void)w;
  pthread_join(watcher, NULL);
  close(fds[0]);
  close(fds[1]);
  fds[0] = fds[1] = -1;
  armed = false;
}

void cli_hold(void) {
  pthread_mutex_lock(&hold_lock);
}

void cli_release(void) {
  pthread_mutex_unlock(&hold_lock);
}

void cli_settle(void) {
  atomic_store(&settled, true);
}
