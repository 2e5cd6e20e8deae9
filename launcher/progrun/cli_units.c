/* The units times are shown in, and the summary line: on their own, so
 * that the tests can check their choices without a run. */
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"

const char *const cli_unit_names[4] = {"ns", "us", "ms", "s"};
static const double unit_ns[4] = {1.0, 1e3, 1e6, 1e9};

/* The largest unit in which the value rounds to at least 1, and below 1000
 * in it once rounded (999.96 us is "1.0 ms", never "1000.0 us"): ns whole,
 * us and ms with one decimal, s with two. */
int cli_unit_of(double ns) {
  return ns < 999.5 ? 0 : ns < 999950.0 ? 1 : ns < 999950000.0 ? 2 : 3;
}

const char *cli_format_in(double ns, int unit, char *buf, size_t size) {
  double v = ns < 0 ? 0.0 : ns / unit_ns[unit];
  snprintf(buf, size, unit == 0 ? "%.0f" : unit == 3 ? "%.2f" : "%.1f", v);
  return buf;
}

const char *cli_format_ns(double ns, char *buf, size_t size) {
  int unit = cli_unit_of(ns);
  char v[48];
  snprintf(buf, size, "%s %s", cli_format_in(ns, unit, v, sizeof v), cli_unit_names[unit]);
  return buf;
}

/* One unit for the line, the one its median is read in, so that figures
 * of one line compare at a glance (docs/cli.md, "The summary"). */
void cli_summary_line(const cli_figures *f, char *buf, size_t size) {
  int u = cli_unit_of((double)f->median);
  const char *n = cli_unit_names[u];
  char a[48], b[48], c[48], d[48], e[48], s[48];
  snprintf(buf, size,
           "runs %" PRIu64 ", min %s %s, median %s %s, mean %s %s, p99 %s %s, max %s %s, "
           "stddev %s %s per run\n",
           f->runs, cli_format_in((double)f->min, u, a, sizeof a), n,
           cli_format_in((double)f->median, u, b, sizeof b), n,
           cli_format_in(f->mean, u, c, sizeof c), n, cli_format_in((double)f->p99, u, d, sizeof d),
           n, cli_format_in((double)f->max, u, e, sizeof e), n,
           cli_format_in(f->stddev, u, s, sizeof s), n);
}
