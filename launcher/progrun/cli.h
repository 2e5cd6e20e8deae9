/* cli.h: what the files of the progrun command share: the exit codes, the
 * usage messages, and each subcommand's entry point. Only progrun prints;
 * the library below it only fills rig_error records. */
#ifndef RIG_CLI_H
#define RIG_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "rig/rig_core.h"
#include "rig/rig_desc.h"
#include "rig/rig_program.h"
#include "rig/rig_run.h"

/* Exit codes (docs/jobs.md, "progrun"). */
enum {
  CLI_EXIT_OK = 0,
  CLI_EXIT_FAIL = 1,  /* a job failed, or the command ran out of memory */
  CLI_EXIT_USAGE = 2, /* bad usage, a file that cannot be read or written, a
                         malformed description or one that breaks a rule */
};

/* A subcommand: argv[0] is its name, argv[1..argc) its arguments. Returns the
 * process's exit code. */
typedef int (*cli_command_fn)(int argc, char **argv);

/* ---- what the command says (cli_say.c), at the bottom of its tiers ------------- */

struct cli_help;
/* The command being run (cli_help.c's entry; NULL: none yet), whose help
 * --help prints and a usage error points to. */
void cli_say_command(const struct cli_help *h);
/* The help of the command being run, or before one is known every
 * command's usage, on f. */
void cli_print_usage(FILE *f);

/* Prints "progrun: <message>" on stderr and, on a line of its own, where
 * the help is (`see 'progrun run --help'`); returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Usage errors said by rank 0 alone (every rank parses the same words):
 * the others leave quietly, after rank 0 had time to say why. */
void cli_say_usage_once(bool silent);
int cli_quiet_rank_leaves(void);

/* Prints "progrun: <message>" on stderr, after ending the line drawn in
 * place if any; returns `code`. */
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "progrun: warning: <message>" on stderr, as cli_fail does. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* f's buffered output written: code, or CLI_EXIT_USAGE with "cannot write
 * <what>: <why>" said. */
int cli_flushed(FILE *f, const char *what, int code);
/* n bytes of text straight to f's file (f flushed first), so that a
 * failed write keeps its reason: `cannot write WHAT: <why>`, or code. */
int cli_write_text(FILE *f, const char *what, const char *text, size_t n, int code);
/* The exit code of a failed status: out of memory is the machine's
 * failure (CLI_EXIT_FAIL); anything else is the input's (CLI_EXIT_USAGE). */
int cli_exit_of(rig_status st);
/* Sets err (RIG_EMALFORMED) to "<where>: <message>" (where NULL: the
 * message alone); returns CLI_EXIT_USAGE. */
int cli_jobfile_bad(rig_error *err, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The job's failure is told once, by whoever claims it first (the running
 * thread or the watch of cli_job.c). */
bool cli_failure_claim(void);
bool cli_failure_was_told(void);

/* The one line drawn in place on stderr (the progress line): `text` over
 * the last, and its end (erased on a terminal, else a line feed), which
 * every message does first. */
void cli_line_draw(const char *text);
void cli_line_end(void);

/* ---- how the command was started (cli_launcher.c) ------------------------------ */

/* Its words, as main got them. */
extern int cli_argc;
extern char **cli_argv;
/* A launch that would run N separate jobs (srun without PMIx): the message
 * to give instead, or NULL. */
const char *cli_singletons(void);

/* ---- waits MPI does not bound (cli_bound.c) --------------------------------------- */

/* Begins a wait MPI does not bound (`what`: "the launcher's start
 * (MPI_Init)"): past the job's silence bound (RIG_JOB_SILENCE) the process
 * says what waited, and the network settings MPI went by, and exits with
 * `code`. One at a time; cli_bound_end ends it. */
void cli_bound_begin(const char *what, int code);
void cli_bound_end(void);
/* The first exchange of a job, right after MPI_Init: rank 0 hears from
 * every rank, then tells each *rc (rank 0's); past the bound each rank
 * says who did not answer (rank 0 names the machines) and exits. What
 * follows may then wait unbounded on rank 0 (its planning). */
void cli_bound_hello(int rank, int size, int *rc);
/* An agent's own refusal to start (an environment variable of its own),
 * told to rank 0 with its hello: rank 0 says it, naming the machine, and
 * every rank gets CLI_EXIT_USAGE as *rc. */
void cli_bound_refuse(const char *why);
/* "<what> not done after <bound> s: a machine did not answer (...)". */
void cli_bound_said(const char *what, double bound, char *out, size_t size);
/* The network variables of MPI and UCX this process has, "A=a, B=b";
 * how many bytes. */
