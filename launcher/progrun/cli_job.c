/* `mpirun -n N progrun [run] FILE`: rank 0, the controller, reads FILE (a
 * description, or a job file naming each machine's), loads the program on
 * every machine (its own devices, the others' through their agents), runs
 * every machine's program each run (the machines' runs overlapping),
 * writes the files and prints the summary. The other ranks serve. A
 * failure is the job's on every rank, which each prints and leaves with:
 * no rank hangs (docs/jobs.md "Failure"). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_job.h"

/* ---- an agent ------------------------------------------------------------------ */

/* An agent interrupted tells the controller at once, which so learns that
 * it is alive (cli_session_interrupted), then waits a while for the
 * controller to tell the interrupt and the launcher to end the job: left
 * alone, it ends itself as the signal would. */
#define LINGER_MS 3000

/* Tells the controller this agent is there (sig: what it got), with its
 * runs' figures so far. */
static void tell(int sig, bool held) {
  MPI_Request req;
  static cli_told told;
  int done = 0;
  cli_local_told(&told, held);
  told.sig = sig;
  if (MPI_Isend(&told, (int)sizeof told, MPI_BYTE, 0, CLI_TAG_TOLD, cli_interrupt_comm, &req) ==
      MPI_SUCCESS)
    for (int ms = 0; ms < LINGER_MS && !done; ms++) {
      struct timespec one = {0, 1000000};
      nanosleep(&one, NULL);
      if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) break;
    }
}

static void agent_interrupted(int sig, void *ctx) {
  (void)ctx;
  /* Not the launcher's (a `timeout`'s or a batch system's signal to the
   * whole process group): the launcher has it too and ends the job in
   * its order, which it cleans up after (its shared memory segments) only
   * when no rank died under it first. */
  if (!cli_interrupt_from_launcher()) cli_await_launcher(sig);
  tell(sig, true);
  struct timespec linger = {LINGER_MS / 1000, 0};
  nanosleep(&linger, NULL);
  _exit(128 + sig);
}

/* The launcher is gone: rank 0 says so; an agent leaves without a word
 * (what it holds of its own files is only temporaries, which go with
 * it). */
static void agent_gone(void *ctx) {
  (void)ctx;
  cli_local_abort_files();
  _exit(CLI_EXIT_FAIL);
}

/* SIGCONT: perhaps the launcher about to end the job (cli_job.h). */
static void agent_continued(void *ctx) {
  (void)ctx;
  tell(SIGCONT, false);
}

/* Leaves after a failure of the job, its cause printed: no MPI_Finalize
 * (it waits for every rank, and one may be gone, stopped or cut off) and
 * no MPI_Abort (Open MPI's can hang on a host cut off): the launcher ends
 * what is left once a rank exits with a failure. Every rank leaves with
 * the same code: 2 for a fault of the input, wherever it was found, else
 * 1. */
static _Noreturn void leave(int rc) {
  fflush(stdout);
  fflush(stderr);
  rig_log_flush(1.0); /* librig's lines on their way, if stderr takes them */
  _exit(rc);
}

/* The exit code a failed job's cause stands for. */
static int code_of(const rig_job *job) {
  rig_status code = rig_job_cause(job, NULL);
  return code == RIG_EINVAL || code == RIG_EMALFORMED ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
}

/* An agent learned that the job failed: it says so, and leaves once its
 * goodbye is out (rig_job_close, bounded). */
static _Noreturn void agent_leaves(rig_job *job, int rank, const rig_error *why) {
  /* The controller tells the failure once for every machine: this one
   * says it only when the controller is out of reach. It leaves after the
   * controller's goodbye, so that its exit (which the launcher may take
   * for the job's end) does not cut the controller's word short. */
  if (!rig_job_await_told(job)) {
    fprintf(stderr, "progrun: machine %d leaves the job: %s\n", rank, why->message);
    fflush(stderr);
  }
  int rc = code_of(job);
  rig_error ignored;
  cli_fault_untell();
  rig_job_close(job, &ignored);
  leave(rc);
}

