/* `mpirun -n N progrun [run] FILE`: rank 0, the controller, reads FILE (a
 * description, or a job file naming each machine's), loads the program on
 * every machine (its own devices, the others' through their agents), fills
 * the inputs, runs every machine's program each run (the machines' runs
 * overlapping), writes the outputs and prints a summary per machine. The
 * other ranks serve. A failure prints its root cause on rank 0 and ends
 * every rank (MPI_Abort): no rank hangs. */
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_job.h"
#include "rig/rig_job.h"

/* One machine's plan: what the controller read before any device. */
typedef struct plan {
  rig_desc *desc;
  bool owns_desc;
  char *const *devices;
  size_t ndevices;
  size_t ninputs;  /* desc's, kept: a shared desc is freed with machine 0's plan */
  uint8_t **bytes; /* per input: the file's bytes, or NULL */
  const cli_int *ints;
  size_t nints;
  const char *file;
  char **outputs; /* per input: the path to write, {rank} replaced, or NULL */
} plan;

typedef struct run_state {
  size_t n;
  plan *plans;
  cli_machine *machines;
  cli_times *times;    /* per machine */
  cli_times job_times; /* each run's slowest machine's time */
  uint64_t runs;
  bool quiet;
  const cli_run_opts *opts; /* --warmup, --json, --progress */
  const char **hosts;       /* per machine, kept past the job's close */
  char (*host_names)[64];
  rig_job *job;
  int64_t failed_run;    /* the run during which the job failed, or -1 */
  const cli_jobfile *jf; /* its rails, made before any machine loads */
  rig_rail **rails;
  rig_trace **traces;    /* --trace: per machine, [0] this process's sink */
  rig_job_clock *clocks; /* per machine, against this one's */
} run_state;

