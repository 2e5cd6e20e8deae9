/* `progrun run` past its options: job files; a run's session, from its
 * plans to its reports, on this machine alone or on every machine of an
 * MPI job (rank 0 the controller, every other rank an agent); and its
 * interrupts. */
#ifndef RIG_CLI_JOB_H
#define RIG_CLI_JOB_H

#include "cli.h"
#include "rig/rig_job.h"
#include "rig/rig_rail.h"

typedef struct cli_job_io {
  int64_t index;
  char *path; /* resolved against the job file's folder */
} cli_job_io;

/* A machine a part's rail map names: machine n, or (relative) the
 * part's machine plus n, modulo the job's machines. */
typedef struct cli_peer {
  bool relative;
  int64_t n;
} cli_peer;

/* An entry of a part's "rails" (jobfile_railmap.c): the program's rail
 * `id` is the job's rail `job_id`, or the one from this machine to the
 * peer (CLI_RAIL_TO) or from the peer to it (CLI_RAIL_FROM). */
typedef enum cli_rail_by { CLI_RAIL_BY_ID, CLI_RAIL_TO, CLI_RAIL_FROM } cli_rail_by;
typedef struct cli_rail_entry {
  int64_t id;
  cli_rail_by kind;
  int64_t job_id;
  cli_peer peer;
} cli_rail_entry;

/* One machine's part of a job file. */
typedef struct cli_job_machine {
  char *program;
  char **devices;
  size_t ndevices;
  cli_job_io *inputs, *outputs;
  size_t ninputs, noutputs;
  cli_int *ints;
  size_t nints;
  cli_rail_entry *rail_map; /* its "rails", by the program's id */
  size_t nrail_map;
  bool has_rail_map; /* false: the program's rail ids are the job's */
} cli_job_machine;

/* A rail of a job file: `send` flows from between[0] to between[1]. */
typedef struct cli_job_rail {
  int64_t id;
  int between[2];
  rig_rail_transfer *send, *receive;
  size_t nsend, nreceive;
} cli_job_rail;

/* A part's map resolved on one of its machines: pairs of the program's
 * rail id and the job's. */
typedef struct cli_rail_map {
  bool given;
  int64_t (*pairs)[2];
  size_t n;
} cli_rail_map;

typedef struct cli_jobfile {
  cli_job_rail *rails; /* made before any machine loads */
  size_t nrails;
  cli_job_machine *machines;
  size_t n;
  cli_job_machine every; /* for the machines past `machines` */
  bool has_every;
  uint64_t runs; /* 0: not given */
} cli_jobfile;

/* Whether path is a job file is librig's to tell (rig_run_is_jobfile). */
int cli_jobfile_read(const char *path, cli_jobfile *out, rig_error *err);
void cli_jobfile_free(cli_jobfile *j);

/* The job file's "rails" (json_t *rails; NULL when it has none), into
 * out->rails; the exit code, the message naming the JSON path. */
int cli_jobfile_rails(void *rails, cli_jobfile *out, rig_error *err);
/* Refuses a rail naming a machine past the job's `machines`. */
int cli_jobfile_rails_fit(const cli_jobfile *j, size_t machines, const char *file, rig_error *err);
/* Machine `machine`'s program d (named program, at `where` of the file)
 * uses only rails the job file gives that machine, through its part's
 * map (NULL or not given: the program's ids are the job's), each as long
 * as its memory needs (machine < 0: `every`, not judged). */
int cli_jobfile_fit_rails(const cli_jobfile *j, int64_t machine, const cli_rail_map *map,
                          const rig_desc *d, const char *program, const char *where,
                          rig_error *err);
void cli_jobfile_rails_free(cli_jobfile *j);

/* A part's "rails" (json_t *rails, NULL when it has none) into out's
 * rail_map; the exit code, the message naming `where`.rails. */
int cli_jobfile_rail_map_parse(void *rails, const char *where, cli_job_machine *out,
                               rig_error *err);
/* The machines a job has at least: its `machines`, and every machine its
 * rails name. */
size_t cli_jobfile_machines(const cli_jobfile *j);
/* Part jm's map (at `where`) on machine `machine` of a job of `machines`:
 * each of its program's rail ids and the job's rail it stands for, into
 * out (freed with cli_rail_map_free, also on failure). A relative machine
 * is taken modulo `machines`; an entry that finds no rail, or two, is the
 * job file's fault (CLI_EXIT_USAGE, the message naming the entry). */
int cli_jobfile_rail_map(const cli_jobfile *j, const cli_job_machine *jm, const char *where,
                         int64_t machine, size_t machines, cli_rail_map *out, rig_error *err);