size_t cli_network_settings(char *out, size_t size);

/* ---- the words of a subcommand (cli_args.c) ------------------------------------- */

/* What cli_args_parse found: an option of the table (with its value, or
 * NULL for a flag), a word that is no option (FILE), a word that is no
 * option of the table, or an option whose value is missing. */
typedef enum cli_arg_kind {
  CLI_ARG_OPTION,
  CLI_ARG_WORD,
  CLI_ARG_UNKNOWN,
  CLI_ARG_MISSING
} cli_arg_kind;
/* What a cli_arg_fn returns to end the parse with success (--help). */
#define CLI_ARGS_STOP (-1)
struct cli_help_option;
/* o: the table's entry (CLI_ARG_OPTION, CLI_ARG_MISSING); value: the
 * option's value, or the word itself (CLI_ARG_WORD, CLI_ARG_UNKNOWN). An
 * exit code other than CLI_EXIT_OK ends the parse with it. */
typedef int (*cli_arg_fn)(void *ctx, cli_arg_kind kind, const struct cli_help_option *o,
                          const char *value);
/* argv[1..argc) by getopt_long against `options` (a help table of
 * cli_help.c), each word handed to take in order; "--" makes every word
 * after it a word. cmd names the subcommand in messages. */
int cli_args_parse(const char *cmd, const struct cli_help_option *options, int argc, char **argv,
                   cli_arg_fn take, void *ctx);
/* "<cmd>: unknown option '<word>'", a usage error. */
int cli_args_unknown(const char *cmd, const char *word);

/* ---- reading a description (cli_desc_read.c) ---------------------------------- */

/* Reads the description in `path`: its bytes (magic "rig.program\n") or its
 * JSON text, whose {"file": ...} paths are relative to the JSON file's
 * directory ("-" reads stdin, its files relative to the working
 * directory). Only decodes: no rule is checked. On failure prints why and
 * returns the exit code; returns CLI_EXIT_OK with *d set on success. */
int cli_read_desc(const char *path, rig_desc **d);
/* cli_read_desc printing nothing: the message ("PATH: <why>", or "cannot
 * read PATH: <why>") in *err. */
int cli_read_desc_quiet(const char *path, rig_desc **d, rig_error *err);

/* The subcommands of cli_desc.c. */
int cli_check(int argc, char **argv);
int cli_dump(int argc, char **argv);
int cli_pack(int argc, char **argv);

/* ---- run ---------------------------------------------------------------------
 * `progrun run FILE [options]`, on this machine alone or on every machine
 * of an MPI job (cli_job.h). What is per machine (mapping devices, making
 * inputs, running, reading outputs: cli_machine.c) is in functions that
 * print nothing: each returns an exit code and fills a rig_error with the
 * message (without "progrun: "), so that the controller of a job can call
 * them for every machine and report a machine's failure. */

int cli_run(int argc, char **argv);
int cli_info(int argc, char **argv);

/* An element of --ints: a number, the run's index (0-based) or the
 * machine's index (its rank; 0 on one machine). */
typedef enum cli_int_kind { CLI_INT_NUMBER, CLI_INT_RUN, CLI_INT_RANK } cli_int_kind;
typedef struct cli_int {
  cli_int_kind kind;
  int64_t number;
} cli_int;

/* --input I=PATH or --output I=PATH. */
typedef struct cli_io {
  int64_t index;
  const char *path; /* points into argv */
} cli_io;

/* The most runs --runs takes (2^62): the summary keeps a bounded record
 * of their times (cli_times), so the count is bounded only by time. */
#define CLI_MAX_RUNS (INT64_C(1) << 62)

typedef struct cli_run_opts {
  const char *file;
  uint64_t runs; /* >= 1 */
  cli_int *ints;
  size_t nints;
  cli_io *inputs, *outputs;
  size_t ninputs, noutputs;
  char **devices; /* --devices, split at commas; NULL: by arch */
  size_t ndevices;
  bool quiet;
  bool help;
  uint64_t warmup;      /* --warmup: the first runs, left out of the figures */
  const char *json;     /* --json PATH: the figures as JSON, or NULL */
  bool json_runs;       /* --json-runs: every run's time in the --json report */
  const char *trace;    /* --trace PATH: the steps as a Chrome trace, or NULL */
  const char *csv;      /* --csv PATH: the summary table as CSV, or NULL */
  const char *markdown; /* --markdown PATH: the summary table as Markdown, or NULL */
  int progress;         /* --progress 1, --no-progress 0, else -1: on a terminal */
  bool gather_outputs;  /* --gather-outputs: machine 0 writes every machine's outputs */
} cli_run_opts;

