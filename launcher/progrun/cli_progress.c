/* The progress line (docs/cli.md, "The progress line"): drawn in place on
 * stderr where a person watches it, and ended before any other output, so
 * that it never glues onto a message nor ends a file. */
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define PROGRESS_EVERY_NS 100000000u /* at most 10 a second */

void cli_progress_start(cli_progress *p, const cli_run_opts *o, uint64_t runs, bool stderr_taken) {
  memset(p, 0, sizeof *p);
  p->terminal = isatty(STDERR_FILENO);
  /* Only stderr says whether a person watches: under Open MPI a rank's
   * stdout is a terminal even when mpirun's output goes to a file. */
  p->on = o->progress >= 0 ? o->progress == 1 : !o->quiet && p->terminal && !stderr_taken;
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
  if (n < 0) line[0] = '\0';
  cli_line_draw(line);
  p->drawn = true;
  p->shown = now;
}

/* The line drawn is ended (cli_line_end): erased on a terminal, else
 * ended by a line feed. */
void cli_progress_end(cli_progress *p) {
  if (p->on && p->drawn) cli_line_end();
  p->drawn = false;
}