/* The job's rail id the program's `id` stands for: id itself where no map
 * is given, -1 where the map has none. */
int64_t cli_rail_map_id(const cli_rail_map *m, int64_t id);
void cli_rail_map_free(cli_rail_map *m);
/* A load's rails through a map: the job's own where none is given, else
 * r's lookup (r and map outliving the program). */
typedef struct cli_mapped_rails {
  const cli_rail_map *map;
  const rig_rails *job;
  rig_rails rails;
} cli_mapped_rails;
const rig_rails *cli_mapped_rails_of(cli_mapped_rails *r, const cli_rail_map *map,
                                     const rig_rails *job);
/* An entry as dump writes it: "to {rank+1}", "from machine 3", "rail 2". */
void cli_rail_entry_text(const cli_rail_entry *e, char *buf, size_t size);

/* `progrun check JOBFILE` and `progrun dump JOBFILE` (cli_jobview.c):
 * the exit code, having printed "ok" or the listing, or the message. */
int cli_check_jobfile(const char *path);
int cli_dump_jobfile(const char *path);
int cli_dot_jobfile(const char *path, bool all);
/* The job's graph (dot_job.c): a cluster per part, machines[i] then
 * every, of descs[i]'s graph, and an edge per direction of each rail. */
int cli_dot_job_print(FILE *out, const cli_jobfile *j, rig_desc *const *descs, bool all);

/* Machine m's part, or NULL when the file has none for it. */
const cli_job_machine *cli_jobfile_machine(const cli_jobfile *j, size_t m);

/* `progrun run` as a job: every rank calls it (cli_job.c). */

int cli_run_job(int argc, char **argv);

/* ---- a run, from its plans to its reports ---------------------------------- */

/* An output another machine writes itself (a machine-local job): input
 * `index` into `path` ({rank} resolved), `label` in messages. */
typedef struct cli_plan_out {
  int64_t index;
  char *path, *label;
} cli_plan_out;

/* One machine's plan: what the controller read before any device. */
typedef struct cli_plan {
  rig_desc *desc;
  bool owns_desc;
  char *const *devices;
  size_t ndevices;
  size_t ninputs;  /* desc's, kept: a shared desc is freed with machine 0's plan */
  uint8_t **bytes; /* per input: the file's bytes, or NULL */
  char **in_paths; /* per input: the file it was read from ({rank} resolved), or NULL */
  size_t *outputs; /* per input: its file's index in the session's files, or SIZE_MAX */
  const cli_int *ints;
  size_t nints;
  const char *file;
  char where[32];     /* its part of a job file ("machines[1]", "every"), or "" */
  cli_rail_map rails; /* its part's map on its machine (not given: none) */
  cli_plan_out *outs; /* its outputs, when it writes them itself */
  size_t nouts;
  char (*used)[2][64]; /* the devices it ran on: name and arch, for the --json report */
  size_t nused;
} cli_plan;

/* Everything a run keeps from its options to its reports: on one machine
 * (job NULL) or on the controller of a job. */
typedef struct cli_session {
  const cli_run_opts *opts;
  size_t n;       /* machines */
  bool named;     /* its messages name the machine ("run 2 on machine 0") */
  bool local;     /* a job whose machines run their programs themselves (cli_local.c) */
  cli_jobfile jf; /* when FILE is a job file */
  cli_plan *plans;
  uint64_t runs;                     /* the job file's, or --runs */
  cli_outset files;                  /* every file it writes, all or none */
  size_t json, trace, csv, markdown; /* their indices in files, or SIZE_MAX */
  rig_job *job;
  cli_machine *machines;
  rig_rail **rails;
  cli_times *times;           /* per machine */
  cli_times job_times;        /* each run's slowest machine's time */
  uint64_t **run_ns;          /* --json-runs: per machine, and [n] the job's */
  uint64_t measured;          /* runs measured so far */
  uint64_t first_ns, last_ns; /* the first measured run's start, the last's end */
  int64_t started;            /* the first run's start, seconds since the epoch */
  int64_t run;                /* the run going on, or -1 (read by an interrupt) */
  int64_t failed_run;         /* the run during which the job failed, or -1 */
  bool *told;                 /* per machine: it answered when last asked (SIGCONT) */
  uint64_t told_ns;           /* when that asking ended (cli_now_ns), 0: never */
  char (*hosts)[64];
  rig_job_tree tree;            /* the job's tree, and what machine 0 sent on it in the runs */
  cli_figures *told_figures;    /* per machine: its figures as it told them at an interrupt */
  rig_trace **traces;           /* --trace: per machine, [0] this process's sink */
  struct cli_handover *windows; /* --trace, machine-local runs: each run's, machine 0's clock */
  size_t nwindows;
  rig_job_clock *clocks; /* per machine, against this one's */
  cli_progress bar;
} cli_session;

