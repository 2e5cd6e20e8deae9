/* How a run ends (cli_job.h): with its reports and files written and its
 * summary printed, with a failure told and every file left as it was, or
 * interrupted. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_job.h"

int64_t cli_failed_run(const cli_session *s, int64_t seen) {
  uint64_t r;
  if (s->job && rig_job_failed_in_run(s->job, &r) && r <= INT64_MAX) return (int64_t)r;
  return seen;
}

/* The job's failure said: "run R: why", or why alone when no run is
 * known (r < 0). */
static void say_in_run(int rc, int64_t r, const char *why) {
  if (r >= 0)
    cli_fail(rc, "run %" PRId64 ": %s", r, why);
  else
    cli_fail(rc, "%s", why);
}

void cli_session_told(cli_session *s, int64_t r, const rig_error *why) {
  cli_outset_abort(&s->files);
  say_in_run(CLI_EXIT_FAIL, r, why->message);
  fflush(stderr);
  rig_job_goodbye(s->job);
}

int cli_session_fail(cli_session *s, int rc, const rig_error *err) {
  /* Told once: when the watch of a job told it first, it ends the process. */
  if (s->job && !cli_failure_claim())
    for (;;) pause();
  rig_error cause;
  bool failed = s->job && rig_job_failed(s->job, NULL);
  /* This machine's own failure is the job's: every machine learns it, and
   * those that failed alike are told with it, once (their words awaited
   * outside the hold: an interrupt meanwhile is still told). */
  if (s->job && !failed)
    rig_job_fail_as(s->job, rc == CLI_EXIT_USAGE ? RIG_EINVAL : RIG_EJOB, "%s", err->message);
  if (s->job) rig_job_told_cause(s->job, CLI_WORDS_WAIT_S, &cause);
  cli_hold();
  cli_settle();
  cli_outset_abort(&s->files);
  if (!s->job)
    cli_fail(rc, "%s", err->message);
  else
    say_in_run(rc, failed ? cli_failed_run(s, s->failed_run) : -1, cause.message);
  cli_release();
  return rc;
}

int cli_session_finish(cli_session *s) {
  rig_error err = {0};
  int rc = cli_put_reports(s, &err);
  return cli_session_commit(s, rc, &err);
}

int cli_session_commit(cli_session *s, int rc, rig_error *reason) {
  rig_error err = *reason;
  cli_hold();
  cli_settle();
  if (rc == CLI_EXIT_OK) rc = cli_outset_commit(&s->files, &err);
  if (rc != CLI_EXIT_OK) {
    cli_outset_abort(&s->files);
    cli_fail(rc, "%s", err.message);
  } else if (!s->opts->quiet) {
    cli_print_summary(s);
    FILE *f = s->files.has_stdout ? stderr : stdout;
    rc = cli_flushed(f, "the summary", rc);
  }
  cli_release();
  return rc;
}

/* ---- interrupts -------------------------------------------------------------- */

/* How long the controller asks, at SIGCONT, whether every agent is there
 * (mpirun's SIGTERM comes a second later), and at SIGTERM when it did not
 * ask at SIGCONT (or when it did, for those that had not answered). */
#define CONT_MS   800
#define ANSWER_MS 500
#define AGAIN_MS  20

/* Which agents not told[] yet say within `ms` that they are there (each
 * tells the controller at SIGCONT and at SIGTERM: cli_job.c). */
