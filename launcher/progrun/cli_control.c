/* The runs of a session (cli_job.h), on this machine alone or as the
 * controller of a job: every machine opened (its devices mapped, its
 * program loaded on them, its inputs filled), each run handed to every
 * machine and its ends waited for, each machine timed, then the traces
 * gathered and the outputs put into their temporary files. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_job.h"

/* ---- opening ------------------------------------------------------------------ */

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

/* The devices machine m's program runs on, as that machine names them,
 * for the --json report. */
int cli_record_used(cli_session *s, size_t m, rig_device *const *devs, size_t n) {
  cli_plan *p = &s->plans[m];
  p->used = calloc(n + 1, sizeof *p->used);
  if (!p->used) return CLI_EXIT_FAIL;
  p->nused = n;
  const rig_machine *mach = s->job ? rig_job_machine(s->job, m) : NULL;
  for (size_t i = 0; i < n; i++) {
    const char *name = rig_device_name(devs[i]);
    for (size_t k = 0; mach && k < mach->ndevices; k++)
      if (rig_job_device(s->job, m, k) == devs[i]) name = mach->devices[k].name;
    snprintf(p->used[i][0], sizeof p->used[i][0], "%s", name);
    snprintf(p->used[i][1], sizeof p->used[i][1], "%s", rig_device_arch(devs[i]));
  }
  return CLI_EXIT_OK;
}

/* Whether a message already names machine m first ("machine 1: ...",
 * "machine 1 (node2): ..."), as librig's errors of another machine do. */
static bool names_machine(const char *message, size_t m) {
  char head[32];
  int n = snprintf(head, sizeof head, "machine %zu", m);
  return strncmp(message, head, (size_t)n) == 0 &&
         (message[n] == ':' || (message[n] == ' ' && message[n + 1] == '('));
}

