/* The --json report of a run (docs/cli.md, "The JSON report"): the
 * version, when it ran, the command line, the job's figures (each run's
 * time its slowest machine's), and per machine its host, its devices and
 * its figures; with --json-runs every run's time. */
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_job.h"

/* The containers below are set on their parents with references of their
 * own (json_object_set), so each is released once by its maker, whatever
 * failed; leaves go in with the _new calls, which take them. */

static json_t *figures_json(cli_times *t, const uint64_t *runs_ns) {
  cli_figures f;
  cli_times_figures(t, &f);
  json_t *o =
      json_pack("{s:I, s:I, s:I, s:f, s:I, s:I, s:f}", "runs", (json_int_t)f.runs, "min_ns",
                (json_int_t)f.min, "median_ns", (json_int_t)f.median, "mean_ns", f.mean, "p99_ns",
                (json_int_t)f.p99, "max_ns", (json_int_t)f.max, "stddev_ns", f.stddev);
  json_t *each = runs_ns ? json_array() : NULL;
  bool ok = o && (!runs_ns || (each && json_object_set(o, "run_ns", each) == 0));
  for (uint64_t r = 0; ok && runs_ns && r < f.runs; r++)
    ok = json_array_append_new(each, json_integer((json_int_t)runs_ns[r])) == 0;
  json_decref(each);
  if (!ok) json_decref(o);
  return ok ? o : NULL;
}

static json_t *devices_json(const cli_plan *p) {
  json_t *a = json_array();
  for (size_t i = 0; a && i < p->nused; i++)
    if (json_array_append_new(
            a, json_pack("{s:s, s:s}", "name", p->used[i][0], "arch", p->used[i][1])) != 0) {
      json_decref(a);
      return NULL;
    }
  return a;
}

static json_t *machine_json(cli_session *s, size_t m) {
  json_t *o = figures_json(&s->times[m], s->run_ns ? s->run_ns[m] : NULL);
  bool ok = o && json_object_set_new(o, "machine", json_integer((json_int_t)m)) == 0 &&
            json_object_set_new(o, "host", json_string(s->hosts[m])) == 0 &&
            json_object_set_new(o, "devices", devices_json(&s->plans[m])) == 0;
  if (!ok) json_decref(o);
  return ok ? o : NULL;
}

/* The job: its figures, the command line, the machines' count and hosts,
 * the warm-up runs. */
static json_t *job_json(cli_session *s) {
  json_t *job = figures_json(&s->job_times, s->run_ns ? s->run_ns[s->n] : NULL);
  json_t *command = json_array(), *hosts = json_array();
  bool ok = job && command && hosts && json_object_set(job, "command", command) == 0 &&
            json_object_set_new(job, "machines", json_integer((json_int_t)s->n)) == 0 &&
            json_object_set(job, "hosts", hosts) == 0 &&
            json_object_set_new(job, "warmup", json_integer((json_int_t)s->opts->warmup)) == 0;
  /* A job's tree, and what machine 0 sent on it a run (its cost, which
   * stays K messages whatever the job's size). */
  if (ok && s->local) {
    double runs = s->runs ? (double)s->runs : 1.0;
    ok = json_object_set_new(job, "tree",
                             json_pack("{s:i, s:i}", "fanout", (int)s->tree.fanout, "depth",
                                       (int)s->tree.depth)) == 0 &&
         json_object_set_new(job, "controller",
                             json_pack("{s:f, s:f}", "messages_a_run",
                                       (double)s->tree.messages / runs, "bytes_a_run",
                                       (double)s->tree.bytes / runs)) == 0;
  }
  for (int i = 0; ok && i < cli_argc; i++)
    ok = json_array_append_new(command, json_string(cli_argv[i])) == 0;
  for (size_t m = 0; ok && m < s->n; m++)
    ok = json_array_append_new(hosts, json_string(s->hosts[m])) == 0;
  json_decref(command);
  json_decref(hosts);
  if (!ok) json_decref(job);
  return ok ? job : NULL;
}

/* The first run's start, in UTC (ISO 8601). */
static json_t *timestamp_json(int64_t started) {
  time_t t = (time_t)started;
  struct tm tm;
  char buf[32];
  if (!gmtime_r(&t, &tm) || !strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm)) return NULL;
  return json_string(buf);
}

static json_t *report_json(cli_session *s) {
  json_t *root = json_object(), *job = job_json(s), *machines = json_array();
  bool ok = root && job && machines &&
            json_object_set_new(root, "progrun", json_string(RIG_VERSION_STRING)) == 0 &&
            json_object_set_new(root, "timestamp", timestamp_json(s->started)) == 0 &&
            json_object_set(root, "job", job) == 0 &&
            json_object_set(root, "machines", machines) == 0;
  for (size_t m = 0; ok && m < s->n; m++)
    ok = json_array_append_new(machines, machine_json(s, m)) == 0;
  json_decref(job);
  json_decref(machines);
  if (!ok) json_decref(root);
  return ok ? root : NULL;
}

int cli_report_json(cli_session *s, char **text, size_t *len, rig_error *err) {
  json_t *root = report_json(s);
  char *t = root ? json_dumps(root, JSON_INDENT(2)) : NULL;
  json_decref(root);
  size_t n = t ? strlen(t) : 0;
  char *line = t ? realloc(t, n + 2) : NULL;
  if (!line) {
    free(t);
    return rig_error_set(err, RIG_ENOMEM, "out of memory for the JSON report"), CLI_EXIT_FAIL;
  }
  line[n] = '\n';
  line[n + 1] = '\0';
  *text = line;
  *len = n + 1;
  return CLI_EXIT_OK;
}
