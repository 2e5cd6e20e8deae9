/* Commands run by tests (proc.h). */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

static void take(int fd, buf *b, bool *open) {
  if (b->room - b->n < 4097) {
    size_t room = b->room ? 2 * b->room : 8192;
    char *p = realloc(b->p, room);
    if (!p) return;
    b->p = p;
    b->room = room;
  }
  ssize_t got = read(fd, b->p + b->n, 4096);
  if (got > 0)
    b->n += (size_t)got;
  else if (got == 0 || errno != EINTR)
    *open = false;
  b->p[b->n] = 0;
}

rig_proc rig_proc_run_during(char *const *argv, char *const *env, double timeout_s, double delay_s,
                             void (*during)(void *ctx, pid_t pid), void *ctx) {
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
  buf o = {0}, e = {0};
  bool oo = true, eo = true, called = during == NULL;
  while (oo || eo) {
    double t = now() - t0;
    if (!called && t >= delay_s) {
      during(ctx, pid);
      called = true;
    }
    if (t > timeout_s) {
      kill(-pid, SIGKILL);
      r.timed_out = true;
      break;
    }
    struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    if (poll(fds, 2, 50) > 0) {
      if (oo && fds[0].revents) take(out[0], &o, &oo);
      if (eo && fds[1].revents) take(err[0], &e, &eo);
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  kill(-pid, SIGKILL); /* nothing it started outlives the test */
  r.seconds = now() - t0;
  r.code = r.timed_out ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = o.p ? o.p : calloc(1, 1);
  r.err = e.p ? e.p : calloc(1, 1);
  close(out[0]);
  close(err[0]);
  return r;
}

rig_proc rig_proc_run(char *const *argv, char *const *env, double timeout_s) {
  return rig_proc_run_during(argv, env, timeout_s, 0, NULL, NULL);
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