/* Reads FILE (a description or a job file) for n machines, each
 * machine's inputs, and adds every file the run writes to s->files (none
 * of which may be one another): the exit code, its message printed. */
int cli_session_plan(cli_session *s, const cli_run_opts *o, size_t n);
/* Opens every machine, runs the runs, gathers the traces and puts the
 * outputs (cli_control.c): the exit code; *err the message. */
int cli_session_control(cli_session *s, rig_error *err);
/* The job's root cause when it failed, with the run it failed in; else
 * err's message. Prints it, every file left as it was; the exit code. */
int cli_session_fail(cli_session *s, int rc, const rig_error *err);
/* The job's failure, claimed (cli_failure_claim), told as librig was
 * told it (`why`, in run r; r < 0: none known): every file left as it
 * was, then the agents let go. The caller leaves. */
void cli_session_told(cli_session *s, int64_t r, const rig_error *why);
/* The run a failure of the job is told in: the one its root cause came in
 * on its machine, when that is known (machines may be a run apart), else
 * `seen`, the run this process saw it in (-1: none). */
int64_t cli_failed_run(const cli_session *s, int64_t seen);
/* Puts the reports, commits every file, prints the summary: the exit code. */
int cli_session_finish(cli_session *s);
/* Its halves: the reports into their temporary files (cli_report_put.c); then, rc CLI_EXIT_OK,
 * every file committed and the summary printed (else rc told with
 * err's message, every file left as it was). */
int cli_put_reports(cli_session *s, rig_error *err);
int cli_session_commit(cli_session *s, int rc, rig_error *err);

/* ---- what runs on one machine and on many (cli_control.c) -------------------- */

/* The figures' and the report's room, per machine. */
int cli_session_make(cli_session *s);
/* Machine m's devices, as names and archs, for the --json report. */
int cli_record_used(cli_session *s, size_t m, rig_device *const *devs, size_t n);
/* --trace: this process's sink and every agent's, their clocks measured;
 * after the runs, every trace settled and gathered (rc: the runs'). */
int cli_trace_begin(cli_session *s, rig_error *err);
int cli_trace_end(cli_session *s, int rc, rig_error *err);
/* The job file's rails, between the machines it names. */
int cli_make_rails(cli_session *s, rig_error *err);
/* The outputs of machines 0 .. machines-1, read back, into their
 * temporary files. */
int cli_put_outputs(cli_session *s, size_t machines, rig_error *err);

/* ---- a job of machine-local runs (cli_local.c) ------------------------------- */

/* The controller's part: every machine's plan sent (bytes every machine
 * needs shared down the tree, each machine's own scattered), machine 0's
 * program opened and run by the tree, every machine's times gathered,
 * outputs written where they are made: the exit code, *err the message. */
int cli_local_control(cli_session *s, rig_error *err);
/* An agent's part, after the job started: its plan received, its program
 * run, its times and outputs; the failures are the job's. */
void cli_local_agent(rig_job *job);
/* Under the hold: the agent's temporaries removed, its files as they were
 * (its launcher gone). */
void cli_local_abort_files(void);
/* At an interrupt (SIGCONT, SIGTERM), what an agent tells the controller:
 * the signal and its runs' figures so far. */
typedef struct cli_told {
  int32_t sig;
  int32_t unused;
  cli_figures figures; /* runs 0: none */
} cli_told;
/* held: the caller holds the hold (cli_hold), as an interrupt's handler does. */
void cli_local_told(cli_told *t, bool held);
/* After an interrupt (SIGINT, SIGTERM): says so, with the runs so far
 * summarized, leaves every file as it was and ends the process (128 +
 * sig). Under a job, first asks whether every agent was told too: when
 * one does not answer, it is likely the machine that stopped. */
void cli_session_interrupted(int sig, void *session);
/* SIGCONT under a job, which Open MPI's mpirun sends every rank a second
 * before the SIGTERM that ends the job (after an interrupt, or a rank's
 * death): which agents are there is asked then, so that the SIGTERM is
 * told at once. */
void cli_session_continued(void *session);
/* The launcher is gone (cli_interrupt_on_gone): says so, leaves every
 * file as it was and ends the process (1). */