static void agent(int rank) {
  rig_job *job = NULL;
  rig_error err = {0};
  if (rig_job_start(MPI_COMM_WORLD, &job, &err) != RIG_OK) {
    fprintf(stderr, "progrun: machine %d: %s\n", rank, err.message);
    leave(CLI_EXIT_FAIL);
  }
  cli_fault_tell(job);
  /* Its own program, run by the job's tree; then it serves until the
   * controller closes the job. */
  cli_local_agent(job);
  if (rig_job_serve(job, &err) != RIG_OK) agent_leaves(job, rank, &err);
  /* A failure after the controller closed the job (or during it) still
   * fails every rank. */
  cli_fault_untell();
  if (rig_job_close(job, &err) != RIG_OK) {
    fprintf(stderr, "progrun: machine %d leaves the job: %s\n", rank, err.message);
    leave(CLI_EXIT_FAIL);
  }
}

/* ---- the launcher's start ------------------------------------------------------ */

/* MPI_Init, bounded: a machine cut off while it runs would leave this rank
 * waiting for ever, saying nothing. */
static void init_bounded(int *argc, char ***argv) {
  /* A machine that is gone (killed, cut off) leaves sockets closed: a
   * write to one is EPIPE, which UCX and Open MPI report, not a SIGPIPE
   * that would end this rank before the job's cause is told. */
  signal(SIGPIPE, SIG_IGN);
  cli_bound_begin("the launcher's start (MPI_Init)", CLI_EXIT_FAIL);
  int provided;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  cli_bound_end();
}

/* ---- the failure, told when it happens --------------------------------------- */

/* The running thread tells the job's failure (it watches the job between
 * its waits) or, while that thread is inside work of this machine's own (a
 * host step runs on it until it ends), the watch below: whoever claims it
 * first (cli_failure_claim). */
static struct {
  int fds[2]; /* 1 written at the failure, 0 at the end of a job that went well */
  pthread_t thread;
  bool started;
} failure_watch = {{-1, -1}, 0, false};

/* On the thread of librig that found the failure: it must not block. */
static void on_failure(void *ctx) {
  (void)ctx;
  unsigned char b = 1;
  ssize_t w = write(failure_watch.fds[1], &b, 1);
  (void)w;
}

/* How long the running thread has to tell the failure itself. */
#define TELL_GRACE_MS 500

static void *watch_failure(void *arg) {
  cli_session *s = arg;
  unsigned char b = 0;
  while (read(failure_watch.fds[0], &b, 1) < 0 && errno == EINTR) {
  }
  if (b != 1) return NULL;
  for (int ms = 0; ms < TELL_GRACE_MS; ms += 10) {
    if (cli_failure_was_told()) return NULL;
    struct timespec ten = {0, 10000000};
    nanosleep(&ten, NULL);
  }
  if (!cli_failure_claim()) return NULL;
  rig_error why;
  rig_job_told_cause(s->job, CLI_WORDS_WAIT_S, &why);
  int64_t r = cli_failed_run(s, __atomic_load_n(&s->run, __ATOMIC_ACQUIRE));
  cli_hold();
  cli_settle();
  /* The peers were told by librig; the work here is not waited for. */
  cli_session_told(s, r, &why);
  leave(code_of(s->job));
}

static void watch_start(cli_session *s) {
  if (pipe2(failure_watch.fds, O_CLOEXEC) != 0) return;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old); /* signals are the interrupt thread's */
  failure_watch.started = pthread_create(&failure_watch.thread, NULL, watch_failure, s) == 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (failure_watch.started) rig_job_on_failure(s->job, on_failure, NULL);
}

/* The job went well: the watch ends (before the job is freed). */
static void watch_stop(cli_session *s) {
  if (!failure_watch.started) return;
  rig_job_on_failure(s->job, NULL, NULL);
  unsigned char b = 0;
  ssize_t w = write(failure_watch.fds[1], &b, 1);
  (void)w;
  pthread_join(failure_watch.thread, NULL);
  failure_watch.started = false;
  close(failure_watch.fds[0]);
  close(failure_watch.fds[1]);
}

/* ---- the controller -------------------------------------------------------- */

