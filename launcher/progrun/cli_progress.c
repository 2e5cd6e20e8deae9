/* The progress line (docs/cli.md, "The progress line"): drawn in place on
 * stderr where a person watches it, and ended before any other output, so
 * that it never glues onto a message nor ends a file. */
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define PROGRESS_EVERY_NS 100000000u /* at most 10 a second */

/* The line drawn now, for a message to end first (cli_progress_stop). */
static cli_progress *drawn_now;

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
  size_t len = n < 0 ? 0 : (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
  /* Spaces over what a longer line before left. */
  size_t pad = p->width > len ? p->width - len : 0;
  if (len > p->width) p->width = len;
  fprintf(stderr, "\r%s%*s", line, (int)pad, "");
  fflush(stderr);
  p->drawn = true;
  p->shown = now;
  drawn_now = p;
}

/* On a terminal the line is erased (spaces over it, then back to its
 * start); anywhere else (--progress into a file or a pipe) it is ended
 * with a line feed, so that what follows starts a line of its own. */
void cli_progress_end(cli_progress *p) {
  if (p->on && p->drawn) {
    if (p->terminal)
      fprintf(stderr, "\r%*s\r", (int)p->width, "");
    else
      fputc('\n', stderr);
    fflush(stderr);
  }
  p->drawn = false;
  if (drawn_now == p) drawn_now = NULL;
}

void cli_progress_stop(void) {
  if (drawn_now) cli_progress_end(drawn_now);
}
