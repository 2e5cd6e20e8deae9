/* What `progrun run` says about its runs besides the summary line: the
 * --json report and the progress line on a terminal (docs/cli.md). */
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cli_argc;
char **cli_argv;

static json_t *figures_json(cli_times *t) {
  cli_figures f;
  cli_times_figures(t, &f);
  return json_pack("{s:I, s:I, s:I, s:f, s:I, s:I, s:f}", "runs", (json_int_t)f.runs, "min_ns",
                   (json_int_t)f.min, "median_ns", (json_int_t)f.median, "mean_ns", f.mean,
                   "p99_ns", (json_int_t)f.p99, "max_ns", (json_int_t)f.max, "stddev_ns", f.stddev);
}

int cli_write_report(const char *path, const cli_report *r, rig_error *err) {
  /* The containers are set on their parents with references of their
   * own (json_object_set), so each is released once below, whatever
   * failed; leaves go in with the _new calls, which take them. */
  json_t *root = json_object(), *job = figures_json(r->job), *command = json_array(),
         *hosts = json_array(), *machines = json_array();
  bool ok = root && job && command && hosts && machines && json_object_set(root, "job", job) == 0 &&
            json_object_set(root, "machines", machines) == 0 &&
            json_object_set(job, "command", command) == 0 &&
            json_object_set_new(job, "machines", json_integer((json_int_t)r->n)) == 0 &&
            json_object_set(job, "hosts", hosts) == 0 &&
            json_object_set_new(job, "warmup", json_integer((json_int_t)r->warmup)) == 0;
  for (int i = 0; ok && i < cli_argc; i++)
    ok = json_array_append_new(command, json_string(cli_argv[i])) == 0;
  for (size_t m = 0; ok && m < r->n; m++) {
    json_t *o = figures_json(&r->machines[m]);
    ok = o && json_array_append(machines, o) == 0 &&
         json_object_set_new(o, "machine", json_integer((json_int_t)m)) == 0 &&
         json_object_set_new(o, "host", json_string(r->hosts[m])) == 0 &&
         json_array_append_new(hosts, json_string(r->hosts[m])) == 0;
    json_decref(o);
  }
  json_decref(job);
  json_decref(command);
  json_decref(hosts);
  json_decref(machines);
  if (!ok) {
    json_decref(root);
    rig_error_set(err, RIG_ENOMEM, "out of memory for the JSON report");
    return CLI_EXIT_FAIL;
  }
  char *text = json_dumps(root, JSON_INDENT(2));
  json_decref(root);
  if (!text)
    return rig_error_set(err, RIG_ENOMEM, "out of memory for the JSON report"), CLI_EXIT_FAIL;
  size_t len = strlen(text);
  char *line = realloc(text, len + 2);
  if (!line) {
    free(text);
    return rig_error_set(err, RIG_ENOMEM, "out of memory for the JSON report"), CLI_EXIT_FAIL;
  }
  line[len] = '\n';
  line[len + 1] = '\0';
  int rc = cli_write_file(path, (const uint8_t *)line, len + 1, err);
  free(line);
  return rc;
}

/* ---- the progress line ----------------------------------------------------- */

#define PROGRESS_EVERY_NS 100000000u /* at most 10 a second */

void cli_progress_start(cli_progress *p, const cli_run_opts *o, uint64_t runs) {
  memset(p, 0, sizeof *p);
  p->on = o->progress >= 0 ? o->progress == 1 : !o->quiet && (isatty(1) || isatty(2));
  p->runs = runs;
  p->t0 = cli_now_ns();
}

void cli_progress_update(cli_progress *p, uint64_t done, long slowest, uint64_t slowest_ns) {
  if (!p->on) return;
  uint64_t now = cli_now_ns();
  if (p->drawn && now - p->shown < PROGRESS_EVERY_NS) return;
  double secs = (double)(now - p->t0) * 1e-9;
  char line[256], t[32];
  int n = snprintf(line, sizeof line, "progrun: run %" PRIu64 "/%" PRIu64 ", %.1f runs/s", done,
                   p->runs, secs > 0 ? (double)done / secs : 0.0);
  if (slowest >= 0 && n > 0 && (size_t)n < sizeof line)
    n += snprintf(line + n, sizeof line - (size_t)n, ", slowest machine %ld (%s)", slowest,
                  cli_format_ns((double)slowest_ns, t, sizeof t));
  size_t len = n < 0 ? 0 : (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
  /* Spaces over what a longer line before left. */
  size_t pad = p->width > len ? p->width - len : 0;
  if (len > p->width) p->width = len;
  fprintf(stderr, "\r%s%*s", line, (int)pad, "");
  fflush(stderr);
  p->drawn = true;
  p->shown = now;
}

void cli_progress_end(cli_progress *p) {
  if (!p->on || !p->drawn) return;
  fprintf(stderr, "\r%*s\r", (int)p->width, "");
  fflush(stderr);
  p->drawn = false;
}
