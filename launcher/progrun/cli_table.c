/* The summary of a run (docs/cli.md, "The summary"): a line per machine,
 * and in a job of several machines the job's line; and the same figures
 * as a table, CSV (--csv) or Markdown (--markdown), as hyperfine exports
 * its. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_job.h"

/* The machine whose median is the largest. */
static size_t slowest_of(const cli_figures *f, size_t n) {
  size_t slowest = 0;
  for (size_t m = 1; m < n; m++)
    if (f[m].median > f[slowest].median) slowest = m;
  return slowest;
}

/* Every machine's figures, then the job's at [n]; NULL out of memory. */
static cli_figures *figures_of(cli_session *s) {
  cli_figures *f = calloc(s->n + 1, sizeof *f);
  for (size_t m = 0; f && m < s->n; m++) {
    if (s->times[m].n)
      cli_times_figures(&s->times[m], &f[m]);
    else if (s->told_figures) /* a machine-local job interrupted: as each machine told them */
      f[m] = s->told_figures[m];
  }
  if (f && s->job_times.n) cli_times_figures(&s->job_times, &f[s->n]);
  return f;
}

/* "job: runs N, R runs/s, slowest machine M (median A, p99 B)": the runs
 * per second over the measured runs' span, and the machine of the
 * largest median, both figures in its unit. */
static void job_line(const cli_session *s, const cli_figures *f, char *buf, size_t size) {
  size_t w = slowest_of(f, s->n);
  double span = (double)(s->last_ns - s->first_ns) * 1e-9;
  int u = cli_unit_of((double)f[w].median);
  char a[48], b[48];
  snprintf(buf, size,
           "job: runs %" PRIu64 ", %.1f runs/s, slowest machine %zu (median %s %s, p99 %s %s)\n",
           f[s->n].runs, span > 0 ? (double)f[s->n].runs / span : 0.0, w,
           cli_format_in((double)f[w].median, u, a, sizeof a), cli_unit_names[u],
           cli_format_in((double)f[w].p99, u, b, sizeof b), cli_unit_names[u]);
}

void cli_print_summary(cli_session *s) {
  FILE *out = s->files.has_stdout ? stderr : stdout;
  cli_figures *f = figures_of(s);
  if (!f) {
    cli_fail(CLI_EXIT_FAIL, "out of memory for the summary");
    return;
  }
  char line[512];
  for (size_t m = 0; m < s->n; m++) {
    if (f[m].runs)
      cli_summary_line(&f[m], line, sizeof line);
    else
      snprintf(line, sizeof line, "no runs told\n"); /* interrupted: it did not answer */
    if (s->n > 1) fprintf(out, "machine %zu: ", m);
    fputs(line, out);
  }
  if (s->n > 1) {
    job_line(s, f, line, sizeof line);
    fputs(line, out);
  }
  free(f);
}

/* ---- tables --------------------------------------------------------------------- */

/* A growing text. */
typedef struct text {
  char *p;
  size_t n, room;
  bool ok;
} text;

static void add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(text *t, const char *fmt, ...) {
  for (int tries = 0; t->ok && tries < 2; tries++) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->p ? t->p + t->n : NULL, t->p ? t->room - t->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) t->ok = false;
    if (k < 0 || (t->p && (size_t)k < t->room - t->n)) {
      if (k >= 0) t->n += (size_t)k;
      return;
    }
    size_t room = t->room * 2 > t->n + (size_t)k + 1 ? t->room * 2 : t->n + (size_t)k + 256;
    char *g = realloc(t->p, room);
    if (!g)
      t->ok = false;
    else
      t->p = g, t->room = room;
  }
}

static int done(text *t, char **out, size_t *len, rig_error *err) {
  if (!t->ok || !t->p) {
    free(t->p);
    return rig_error_set(err, RIG_ENOMEM, "out of memory for the table"), CLI_EXIT_FAIL;
  }
  *out = t->p;
  *len = t->n;
  return CLI_EXIT_OK;
}

/* Row m of f (m == n: the job's). */
static const char *row_name(const cli_session *s, size_t m, char *buf, size_t size) {
  if (m == s->n) return "job";
  snprintf(buf, size, "%zu", m);
  return buf;
}

/* hyperfine's CSV: a head, a row per machine (and the job's, for more
 * than one), times in seconds. */
int cli_table_csv(cli_session *s, char **out, size_t *len, rig_error *err) {
  cli_figures *f = figures_of(s);
  text t = {.ok = f != NULL};
  add(&t, "machine,host,runs,mean,stddev,median,p99,min,max\n");
  for (size_t m = 0; f && m <= s->n; m++) {
    if (m == s->n && s->n == 1) break;
    char name[24];
    const cli_figures *g = &f[m];
    add(&t, "%s,%s,%" PRIu64 ",%.9f,%.9f,%.9f,%.9f,%.9f,%.9f\n", row_name(s, m, name, sizeof name),
        m < s->n ? s->hosts[m] : "", g->runs, g->mean * 1e-9, g->stddev * 1e-9,
        (double)g->median * 1e-9, (double)g->p99 * 1e-9, (double)g->min * 1e-9,
        (double)g->max * 1e-9);
  }
  free(f);
  return done(&t, out, len, err);
}

/* hyperfine's Markdown: one unit for the table (the one the job's median
 * is read in), the mean with its standard deviation. */
int cli_table_markdown(cli_session *s, char **out, size_t *len, rig_error *err) {
  cli_figures *f = figures_of(s);
  text t = {.ok = f != NULL};
  int u = f ? cli_unit_of((double)f[s->n].median) : 0;
  const char *n = cli_unit_names[u];
  add(&t, "| Machine | Host | Runs | Mean [%s] | Median [%s] | p99 [%s] | Min [%s] | Max [%s] |\n",
      n, n, n, n, n);
  add(&t, "|:---|:---|---:|---:|---:|---:|---:|---:|\n");
  for (size_t m = 0; f && m <= s->n; m++) {
    if (m == s->n && s->n == 1) break;
    char name[24], a[48], b[48], c[48], d[48], e[48], g[48];
    const cli_figures *x = &f[m];
    add(&t, "| %s | %s | %" PRIu64 " | %s ± %s | %s | %s | %s | %s |\n",
        row_name(s, m, name, sizeof name), m < s->n ? s->hosts[m] : "", x->runs,
        cli_format_in(x->mean, u, a, sizeof a), cli_format_in(x->stddev, u, b, sizeof b),
        cli_format_in((double)x->median, u, c, sizeof c),
        cli_format_in((double)x->p99, u, d, sizeof d),
        cli_format_in((double)x->min, u, e, sizeof e),
        cli_format_in((double)x->max, u, g, sizeof g));
  }
  free(f);
  return done(&t, out, len, err);
}
