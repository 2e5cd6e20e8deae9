/* progrun: the command. main only finds the subcommand in a table and hands
 * it its arguments; each subcommand parses its own options. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_help.h"
#include "cli_job.h"
#include "rig/rig_base.h"

typedef struct cli_command {
  const char *name;
  cli_command_fn run;
} cli_command;

/* `run` under an MPI launcher, or of a job file, is the job's. */
static int run_command(int argc, char **argv) {
  if (rig_run_under_launcher() || cli_singletons()) return cli_run_job(argc, argv);
  return cli_run(argc, argv);
}

static int help_command(int argc, char **argv);
static int version_command(int argc, char **argv);

/* Each command's help is cli_helps' entry of its name (cli_help.c). */
static const cli_command commands[] = {
    {"run", run_command}, {"info", cli_info}, {"check", cli_check},         {"dump", cli_dump},
    {"dot", cli_dot},     {"pack", cli_pack}, {"version", version_command}, {"help", help_command},
};

/* The command that a first argument naming no command runs with that
 * argument as its FILE (`progrun FILE` for `progrun run FILE`). */
static const char *const bare_file_command = "run";

enum { ncommands = sizeof commands / sizeof commands[0] };

static const cli_command *find_command(const char *name) {
  for (size_t i = 0; i < ncommands; i++)
    if (strcmp(commands[i].name, name) == 0) return &commands[i];
  return NULL;
}

static int take_version_arg(void *ctx, cli_arg_kind kind, const cli_help_option *opt,
                            const char *value) {
  bool *help = ctx;
  if (kind == CLI_ARG_OPTION) {
    *help = true;
    return CLI_ARGS_STOP;
  }
  return cli_usage_error("version: takes nothing, not '%s'", value ? value : opt->name);
}

/* `progrun version`: as `progrun --version`. */
static int version_command(int argc, char **argv) {
  bool help = false;
  int rc = cli_args_parse("version", cli_help_of("version")->options, argc, argv, take_version_arg,
                          &help);
  if (rc != CLI_EXIT_OK) return rc;
  if (help) {
    cli_print_usage(stdout);
    return CLI_EXIT_OK;
  }
  printf("progrun %s\n", RIG_VERSION_STRING);
  return cli_flushed(stdout, "the version", CLI_EXIT_OK);
}

typedef struct help_args {
  const char *command;
  bool help;
} help_args;

static int take_help_arg(void *ctx, cli_arg_kind kind, const cli_help_option *opt,
                         const char *value) {
  help_args *a = ctx;
  if (kind == CLI_ARG_OPTION) {
    a->help = true;
    return CLI_ARGS_STOP;
  }
  (void)opt;
  /* One word at most (help_command): a COMMAND, or what no command is. */
  a->command = value;
  return CLI_EXIT_OK;
}

/* `progrun help [COMMAND]`: the overview, or COMMAND's help (`progrun
 * help --help`: help's own). */
static int help_command(int argc, char **argv) {
  if (argc > 2) return cli_usage_error("help: one COMMAND only, not '%s' too", argv[2]);
  help_args a = {NULL, false};
  int rc = cli_args_parse("help", cli_help_of("help")->options, argc, argv, take_help_arg, &a);
  if (rc != CLI_EXIT_OK) return rc;
  if (!a.help) {
    const cli_help *h = a.command ? cli_help_of(a.command) : NULL;
    if (a.command && !h) return cli_usage_error("help: no command '%s'", a.command);
    cli_say_command(h);
  }
  cli_print_usage(stdout);
  return CLI_EXIT_OK;
}

static bool is_help(const char *s) {
  return strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0;
}

int main(int argc, char **argv) {
  cli_argc = argc;
  cli_argv = argv;
  rig_log_set_prefix("progrun"); /* librig's lines are the command's */
  cli_say_usage_once(rig_run_under_launcher() && rig_run_rank_is_not_0());
  if (argc < 2) return cli_usage_error("no command given");
  const char *first = argv[1];
  /* `progrun --help [COMMAND]` as `progrun help [COMMAND]`. */
  if (is_help(first)) return help_command(argc - 1, argv + 1);
  if (strcmp(first, "--version") == 0 || strcmp(first, "-V") == 0) {
    if (argc > 2) return cli_usage_error("%s takes nothing more, not '%s'", first, argv[2]);
    printf("progrun %s\n", RIG_VERSION_STRING);
    return CLI_EXIT_OK;
  }
  /* An invalid RIG_* variable is refused before anything runs, on every
   * rank alike (each has the same environment under mpirun). */
  rig_error env;
  const cli_command *c = find_command(first);
  if (rig_environment_check(&env) != RIG_OK) {
    /* Rank 0 says it. An agent's may be its own (a batch system's
     * per-node environment, MPMD's -x): in a job every rank tells rank 0
     * with its first word (cli_bound_hello), and rank 0 says each once. */
    bool job = c ? strcmp(c->name, "run") == 0 || strcmp(c->name, "info") == 0
                 : bare_file_command && first[0] != '-';
    if (rig_run_under_launcher() && job)
      cli_bound_refuse(env.message); /* every rank's is told by rank 0 */
    else if (rig_run_under_launcher() && rig_run_rank_is_not_0())
      return cli_quiet_rank_leaves();
    else
      return cli_fail(CLI_EXIT_USAGE, "%s", env.message);
  }
  if (c) {
    cli_say_command(cli_help_of(c->name));
    return c->run(argc - 1, argv + 1);
  }
  /* A word that is neither a command nor a file is more likely a mistyped
   * command than a missing description: say so. */
  if (bare_file_command && first[0] != '-' && access(first, F_OK) != 0)
    return cli_usage_error("'%s' is neither a command nor a file", first);
  if (bare_file_command && first[0] != '-') {
    /* argv[0] stands in for the command's name, so FILE stays at argv[1]. */
    c = find_command(bare_file_command);
    cli_say_command(cli_help_of(bare_file_command));
    if (c) return c->run(argc, argv);
  }
  return cli_usage_error("unknown %s '%s'", first[0] == '-' ? "option" : "command", first);
}