bool cli_under_mpi(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

const char *cli_singletons(void) {
  const char *tasks = getenv("SLURM_STEP_NUM_TASKS");
  if (!tasks) tasks = getenv("SLURM_NTASKS");
  if (getenv("SLURM_PROCID") && tasks && atoi(tasks) > 1 && !getenv("PMIX_RANK"))
    return "started by srun as separate processes, not as one MPI job: run it with "
           "srun --mpi=pmix (or mpirun)";
  return NULL;
}

/* ---- the plan --------------------------------------------------------------- */

/* path with every {rank} replaced by the machine's index. */
static char *with_rank(const char *path, size_t rank) {
  size_t n = 1;
  for (const char *at = path; (at = strstr(at, "{rank}")); at += 6) n++;
  size_t room = strlen(path) + n * 24;
  char *s = malloc(room), *w = s;
  if (!s) return NULL;
  for (const char *at; (at = strstr(path, "{rank}")); path = at + 6)
    w += snprintf(w, room - (size_t)(w - s), "%.*s%zu", (int)(at - path), path, rank);
  snprintf(w, room - (size_t)(w - s), "%s", path);
  return s;
}

static void plan_free(plan *p) {
  for (size_t i = 0; i < p->ninputs; i++) {
    free(p->bytes ? p->bytes[i] : NULL);
    free(p->outputs ? p->outputs[i] : NULL);
  }
  free(p->bytes);
  free(p->outputs);
  if (p->owns_desc) rig_desc_free(p->desc);
}

/* Reads machine m's description and inputs; checks what needs no device. */
static int plan_machine(plan *p, size_t m, const char *file, rig_desc *shared, char *const *devices,
                        size_t ndevices, const cli_int *ints, size_t nints, const char *const *in,
                        const int64_t *in_index, size_t nin, const char *const *out,
                        const int64_t *out_index, size_t nout, uint64_t runs) {
  rig_error err = {0};
  int rc;
  p->file = file;
  if (shared) {
    p->desc = shared;
  } else {
    if ((rc = cli_read_desc(file, &p->desc)) != CLI_EXIT_OK) return rc;
    p->owns_desc = true;
    if (rig_desc_check(p->desc, &err) != RIG_OK)
      return cli_fail(CLI_EXIT_USAGE, "%s: %s", file, err.message);
  }
  const rig_desc *d = p->desc;
  p->devices = devices;
  p->ndevices = ndevices;
  p->ints = ints;
  p->nints = nints;
  if (nints > (uint64_t)d->ints)
    return cli_fail(CLI_EXIT_USAGE, "%s: %zu ints for a program of %lld", file, nints,
                    (long long)d->ints);
  p->bytes = calloc(d->ninputs + 1, sizeof *p->bytes);
  p->outputs = calloc(d->ninputs + 1, sizeof *p->outputs);
  if (!p->bytes || !p->outputs) return cli_fail(CLI_EXIT_FAIL, "out of memory");
  p->ninputs = d->ninputs;
  for (size_t k = 0; k < nin; k++) {
    if (in_index[k] >= (int64_t)d->ninputs)
      return cli_fail(CLI_EXIT_USAGE, "%s: input %lld: no such input", file,
                      (long long)in_index[k]);
    rc = cli_read_input(in[k], in_index[k], (uint64_t)d->inputs[in_index[k]].bytes,
                        &p->bytes[in_index[k]], &err);
    if (rc != CLI_EXIT_OK) return cli_fail(rc, "%s", err.message);
  }
  for (size_t k = 0; k < nout; k++) {
    if (out_index[k] >= (int64_t)d->ninputs)
      return cli_fail(CLI_EXIT_USAGE, "%s: output %lld: no such input", file,
                      (long long)out_index[k]);
    if (!(p->outputs[out_index[k]] = with_rank(out[k], m)))
      return cli_fail(CLI_EXIT_FAIL, "out of memory");
    /* Before any run: an output that cannot be written would lose them. */
    rc = cli_output_check(p->outputs[out_index[k]], &err);
    if (rc != CLI_EXIT_OK) return cli_fail(rc, "%s", err.message);
  }
  (void)runs;
  return CLI_EXIT_OK;
}

/* The plans of n machines from the options and FILE (a description or a
 * job file); the exit code. `whole` when the n machines are the whole job
 * (not `progrun run JOBFILE` alone, machine 0's part): a job file's
 * machines must then all be in it. */
static int make_plans_of(const cli_run_opts *o, size_t n, bool whole, plan *plans, cli_jobfile *jf,
                         uint64_t *runs);

/* The plans, then what needs the runs' count (--warmup) and --json. */
static int make_plans(const cli_run_opts *o, size_t n, bool whole, plan *plans, cli_jobfile *jf,
                      uint64_t *runs) {
  int rc = make_plans_of(o, n, whole, plans, jf, runs);
  if (rc == CLI_EXIT_OK) rc = cli_run_warmup_fit(o->warmup, *runs);
  rig_error err = {0};
  if (rc == CLI_EXIT_OK && o->json && (rc = cli_output_check(o->json, &err)) != CLI_EXIT_OK)
    cli_fail(rc, "%s", err.message);
  if (rc == CLI_EXIT_OK && o->trace && (rc = cli_output_check(o->trace, &err)) != CLI_EXIT_OK)
    cli_fail(rc, "%s", err.message);
  return rc;
}

static int make_plans_of(const cli_run_opts *o, size_t n, bool whole, plan *plans, cli_jobfile *jf,
                         uint64_t *runs) {
  *runs = o->runs;
  if (cli_is_jobfile(o->file)) {
    rig_error err = {0};
    int rc = cli_jobfile_read(o->file, jf, &err);
    if (rc != CLI_EXIT_OK) return cli_fail(rc, "%s", err.message);
    if (jf->runs && o->runs == 1) *runs = jf->runs; /* --runs, when given, wins */
    /* A rail to a machine the job lacks: refused before anything runs. */
    if ((rc = cli_jobfile_rails_fit(jf, n, o->file, &err)) != CLI_EXIT_OK)
      return cli_fail(rc, "%s", err.message);
    /* A machine left out would be work silently not done. */
    char shown[CLI_PATH_SHOWN];
    if (whole && jf->n > n)
      return cli_fail(CLI_EXIT_USAGE,
                      "%s: \"machines\" has %zu machines, more than the job's %zu (start as many "
                      "ranks as it has machines, or more with \"every\")",
                      cli_short_path(o->file, shown, sizeof shown), jf->n, n);
    for (size_t m = 0; m < n; m++) {
      const cli_job_machine *jm = cli_jobfile_machine(jf, m);
      if (!jm)
        return cli_fail(CLI_EXIT_USAGE, "%s: no program for machine %zu (give \"every\")", o->file,
                        m);
      const char *in[64], *out[64];
      int64_t ii[64], oi[64];
      if (jm->ninputs > 64 || jm->noutputs > 64)
        return cli_fail(CLI_EXIT_USAGE, "%s: more than 64 inputs or outputs", o->file);
      for (size_t k = 0; k < jm->ninputs; k++)
        in[k] = jm->inputs[k].path, ii[k] = jm->inputs[k].index;
      for (size_t k = 0; k < jm->noutputs; k++)
        out[k] = jm->outputs[k].path, oi[k] = jm->outputs[k].index;
      rc = plan_machine(&plans[m], m, jm->program, NULL, jm->ndevices ? jm->devices : NULL,
                        jm->ndevices, jm->ints, jm->nints, in, ii, jm->ninputs, out, oi,
                        jm->noutputs, *runs);
      if (rc != CLI_EXIT_OK) return rc;
    }
    return CLI_EXIT_OK;
  }
  rig_desc *d = NULL;
  int rc = cli_read_desc(o->file, &d);
  if (rc != CLI_EXIT_OK) return rc;
  plans[0].owns_desc = true; /* machine 0 frees the one description */
  plans[0].desc = d;
  rig_error err = {0};
  if (rig_desc_check(d, &err) != RIG_OK)
    return cli_fail(CLI_EXIT_USAGE, "%s: %s", o->file, err.message);
  if ((rc = cli_run_fit(o, d, &err)) != CLI_EXIT_OK)
    return cli_fail(rc, "%s: %s", o->file, err.message);
  for (size_t k = 0; k < o->noutputs; k++)
    if (n > 1 && !strstr(o->outputs[k].path, "{rank}"))
      return cli_usage_error("--output %lld=%s: with %zu machines the path needs {rank}",
                             (long long)o->outputs[k].index, o->outputs[k].path, n);
  const char *in[64], *out[64];
  int64_t ii[64], oi[64];
  if (o->ninputs > 64 || o->noutputs > 64) return cli_usage_error("more than 64 inputs or outputs");
  for (size_t k = 0; k < o->ninputs; k++) in[k] = o->inputs[k].path, ii[k] = o->inputs[k].index;
  for (size_t k = 0; k < o->noutputs; k++) out[k] = o->outputs[k].path, oi[k] = o->outputs[k].index;
  for (size_t m = 0; m < n; m++) {
    rc = plan_machine(&plans[m], m, o->file, d, o->devices, o->ndevices, o->ints, o->nints, in, ii,
                      o->ninputs, out, oi, o->noutputs, *runs);
    plans[m].owns_desc = m == 0;
    if (rc != CLI_EXIT_OK) return rc;
  }
  return CLI_EXIT_OK;
}

/* ---- running ------------------------------------------------------------------ */

typedef struct job_opener {
  rig_job *job;
  size_t machine;
} job_opener;

static rig_device *open_on(void *ctx, const char *name, rig_error *why) {
  job_opener *j = ctx;
  rig_device *d = rig_job_device_named(j->job, j->machine, name);
  if (!d) rig_error_set(why, RIG_EREFUSED, "%s: no such device on machine %zu", name, j->machine);
  return d;
}

static int open_machines(run_state *s, rig_error *err) {
  for (size_t m = 0; m < s->n; m++) {
    plan *p = &s->plans[m];
    rig_device **devs = calloc(p->desc->ndevices + 1, sizeof *devs);
    if (!devs) return rig_error_set(err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL;
    job_opener jo = {s->job, m};
    cli_opener op = {open_on, &jo};
    int rc = cli_map_devices_on(s->job ? &op : &cli_local_opener, p->desc, p->devices, p->ndevices,
                                devs, err);
    /* The controller's loads take its rail ends; an agent's take its own. */
    const rig_rails *rails = s->job && m == 0 ? rig_job_rails(s->job) : NULL;
    if (rc == CLI_EXIT_OK)
      rc = cli_machine_open(&s->machines[m], p->desc, devs, (int64_t)m, rails, err);
    free(devs);
    if (rc != CLI_EXIT_OK) {
      char shown[CLI_PATH_SHOWN];
      rig_error_prefix(err, "%s: machine %zu", cli_short_path(p->file, shown, sizeof shown), m);
      return rc;
    }
    for (size_t i = 0; rc == CLI_EXIT_OK && i < p->desc->ninputs; i++)
      if (p->bytes[i])
        rc = cli_machine_fill_input(&s->machines[m], i, p->bytes[i],
                                    (size_t)p->desc->inputs[i].bytes, err);
    if (rc != CLI_EXIT_OK) return rc;
  }
  return CLI_EXIT_OK;
}

/* What the controller waits for, for a SIGTERM to tell: when one rank
 * dies the launcher ends every other within about a second, long before
 * the silence bound, so the job never learns which one it was. A machine
 * whose ends of the current run are not reached is the likely one (and,
 * when it is slow rather than gone, still the truth said). */
static run_state *term_state;
static size_t *term_nends;
static _Atomic int64_t term_run = -1;

/* Whether every end of machine m's run is reached, from seen[m] on (the
 * ends already seen reached stay so). An end whose device is lost, or
 * whose device is unknown, is waited for: rig_point_wait then says why
 * (a proxy's is lost with the job, with its root cause). */
static rig_status ends_reached(const cli_machine *mm, size_t nends, size_t *seen, bool *reached,
                               rig_error *err) {
  *reached = false;
  for (; *seen < nends; ++*seen) {
    rig_point p = mm->ends[*seen];
    if (rig_point_reached(p)) continue;
    rig_device *dev = rig_device_at(rig_point_device(p));
    if (!dev || rig_device_is_lost(dev, NULL)) {
      rig_status st = rig_point_wait(p, err);
      if (st != RIG_OK) return st;
      continue;
    }
    return RIG_OK;
  }
  *reached = true;
  return RIG_OK;
}

/* Waits for every machine's ends of run r, round-robin, and stamps each
 * machine (last[m], from `start`) when its ends are first seen reached:
 * a fast machine's time is its own, whatever the machines before it take.
 * The job is watched between the rounds, so that a failure elsewhere (a
 * silent agent) ends the wait at once rather than when the local work
 * does; the caller then reports and leaves without waiting for that work
 * (docs/jobs.md). Rounds yield first, keeping short runs' times true,
 * then sleep 50 us, so that a long launch does not cost a core. */
static int wait_run(run_state *s, uint64_t r, uint64_t start, const size_t *nends, size_t *seen,
                    bool *done, uint64_t *last, rig_error *err) {
  size_t left = s->n;
  for (size_t m = 0; m < s->n; m++) seen[m] = 0, done[m] = false;
  for (unsigned polls = 0;; polls++) {
    for (size_t m = 0; m < s->n; m++) {
      if (done[m]) continue;
      bool reached = false;
      if (ends_reached(&s->machines[m], nends[m], &seen[m], &reached, err) != RIG_OK) {
        rig_error_prefix(err, "run %" PRIu64 " on machine %zu", r, m);
        return CLI_EXIT_FAIL;
      }
      if (reached) {
        last[m] = cli_now_ns() - start;
        done[m] = true;
        left--;
      }
    }
    if (left == 0) return CLI_EXIT_OK;
    if (s->job && rig_job_failed(s->job, err)) {
      size_t m = 0;
      while (done[m]) m++;
      rig_error_prefix(err, "run %" PRIu64 " on machine %zu", r, m);
      return CLI_EXIT_FAIL;
    }
    if (polls < 2000) {
      sched_yield();
    } else {
      struct timespec pause = {0, 50000};
      nanosleep(&pause, NULL);
    }
  }
}

/* Every run on every machine: each machine's run handed over first, then
 * their ends waited (wait_run); each machine's time runs from the run's
 * start to when its ends are seen reached, the job's to the slowest's. */
static int run_all(run_state *s, rig_error *err) {
  cli_progress bar;
  cli_progress_start(&bar, s->opts, s->runs);
  uint64_t warmup = s->opts->warmup;
  uint64_t *last = calloc(s->n, sizeof *last);
  size_t *nends = calloc(s->n, sizeof *nends), *seen = calloc(s->n, sizeof *seen);
  bool *done = calloc(s->n, sizeof *done);
  if (!last || !nends || !seen || !done) {
    free(last);
    free(nends);
    free(seen);
    free(done);
    return rig_error_set(err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL;
  }
  int rc = CLI_EXIT_OK;
  term_state = s;
  term_nends = nends;
  for (uint64_t r = 0; rc == CLI_EXIT_OK && r < s->runs; r++) {
    atomic_store(&term_run, (int64_t)r);
    uint64_t start = cli_now_ns();
    /* Every other machine's run is handed over before this machine's own
     * (whose host steps may run here until they end): each run starts on
     * every machine before any machine's work can wait on another's. */
    for (size_t turn = 0; rc == CLI_EXIT_OK && turn < s->n; turn++) {
      size_t m = (turn + 1) % s->n;
      cli_machine *mm = &s->machines[m];
      const plan *p = &s->plans[m];
      for (size_t k = 0; k < mm->nints; k++) {
        const cli_int *x = k < p->nints ? &p->ints[k] : NULL;
        mm->ints[k] = !x                        ? 0
                      : x->kind == CLI_INT_RUN  ? (int64_t)r
                      : x->kind == CLI_INT_RANK ? (int64_t)m
                                                : x->number;
      }
      rig_frame f = {mm->inputs, mm->ninputs,     mm->ints,
                     mm->nints,  mm->step_points, mm->nstep_points};
      if (rig_program_run(mm->program, &f, NULL, 0, mm->ends, &nends[m], err) != RIG_OK) {
        rig_error_prefix(err, "run %" PRIu64 " on machine %zu", r, m);
        rc = CLI_EXIT_FAIL;
      }
    }
    if (rc == CLI_EXIT_OK) rc = wait_run(s, r, start, nends, seen, done, last, err);
    size_t slowest = 0;
    for (size_t m = 1; rc == CLI_EXIT_OK && m < s->n; m++)
      if (last[m] > last[slowest]) slowest = m;
    /* Warm-up runs run, but are left out of the figures. */
    for (size_t m = 0; rc == CLI_EXIT_OK && r >= warmup && m < s->n; m++)
      rc = cli_times_add(&s->times[m], last[m], err);
    if (rc == CLI_EXIT_OK && r >= warmup) rc = cli_times_add(&s->job_times, last[slowest], err);
    if (rc != CLI_EXIT_OK) s->failed_run = (int64_t)r;
    if (rc == CLI_EXIT_OK)
      cli_progress_update(&bar, r + 1, s->n > 1 ? (long)slowest : -1, last[slowest]);
  }
  atomic_store(&term_run, -1);
  cli_progress_end(&bar);
  free(last);
  free(nends);
  free(seen);
  free(done);
  return rc;
}

static int write_outputs(run_state *s, rig_error *err) {
  for (size_t m = 0; m < s->n; m++)
    for (size_t i = 0; i < s->plans[m].desc->ninputs; i++) {
      const char *path = s->plans[m].outputs[i];
      if (!path) continue;
      uint8_t *out = NULL;
      size_t len = 0;
      int rc = cli_machine_read_input(&s->machines[m], i, &out, &len, err);
      if (rc == CLI_EXIT_OK) rc = cli_write_file(path, out, len, err);
      free(out);
      if (rc != CLI_EXIT_OK) return rc;
    }
  return CLI_EXIT_OK;
}

static void summary(const run_state *s) {
  for (size_t m = 0; m < s->n; m++) {
    if (s->n > 1) printf("machine %zu: ", m);
    cli_print_summary(stdout, &s->times[m]);
  }
  fflush(stdout);
}

/* The --json report, once the job closed (its figures final). */
static int report_json(run_state *s) {
  if (!s->opts->json) return CLI_EXIT_OK;
  cli_report rep = {s->runs, s->opts->warmup, s->n, s->hosts, s->times, &s->job_times};
  rig_error err = {0};
  int rc = cli_write_report(s->opts->json, &rep, &err);
  return rc == CLI_EXIT_OK ? rc : cli_fail(rc, "%s", err.message);
}

/* --trace: this process's trace the sink of its runs and, in a job, every
 * agent's of theirs, with their clocks measured against this one's. */
static int trace_begin(run_state *s, rig_error *err) {
  s->traces = calloc(s->n, sizeof *s->traces);
  s->clocks = calloc(s->n, sizeof *s->clocks);
  if (!s->traces || !s->clocks)
    return rig_error_set(err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL;
  if (s->job &&
      rig_job_trace_start(s->job, CLI_TRACE_EVENTS, CLI_TRACE_PINGS, s->clocks, err) != RIG_OK)
    return CLI_EXIT_FAIL;
  if (rig_trace_make(CLI_TRACE_EVENTS, &s->traces[0], err) != RIG_OK) return CLI_EXIT_FAIL;
  rig_trace_set(s->traces[0]);
  return CLI_EXIT_OK;
}

/* After the runs: this process's trace settled (every step's reach seen)
 * and taken from the sink, then every agent's gathered. */
static int trace_end(run_state *s, rig_error *err) {
  rig_trace_settle(s->traces[0], 10000);
  rig_trace_set(NULL);
  for (size_t m = 1; m < s->n; m++)
    if (rig_job_trace_gather(s->job, (int)m, &s->traces[m], err) != RIG_OK) return CLI_EXIT_FAIL;
  return CLI_EXIT_OK;
}

/* The --trace file, once the job closed (like the --json report). */
static int report_trace(run_state *s) {
  if (!s->opts->trace || !s->traces) return CLI_EXIT_OK;
  cli_trace_machine *tm = calloc(s->n, sizeof *tm);
  if (!tm) return cli_fail(CLI_EXIT_FAIL, "out of memory");
  for (size_t m = 0; m < s->n; m++)
    tm[m] = (cli_trace_machine){s->hosts[m], s->traces[m], s->clocks[m].offset_ns,
                                s->clocks[m].error_ns};
  rig_error err = {0};
  int rc = cli_write_trace(s->opts->trace, tm, s->n, &err);
  free(tm);
  return rc == CLI_EXIT_OK ? rc : cli_fail(rc, "%s", err.message);
}

/* The job's root cause when it failed, with the run it failed in; else
 * the call's own message. Prints it; returns the exit code. */
static int report(const run_state *s, int rc, const rig_error *err) {
  rig_error cause;
  if (!s->job || !rig_job_failed(s->job, &cause)) return cli_fail(rc, "%s", err->message);
  if (s->failed_run >= 0) return cli_fail(rc, "run %" PRId64 ": %s", s->failed_run, cause.message);
  return cli_fail(rc, "%s", cause.message);
}

/* The job file's rails, between the machines it names. */
static int make_rails(run_state *s, rig_error *err) {
  if (!s->jf || !s->jf->nrails) return CLI_EXIT_OK;
  s->rails = calloc(s->jf->nrails, sizeof *s->rails);
  if (!s->rails) return rig_error_set(err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL;
  for (size_t i = 0; i < s->jf->nrails; i++) {
    const cli_job_rail *r = &s->jf->rails[i];
    rig_status st = rig_job_rail_as(s->job, r->id, r->between[0], r->between[1], r->send, r->nsend,
                                    r->receive, r->nreceive, &s->rails[i], err);
    if (st != RIG_OK) {
      rig_error_prefix(err, "rails[%zu]", i);
      return st == RIG_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
    }
  }
  return CLI_EXIT_OK;
}

/* The controller's whole run once the plans are made: open, run, write
 * the outputs, close the machines; the exit code, with the message
 * printed. The summary waits for the job's close (the caller's): a
 * failure found then still wins. */
static int control(run_state *s) {
  rig_error err = {0};
  s->failed_run = -1;
  s->machines = calloc(s->n, sizeof *s->machines);
  s->times = calloc(s->n, sizeof *s->times);
  s->hosts = calloc(s->n, sizeof *s->hosts);
  s->host_names = calloc(s->n, sizeof *s->host_names);
  if (!s->machines || !s->times || !s->hosts || !s->host_names)
    return cli_fail(CLI_EXIT_FAIL, "out of memory");
  for (size_t m = 0; m < s->n; m++) {
    const rig_machine *mach = s->job ? rig_job_machine(s->job, m) : NULL;
    if (mach)
      snprintf(s->host_names[m], sizeof s->host_names[m], "%s", mach->host);
    else
      gethostname(s->host_names[m], sizeof s->host_names[m] - 1);
    s->hosts[m] = s->host_names[m];
  }
  int rc = s->opts->trace ? trace_begin(s, &err) : CLI_EXIT_OK;
  if (rc == CLI_EXIT_OK) rc = make_rails(s, &err);
  if (rc == CLI_EXIT_OK) rc = open_machines(s, &err);
  if (rc == CLI_EXIT_OK) rc = run_all(s, &err);
  if (s->traces && s->traces[0]) {
    if (rc == CLI_EXIT_OK)
      rc = trace_end(s, &err);
    else
      rig_trace_set(NULL);
  }
  if (rc == CLI_EXIT_OK) rc = write_outputs(s, &err);
  if (rc == CLI_EXIT_OK && s->job && rig_job_failed(s->job, NULL)) rc = CLI_EXIT_FAIL;
  if (rc != CLI_EXIT_OK) rc = report(s, rc, &err);
  /* After a failure in a job the machines are left as they are: the
   * caller ends the job (and every rank) at once, without waiting for
   * their work. On this machine alone they are closed. */
  if (rc == CLI_EXIT_OK || !s->job) {
    for (size_t m = 0; m < s->n; m++)
      if (s->machines[m].program) cli_machine_close(&s->machines[m]);
    /* After the programs that use them. */
    for (size_t i = 0; s->rails && i < s->jf->nrails; i++) rig_rail_release(s->rails[i]);
  }
  return rc;
}

static void state_free(run_state *s) {
  if (s->traces && rig_trace_sink() == s->traces[0]) rig_trace_set(NULL);
  for (size_t m = 0; s->traces && m < s->n; m++) rig_trace_free(s->traces[m]);
  free(s->traces);
  free(s->clocks);
  s->traces = NULL;
  s->clocks = NULL;
  for (size_t m = 0; s->times && m < s->n; m++) cli_times_free(&s->times[m]);
  cli_times_free(&s->job_times);
  free(s->times);
  free(s->machines);
  free(s->rails);
  free(s->hosts);
  free(s->host_names);
  s->hosts = NULL;
  s->host_names = NULL;
  s->rails = NULL;
  s->times = NULL;
  s->machines = NULL;
}

/* ---- the ranks --------------------------------------------------------------- */

/* Appends the decimal v at *at (async-signal-safe: no stdio). */
static void put_number(char *buf, size_t *at, size_t room, uint64_t v) {
  char digits[24];
  size_t n = 0;
  do digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) && n < sizeof digits);
  while (n && *at + 1 < room) buf[(*at)++] = digits[--n];
}

static void put_text(char *buf, size_t *at, size_t room, const char *t) {
  while (*t && *at + 1 < room) buf[(*at)++] = *t++;
}

/* The launcher's SIGTERM: says which machines had not finished the run
 * (term_state), only reading memory and writing once, then leaves. The
 * ends are read while the main thread may write them: it is stopped from
 * mattering by the exit that follows. */
static void on_term(int sig) {
  (void)sig;
  char msg[512];
  size_t at = 0, named = 0;
  int64_t r = atomic_load(&term_run);
  put_text(msg, &at, sizeof msg, "progrun: ended by the launcher");
  if (r >= 0 && term_state && term_nends) {
    for (size_t m = 1; m < term_state->n; m++) {
      bool done = true;
      for (size_t k = 0; k < term_nends[m]; k++)
        done = done && rig_point_reached(term_state->machines[m].ends[k]);
      if (done) continue;
      put_text(msg, &at, sizeof msg, named++ ? ", " : " in run ");
      if (named == 1) {
        put_number(msg, &at, sizeof msg, (uint64_t)r);
        put_text(msg, &at, sizeof msg, ": machine ");
      } else {
        put_text(msg, &at, sizeof msg, "machine ");
      }
      put_number(msg, &at, sizeof msg, m);
    }
  }
  put_text(msg, &at, sizeof msg,
           named == 0   ? ": a machine of the job stopped (see the launcher's message)\n"
           : named == 1 ? " had not finished it: likely the one that stopped (see the launcher's "
                          "message)\n"
                        : " had not finished it: one of them stopped (see the launcher's "
                          "message)\n");
  ssize_t w = write(2, msg, at);
  (void)w;
  _exit(1);
}

static void agent(int rank) {
  rig_job *job = NULL;
  rig_error err = {0};
  if (rig_job_start(MPI_COMM_WORLD, &job, &err) != RIG_OK) {
    fprintf(stderr, "progrun: machine %d: %s\n", rank, err.message);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  rig_status st = rig_job_serve(job, &err);
  if (st != RIG_OK) {
    /* The controller prints the root cause and ends the job; should it be
     * the one that is gone, say so here and end it. */
    sleep(3);
    fprintf(stderr, "progrun: machine %d: %s\n", rank, err.message);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  /* A failure after the controller closed the job (or during it) still
   * fails every rank. */
  if (rig_job_close(job, &err) != RIG_OK) {
    fprintf(stderr, "progrun: machine %d: %s\n", rank, err.message);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

int cli_run_job(int argc, char **argv) {
  const char *single = cli_singletons();
  if (single) return cli_fail(CLI_EXIT_USAGE, "%s", single);
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  cli_run_opts o;
  memset(&o, 0, sizeof o);
  cli_jobfile jf;
  memset(&jf, 0, sizeof jf);
  plan *plans = NULL;
  run_state s = {.n = (size_t)size};
  int rc = CLI_EXIT_OK;
  if (rank == 0) {
    /* Only the controller reads FILE and the options' files. */
    rc = cli_run_parse(argc, argv, &o);
    if (rc == CLI_EXIT_OK && o.help) {
      cli_print_usage(stdout);
      rc = -1;
    }
    if (rc == CLI_EXIT_OK) {
      plans = calloc(s.n, sizeof *plans);
      rc = plans ? make_plans(&o, s.n, true, plans, &jf, &s.runs)
                 : cli_fail(CLI_EXIT_FAIL, "out of memory");
    }
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rc == CLI_EXIT_OK) {
    if (rank != 0) {
      agent(rank);
    } else {
      signal(SIGTERM, on_term);
      rig_error err = {0};
      if (rig_job_start(MPI_COMM_WORLD, &s.job, &err) != RIG_OK) {
        cli_fail(CLI_EXIT_FAIL, "%s", err.message);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAIL);
      }
      s.plans = plans;
      s.quiet = o.quiet;
      s.opts = &o;
      s.jf = &jf;
      rc = control(&s);
      /* The close waits for every agent's work: a failure found there
       * (an agent gone silent) is the job's too. */
      if (rc == CLI_EXIT_OK && rig_job_close(s.job, &err) != RIG_OK) {
        s.job = NULL;
        rc = cli_fail(CLI_EXIT_FAIL, "%s", err.message);
      }
      if (rc != CLI_EXIT_OK) {
        /* Every rank ends now, with the cause printed above. */
        fflush(stdout);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, rc);
      }
      /* The job is closed (and freed): a report that cannot be written
       * exits 2. */
      s.job = NULL;
      rc = report_json(&s);
      if (rc == CLI_EXIT_OK) rc = report_trace(&s);
      if (rc == CLI_EXIT_OK && !s.quiet) summary(&s);
      state_free(&s);
    }
  }
  for (size_t m = 0; plans && m < s.n; m++) plan_free(&plans[m]);
  free(plans);
  cli_jobfile_free(&jf);
  cli_run_opts_free(&o);
  MPI_Finalize();
  return rc < 0 ? CLI_EXIT_OK : rc;
}

int cli_run_jobfile_here(int argc, char **argv) {
  cli_run_opts o;
  int rc = cli_run_parse(argc, argv, &o);
  if (rc != CLI_EXIT_OK || o.help) {
    if (rc == CLI_EXIT_OK) cli_print_usage(stdout);
    cli_run_opts_free(&o);
    return rc;
  }
  cli_jobfile jf;
  memset(&jf, 0, sizeof jf);
  plan p;
  memset(&p, 0, sizeof p);
  run_state s = {.n = 1, .plans = &p, .quiet = o.quiet, .opts = &o};
  rc = make_plans(&o, 1, false, &p, &jf, &s.runs);
  if (rc == CLI_EXIT_OK) rc = control(&s);
  if (rc == CLI_EXIT_OK) rc = report_json(&s);
  if (rc == CLI_EXIT_OK) rc = report_trace(&s);
  if (rc == CLI_EXIT_OK && !s.quiet) summary(&s);
  state_free(&s);
  plan_free(&p);
  cli_jobfile_free(&jf);
  cli_run_opts_free(&o);
  return rc;
}
