/* The description subcommands: check, dump, dot and pack. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_help.h"
#include "cli_job.h"

/* ---- arguments ------------------------------------------------------------ */

typedef struct cli_args {
  const char *cmd;
  const char *file;
  bool json;       /* --json (dump) */
  bool all;        /* --all (dot) */
  const char *out; /* -o OUT (pack) */
  bool help;
} cli_args;

static int take_arg(void *ctx, cli_arg_kind kind, const cli_help_option *opt, const char *value) {
  cli_args *a = ctx;
  const char *cmd = a->cmd;
  if (kind == CLI_ARG_UNKNOWN) return cli_args_unknown(cmd, value);
  if (kind == CLI_ARG_MISSING) return cli_usage_error("%s: %s needs a path", cmd, opt->name);
  if (kind == CLI_ARG_WORD) {
    if (a->file) return cli_usage_error("%s: one FILE only, not '%s' too", cmd, value);
    a->file = value;
  } else if (strcmp(opt->name, "--help") == 0) {
    a->help = true;
  } else if (strcmp(opt->name, "--json") == 0) {
    if (a->json) return cli_usage_error("%s: --json given twice", cmd);
    a->json = true;
  } else if (strcmp(opt->name, "--all") == 0) {
    if (a->all) return cli_usage_error("%s: --all given twice", cmd);
    a->all = true;
  } else {
    /* -o OUT: the last one winning would write a file the user may not
     * expect. */
    if (a->out) return cli_usage_error("%s: -o given twice ('%s', then '%s')", cmd, a->out, value);
    a->out = value;
  }
  return CLI_EXIT_OK;
}

/* One FILE and the options of the subcommand's table (cli_help.c), in any
 * order; "--" ends the options so that a FILE may start with '-'. --help
 * prints the usage here. */
static int parse_args(int argc, char **argv, cli_args *a) {
  memset(a, 0, sizeof *a);
  a->cmd = argv[0];
  int rc = cli_args_parse(a->cmd, cli_help_of(a->cmd)->options, argc, argv, take_arg, a);
  if (a->help) cli_print_usage(stdout);
  if (rc != CLI_EXIT_OK || a->help) return rc;
  if (!a->file) return cli_usage_error("%s: no FILE given", a->cmd);
  if (strcmp(a->cmd, "pack") == 0 && !a->out) return cli_usage_error("%s: no -o OUT given", a->cmd);
  return CLI_EXIT_OK;
}

/* ---- writing -------------------------------------------------------------- */

/* stdout's buffered output reaches its file, or the command fails. */
static int flush_stdout(int code) {
  return cli_flushed(stdout, "the output", code);
}

/* ---- the subcommands ------------------------------------------------------ */

int cli_check(int argc, char **argv) {
  cli_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc != CLI_EXIT_OK || a.help) return rc;
  if (rig_run_is_jobfile(a.file, NULL)) return flush_stdout(cli_check_jobfile(a.file));
  rig_desc *d = NULL;
  rc = cli_read_desc(a.file, &d);
  if (rc != CLI_EXIT_OK) return rc;
  rig_error err = {0};
  /* The rules, then what a load would refuse that needs no device. */
  rig_status st = rig_desc_check(d, &err);
  if (st == RIG_OK) st = rig_desc_check_code(d, &err);
  rig_desc_free(d);
  if (st != RIG_OK) return cli_fail(cli_exit_of(st), "%s: %s", a.file, err.message);
  puts("ok");
  return flush_stdout(CLI_EXIT_OK);
}

/* Dumps even a description that breaks a rule: finding why is what it is
 * for. */
int cli_dump(int argc, char **argv) {
  cli_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc != CLI_EXIT_OK || a.help) return rc;
  if (rig_run_is_jobfile(a.file, NULL)) {
    if (a.json)
      return cli_usage_error("%s: --json lists a description, and %s is a job file", argv[0],
                             a.file);
    return flush_stdout(cli_dump_jobfile(a.file));
  }
  rig_desc *d = NULL;
  rc = cli_read_desc(a.file, &d);
  if (rc != CLI_EXIT_OK) return rc;
  char *text = NULL;
  rig_error err = {0};
  rig_status st = a.json ? rig_desc_to_json(d, &text, &err) : rig_desc_listing(d, &text, &err);
  rig_desc_free(d);
  if (st != RIG_OK) return cli_fail(cli_exit_of(st), "%s: %s", a.file, err.message);
  size_t n = strlen(text);
  rc = cli_write_text(stdout, "the output", text, n, CLI_EXIT_OK);
  if (rc == CLI_EXIT_OK && (n == 0 || text[n - 1] != '\n'))
    rc = cli_write_text(stdout, "the output", "\n", 1, CLI_EXIT_OK);
  free(text);
  return rc;
}

/* Draws even a description that breaks a rule, as dump lists it. */
int cli_dot(int argc, char **argv) {
  cli_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc != CLI_EXIT_OK || a.help) return rc;
  if (rig_run_is_jobfile(a.file, NULL)) return flush_stdout(cli_dot_jobfile(a.file, a.all));
  rig_desc *d = NULL;
  rc = cli_read_desc(a.file, &d);
  if (rc != CLI_EXIT_OK) return rc;
  char *text = NULL;
  rig_error err = {0};
  rig_status st = rig_desc_dot(d, a.all, &text, &err);
  rig_desc_free(d);
  if (st != RIG_OK) return cli_fail(CLI_EXIT_FAIL, "out of memory");
  fputs(text, stdout);
  free(text);
  return flush_stdout(CLI_EXIT_OK);
}

/* Converts without checking, so that tests can make files that break
 * rules; `check` judges. */
int cli_pack(int argc, char **argv) {
  cli_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc != CLI_EXIT_OK || a.help) return rc;
  rig_desc *d = NULL;
  rc = cli_read_desc(a.file, &d);
  if (rc != CLI_EXIT_OK) return rc;
  uint8_t *bytes = NULL;
  size_t len = 0;
  rig_error err = {0};
  rig_status st = rig_desc_to_bytes(d, &bytes, &len, &err);
  rig_desc_free(d);
  if (st != RIG_OK) return cli_fail(cli_exit_of(st), "%s: %s", a.file, err.message);
  rc = cli_write_file(a.out, bytes, len, &err);
  free(bytes);
  return rc == CLI_EXIT_OK ? rc : cli_fail(rc, "%s", err.message);
}