/* The job's whole run once the plans are made: the exit code, its message
 * printed. After a failure every machine learns it (a fault of the input
 * as such) and leaves without waiting for its work. */
static int control(cli_session *s) {
  rig_error err = {0};
  if (rig_job_start(MPI_COMM_WORLD, &s->job, &err) != RIG_OK) {
    cli_session_fail(s, CLI_EXIT_FAIL, &err);
    leave(CLI_EXIT_FAIL);
  }
  watch_start(s);
  cli_fault_tell(s->job);
  int rc = s->local ? cli_local_control(s, &err) : cli_session_control(s, &err);
  if (rc == CLI_EXIT_OK) {
    /* The close waits for every agent's work: a failure found there (an
     * agent gone silent) is the job's too. The job is then freed. */
    watch_stop(s); /* the job is freed by the close: told from here on */
    cli_fault_untell();
    rig_status st = rig_job_close(s->job, &err);
    s->job = NULL;
    if (st != RIG_OK) rc = CLI_EXIT_FAIL;
  }
  if (rc != CLI_EXIT_OK) {
    cli_session_fail(s, rc, &err); /* the job fails with it */
    if (s->job) {
      rc = code_of(s->job);
      cli_fault_untell();
      rig_job_close(s->job, &err);
    }
    leave(rc);
  }
  /* A job of machine-local runs put its reports before every machine
   * agreed its files were whole. */
  if (s->local) return cli_session_commit(s, CLI_EXIT_OK, &err);
  return cli_session_finish(s);
}

/* Rank 0's options and plans, before any rank starts the job: -1 for
 * --help (said, and every rank leaves with 0). */
static int plan_here(int argc, char **argv, cli_run_opts *o, cli_session *s, size_t n) {
  int rc = cli_run_parse(argc, argv, o);
  if (rc == CLI_EXIT_OK && o->help) {
    cli_print_usage(stdout);
    return -1;
  }
  return rc == CLI_EXIT_OK ? cli_session_plan(s, o, n) : rc;
}

int cli_run_job(int argc, char **argv) {
  const char *single = cli_singletons();
  if (single) return cli_fail(CLI_EXIT_USAGE, "%s", single);
  init_bounded(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  cli_fault_arm(rank);
  cli_run_opts o;
  memset(&o, 0, sizeof o);
  cli_session s;
  memset(&s, 0, sizeof s);
  /* The first words between the machines, before the controller plans
   * (which may take long, reading inputs): where a network MPI cannot use
   * shows, each machine that did not answer named. */
  int go = CLI_EXIT_OK;
  cli_bound_hello(rank, size, &go);
  /* A machine that refused to start: said by rank 0, every rank leaves. */
  int rc = go;
  /* Only the controller reads FILE and the options' files. */
  if (rc == CLI_EXIT_OK && rank == 0) rc = plan_here(argc, argv, &o, &s, (size_t)size);
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rc == CLI_EXIT_OK) {
    /* Where agents tell the controller of an interrupt: a dead peer must
     * not end the one who asks. */
    cli_bound_begin("the start (MPI_Comm_dup)", CLI_EXIT_FAIL);
    MPI_Comm_dup(MPI_COMM_WORLD, &cli_interrupt_comm);
    cli_bound_end();
    MPI_Comm_set_errhandler(cli_interrupt_comm, MPI_ERRORS_RETURN);
    if (rank == 0)
      cli_interrupt_arm(cli_session_interrupted, cli_session_continued, &s);
    else
      cli_interrupt_arm(agent_interrupted, agent_continued, &s);
    cli_interrupt_on_gone(rank == 0 ? cli_session_gone : agent_gone);
    if (rank == 0)
      rc = control(&s);
    else
      agent(rank);
    cli_interrupt_disarm();
    MPI_Comm_free(&cli_interrupt_comm);
  }
  cli_session_free(&s);
  cli_run_opts_free(&o);
  /* The job's files are whole by now: a close that hangs is still told. */
  cli_bound_begin("the launcher's close (MPI_Finalize)", rc < 0 ? CLI_EXIT_OK : rc);
  MPI_Finalize();
  cli_bound_end();
  return rc < 0 ? CLI_EXIT_OK : rc;
}
