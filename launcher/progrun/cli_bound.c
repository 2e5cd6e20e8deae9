/* Waits that MPI itself does not bound: MPI_Init, the collectives of the
 * start and of the close, MPI_Finalize. A machine cut off (a network MPI
 * cannot use, a host gone) leaves each of them waiting for ever, saying
 * nothing; a watch ends the wait past the job's silence bound, says what
 * waited and which network settings MPI went by, and ends the process, on
 * every rank alike. */
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "rig/rig_job.h"

static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  pthread_t thread;
  bool watching, done;
  const char *what;
  int code;
} watch = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};

/* The variables that choose the network MPI and UCX use between hosts,
 * as this rank has them: where a cluster set up as one machine (lo) shows. */
static const char *const network_vars[] = {"OMPI_MCA_btl_tcp_if_include",
                                           "OMPI_MCA_oob_tcp_if_include",
                                           "OMPI_MCA_btl_tcp_if_exclude",
                                           "OMPI_MCA_pml",
                                           "UCX_NET_DEVICES",
                                           "UCX_TLS",
                                           "RIG_UCX_TLS",
                                           "MPIR_CVAR_CH4_NETMOD",
                                           "FI_PROVIDER"};

size_t cli_network_settings(char *out, size_t size) {
  size_t w = 0;
  out[0] = '\0';
  for (size_t i = 0; i < sizeof network_vars / sizeof network_vars[0]; i++) {
    const char *v = getenv(network_vars[i]);
    if (!v || w >= size) continue;
    int n = snprintf(out + w, size - w, "%s%s=%.64s", w ? ", " : "", network_vars[i], v);
    if (n > 0) w += (size_t)n < size - w ? (size_t)n : size - w - 1;
  }
  return w;
}

/* Why a machine may not answer, with the network settings that choose
 * how MPI reaches it. */
static void why_unanswered(char *out, size_t size) {
  char vars[512];
  bool any = cli_network_settings(vars, sizeof vars) > 0;
  bool lo = any && strstr(vars, "=lo") != NULL;
  snprintf(out, size,
           "its host cut off, stopped or gone, or not reachable on the network MPI uses: %s%s; "
           "docs/jobs.md, \"On a cluster\"",
           any ? vars : "no network variable set", lo ? " (lo reaches no other host)" : "");
}

void cli_bound_said(const char *what, double bound, char *out, size_t size) {
  char why[768];
  why_unanswered(why, sizeof why);
  snprintf(out, size, "%s not done after %g s: a machine did not answer (%s)", what, bound, why);
}

static void *watch_main(void *arg) {
  double bound = rig_job_silence();
  (void)arg;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += (time_t)bound;
  until.tv_nsec += (long)((bound - (double)(time_t)bound) * 1e9);
  if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
  pthread_mutex_lock(&watch.lock);
  while (!watch.done && pthread_cond_timedwait(&watch.cond, &watch.lock, &until) == 0) {
  }
  bool done = watch.done;
  const char *what = watch.what;
  int code = watch.code;
  pthread_mutex_unlock(&watch.lock);
  if (done) return NULL;
  char text[1024];
  cli_bound_said(what, bound, text, sizeof text);
  cli_fail(code, "%s", text);
  fflush(stdout);
  fflush(stderr);
  rig_log_flush(1.0);
  _exit(code);
}

void cli_bound_begin(const char *what, int code) {
  pthread_mutex_lock(&watch.lock);
  watch.done = false;
  watch.what = what;
  watch.code = code;
  pthread_mutex_unlock(&watch.lock);
  watch.watching = pthread_create(&watch.thread, NULL, watch_main, NULL) == 0;
}

void cli_bound_end(void) {
  pthread_mutex_lock(&watch.lock);
  watch.done = true;
  pthread_cond_signal(&watch.cond);
  pthread_mutex_unlock(&watch.lock);
  if (watch.watching) pthread_join(watch.thread, NULL);
  watch.watching = false;
}

/* ---- the first exchange ----------------------------------------------------------- */

#define HELLO_TAG 7301
/* A hello says whether the machine refused to start (then its reason
 * follows, HELLO_TAG + 1). */
#define HELLO_OK      1
#define HELLO_REFUSED 2

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Tests reqs until all are done or the bound passes: whether all are.
 * One request at a time: MPICH's MPI_STATUSES_IGNORE, taken for an array
 * of statuses, has no room (GCC says so). */
