/* Commands run by tests (proc.h). */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wait.h"

extern char **environ;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

pid_t rig_proc_start(char *const *argv, char *const *env, int out_fd, int err_fd) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  setpgid(0, 0); /* its own group, so a timeout kills every process it made */
  for (char *const *e = env; e && *e; e++) putenv(*e);
  if (out_fd >= 0) dup2(out_fd, 1);
  if (err_fd >= 0) dup2(err_fd, 2);
  execv(argv[0], argv);
  fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
  _exit(127);
}

typedef struct buf {
  char *p;
  size_t n, room;
} buf;

static void put(buf *b, const char *bytes, size_t n) {
  if (b->room - b->n < n + 1) {
    size_t room = b->room ? 2 * b->room : 8192;
    while (room - b->n < n + 1) room *= 2;
    char *p = realloc(b->p, room);
    if (!p) return;
    b->p = p;
    b->room = room;
  }
  memcpy(b->p + b->n, bytes, n);
  b->n += n;
  b->p[b->n] = 0;
}

struct rig_proc_live {
  pid_t pid;
  pthread_mutex_t lock; /* out and err */
  buf out, err;
  _Atomic bool ended;
  void (*during)(void *ctx, rig_proc_live *l);
  void *ctx;
};

pid_t rig_proc_live_pid(const rig_proc_live *l) {
  return l->pid;
}

bool rig_proc_live_said(rig_proc_live *l, const char *text) {
  pthread_mutex_lock(&l->lock);
  bool said = l->err.p && strstr(l->err.p, text);
  pthread_mutex_unlock(&l->lock);
  return said;
}

bool rig_proc_live_ended(const rig_proc_live *l) {
  return atomic_load(&l->ended);
}

bool rig_proc_live_until(rig_proc_live *l, bool (*cond)(void *ctx), void *ctx) {
  double until = rig_wait_now_s() + RIG_HANG_S;
  bool held;
  /* A look may scan /proc: one each 10 ms leaves the cores to the command. */
  while (!(held = cond(ctx)) && !rig_proc_live_ended(l) && rig_wait_now_s() < until) {
    struct timespec nap = {0, 10000000};
    nanosleep(&nap, NULL);
  }
  return held;
}

/* Reads what fd has into b (under l's lock); false once it is closed. */
static bool take(rig_proc_live *l, int fd, buf *b) {
  char chunk[4096];
  ssize_t got = read(fd, chunk, sizeof chunk);
  if (got < 0 && errno == EINTR) return true;
  if (got <= 0) return false;
  pthread_mutex_lock(&l->lock);
  put(b, chunk, (size_t)got);
  pthread_mutex_unlock(&l->lock);
  return true;
}

static void *during_main(void *arg) {
  rig_proc_live *l = arg;
  l->during(l->ctx, l);
  return NULL;
}

rig_proc rig_proc_run_during(char *const *argv, char *const *env, double timeout_s,
                             void (*during)(void *ctx, rig_proc_live *l), void *ctx) {
  rig_proc r = {0};
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) {
    r.code = -1;
    return r;
  }
  double t0 = now();
  pid_t pid = rig_proc_start(argv, env, out[1], err[1]);
  close(out[1]);
  close(err[1]);
  r.pid = pid;
  rig_proc_live l = {.pid = pid, .during = during, .ctx = ctx};
  pthread_mutex_init(&l.lock, NULL);
  pthread_t hook;
  bool hooked = during && pthread_create(&hook, NULL, during_main, &l) == 0;
  bool oo = true, eo = true;
  while (oo || eo) {
    if (now() - t0 > timeout_s) {
      kill(-pid, SIGKILL);
      r.timed_out = true;
      break;
    }
    struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    if (poll(fds, 2, 50) > 0) {
      if (oo && fds[0].revents) oo = take(&l, out[0], &l.out);
      if (eo && fds[1].revents) eo = take(&l, err[0], &l.err);
    }
  }
  atomic_store(&l.ended, true);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  kill(-pid, SIGKILL); /* nothing it started outlives the test */
  if (hooked) pthread_join(hook, NULL);
  r.seconds = now() - t0;
  r.code = r.timed_out ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = l.out.p ? l.out.p : calloc(1, 1);
  r.err = l.err.p ? l.err.p : calloc(1, 1);
  pthread_mutex_destroy(&l.lock);
  close(out[0]);
  close(err[0]);
  return r;
}

rig_proc rig_proc_run(char *const *argv, char *const *env, double timeout_s) {
  return rig_proc_run_during(argv, env, timeout_s, NULL, NULL);
}

void rig_proc_free(rig_proc *p) {
  free(p->out);
  free(p->err);
}

size_t rig_proc_mpiexec(char **argv, int n, bool recovery) {
  /* The strings live as long as the test: argv points into them. */
  static char np[16], flags[256], recover[64];
  const char *mpiexec = getenv("RIG_TEST_MPIEXEC"), *f = getenv("RIG_TEST_MPIEXEC_FLAGS"),
             *r = getenv("RIG_TEST_MPIEXEC_RECOVERY");
  size_t k = 0;
  argv[k++] = (char *)(mpiexec && *mpiexec ? mpiexec : "/usr/bin/mpirun");
  snprintf(np, sizeof np, "%d", n);
  argv[k++] = "-n";
  argv[k++] = np;
  snprintf(flags, sizeof flags, "%s", f ? f : "--oversubscribe --bind-to none");
  char *save = NULL;
  for (char *t = strtok_r(flags, " ", &save); t && k < 15; t = strtok_r(NULL, " ", &save))
    argv[k++] = t;
  snprintf(recover, sizeof recover, "%s", r ? r : "--enable-recovery");
  if (recovery && *recover && k < 16) argv[k++] = recover;
  return k;
}

const char *rig_proc_no_survivor(void) {
  const char *mpi = getenv("RIG_TEST_MPI");
  return mpi && strcmp(mpi, "mpich") == 0
             ? "MPICH 4.0's ch4:ucx aborts every rank when a peer dies (docs/jobs.md, \"Open MPI "
               "and MPICH\")"
             : NULL;
}

rig_proc rig_proc_run_lost(const char *program_var, const char *how, const char *tls,
                           const char *extra) {
  const char *program = getenv(program_var);
  char *argv[24];
  size_t k = rig_proc_mpiexec(argv, 2, true);
  argv[k++] = (char *)(program ? program : "false");
  argv[k++] = (char *)how;
  argv[k] = NULL;
  char silence[] = "RIG_JOB_SILENCE=3", transports[64], more[1024];
  /* librig's transports: UCX_TLS, or RIG_UCX_TLS where MPI runs on UCX
   * too and must keep its own (tests/CMakeLists.txt). */
  const char *var = getenv("RIG_TEST_TLS_VAR");
  snprintf(transports, sizeof transports, "%s=%s", var && *var ? var : "UCX_TLS", tls ? tls : "");
  snprintf(more, sizeof more, "%s", extra ? extra : "");
  char *env[4] = {silence, NULL, NULL, NULL};
  size_t e = 1;
  if (tls) env[e++] = transports;
  if (extra) env[e++] = more;
  return rig_proc_run(argv, env, 90);
}
