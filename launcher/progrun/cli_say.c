/* What the command says on stderr, at the bottom of its tiers (every
 * command file uses it, it uses none): its messages and usage errors, the
 * exit code a status stands for, the job's failure told once, and the one
 * line drawn in place (the progress line), ended before any message. */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_help.h"

/* The command being run, whose help --help prints and a usage error
 * points to; NULL before one is found. */
static const cli_help *current;

void cli_say_command(const cli_help *h) {
  current = h;
}

void cli_print_usage(FILE *f) {
  if (current)
    cli_help_print(f, current);
  else
    cli_help_overview(f);
}

/* ---- the line drawn in place --------------------------------------------------- */

static struct {
  bool drawn;
  size_t width; /* of the longest text drawn, for the erasing */
} line;

void cli_line_draw(const char *text) {
  size_t len = strlen(text);
  /* Spaces over what a longer line before left. */
  size_t pad = line.width > len ? line.width - len : 0;
  if (len > line.width) line.width = len;
  fprintf(stderr, "\r%s%*s", text, (int)pad, "");
  fflush(stderr);
  line.drawn = true;
}

/* On a terminal the line is erased (spaces over it, then back to its
 * start); anywhere else (--progress into a file or a pipe) it is ended
 * with a line feed, so that what follows starts a line of its own. */
void cli_line_end(void) {
  if (line.drawn) {
    if (isatty(STDERR_FILENO))
      fprintf(stderr, "\r%*s\r", (int)line.width, "");
    else
      fputc('\n', stderr);
    fflush(stderr);
  }
  line.drawn = false;
  line.width = 0;
}

/* ---- messages ------------------------------------------------------------------- */

/* One write of the whole line: stderr is unbuffered, and another process
 * (the launcher's banner) must not land inside it. */
static void vmessage(const char *fmt, va_list ap) {
  char text[4096];
  int n = vsnprintf(text, sizeof text, fmt, ap);
  if (n < 0) return;
  fprintf(stderr, "progrun: %s\n", text);
}

/* Under a launcher every rank parses the same arguments: only rank 0
 * tells the usage, so that it is said once (the others still exit 2). */
static bool usage_silent;

void cli_say_usage_once(bool silent) {
  usage_silent = silent;
}

int cli_quiet_rank_leaves(void) {
  /* Leaving at once, it could have the launcher end rank 0 (its exit
   * status is not 0) before rank 0 has said why: a second first. */
  struct timespec ts = {1, 0};
  nanosleep(&ts, NULL);
  return CLI_EXIT_USAGE;
}

int cli_usage_error(const char *fmt, ...) {
  if (usage_silent) return cli_quiet_rank_leaves();
  va_list ap;
  va_start(ap, fmt);
  vmessage(fmt, ap);
  va_end(ap);
  /* One line of what is wrong, then where the help is: the whole usage
   * would bury the line. */
  fprintf(stderr, "see 'progrun %s%s--help'\n", current ? current->name : "", current ? " " : "");
  return CLI_EXIT_USAGE;
}

int cli_fail(int code, const char *fmt, ...) {
  cli_line_end(); /* a message starts a line of its own */
  va_list ap;
  va_start(ap, fmt);
  vmessage(fmt, ap);
  va_end(ap);
  return code;
}

void cli_warn(const char *fmt, ...) {
  char text[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (n >= 0) cli_fail(0, "warning: %s", text);
}

int cli_flushed(FILE *f, const char *what, int code) {
  errno = 0;
  if (fflush(f) == 0 && !ferror(f)) return code;
  int e = errno;
  clearerr(f);
  return cli_fail(CLI_EXIT_USAGE, "cannot write %s: %s", what, e ? strerror(e) : "a write failed");
}

int cli_exit_of(rig_status st) {
  return st == RIG_ENOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
}

int cli_jobfile_bad(rig_error *err, const char *where, const char *fmt, ...) {
  char msg[RIG_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (where)
    rig_error_set(err, RIG_EMALFORMED, "%s: %s", where, msg);
  else
    rig_error_set(err, RIG_EMALFORMED, "%s", msg);
  return CLI_EXIT_USAGE;
}

/* ---- the failure, told once ------------------------------------------------------ */

/* Whoever tells the job's failure first: the running thread (it watches the
 * job between its waits) or, while that thread is inside work of this
 * machine's own, the watch of cli_job.c. */
static atomic_bool failure_told;

bool cli_failure_claim(void) {
  return !atomic_exchange(&failure_told, true);
}

bool cli_failure_was_told(void) {
  return atomic_load(&failure_told);
}

int cli_write_text(FILE *f, const char *what, const char *text, size_t n, int code) {
  int rc = cli_flushed(f, what, code);
  while (rc == code && n > 0) {
    ssize_t put = write(fileno(f), text, n);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return cli_fail(CLI_EXIT_USAGE, "cannot write %s: %s", what, strerror(errno));
    text += put;
    n -= (size_t)put;
  }
  return rc;
}