static void agents_told(cli_session *s, bool *told, int ms) {
  MPI_Request *req = calloc(s->n, sizeof *req);
  cli_told *sig = calloc(s->n, sizeof *sig);
  for (size_t m = 0; req && m < s->n; m++) req[m] = MPI_REQUEST_NULL;
  for (size_t m = 1; req && sig && cli_interrupt_comm != MPI_COMM_NULL && m < s->n; m++)
    if (!told[m])
      MPI_Irecv(&sig[m], (int)sizeof *sig, MPI_BYTE, (int)m, CLI_TAG_TOLD, cli_interrupt_comm,
                &req[m]);
  for (int waited = 0; req && sig; waited++) {
    size_t left = 0;
    for (size_t m = 1; m < s->n; m++) {
      int done = 0;
      if (req[m] != MPI_REQUEST_NULL &&
          MPI_Test(&req[m], &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done) {
        told[m] = true;
        /* What a machine that runs its own runs told of them. */
        if (s->told_figures && sig[m].figures.runs) s->told_figures[m] = sig[m].figures;
      }
      left += !told[m];
    }
    if (left == 0 || waited >= ms) break;
    struct timespec one = {0, 1000000};
    nanosleep(&one, NULL);
  }
  /* An answer not come is not waited for: its receive is cancelled, so
   * that nothing writes into sig once it is freed. */
  for (size_t m = 1; req && m < s->n; m++)
    if (req[m] != MPI_REQUEST_NULL) {
      MPI_Status st;
      int cancelled = 0;
      MPI_Cancel(&req[m]);
      MPI_Wait(&req[m], &st);
      MPI_Test_cancelled(&st, &cancelled);
      if (!cancelled) told[m] = true;
    }
  free(req);
  free(sig);
}

/* Room for what the machines tell at an interrupt, machine 0's own first. */
static void told_room(cli_session *s, bool held) {
  if (!s->local) return;
  if (!s->told_figures) s->told_figures = calloc(s->n, sizeof *s->told_figures);
  if (!s->told_figures) return;
  cli_told mine;
  cli_local_told(&mine, held);
  s->told_figures[0] = mine.figures;
}

void cli_session_continued(void *session) {
  cli_session *s = session;
  if (!s->job || s->n < 2) return;
  told_room(s, false);
  if (!s->told && !(s->told = calloc(s->n, sizeof *s->told))) return;
  memset(s->told, 0, s->n * sizeof *s->told);
  s->told_ns = 0;
  agents_told(s, s->told, CONT_MS);
  s->told_ns = cli_now_ns();
}

/* "machine 1", "machines 1, 3": those not told, and how many. */
static size_t untold(const cli_session *s, const bool *told, char *buf, size_t size) {
  size_t k = 0, at = 0;
  for (size_t m = 1; m < s->n; m++) k += !told[m];
  at += (size_t)snprintf(buf, size, "machine%s ", k > 1 ? "s" : "");
  for (size_t m = 1, i = 0; m < s->n && at < size; m++)
    if (!told[m]) at += (size_t)snprintf(buf + at, size - at, "%s%zu", i++ ? ", " : "", m);
  return k;
}

/* When the launcher ends the job because a rank died, every other rank is
 * signalled as for an interrupt: the machine that does not answer is
 * likely the one that stopped (the launcher names it). */
static void tell_launcher_end(cli_session *s, int64_t r) {
  bool *told = calloc(s->n, sizeof *told);
  if (!told) return;
  /* Asked at the SIGCONT just before: told at once. */
  bool asked = s->told && s->told_ns && cli_now_ns() - s->told_ns < 3000000000u;
  if (asked) memcpy(told, s->told, s->n * sizeof *told);
  agents_told(s, told, asked ? AGAIN_MS : ANSWER_MS);
  char names[512], at[64] = "", hosts[512] = "";
  size_t k = untold(s, told, names, sizeof names);
  /* Their hosts, where the job spans several ("machine 2 (node3)"): the
   * node a batch system lost, to find in its own messages. */
  size_t h = 0;
  for (size_t m = 1; k && m < s->n && h + 8 < sizeof hosts; m++) {
    const char *label = told[m] ? NULL : rig_job_label(s->job, (int)m);
    const char *open = label ? strchr(label, '(') : NULL;
    if (open)
      h += (size_t)snprintf(hosts + h, sizeof hosts - h - 2, "%s%.*s", h ? ", " : " (on ",
                            (int)strcspn(open + 1, ")"), open + 1);
  }
  if (h) strcat(hosts, ")"); /* room kept: at most sizeof hosts - 2 written */
  free(told);
  if (k == 0) return;
  if (r >= 0) snprintf(at, sizeof at, " in run %" PRId64, r);
  cli_fail(CLI_EXIT_FAIL,
           "ended by the launcher%s: %s did not answer%s: %s (see the launcher's message)", at,
           names, hosts, k > 1 ? "one of them stopped" : "likely the one that stopped");
  fflush(stderr);
  _exit(CLI_EXIT_FAIL);
}

/* Under Slurm a SIGTERM from the launcher (the step daemon) is Slurm
 * ending the job: scancel, the time limit, a node lost. Which one the
 * signal does not say, and slurmstepd's own line (`*** JOB 12 ON node1
 * CANCELLED AT ... DUE TO TIME LIMIT ***`) does: the interrupt names the
 * job and points there, guessing nothing (docs/jobs.md, "Slurm"). */
static const char *slurm_why(int sig, char *buf, size_t cap) {
  const char *job = getenv("SLURM_JOB_ID");
  if (sig != SIGTERM || !job || !*job || !getenv("SLURM_STEP_ID") || !cli_interrupt_from_launcher())
    return "";
  snprintf(buf, cap,
           ": Slurm ended job %s (scancel, its time limit or a node lost: Slurm's \"*** JOB %s\" "
           "line says which)",
           job, job);
  return buf;
}

void cli_session_interrupted(int sig, void *session) {
  cli_session *s = session;
  int64_t r = __atomic_load_n(&s->run, __ATOMIC_ACQUIRE);
  /* Stopped past the bound: the agents took this machine for gone and
   * left, and the launcher ends the job for it. That is what this side
   * saw, whichever of the signal and the job's own failure came first. */
  rig_error why;
  if (s->job && rig_job_stopped(s->job, &why)) {
    if (!cli_failure_claim()) return; /* told by whoever claimed it */
    cli_session_told(s, r, &why);
    _exit(CLI_EXIT_FAIL);
  }
  if (s->job && s->n > 1) told_room(s, true);
  /* Only the launcher ends every rank: a signal from another process
   * (this rank's alone) blames no other machine. */
  if (s->job && s->n > 1 && cli_interrupt_from_launcher()) tell_launcher_end(s, r);
  cli_outset_abort(&s->files);
  const char *name = sig == SIGINT ? "SIGINT" : "SIGTERM";
  char slurm[192];
  const char *by = slurm_why(sig, slurm, sizeof slurm);
  if (r >= 0)
    cli_fail(0, "interrupted (%s) in run %" PRId64 "%s", name, r, by);
  else
    cli_fail(0, "interrupted (%s)%s", name, by);
  if (s->measured && !s->opts->quiet) cli_print_summary(s);
  fflush(stdout);
  fflush(stderr);
  /* In a job, a signal not from the launcher (a `timeout`'s to the whole
   * process group): the launcher ends the job in its order, and cleans up
   * after it, only when no rank died under it first. */
  if (s->job && !cli_interrupt_from_launcher()) cli_await_launcher(sig);
  _exit(128 + sig);
}

void cli_session_gone(void *session) {
  cli_session *s = session;
  if (s->job && !cli_failure_claim()) return; /* a failure is being told */
  cli_outset_abort(&s->files);
  cli_fail(0, "the launcher is gone (signal or timeout)");
  fflush(stdout);
  fflush(stderr);
  _exit(CLI_EXIT_FAIL);
}

void cli_session_free(cli_session *s) {
  if (s->traces && rig_trace_sink() == s->traces[0]) rig_trace_set(NULL);
  for (size_t m = 0; s->traces && m < s->n; m++) rig_trace_free(s->traces[m]);
  for (size_t m = 0; s->times && m < s->n; m++) cli_times_free(&s->times[m]);
  for (size_t m = 0; s->run_ns && m <= s->n; m++) free(s->run_ns[m]);
  for (size_t m = 0; s->plans && m < s->n; m++) {
    cli_plan *p = &s->plans[m];
    for (size_t i = 0; p->bytes && i < p->ninputs; i++) free(p->bytes[i]);
    free(p->bytes);
    for (size_t i = 0; p->in_paths && i < p->ninputs; i++) free(p->in_paths[i]);
    free(p->in_paths);
    free(p->outputs);
    free(p->used);
    for (size_t k = 0; p->outs && k < p->nouts; k++) free(p->outs[k].path), free(p->outs[k].label);
    free(p->outs);
    cli_rail_map_free(&p->rails);
    if (p->owns_desc) rig_desc_free(p->desc);
  }
  cli_times_free(&s->job_times);
  cli_outset_free(&s->files);
  cli_jobfile_free(&s->jf);
  free(s->traces);
  free(s->told);
  free(s->told_figures);
  free(s->windows);
  free(s->clocks);
  free(s->run_ns);
  free(s->times);
  free(s->machines);
  free(s->rails);
  free(s->hosts);
  free(s->plans);
  memset(s, 0, sizeof *s);
}