/* Machine m: its devices mapped, its program loaded, its inputs filled. */
static int open_machine(cli_session *s, size_t m, rig_error *err) {
  cli_plan *p = &s->plans[m];
  rig_device **devs = calloc(p->desc->ndevices + 1, sizeof *devs);
  if (!devs) return rig_error_set(err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL;
  job_opener jo = {s->job, m};
  cli_opener op = {open_on, &jo};
  char given_by[96];
  snprintf(given_by, sizeof given_by, "%s%s", p->where[0] ? p->where : "--devices",
           p->where[0] ? ".devices" : "");
  int rc = cli_map_devices_on(s->job ? &op : &cli_local_opener, p->desc, p->devices, p->ndevices,
                              given_by, devs, err);
  /* Devices a job file named wrongly are its fault, told by its name. */
  bool jobfile_fault = rc == CLI_EXIT_USAGE && p->where[0];
  /* The controller's loads take its rail ends; an agent's take its own. */
  const rig_rails *rails = s->job && m == 0 ? rig_job_rails(s->job) : NULL;
  if (rc == CLI_EXIT_OK && cli_record_used(s, m, devs, p->desc->ndevices) != CLI_EXIT_OK)
    rc = (rig_error_set(err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL);
  if (rc == CLI_EXIT_OK)
    rc = cli_machine_open(&s->machines[m], p->desc, devs, (int64_t)m, rails, err);
  free(devs);
  if (rc != CLI_EXIT_OK) {
    char shown[RIG_RUN_PATH_SHOWN];
    const char *file =
        rig_run_path_shown(jobfile_fault ? s->opts->file : p->file, shown, sizeof shown);
    /* A refusal of another machine names it already (librig's proxies). */
    if (jobfile_fault)
      rig_error_prefix(err, "%s", file);
    else if (s->named && !names_machine(err->message, m))
      rig_error_prefix(err, "%s: machine %zu", file, m);
    else
      rig_error_prefix(err, "%s", file);
    return rc;
  }
  for (size_t i = 0; rc == CLI_EXIT_OK && i < p->desc->ninputs; i++)
    if (p->bytes[i])
      rc = cli_machine_fill_input(&s->machines[m], i, p->bytes[i], (size_t)p->desc->inputs[i].bytes,
                                  err);
  return rc;
}

/* ---- running ------------------------------------------------------------------ */

/* Names the run (and, in a job, the machine) a failure came in. */
static void prefix_run(const cli_session *s, rig_error *err, uint64_t r, size_t m) {
  if (s->named)
    rig_error_prefix(err, "run %" PRIu64 " on machine %zu", r, m);
  else
    rig_error_prefix(err, "run %" PRIu64, r);
}

/* The scratch of one run's wait: per machine. */
typedef struct waits {
  uint64_t *last; /* its time, from the run's start */
  size_t *seen;   /* its ends seen reached */
  bool *done;
} waits;

/* This machine alone: its ends waited for as the core waits (no rounds,
 * no naps between them), the run's time to the last; a device lost fails
 * the run at once, whatever the others still run. */
static int wait_alone(cli_session *s, uint64_t r, uint64_t start, waits *w, rig_error *err) {
  const cli_machine *mm = &s->machines[0];
  if (rig_points_wait(mm->ends, mm->nends, err) != RIG_OK)
    return prefix_run(s, err, r, 0), CLI_EXIT_FAIL;
  w->last[0] = cli_now_ns() - start;
  rig_trace_reached(mm->ends, mm->nends);
  return CLI_EXIT_OK;
}

/* Waits for every machine's ends of run r, round-robin, and stamps each
 * machine (w->last[m], from `start`) when its ends are first seen
 * reached: a fast machine's time is its own, whatever the machines
 * before it take. The job is watched between the rounds, so that a
 * failure elsewhere (a silent agent) ends the wait at once rather than
 * when the local work does; the caller then reports and leaves without
 * waiting for that work (docs/jobs.md). Rounds yield first, keeping short
 * runs' times true, then sleep 50 us, so that a long launch does not
 * cost a core. */
static int wait_run(cli_session *s, uint64_t r, uint64_t start, waits *w, rig_error *err) {
  if (!s->job && s->n == 1) return wait_alone(s, r, start, w, err);
  size_t left = s->n;
  for (size_t m = 0; m < s->n; m++) w->seen[m] = 0, w->done[m] = false;
  for (unsigned polls = 0;; polls++) {
    for (size_t m = 0; m < s->n; m++) {
      bool reached = false;
      if (w->done[m]) continue;
      if (cli_machine_ends_reached(&s->machines[m], &w->seen[m], &reached, err) != RIG_OK)
        return prefix_run(s, err, r, m), CLI_EXIT_FAIL;
      if (!reached) continue;
      w->last[m] = cli_now_ns() - start, w->done[m] = true, left--;
      /* Seen here first, maybe: the trace's slices (a hand-over's) end by
       * now, before the next run's start. */
      rig_trace_reached(s->machines[m].ends, s->machines[m].nends);
    }
    if (left == 0) return CLI_EXIT_OK;
    if (s->job && rig_job_failed(s->job, err)) {
      size_t m = 0;
      while (w->done[m]) m++;
      return prefix_run(s, err, r, m), CLI_EXIT_FAIL;
    }
    cli_wait_round(polls);
  }
}

/* Hands run r to every machine: every other machine's first, then this
 * machine's own (whose host steps may run here until they end), so that
 * each run starts on every machine before any machine's work can wait on
 * another's. */
static int hand_over(cli_session *s, uint64_t r, rig_error *err) {
  for (size_t turn = 0; turn < s->n; turn++) {
    size_t m = (turn + 1) % s->n;
    const cli_plan *p = &s->plans[m];
    if (cli_machine_start(&s->machines[m], r, p->ints, p->nints, err) != CLI_EXIT_OK)
      return prefix_run(s, err, r, m), CLI_EXIT_FAIL;
  }
  return CLI_EXIT_OK;
}

/* Run r's times (a warm-up run's left out), under the hold: an interrupt
 * summarizes them. */
static int record_run(cli_session *s, uint64_t r, uint64_t start, const waits *w, rig_error *err) {
  size_t slowest = 0;
  for (size_t m = 1; m < s->n; m++)
    if (w->last[m] > w->last[slowest]) slowest = m;
  int rc = CLI_EXIT_OK;
  cli_hold();
  if (r >= s->opts->warmup) {
    if (s->measured == 0) s->first_ns = start;
    for (size_t m = 0; rc == CLI_EXIT_OK && m <= s->n; m++) {
      uint64_t ns = w->last[m < s->n ? m : slowest];
      if (s->run_ns) s->run_ns[m][s->measured] = ns;
      rc = cli_times_add(m < s->n ? &s->times[m] : &s->job_times, ns, err);
    }
    s->measured++;
    s->last_ns = start + w->last[slowest];
  }
  if (rc == CLI_EXIT_OK)
    cli_progress_update(&s->bar, r + 1, s->n > 1 ? (long)slowest : -1, w->last[slowest]);
  cli_release();
  return rc;
}

/* Every run on every machine: each machine's time runs from the run's
 * start to when its ends are seen reached, the job's to the slowest's. */
static int run_all(cli_session *s, rig_error *err) {
  waits w = {calloc(s->n, sizeof *w.last), calloc(s->n, sizeof *w.seen),
             calloc(s->n, sizeof *w.done)};
  int rc = w.last && w.seen && w.done ? CLI_EXIT_OK : CLI_EXIT_FAIL;
  if (rc != CLI_EXIT_OK) rig_error_set(err, RIG_ENOMEM, "out of memory");
  cli_progress_start(&s->bar, s->opts, s->runs, s->files.has_stderr);
  s->started = (int64_t)time(NULL);
  for (uint64_t r = 0; rc == CLI_EXIT_OK && r < s->runs; r++) {
    __atomic_store_n(&s->run, (int64_t)r, __ATOMIC_RELEASE);
    uint64_t start = cli_now_ns();
    rc = hand_over(s, r, err);
    if (rc == CLI_EXIT_OK) rc = wait_run(s, r, start, &w, err);
    if (rc == CLI_EXIT_OK) rc = record_run(s, r, start, &w, err);
    if (rc != CLI_EXIT_OK) s->failed_run = (int64_t)r;
  }
  __atomic_store_n(&s->run, -1, __ATOMIC_RELEASE);
  cli_hold();
  cli_progress_end(&s->bar);
  cli_release();
  free(w.last);
  free(w.seen);
  free(w.done);
  return rc;
}

/* ---- around the runs -------------------------------------------------------- */

/* --trace: this process's trace the sink of its runs and, in a job, every
 * agent's of theirs, with their clocks measured against this one's. */
int cli_trace_begin(cli_session *s, rig_error *err) {
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
 * and taken from the sink, then every agent's gathered. After a failure
 * it is only taken from the sink. */
int cli_trace_end(cli_session *s, int rc, rig_error *err) {
  if (!s->traces || !s->traces[0]) return rc;
  if (rc == CLI_EXIT_OK) rig_trace_settle(s->traces[0], 10000);
  rig_trace_set(NULL);
  for (size_t m = 1; rc == CLI_EXIT_OK && m < s->n; m++)
    if (rig_job_trace_gather(s->job, (int)m, &s->traces[m], err) != RIG_OK) rc = CLI_EXIT_FAIL;
  return rc;
}

/* The job file's rails, between the machines it names. */
int cli_make_rails(cli_session *s, rig_error *err) {
  if (!s->jf.nrails) return CLI_EXIT_OK;
  s->rails = calloc(s->jf.nrails, sizeof *s->rails);
  if (!s->rails) return rig_error_set(err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL;
  for (size_t i = 0; i < s->jf.nrails; i++) {
    const cli_job_rail *r = &s->jf.rails[i];
    rig_status st = rig_job_rail_as(s->job, r->id, r->between[0], r->between[1], r->send, r->nsend,
                                    r->receive, r->nreceive, &s->rails[i], err);
    if (st != RIG_OK) {
      rig_error_prefix(err, "rails[%zu]", i);
      return st == RIG_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
    }
  }
  return CLI_EXIT_OK;
}

/* Every machine's outputs into their temporary files (the commit, after
 * the reports, renames them), under the hold: an interrupt removes them. */
int cli_put_outputs(cli_session *s, size_t machines, rig_error *err) {
  int rc = CLI_EXIT_OK;
  for (size_t m = 0; rc == CLI_EXIT_OK && m < machines; m++)
    for (size_t i = 0; rc == CLI_EXIT_OK && i < s->plans[m].ninputs; i++) {
      size_t at = s->plans[m].outputs[i];
      if (at == SIZE_MAX) continue;
      uint8_t *out = NULL;
      size_t len = 0;
      rc = cli_machine_read_input(&s->machines[m], i, &out, &len, err);
      cli_hold();
      if (rc == CLI_EXIT_OK) rc = cli_outset_put(&s->files, at, out, len, err);
      cli_release();
      free(out);
    }
  return rc;
}

/* What the figures and the report need besides the runs. */
int cli_session_make(cli_session *s) {
  s->machines = calloc(s->n, sizeof *s->machines);
  s->times = calloc(s->n, sizeof *s->times);
  s->hosts = calloc(s->n, sizeof *s->hosts);
  if (!s->machines || !s->times || !s->hosts) return CLI_EXIT_FAIL;
  if (s->opts->json_runs) {
    if (!(s->run_ns = calloc(s->n + 1, sizeof *s->run_ns))) return CLI_EXIT_FAIL;
    for (size_t m = 0; m <= s->n; m++)
      if (!(s->run_ns[m] = calloc(s->runs - s->opts->warmup, sizeof **s->run_ns)))
        return CLI_EXIT_FAIL;
  }
  for (size_t m = 0; m < s->n; m++) {
    const rig_machine *mach = s->job ? rig_job_machine(s->job, m) : NULL;
    if (mach)
      snprintf(s->hosts[m], sizeof s->hosts[m], "%s", mach->host);
    else
      gethostname(s->hosts[m], sizeof s->hosts[m] - 1);
  }
  return CLI_EXIT_OK;
}

int cli_session_control(cli_session *s, rig_error *err) {
  if (cli_session_make(s) != CLI_EXIT_OK)
    return rig_error_set(err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL;
  int rc = s->opts->trace ? cli_trace_begin(s, err) : CLI_EXIT_OK;
  if (rc == CLI_EXIT_OK) rc = cli_make_rails(s, err);
  for (size_t m = 0; rc == CLI_EXIT_OK && m < s->n; m++) rc = open_machine(s, m, err);
  if (rc == CLI_EXIT_OK) rc = run_all(s, err);
  rc = cli_trace_end(s, rc, err);
  if (rc == CLI_EXIT_OK) rc = cli_put_outputs(s, s->n, err);
  if (rc == CLI_EXIT_OK && s->job && rig_job_failed(s->job, NULL)) rc = CLI_EXIT_FAIL;
  /* After a failure in a job the machines are left as they are: the
   * caller ends the job (and every rank) at once, without waiting for
   * their work. On this machine alone they are closed. */
  if (rc == CLI_EXIT_OK || !s->job) {
    for (size_t m = 0; m < s->n; m++)
      if (s->machines[m].run) cli_machine_close(&s->machines[m]);
    /* After the programs that use them. */
    for (size_t i = 0; s->rails && i < s->jf.nrails; i++)
      if (s->rails[i]) rig_rail_release(s->rails[i]);
  }
  return rc;
}