/* Parses run's arguments (cli_opts.c; argv[0] is the command's name). On
 * bad usage prints why and the usage and returns CLI_EXIT_USAGE. Free with
 * cli_run_opts_free, also on failure. */
int cli_run_parse(int argc, char **argv, cli_run_opts *o);
void cli_run_opts_free(cli_run_opts *o);
/* What needs the runs' count (a job file may give it) and the machines':
 * refuses (usage) a --warmup that leaves none of `runs` measured, and
 * --json-runs past CLI_JSON_RUNS times kept (the runs measured, for each
 * machine and for the job). */
#define CLI_JSON_RUNS ((uint64_t)1 << 24)
int cli_run_count_fit(const cli_run_opts *o, uint64_t runs, size_t machines);

/* Whether the options fit d: input and output indices, the number of ints
 * and of devices. CLI_EXIT_USAGE with the message otherwise. */
int cli_run_fit(const cli_run_opts *o, const rig_desc *d, rig_error *err);

/* ---- words and byte strings for another machine (cli_wire.c) ------------------ */

/* A writer: ok false once out of memory (the buffer then says nothing). */
typedef struct cli_wbuf {
  unsigned char *b;
  size_t n, room;
  bool ok;
} cli_wbuf;
#define CLI_WBUF_INIT                                                                              \
  { NULL, 0, 0, true }
void cli_wbuf_u64(cli_wbuf *p, uint64_t v);
void cli_wbuf_bytes(cli_wbuf *p, const void *b, size_t n); /* its length, then them */
void cli_wbuf_str(cli_wbuf *p, const char *s);             /* NULL as "" */
void cli_wbuf_free(cli_wbuf *p);

/* A reader of bytes from another process: ok false once anything does not
 * fit (then every read gives 0, NULL). */
typedef struct cli_rbuf {
  const unsigned char *b;
  size_t n, at;
  bool ok;
} cli_rbuf;
uint64_t cli_rbuf_u64(cli_rbuf *u);
/* Points into the buffer, *n bytes. */
const void *cli_rbuf_bytes(cli_rbuf *u, size_t *n);
/* malloc'd, NUL-terminated; one holding a NUL is refused. */
char *cli_rbuf_str(cli_rbuf *u);
/* A count of items, each at least `least` bytes in what follows. */
uint64_t cli_rbuf_count(cli_rbuf *u, size_t least);

/* ---- one machine (cli_machine.c) ------------------------------------------- */

/* The devices that stand for d's: names[i] for device i when names is not
 * NULL (a name that does not open or is of another arch: CLI_EXIT_USAGE);
 * else by arch: this machine's ISA the host, "cpu-<ISA>" the next free
 * cpu:N, "sm_XY" the next free cuda:N of that arch (none: CLI_EXIT_FAIL).
 * How devices are found by name: locally, or among a machine's in a job. */
typedef struct cli_opener {
  rig_device *(*open)(void *ctx, const char *name, rig_error *why);
  void *ctx;
} cli_opener;
/* Opens devices of this process by name (rig_device_open). */
extern const cli_opener cli_local_opener;
/* given_by: what named the devices, as messages say it ("--devices", a
 * job file's "machines[0].devices"). */
int cli_map_devices_on(const cli_opener *op, const rig_desc *d, char *const *names, size_t nnames,
                       const char *given_by, rig_device **out, rig_error *err);

/* The bytes of input `index` from PATH, `bytes` long: zero past the file's
 * end (*got: how many the file gave); a file longer than the input is
 * CLI_EXIT_USAGE, as is one that cannot be read, each message after
 * `label` (what named the file: "--input 0=in3.bin"). *out is malloc'd
 * (NULL for 0 bytes). */
int cli_read_input(const char *label, const char *path, int64_t index, uint64_t bytes,
                   uint8_t **out, uint64_t *got, rig_error *err);

/* One machine's program and frame. */
typedef struct cli_machine {
  int64_t rank;
  const rig_desc *desc;
  rig_run_machine *run; /* librig's (rig_run.h) */
  int64_t *ints;        /* desc->ints words: the frame's, those not given 0 */
  size_t nints;
  const rig_point *ends;
  size_t nends; /* of the run handed over last */
} cli_machine;

/* Loads d on devices (as cli_map_devices gave them) and makes its inputs,
 * zero-filled. A rule the load finds broken is CLI_EXIT_USAGE; anything
 * the devices refuse, CLI_EXIT_FAIL. On failure m holds nothing. */
int cli_machine_open(cli_machine *m, const rig_desc *d, rig_device *const *devices, int64_t rank,
                     const rig_rails *rails, rig_error *err);