void cli_session_gone(void *session);
/* How long rank 0 waits for the agents' words on a failure, to name those
 * that failed alike together: they come at once; a machine gone would
 * make it wait, past the second mpirun gives before it ends the job. */
#define CLI_WORDS_WAIT_S 0.5
void cli_session_free(cli_session *s);

/* ---- what a run reports (cli_report.c, cli_table.c, cli_trace.c) --------- */

/* The summary lines (docs/cli.md, "The summary"): a line per machine, and
 * for more than one the job's line; on stdout, or on stderr when an
 * output is stdout. */
void cli_print_summary(cli_session *s);
/* The --json report, the --csv and --markdown tables: text (malloc'd). */
int cli_report_json(cli_session *s, char **text, size_t *len, rig_error *err);
int cli_table_csv(cli_session *s, char **text, size_t *len, rig_error *err);
int cli_table_markdown(cli_session *s, char **text, size_t *len, rig_error *err);

/* The --trace file (docs/cli.md "The trace"): per machine its host, its
 * trace (NULL: none) and its clock's offset against machine 0's (its
 * clock less machine 0's) within error_ns. */
#define CLI_TRACE_EVENTS ((size_t)1 << 17) /* per machine */
#define CLI_TRACE_PINGS  16                /* exchanges measuring a clock */
typedef struct cli_trace_machine {
  const char *host;
  const rig_trace *trace;
  int64_t offset_ns;
  uint64_t error_ns;
  /* Machine 0's, in a job of machine-local runs: each run's window, from
   * its start here to its end everywhere (machine 0's clock), which bounds
   * every machine's slices of the run as a hand-over does. */
  const struct cli_handover *runs;
  size_t nruns;
} cli_trace_machine;
/* The Chrome trace of n machines (cli_trace.c): runs below `warmup` are
 * marked warmup. */
int cli_trace_text(const cli_trace_machine *machines, size_t n, uint64_t warmup, char **text,
                   size_t *len, rig_error *err);

/* ---- faults of the process's own (cli_fault.c) --------------------------------- */

/* SIGSEGV, SIGBUS, SIGFPE and SIGILL say what ran (a kernel, its step and
 * device) before the process dies of them; `machine`: this rank in a job,
 * -1 alone. */
void cli_fault_arm(int machine);
/* In a job, the fault is also told to the job (rank 0 names it). */
void cli_fault_tell(rig_job *job);
/* The job is closed: a later fault is only said. */
void cli_fault_untell(void);

/* ---- interrupts (cli_signal.c) ------------------------------------------------ */

/* SIGINT and SIGTERM are taken by a thread of their own, which calls fn
 * (which ends the process) holding the lock below; the thread that runs
 * holds it while it changes what fn reads (the times, the files). With
 * on_cont (under a job), SIGCONT too: that thread calls on_cont, without
 * the lock, and goes on. */
typedef void (*cli_interrupt_fn)(int sig, void *ctx);
int cli_interrupt_arm(cli_interrupt_fn fn, void (*on_cont)(void *ctx), void *ctx);
/* Under a launcher: fn(ctx) (which ends the process) when the launcher is
 * gone — this process's parent changed (mpirun killed, or quit at a
 * second signal from `timeout`) — looked at twice a second by the same
 * thread, under the same lock. Set after cli_interrupt_arm. */
void cli_interrupt_on_gone(void (*fn)(void *ctx));
/* Whether the interrupt being told was sent by this process's launcher
 * (its parent: mpirun, Open MPI's daemon, Slurm's step daemon), rather
 * than by another process (a user's kill, `timeout` to a process group). */
bool cli_interrupt_from_launcher(void);
/* Ends the process by sig's default action (as if it had not been
 * caught), what it wrote flushed first. */
_Noreturn void cli_die_of(int sig);
/* A rank of a job signalled by another process than its launcher (all
 * of the job's processes were: `timeout`, a batch system): waits a few
 * seconds for the launcher, which has the signal too, to end the job in
 * its order (then its own signal ends this process), else dies of sig. */
_Noreturn void cli_await_launcher(int sig);
/* Back to the signals' default; the thread ends. */
void cli_interrupt_disarm(void);
void cli_hold(void);
void cli_release(void);
/* Under the hold: from here an interrupt comes too late and is let pass
 * (a second one ends the process as the signal does). */
void cli_settle(void);
/* The communicator agents tell the controller an interrupt on (a
 * duplicate of MPI_COMM_WORLD, made by every rank), or MPI_COMM_NULL. */
extern MPI_Comm cli_interrupt_comm;
#define CLI_TAG_TOLD 7 /* an agent's word that it was interrupted too */

#endif
