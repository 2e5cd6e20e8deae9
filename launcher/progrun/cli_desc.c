/* The description subcommands: check, dump and pack, and reading a
 * description from a file (bytes or JSON). */
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
#include "cli_job.h"

/* ---- arguments ------------------------------------------------------------ */

typedef struct cli_args {
  const char *file;
  bool json;       /* --json (dump) */
  bool all;        /* --all (dot) */
  const char *out; /* -o OUT (pack) */
  bool help;
} cli_args;

/* Which options a subcommand takes. */
enum { TAKES_JSON = 1, TAKES_OUT = 2, TAKES_ALL = 4 };

/* One FILE and the options `takes` allows, in any order; "--" ends the
 * options so that a FILE may start with '-'. */
static int parse_args(int argc, char **argv, int takes, cli_args *a) {
  const char *cmd = argv[0];
  bool options = true;
  memset(a, 0, sizeof *a);
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (options && strcmp(s, "--") == 0) {
      options = false;
    } else if (options && (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0)) {
      a->help = true;
    } else if (options && (takes & TAKES_JSON) && strcmp(s, "--json") == 0) {
      if (a->json) return cli_usage_error("%s: --json given twice", cmd);
      a->json = true;
    } else if (options && (takes & TAKES_ALL) && strcmp(s, "--all") == 0) {
      if (a->all) return cli_usage_error("%s: --all given twice", cmd);
      a->all = true;
    } else if (options && (takes & TAKES_OUT) && strcmp(s, "-o") == 0) {
      if (i + 1 >= argc) return cli_usage_error("%s: -o needs a path", cmd);
      /* The last one winning would write a file the user may not expect. */
      if (a->out)
        return cli_usage_error("%s: -o given twice ('%s', then '%s')", cmd, a->out, argv[i + 1]);
      a->out = argv[++i];
    } else if (options && s[0] == '-' && s[1] != '\0') {
      return cli_usage_error("%s: unknown option '%s'", cmd, s);
    } else if (a->file) {
      return cli_usage_error("%s: one FILE only, not '%s' too", cmd, s);
    } else {
      a->file = s;
    }
  }
  if (a->help) return CLI_EXIT_OK;
  if (!a->file) return cli_usage_error("%s: no FILE given", cmd);
  if ((takes & TAKES_OUT) && !a->out) return cli_usage_error("%s: no -o OUT given", cmd);
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
  int rc = parse_args(argc, argv, 0, &a);
  if (rc != CLI_EXIT_OK || a.help) {
    if (a.help) cli_print_usage(stdout);
    return rc;
  }
  if (cli_is_jobfile(a.file)) return flush_stdout(cli_check_jobfile(a.file));
  rig_desc *d = NULL;
  rc = cli_read_desc(a.file, &d);
  if (rc != CLI_EXIT_OK) return rc;
  rig_error err = {0};
  rig_status st = rig_desc_check(d, &err);
  rig_desc_free(d);
  if (st != RIG_OK) return cli_fail(cli_exit_of(st), "%s: %s", a.file, err.message);
  puts("ok");
  return flush_stdout(CLI_EXIT_OK);
}

/* Dumps even a description that breaks a rule: finding why is what it is
 * for. */
int cli_dump(int argc, char **argv) {
  cli_args a;
  int rc = parse_args(argc, argv, TAKES_JSON, &a);
  if (rc != CLI_EXIT_OK || a.help) {
    if (a.help) cli_print_usage(stdout);
    return rc;
  }
  if (cli_is_jobfile(a.file)) {
    if (a.json)
      return cli_usage_error("%s: --json lists a description, and %s is a job file", argv[0],
                             a.file);
    return flush_stdout(cli_dump_jobfile(a.file));
  }
  rig_desc *d = NULL;
  rc = cli_read_desc(a.file, &d);
  if (rc != CLI_EXIT_OK) return rc;
  if (!a.json) {
    cli_dump_desc(stdout, d);
    rig_desc_free(d);
    return flush_stdout(CLI_EXIT_OK);
  }
  char *text = NULL;
  rig_error err = {0};
  rig_status st = rig_desc_to_json(d, &text, &err);
  rig_desc_free(d);
  if (st != RIG_OK) return cli_fail(cli_exit_of(st), "%s: %s", a.file, err.message);
  size_t n = strlen(text);
  fputs(text, stdout);
  if (n == 0 || text[n - 1] != '\n') putchar('\n');
  free(text);
  return flush_stdout(CLI_EXIT_OK);
}

/* Draws even a description that breaks a rule, as dump lists it. */
int cli_dot(int argc, char **argv) {
  cli_args a;
  int rc = parse_args(argc, argv, TAKES_ALL, &a);
  if (rc != CLI_EXIT_OK || a.help) {
    if (a.help) cli_print_usage(stdout);
    return rc;
  }
  if (cli_is_jobfile(a.file)) return flush_stdout(cli_dot_jobfile(a.file, a.all));
  rig_desc *d = NULL;
  rc = cli_read_desc(a.file, &d);
  if (rc != CLI_EXIT_OK) return rc;
  rc = cli_dot_print(stdout, d, a.all);
  rig_desc_free(d);
  if (rc != CLI_EXIT_OK) return cli_fail(rc, "out of memory");
  return flush_stdout(CLI_EXIT_OK);
}

/* Converts without checking, so that tests can make files that break
 * rules; `check` judges. */
int cli_pack(int argc, char **argv) {
  cli_args a;
  int rc = parse_args(argc, argv, TAKES_OUT, &a);
  if (rc != CLI_EXIT_OK || a.help) {
    if (a.help) cli_print_usage(stdout);
    return rc;
  }
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