/* CLOCK_MONOTONIC in nanoseconds: what run times are measured with. */
uint64_t cli_now_ns(void);
/* Writes len bytes (at most the input's) at the start of input i. */
int cli_machine_fill_input(cli_machine *m, size_t i, const void *bytes, size_t len, rig_error *err);
/* Hands run `run` (0-based) over: ints from `ints` (`run` and `rank`
 * resolved), then the program once, its ends in m->ends. CLI_EXIT_FAIL
 * with the program's message. */
int cli_machine_start(cli_machine *m, uint64_t run, const cli_int *ints, size_t nints,
                      rig_error *err);
/* Whether every end of m's run is reached, from *seen on (the ends seen
 * reached stay so: *seen counts them). An end whose device is lost or
 * unknown is waited for, so that rig_point_wait says why (a proxy's is
 * lost with the job, with its root cause) and the run fails at once. */
rig_status cli_machine_ends_reached(const cli_machine *m, size_t *seen, bool *reached,
                                    rig_error *err);
/* Round `polls` of a wait polled by hand: a yield for the first 2000,
 * keeping short runs' times true, then a 50 us nap, so that a long run
 * does not cost a core. */
void cli_wait_round(unsigned polls);
/* Input i's bytes once the work writing them is done (malloc'd, *len of
 * them; NULL for 0 bytes). */
int cli_machine_read_input(cli_machine *m, size_t i, uint8_t **bytes, size_t *len, rig_error *err);
void cli_machine_close(cli_machine *m);

/* ---- reading files (cli_file.c) -------------------------------------------- */

/* The most progrun reads of one file (a description, a job file, an
 * input): a regular file larger is refused before reading, anything else
 * once it gives more (docs/cli.md, "Files"). */
#define CLI_MAX_READ      ((size_t)1 << 30)
#define CLI_MAX_READ_TEXT "1 GiB"
/* How long a FIFO read may give nothing before it is refused: opening one
 * that no process writes never waits (docs/cli.md, "Files"). */
#define CLI_FIFO_WAIT_MS 10000
/* Sets `cannot <verb> PATH: <why>`; returns CLI_EXIT_USAGE. */
int cli_cannot(rig_error *err, const char *verb, const char *path, const char *why);
/* Opens path for reading ("-": stdin), never waiting on a FIFO (a FIFO
 * that gives nothing in CLI_FIFO_WAIT_MS is refused); a directory is
 * refused. *fd then reads as usual; *st is its fstat. */
int cli_open_read(const char *path, int *fd, struct stat *st, rig_error *err);
/* The whole file ("-": stdin), NUL-terminated (not counted in *len), within
 * CLI_MAX_READ; CLI_EXIT_USAGE with `cannot read PATH: <why>` or the bound
 * (CLI_EXIT_FAIL out of memory). */
int cli_read_whole(const char *path, char **text, size_t *len, rig_error *err);

/* ---- writing files, all or none (cli_outset.c) ------------------------------ */

/* The set is librig's (rig_outputs, rig_run.h); the command maps its
 * statuses to exit codes: a file that cannot be written or is given twice
 * is CLI_EXIT_USAGE, the rest (out of memory, a file never put)
 * CLI_EXIT_FAIL. Zeroed: empty. */
typedef struct cli_outset {
  rig_outputs *set;            /* made at the first add */
  bool has_stdout, has_stderr; /* a file written in place is this process's stdout, stderr */
} cli_outset;
/* Adds path (named `label` in messages: "--output 1=y.bin"), before any
 * work: refuses (CLI_EXIT_USAGE, `cannot write PATH: <why>`) one whose
 * folder is missing or not writable, a directory, a FIFO no process
 * reads; and (`LABEL: the same file as LABEL2`) one that is the same file
 * as another of the set. A file that is not regular (a device, a FIFO,
 * /dev/stdout) is opened here, without waiting, and written in place; a
 * symbolic link is followed, its target replaced. *index is for put. */
int cli_outset_add(cli_outset *s, const char *path, const char *label, size_t *index,
                   rig_error *err);
/* The file's bytes: into a temporary file beside it, synced (or, for one
 * written in place, kept until the commit). */
int cli_outset_put(cli_outset *s, size_t index, const void *b, size_t n, rig_error *err);
/* File `index` takes the bytes put to `first` too (two outputs of one
 * input): a put to first writes both. */
void cli_outset_also(cli_outset *s, size_t index, size_t first);
/* Writes the in-place files (each once): the first half of the commit, for
 * a job whose machines each write their own before all rename. A file
 * added but never put fails it (`cannot write PATH: its bytes never
 * came`), every temporary removed: no output is skipped. */
