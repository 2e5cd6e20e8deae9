/* cli.h: what the files of the progrun command share: the exit codes, the
 * usage messages, and each subcommand's entry point. Only progrun prints;
 * the library below it only fills rig_error records. */
#ifndef RIG_CLI_H
#define RIG_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rig/rig_core.h"
#include "rig/rig_desc.h"
#include "rig/rig_program.h"

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

/* The help of the command being run (`progrun run --help`; cli_help.c),
 * or before one is known every command's usage, on f. */
void cli_print_usage(FILE *f);

/* Prints "progrun: <message>" on stderr and, on a line of its own, where
 * the help is (`see 'progrun run --help'`); returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "progrun: <message>" on stderr; returns `code`. */
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

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

/* ---- run (cli_run.c) --------------------------------------------------------
 * `progrun run FILE [options]` on this machine. What is per machine
 * (mapping devices, making inputs, running N times, timing, reading
 * outputs) is in functions that print nothing: each returns an exit code
 * and fills a rig_error with the message (without "progrun: "), so that the
 * MPI launcher can call them on every machine and report a machine's
 * failure from the controller. */

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
  uint64_t warmup;   /* --warmup: the first runs, left out of the figures */
  const char *json;  /* --json PATH: the figures as JSON, or NULL */
  const char *trace; /* --trace PATH: the steps as a Chrome trace, or NULL */
  int progress;      /* --progress 1, --no-progress 0, else -1: on a terminal */
} cli_run_opts;

/* Parses run's arguments (argv[0] is the command's name). On bad usage
 * prints why and the usage and returns CLI_EXIT_USAGE. Free with
 * cli_run_opts_free, also on failure. */
int cli_run_parse(int argc, char **argv, cli_run_opts *o);
void cli_run_opts_free(cli_run_opts *o);
/* Refuses (usage) a --warmup that leaves none of `runs` measured. */
int cli_run_warmup_fit(uint64_t warmup, uint64_t runs);

/* Whether the options fit d: input and output indices, the number of ints
 * and of devices. CLI_EXIT_USAGE with the message otherwise. */
int cli_run_fit(const cli_run_opts *o, const rig_desc *d, rig_error *err);

/* The devices that stand for d's: names[i] for device i when names is not
 * NULL (a name that does not open or is of another arch: CLI_EXIT_USAGE);
 * else by arch: this machine's ISA the host, "cpu-<ISA>" the next free
 * cpu:N, "sm_XY" the next free cuda:N of that arch (none: CLI_EXIT_FAIL). */
/* How devices are found by name: locally, or among a machine's in a job. */
typedef struct cli_opener {
  rig_device *(*open)(void *ctx, const char *name, rig_error *why);
  void *ctx;
} cli_opener;
/* Opens devices of this process by name (rig_device_open). */
extern const cli_opener cli_local_opener;
int cli_map_devices_on(const cli_opener *op, const rig_desc *d, char *const *names, size_t nnames,
                       rig_device **out, rig_error *err);
int cli_map_devices(const rig_desc *d, char *const *names, size_t nnames, rig_device **out,
                    rig_error *err);

/* The bytes of input `index` from PATH, `bytes` long: zero past the file's
 * end; a file longer than the input is CLI_EXIT_USAGE, as is one that
 * cannot be read. *out is malloc'd (NULL for 0 bytes). */
int cli_read_input(const char *path, int64_t index, uint64_t bytes, uint8_t **out, rig_error *err);