static bool test_all(int n, MPI_Request *reqs, double until) {
  for (;;) {
    int all = 1;
    for (int i = 0; i < n; i++) {
      int done = 0;
      if (MPI_Test(&reqs[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;
      all &= done;
    }
    if (all) return true;
    if (now_s() > until) return false;
    struct timespec nap = {0, 1000000};
    nanosleep(&nap, NULL);
  }
}

static _Noreturn void unanswered(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static _Noreturn void unanswered(int code, const char *fmt, ...) {
  char who[256], why[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(who, sizeof who, fmt, ap);
  va_end(ap);
  why_unanswered(why, sizeof why);
  cli_fail(code, "%s did not answer within %g s (%s)", who, rig_job_silence(), why);
  fflush(stdout);
  fflush(stderr);
  rig_log_flush(1.0);
  _exit(code);
}

/* What this machine alone refused before the start (its environment),
 * told to rank 0 with its hello: "" when nothing. */
static char refused[RIG_ERROR_MESSAGE_MAX];

void cli_bound_refuse(const char *why) {
  snprintf(refused, sizeof refused, "%s", why);
}

/* Whether machine r refused alike machine `first`. */
static bool same_refusal(char (*said)[RIG_ERROR_MESSAGE_MAX], const int *hellos, int r, int first) {
  return hellos[r - 1] == HELLO_REFUSED && strcmp(said[r], said[first]) == 0;
}

/* "1-3,5": the machines that refused alike machine `first`, marked told. */
static void alike(char (*said)[RIG_ERROR_MESSAGE_MAX], const int *hellos, int size, int first,
                  bool *told, char *out, size_t room) {
  size_t at = 0;
  out[0] = '\0';
  for (int r = first; r < size;) {
    if (!same_refusal(said, hellos, r, first)) {
      r++;
      continue;
    }
    int last = r;
    while (last + 1 < size && same_refusal(said, hellos, last + 1, first)) last++;
    for (int m = r; m <= last; m++) told[m] = true;
    if (at + 32 < room) at += (size_t)snprintf(out + at, room - at, at ? ",%d" : "%d", r);
    if (last > r && at + 32 < room) at += (size_t)snprintf(out + at, room - at, "-%d", last);
    r = last + 1;
  }
}

/* Rank 0: the refusals that came with the hellos, each told once for the
 * machines that said it ("machines 1-3: RIG_WORKERS=abc: not a count"). */
static int tell_refusals(int size, const int *hellos, double until) {
  int n = 0;
  for (int r = 1; r < size; r++) n += hellos[r - 1] == HELLO_REFUSED;
  if (!n && !refused[0]) return CLI_EXIT_OK;
  char(*said)[RIG_ERROR_MESSAGE_MAX] = calloc((size_t)size, sizeof *said);
  MPI_Request *reqs = calloc((size_t)size, sizeof *reqs);
  bool *told = calloc((size_t)size, sizeof *told);
  if (!said || !reqs || !told) {
    cli_fail(CLI_EXIT_FAIL, "out of memory");
    _exit(CLI_EXIT_FAIL);
  }
  int k = 0;
  for (int r = 1; r < size; r++)
    if (hellos[r - 1] == HELLO_REFUSED)
      MPI_Irecv(said[r], RIG_ERROR_MESSAGE_MAX - 1, MPI_CHAR, r, HELLO_TAG + 1, MPI_COMM_WORLD,
                &reqs[k++]);
  if (!test_all(k, reqs, until)) unanswered(CLI_EXIT_FAIL, "at the start, a machine that refused");
  /* Rank 0's own, as on one machine: those that said the same go with it. */
  if (refused[0]) {
    cli_fail(CLI_EXIT_USAGE, "%s", refused);
    for (int r = 1; r < size; r++) told[r] = strcmp(said[r], refused) == 0;
  }
  for (int r = 1, lines = 0; r < size && lines < 8; r++) {
    if (hellos[r - 1] != HELLO_REFUSED || told[r]) continue;
    char list[256];
    alike(said, hellos, size, r, told, list, sizeof list);
    cli_fail(CLI_EXIT_USAGE, "machine%s %s: %s", strpbrk(list, ",-") ? "s" : "", list, said[r]);
    lines++;
  }
  free(said);
  free(reqs);
  free(told);
  return CLI_EXIT_USAGE;
}

void cli_bound_hello(int rank, int size, int *rc) {
  double until = now_s() + rig_job_silence();
  if (rank != 0) {
    MPI_Request reqs[3];
    int hello = refused[0] ? HELLO_REFUSED : HELLO_OK, k = 2;
    MPI_Isend(&hello, 1, MPI_INT, 0, HELLO_TAG, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(rc, 1, MPI_INT, 0, HELLO_TAG, MPI_COMM_WORLD, &reqs[1]);
    if (refused[0])
      MPI_Isend(refused, (int)strlen(refused) + 1, MPI_CHAR, 0, HELLO_TAG + 1, MPI_COMM_WORLD,
                &reqs[k++]);
    if (!test_all(k, reqs, until))
      unanswered(CLI_EXIT_FAIL, "machine %d: at the start, machine 0 (the controller)", rank);
    return;
  }
  int n = size - 1;
  MPI_Request *reqs = calloc((size_t)(2 * n + 1), sizeof *reqs);
  int *hellos = calloc((size_t)(n + 1), sizeof *hellos);
  if (!reqs || !hellos) {
    cli_fail(CLI_EXIT_FAIL, "out of memory");
    _exit(CLI_EXIT_FAIL);
  }
  for (int r = 1; r < size; r++)
    MPI_Irecv(&hellos[r - 1], 1, MPI_INT, r, HELLO_TAG, MPI_COMM_WORLD, &reqs[r - 1]);
  if (!test_all(n, reqs, until)) {
    /* Who did not answer: each request done or not. */
    char who[200];
    size_t w = 0, missing = 0;
    for (int r = 1; r < size; r++) {
      int done = 0;
      MPI_Test(&reqs[r - 1], &done, MPI_STATUS_IGNORE);
      if (done) continue;
      if (missing++ < 8 && w < sizeof who)
        w += (size_t)snprintf(who + w, sizeof who - w, "%s%d", w ? ", " : "", r);
    }
    if (missing > 8 && w < sizeof who) snprintf(who + w, sizeof who - w, ", ...");
    unanswered(CLI_EXIT_FAIL, "at the start, machine%s %s (of %d)", missing == 1 ? "" : "s", who,
               size);
  }
  if (*rc == CLI_EXIT_OK) *rc = tell_refusals(size, hellos, until);
  for (int r = 1; r < size; r++)
    MPI_Isend(rc, 1, MPI_INT, r, HELLO_TAG, MPI_COMM_WORLD, &reqs[n + r - 1]);
  if (!test_all(n, reqs + n, until))
    unanswered(CLI_EXIT_FAIL, "at the start, a machine told to go on");
  free(reqs);
  free(hellos);
}
