/* progrun's help text (cli_help.h) and its printing on a terminal: the
 * overview and each command's help, wrapped at 80 columns. */
#include <string.h>

#include "cli_help.h"

static const cli_help_option run_options[] = {
    {"--runs", NULL, "N", 0, "run N times (default 1)"},
    {"--warmup", NULL, "N", 0, "the first N runs run but are left out of the figures"},
    {"--ints", NULL, "LIST", 0,
     "the frame's ints, comma-separated: numbers, run (the run's index) or rank (the "
     "machine's); the rest 0"},
    {"--input", NULL, "I=PATH", 1, "input I's bytes from PATH, zero past its end"},
    {"--output", NULL, "I=PATH", 1,
     "input I's bytes after the last run, into PATH ({rank}: the machine's)"},
    {"--gather-outputs", NULL, NULL, 0,
     "in a job, machine 0 writes every machine's outputs (default: each machine its own)"},
    {"--devices", NULL, "LIST", 0,
     "the devices standing for the program's, e.g. host,cpu:1 (default: the first free of "
     "each arch)"},
    {"--json", NULL, "PATH", 1, "the figures as JSON, into PATH"},
    {"--json-runs", NULL, NULL, 0, "with --json: every run's time on every machine too"},
    {"--csv", NULL, "PATH", 1, "the summary table as CSV, into PATH"},
    {"--markdown", NULL, "PATH", 1, "the summary table as Markdown, into PATH"},
    {"--trace", NULL, "PATH", 1,
     "every step of every run, as a Chrome trace (Perfetto), into PATH"},
    {"--progress", NULL, NULL, 0, "the progress line on stderr, even off a terminal"},
    {"--no-progress", NULL, NULL, 0, "no progress line (default: one on a terminal)"},
    {"--quiet", "-q", NULL, 0, "no summary"},
    {"--help", "-h", NULL, 0, "this help"},
    {NULL, NULL, NULL, 0, NULL},
};

static const cli_help_option json_options[] = {
    {"--json", NULL, NULL, 0, "the same as one JSON object"},
    {"--help", "-h", NULL, 0, "this help"},
    {NULL, NULL, NULL, 0, NULL},
};

static const cli_help_option dump_options[] = {
    {"--json", NULL, NULL, 0, "the description's JSON text, every data's bytes inline"},
    {"--help", "-h", NULL, 0, "this help"},
    {NULL, NULL, NULL, 0, NULL},
};

static const cli_help_option dot_options[] = {
    {"--all", NULL, NULL, 0, "every edge, also those that others imply"},
    {"--help", "-h", NULL, 0, "this help"},
    {NULL, NULL, NULL, 0, NULL},
};

static const cli_help_option pack_options[] = {
    {"-o", NULL, "OUT", 1, "the file to write (required)"},
    {"--help", "-h", NULL, 0, "this help"},
    {NULL, NULL, NULL, 0, NULL},
};

static const cli_help_option help_only[] = {
    {"--help", "-h", NULL, 0, "this help"},
    {NULL, NULL, NULL, 0, NULL},
};

const cli_help_option cli_help_global[] = {
    {"--help", "-h", NULL, 0, "every command's usage"},
    {"--version", "-V", NULL, 0, "the version"},
    {NULL, NULL, NULL, 0, NULL},
};

const cli_help cli_helps[] = {
    {"run",
     {"run FILE [options]", "FILE [options]", NULL},
     "run the program on this machine's devices, or on every machine of an MPI job",
     "Loads the program of FILE on this machine's devices once, then runs it N times, one run "
     "after the other, and prints how long the runs took. The description's devices are "
     "this machine's by arch (its ISA the host, cpu-ISA a cpu:N, sm_XY a cuda:N), unless "
     "--devices names them.\n\n"
     "Started by a launcher (mpirun -n N progrun FILE, srun --mpi=pmix) it runs on every "
     "machine of the MPI job: rank 0 reads FILE and loads the program on every machine, and "
     "each run runs on all of them at once. FILE may then be a job file, giving each machine "
     "its own program, devices, inputs and ints, and the rails between them.\n\n"
     "A first word that is no command is run's FILE: progrun FILE is progrun run FILE.",
     1,
     run_options},
    {"info",
     {"info [--json]", NULL, NULL},
     "this machine, or under a launcher every machine",
     "What this machine brings to a job: its host, its topology, the workers that run a host "
     "launch's groups, each device with the memory it may allocate, why a family has none, "
     "the MPI library and UCX's transports. It starts no job.\n\n"
     "Under a launcher (mpirun -n 3 progrun info) every rank describes its machine, and rank "
     "0 prints them all, a block per machine.",
     0,
     json_options},
    {"check",
     {"check FILE", NULL, NULL},
     "decode and apply every rule that needs no device",
     "Decodes FILE and applies every rule of a description that needs no device; prints ok, "
     "or the first broken rule's message and exits 2. A job file is checked part by part: "
     "each program, its devices, ints, inputs and outputs, and its rails.",
     1,
     help_only},
    {"dump",
     {"dump FILE [--json]", NULL, NULL},
     "the description as a listing, or as JSON",
     "Decodes FILE and lists every field of it, one thing a line, steps numbered as the "
     "checker's messages number them. It checks nothing, so it lists a description that "
     "breaks a rule too. A job file is listed with each machine's part and program, then its "
     "rails.",
     1,
     dump_options},
    {"dot",
     {"dot FILE [--all]", NULL, NULL},
     "the program as a Graphviz graph: its steps in order and what each follows",
     "FILE's program as a Graphviz digraph, time flowing down: a node per Move (naming what "
     "it moves where), per part of a Submit (naming its kernel and device; a Submit of more "
     "parts a cluster) and per Loop, and an edge to each step from the earlier ones it "
     "follows, labelled with why (a use of memory, or the device's order). An edge that "
     "others imply is left out unless --all is given. A job file draws a cluster per "
     "machine, and each rail's two directions from the step that sends on it to the one "
     "that receives.\n\n"
     "progrun dot FILE | dot -Tsvg > FILE.svg",
     1,
     dot_options},
    {"pack",
     {"pack FILE -o OUT", NULL, NULL},
     "the description (JSON or bytes) as bytes in OUT",
     "Writes FILE's description as bytes into OUT, whole or not at all. It checks no rule, so "
     "that a description that breaks one can be made; progrun check judges.",
     1,
     pack_options},
    {"version",
     {"version", NULL, NULL},
     "progrun's version",
     "Prints progrun's version, as progrun --version does: progrun 1.2.3.",
     0,
     help_only},
    {"help",
     {"help [COMMAND]", NULL, NULL},
     "every command's usage, or COMMAND's help",
     "Every command's usage, or the help of COMMAND (as progrun COMMAND --help).",
     0,
     help_only},
};
const size_t cli_nhelps = sizeof cli_helps / sizeof cli_helps[0];

