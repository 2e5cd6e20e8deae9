/* progrun: the command. main only finds the subcommand in a table and hands
 * it its arguments; each subcommand parses its own options. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_job.h"
#include "rig/rig_base.h"

typedef struct cli_command {
  const char *name;
  cli_command_fn run;
  const char *usage; /* its synopsis, after "progrun " */
  const char *what;
} cli_command;

/* Later commands (info) join this table. */
/* `run` under an MPI launcher, or of a job file, is the job's. */
static int run_command(int argc, char **argv) {
  if (cli_under_mpi() || cli_singletons()) return cli_run_job(argc, argv);
  return cli_run(argc, argv);
}

static const cli_command commands[] = {
    {"run", run_command, "[run] FILE [options]",
     "run the program on this machine's devices, or on every machine of an MPI job"},
    {"info", cli_info, "info", "this machine: topology, devices, MPI and UCX"},
    {"check", cli_check, "check FILE", "decode and apply every rule that needs no device"},
    {"dump", cli_dump, "dump FILE [--json]", "the description as a listing, or as JSON"},
    {"dot", cli_dot, "dot FILE", "the program as a Graphviz graph: steps and what each follows"},
    {"pack", cli_pack, "pack FILE -o OUT", "the description (JSON or bytes) as bytes in OUT"},
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

void cli_print_usage(FILE *f) {
  fputs("usage:\n", f);
  for (size_t i = 0; i < ncommands; i++)
    fprintf(f, "  progrun %-22s %s\n", commands[i].usage, commands[i].what);
  fprintf(f, "  progrun %-22s %s\n", "--help", "this message");
  fprintf(f, "  progrun %-22s %s\n", "--version", "the version");
  fputs("options of run:\n"
        "  --runs N                 run N times (default 1)\n"
        "  --ints LIST              the frame's ints: numbers, run (the run's index) or\n"
        "                           rank (the machine's), comma-separated; the rest 0\n"
        "  --input I=PATH           input I's bytes from PATH, zero past its end\n"
        "  --output I=PATH          input I's bytes after the last run, into PATH\n"
        "  --devices LIST           the devices standing for the program's, e.g.\n"
        "                           host,cpu:1 (default: the first free of each arch)\n"
        "  --warmup N               the first N runs run but are left out of the figures\n"
        "  --json PATH              the figures as JSON, into PATH\n"
        "  --trace PATH             every step of every run, as a Chrome trace (Perfetto)\n"
        "  --progress               the progress line on stderr, even off a terminal\n"
        "  --no-progress            no progress line (default: one on a terminal)\n"
        "  --quiet, -q              no summary\n"
        "FILE is a description's bytes (magic rig.program) or its JSON text.\n"
        "Exit status: 0 success, 1 failure of a run or of the machine, 2 bad usage\n"
        "or a file that cannot be read, decoded or written, or that breaks a rule.\n",
        f);
}

static void vmessage(const char *fmt, va_list ap) {
  fputs("progrun: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

/* Under a launcher every rank parses the same arguments: only rank 0
 * tells the usage, so that it is said once (the others still exit 2). */
static bool usage_silent;

static bool launcher_rank_is_not_0(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    if (v) return strcmp(v, "0") != 0;
  }
  return false;
}

int cli_usage_error(const char *fmt, ...) {
  if (usage_silent) {
    /* Leaving at once, this rank could have the launcher end rank 0 (its
     * exit status is not 0) before rank 0 has said why: a second first. */
    struct timespec ts = {1, 0};
    nanosleep(&ts, NULL);
    return CLI_EXIT_USAGE;
  }
  va_list ap;
  va_start(ap, fmt);
  vmessage(fmt, ap);
  va_end(ap);
  cli_print_usage(stderr);
  return CLI_EXIT_USAGE;
}

int cli_fail(int code, const char *fmt, ...) {
  cli_progress_stop(); /* a message starts a line of its own */
  va_list ap;
  va_start(ap, fmt);
  vmessage(fmt, ap);
  va_end(ap);
  return code;
}

int main(int argc, char **argv) {
  cli_argc = argc;
  cli_argv = argv;
  usage_silent = cli_under_mpi() && launcher_rank_is_not_0();
  if (argc < 2) return cli_usage_error("no command given");
  const char *first = argv[1];
  if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0 || strcmp(first, "help") == 0) {
    cli_print_usage(stdout);
    return CLI_EXIT_OK;
  }
  if (strcmp(first, "--version") == 0) {
    if (argc > 2) return cli_usage_error("--version takes nothing more, not '%s'", argv[2]);
    printf("progrun %s\n", RIG_VERSION_STRING);
    return CLI_EXIT_OK;
  }
  /* An invalid RIG_* variable is refused before anything runs, on every
   * rank alike (each has the same environment under mpirun). */
  rig_error env;
  if (rig_environment_check(&env) != RIG_OK) return cli_fail(CLI_EXIT_USAGE, "%s", env.message);
  const cli_command *c = find_command(first);
  if (c) return c->run(argc - 1, argv + 1);
  /* A word that is neither a command nor a file is more likely a mistyped
   * command than a missing description: say so, with the usage. */
  if (bare_file_command && first[0] != '-' && access(first, F_OK) != 0)
    return cli_usage_error("'%s' is neither a command nor a file", first);
  if (bare_file_command && first[0] != '-') {
    /* argv[0] stands in for the command's name, so FILE stays at argv[1]. */
    c = find_command(bare_file_command);
    if (c) return c->run(argc, argv);
  }
  return cli_usage_error("unknown %s '%s'", first[0] == '-' ? "option" : "command", first);
}