/* One machine's program and frame. */
typedef struct cli_machine {
  int64_t rank;
  const rig_desc *desc;
  rig_device **devices;
  size_t ndevices;
  rig_program *program;
  rig_buffer **inputs; /* one per input of desc, on its device */
  size_t ninputs;
  int64_t *ints; /* desc->ints words: the frame's, those not given 0 */
  size_t nints;
  rig_point *step_points; /* made once, shared by every run */
  size_t nstep_points;
  rig_point *ends;
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
/* Run `run` (0-based): ints from `ints` (`run` and `rank` resolved), then
 * the program once, waiting until each of its ends is reached; *ns its
 * time from before the run to then. CLI_EXIT_FAIL with `run <r>: <why>`. */
int cli_machine_run(cli_machine *m, uint64_t run, const cli_int *ints, size_t nints, uint64_t *ns,
                    rig_error *err);
/* Input i's bytes once the work writing them is done (malloc'd, *len of
 * them; NULL for 0 bytes). */
int cli_machine_read_input(cli_machine *m, size_t i, uint8_t **bytes, size_t *len, rig_error *err);
void cli_machine_close(cli_machine *m);

/* ---- files (cli_file.c) ---------------------------------------------------- */

/* The most progrun reads of one file (a description, a job file, an
 * input): a regular file larger is refused before reading, anything else
 * once it gives more (docs/cli.md, "Files"). */
#define CLI_MAX_READ      ((size_t)1 << 30)
#define CLI_MAX_READ_TEXT "1 GiB"
/* How much of a path a message shows: a longer one keeps its head and
 * tail around "...", so that the reason after it is never cut off. */
#define CLI_PATH_SHOWN 256
const char *cli_short_path(const char *path, char *buf, size_t size);
/* The whole file ("-": stdin), NUL-terminated (not counted in *len), within
 * CLI_MAX_READ; CLI_EXIT_USAGE with `cannot read PATH: <why>` or the bound
 * (CLI_EXIT_FAIL out of memory). */
int cli_read_whole(const char *path, char **text, size_t *len, rig_error *err);
/* Whether cli_write_file could write path: its directory (or, for a
 * device or FIFO, the file) writable, not a directory. Checked before any
 * work, so that none is lost to a bad output. */
int cli_output_check(const char *path, rig_error *err);
/* Writes n bytes to path whole or not at all: a symbolic link is followed
 * and its target replaced (temporary file in the target's directory,
 * synced, renamed over it), the old file kept when writing fails; a file
 * that is not regular (a device, a FIFO, /dev/stdout) is written in place,
 * never replaced. CLI_EXIT_USAGE with `cannot write PATH: <why>`. */
int cli_write_file(const char *path, const uint8_t *b, size_t n, rig_error *err);

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
/* The figures of t (n >= 1; sorts its times), in ns. */
typedef struct cli_figures {
  uint64_t runs, min, median, p99, max;
  double mean, stddev; /* stddev: the population's (0 for one run) */
} cli_figures;
void cli_times_figures(cli_times *t, cli_figures *f);
/* The summary line of t (n >= 1; sorts its times): "runs N, min A,
 * median B, mean C, p99 D, max E, stddev F per run", each in the unit
 * cli_format_ns picks (docs/cli.md). */
void cli_print_summary(FILE *f, cli_times *t);
/* ns in the unit that keeps it under 1000 once rounded: "812 ns",
 * "45.0 us", "1.5 ms", "2.00 s" (cli_units.c). Returns buf. */
const char *cli_format_ns(double ns, char *buf, size_t size);

/* The --json report (docs/cli.md, "The summary"): the command line, the
 * job's figures (each run's time the slowest machine's) and hosts, and one
 * object per machine; written as cli_write_file writes. */
typedef struct cli_report {
  uint64_t runs, warmup;
  size_t n;            /* machines */
  const char **hosts;  /* per machine */
  cli_times *machines; /* per machine */
  cli_times *job;
} cli_report;
int cli_write_report(const char *path, const cli_report *r, rig_error *err);
/* The --trace file (cli_trace.c; docs/cli.md "The trace"): per machine its
 * host, its trace (NULL: none) and its clock's offset against machine 0's
 * (its clock less machine 0's) within error_ns. Written as cli_write_file
 * writes. */
#define CLI_TRACE_EVENTS ((size_t)1 << 17) /* per machine */
#define CLI_TRACE_PINGS  16                /* exchanges measuring a clock */
typedef struct cli_trace_machine {
  const char *host;
  const rig_trace *trace;
  int64_t offset_ns;
  uint64_t error_ns;
} cli_trace_machine;
int cli_write_trace(const char *path, const cli_trace_machine *machines, size_t n, rig_error *err);

/* The command line progrun was started with (progrun.c). */
extern int cli_argc;
extern char **cli_argv;

/* The progress line (docs/cli.md): on stderr, at most 10 updates a
 * second, erased at the end. */
typedef struct cli_progress {
  bool on, drawn;
  uint64_t t0, shown, runs;
  size_t width; /* of the longest line drawn, for the erasing */
} cli_progress;
/* Whether to show it: --progress, --no-progress, else stdout or stderr a
 * terminal (under Open MPI a rank's stderr is a pipe, its stdout not) and
 * not --quiet. */
void cli_progress_start(cli_progress *p, const cli_run_opts *o, uint64_t runs);
/* After run `done` (1-based) ended: the line, when 100 ms have passed
 * since the last (or none was drawn); slowest < 0 for one machine. */
void cli_progress_update(cli_progress *p, uint64_t done, long slowest, uint64_t slowest_ns);
void cli_progress_end(cli_progress *p);

/* The readable listing of d (docs/cli.md, "dump"): every field, in a
 * stable layout. */
void cli_dump_desc(FILE *f, const rig_desc *d);

/* `progrun dot FILE [--all]` (cli_desc.c) and the graph of d (dot.c,
 * docs/cli.md, "dot"): every edge with `all`, else those no other path
 * implies. CLI_EXIT_FAIL out of memory. */
int cli_dot(int argc, char **argv);
int cli_dot_print(FILE *out, const rig_desc *d, bool all);

#endif