const char cli_help_exit_status[] =
    "Exit status: 0 success, 1 a run or the machine failed, 2 bad usage or a file that "
    "cannot be read, decoded or written, or that breaks a rule.";

const char cli_help_file[] =
    "FILE is a program's description, its bytes (magic rig.program) or its JSON text, or a "
    "job file (JSON with \"machines\" or \"every\"); - reads stdin. 'progrun COMMAND --help' says "
    "more "
    "of a command, 'man progrun' of all.";

const cli_help *cli_help_of(const char *name) {
  for (size_t i = 0; i < cli_nhelps; i++)
    if (strcmp(cli_helps[i].name, name) == 0) return &cli_helps[i];
  return NULL;
}

/* The width of a line; where an option's text starts, and a command's in
 * the overview. */
enum { WIDTH = 80, OPTION_COLUMN = 24, COMMAND_COLUMN = 32 };

/* Prints `n` bytes of text from column `at`, breaking lines at spaces
 * before WIDTH and starting each further line at column `indent`. */
static void wrap(FILE *f, const char *s, size_t n, size_t at, size_t indent) {
  const char *end = s + n;
  while (s < end) {
    while (s < end && *s == ' ') s++;
    const char *w = s;
    while (w < end && *w != ' ') w++;
    size_t len = (size_t)(w - s);
    if (at > indent && at + 1 + len > WIDTH) {
      fprintf(f, "\n%*s", (int)indent, "");
      at = indent;
    } else if (at > indent) {
      fputc(' ', f);
      at++;
    }
    fwrite(s, 1, len, f);
    at += len;
    s = w;
  }
  fputc('\n', f);
}

/* Paragraphs apart by "\n\n", each wrapped from column 0. */
static void paragraphs(FILE *f, const char *text) {
  while (*text) {
    const char *end = strstr(text, "\n\n");
    size_t n = end ? (size_t)(end - text) : strlen(text);
    wrap(f, text, n, 0, 0);
    if (!end) break;
    fputc('\n', f);
    text = end + 2;
  }
}

/* A row: `left` from column 2, then `what` from `column` (or the next
 * line when `left` reaches it). */
static void row(FILE *f, int column, const char *left, const char *what) {
  int at = fprintf(f, "  %s", left);
  if (at + 2 > column) {
    fputc('\n', f);
    at = 0;
  }
  fprintf(f, "%*s", column - at, "");
  wrap(f, what, strlen(what), (size_t)column, (size_t)column);
}

static void option_row(FILE *f, const cli_help_option *o) {
  char left[64];
  snprintf(left, sizeof left, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "", o->name,
           o->arg ? " " : "", o->arg ? o->arg : "");
  row(f, OPTION_COLUMN, left, o->what);
}

void cli_help_overview(FILE *f) {
  fputs("usage:\n", f);
  char left[64];
  for (size_t i = 0; i < cli_nhelps; i++) {
    const cli_help *h = &cli_helps[i];
    /* run's FILE stands alone too: [run] FILE. */
    snprintf(left, sizeof left, "progrun %s%s", strcmp(h->name, "run") == 0 ? "[run] " : "",
             strcmp(h->name, "run") == 0 ? h->synopsis[1] : h->synopsis[0]);
    row(f, COMMAND_COLUMN, left, h->summary);
  }
  for (const cli_help_option *o = cli_help_global; o->name; o++) {
    snprintf(left, sizeof left, "progrun %s | %s", o->alias, o->name);
    row(f, COMMAND_COLUMN, left, o->what);
  }
  fputc('\n', f);
  paragraphs(f, cli_help_file);
  fputc('\n', f);
  paragraphs(f, cli_help_exit_status);
}

void cli_help_print(FILE *f, const cli_help *h) {
  for (int i = 0; i < 3 && h->synopsis[i]; i++)
    fprintf(f, "%s progrun %s\n", i == 0 ? "usage:" : "      ", h->synopsis[i]);
  fputc('\n', f);
  paragraphs(f, h->text);
  fputs("\noptions:\n", f);
  for (const cli_help_option *o = h->options; o->name; o++) option_row(f, o);
  fputc('\n', f);
  paragraphs(f, cli_help_exit_status);
}