int cli_outset_in_place(cli_outset *s, rig_error *err);
/* Writes the in-place files, then renames every temporary over its file;
 * a failure before the renames (a file never put among them) leaves every
 * file as it was. */
int cli_outset_commit(cli_outset *s, rig_error *err);
/* Removes the temporaries written: no file changes. */
void cli_outset_abort(cli_outset *s);
void cli_outset_free(cli_outset *s);
/* One file, as the set writes it (pack's OUT). */
int cli_write_file(const char *path, const uint8_t *b, size_t n, rig_error *err);

/* ---- times and figures (cli_times.c, cli_units.c) ------------------------------ */

/* Runs' times (ns) for the summary: each kept up to CLI_EXACT_RUNS runs;
 * past that a histogram of 1/1024 relative precision, the minimum still
 * exact (docs/cli.md, "The summary"). Zero-initialized; free with
 * cli_times_free. */
#define CLI_EXACT_RUNS ((uint64_t)1 << 20)
typedef struct cli_times {
  uint64_t n, min, max;
  double mean, m2; /* Welford's running mean and sum of squared deviations */
  uint64_t *exact; /* n of them while hist is NULL */
  size_t room;
  uint64_t *hist;
} cli_times;
int cli_times_add(cli_times *t, uint64_t ns, rig_error *err);
void cli_times_free(cli_times *t);
/* t as words for another machine, and back: t then holds what the words
 * say (checked: a broken buffer is CLI_EXIT_FAIL, u->ok false). */
struct cli_wbuf;
struct cli_rbuf;
void cli_times_put(const cli_times *t, struct cli_wbuf *p);
int cli_times_get(struct cli_rbuf *u, cli_times *t);
/* The figures of t (n >= 1; sorts its times), in ns. */
typedef struct cli_figures {
  uint64_t runs, min, median, p99, max;
  double mean, stddev; /* stddev: the population's (0 for one run) */
} cli_figures;
void cli_times_figures(cli_times *t, cli_figures *f);
/* The times a signal's thread tells as the runs' so far (an interrupt, a
 * SIGCONT: cli_job.h), shown by the thread that adds them and hidden
 * (NULL) before they are freed. Both take the hold (cli_hold), and a told
 * reads them under it alone: a signal's thread never reads times being
 * freed, and hiding them waits for a told under way. */
void cli_times_show(cli_times *t);
/* The shown times' figures (runs 0: none shown, or no run yet); held: the
 * caller holds the hold, as an interrupt's handler does. */
void cli_times_told(cli_figures *f, bool held);
/* ns in the unit that keeps it under 1000 once rounded: "812 ns",
 * "45.0 us", "1.5 ms", "2.00 s". Returns buf. */
const char *cli_format_ns(double ns, char *buf, size_t size);
/* The unit cli_format_ns gives ns: 0 ns, 1 us, 2 ms, 3 s. */
int cli_unit_of(double ns);
/* ns in `unit`, as cli_format_ns writes that unit, without its name
 * ("1800.0" for 1.8 ms in us). Returns buf. */
const char *cli_format_in(double ns, int unit, char *buf, size_t size);
extern const char *const cli_unit_names[4];
/* The summary line of f, every figure in the unit of its median: "runs N,
 * min A, median B, mean C, p99 D, max E, stddev F per run" (docs/cli.md),
 * with a line feed. */
void cli_summary_line(const cli_figures *f, char *buf, size_t size);

/* ---- the progress line (cli_progress.c) ------------------------------------ */

/* On stderr, at most 10 updates a second; ended (erased on a terminal,
 * else ended by a line feed) before any other output. */
typedef struct cli_progress {
  bool on, drawn, terminal;
  uint64_t t0, shown, runs;
} cli_progress;
/* Whether to show it: --progress, --no-progress, else stderr a terminal
 * (where a person watches it), not --quiet, and stderr no output. */
void cli_progress_start(cli_progress *p, const cli_run_opts *o, uint64_t runs, bool stderr_taken);
/* After run `done` (1-based) ended: the line, when 100 ms have passed
 * since the last (or none was drawn); slowest < 0 for one machine. */
void cli_progress_update(cli_progress *p, uint64_t done, long slowest, uint64_t slowest_ns);
void cli_progress_end(cli_progress *p);

/* `progrun dot FILE [--all]` (cli_desc.c; docs/cli.md, "dot"): the graph
 * librig draws (rig_desc_dot), every edge with `all`, else those no other
 * path implies. */
int cli_dot(int argc, char **argv);

#endif
