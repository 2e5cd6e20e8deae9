/* rig_run.h: a description file run on this machine in one call, as
 * `progrun run FILE --runs N --ints ... --input I=PATH --output I=PATH
 * --devices ...` runs it (docs/embedding.md, "Run a description in one
 * call"), and the pieces it stands on that progrun shares: a description
 * read from its file, and a description's devices mapped to a machine's.
 *
 * Nothing here prints: every failure is a status and a message in the
 * caller's rig_error, naming the field that caused it as progrun names the
 * option ("input 0=x.bin: cannot read x.bin: No such file or directory"
 * where progrun says "--input 0=x.bin: ..."). */
#ifndef RIG_RUN_H
#define RIG_RUN_H

#include "rig_program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exported; the rest of librig is hidden (src/librig.map). */
#pragma GCC visibility push(default)

/* How much of a path librig's and progrun's messages show: a longer one
 * keeps its head and tail around "...", so that the reason after it is
 * never cut off. */
#define RIG_RUN_PATH_SHOWN 256
/* path, or its head and tail in buf (size bytes, at least 4). */
const char *rig_run_path_shown(const char *path, char *buf, size_t size);

/* The most bytes a description file may have (a longer one is refused
 * unread when its size says so). */
#define RIG_RUN_MAX_DESC ((uint64_t)1 << 30)

/* The description in the file at path: its bytes (magic "rig.program\n")
 * or its JSON text, whose {"file": ...} paths are relative to the file's
 * folder. Only decodes: no rule is checked. RIG_ESYS `cannot read PATH:
 * <why>`; RIG_EINVAL `PATH: <n> bytes, more than the 1 GiB librig reads
 * of a description`; RIG_EMALFORMED `PATH: <why>` (the decoder's), or
 * `PATH:LINE:COLUMN: not a program description: neither the bytes' magic
 * nor JSON: <why>`; RIG_ENOMEM. */
rig_status rig_run_read_desc(const char *path, rig_desc **out, rig_error *err);

/* The description in text already read from a file (len bytes): its
 * bytes or its JSON text, whose {"file": ...} paths are relative to
 * folder (NULL: "."). The reading half of rig_run_read_desc, for a caller
 * that reads the file its own way (progrun: "-" as stdin); path_shown is
 * the file as its messages name it. Only decodes. RIG_EMALFORMED
 * `PATH_SHOWN: <why>` (the decoder's), or, for text that is not JSON at
 * all, `PATH_SHOWN:LINE:COLUMN: not a program description: neither the
 * bytes' magic nor JSON: <why>`; RIG_ENOMEM. */
rig_status rig_run_desc_of_text(const void *text, size_t len, const char *path_shown,
                                const char *folder, rig_desc **out, rig_error *err);

/* Whether the file at path is a job file (docs/jobs.md), which progrun
 * runs as an MPI job and rig_run_file does not: a regular file (never a
 * pipe, whose bytes are its reader's) of at most RIG_RUN_MAX_DESC bytes
 * holding a JSON object with "machines" or "every". *machines (unless
 * NULL): how many machines its "machines" lists when it gives no "every",
 * else 0. A file that cannot be read is none. */
bool rig_run_is_jobfile(const char *path, size_t *machines);

/* Whether a launcher started this process as a rank of an MPI job
 * (mpirun, mpiexec, srun --mpi=pmix), as its environment says before MPI
 * is started: OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK is set. A job
 * file, or a run under one, is progrun's (rig_run_file runs alone). */
bool rig_run_under_launcher(void);
/* Whether the launcher says this rank is not 0: the first of
 * OMPI_COMM_WORLD_RANK, PMIX_RANK and PMI_RANK that is set is not "0"
 * (none set: false). Under a launcher rank 0 alone tells a refusal. */
bool rig_run_rank_is_not_0(void);

/* Opens the device called `name`, or says why not in *why (NULL then).
 * rig_device_open's devices, or, say, a job's devices of one machine. */
typedef rig_device *rig_device_opener(void *ctx, const char *name, rig_error *why);

/* The devices standing for d's devices, into out (room for d->ndevices):
 *
 * - names given (not NULL): names[i] for device i, each opened by `open`
 *   (NULL: rig_device_open) and of its device's arch; else RIG_EINVAL,
 *   `<given_by>: <n> devices for a program of <m>`, `<given_by>: <why
 *   the name does not open>`, `<given_by>: device <i>: <name> is
 *   "<arch>", not "<want>"` (given_by: what named them; NULL: "devices");
 * - else by arch, as progrun maps them: this machine's ISA the host,
 *   "cpu-<ISA>" the next free cpu:N, "sm_XY" the next free cuda:N of that
 *   arch, devices tried in their family's order by name through `open`;
 *   none: RIG_EREFUSED, `device <i>: no device of arch "<arch>" on this
 *   machine` (with why the family has none, when it has none), or `device
 *   <i>: no free device of arch "<arch>": this machine's <n> <family>
 *   devices are taken by earlier ones (docs/environment.md says how to
 *   have more)`.
 *
 * Opened devices live as long as the process (rig_device_open). */
rig_status rig_run_map_devices(const rig_desc *d, const char *const *names, size_t nnames,
                               const char *given_by, rig_device_opener *open, void *ctx,
                               rig_device **out, rig_error *err);

/* ---- files written all or none ------------------------------------------------- */

/* A set of files a command writes, all or none, as rig_run_file and
 * progrun write their outputs: each added before any work, which checks
 * that it can be written and that no other file of the set is the same
 * file; its bytes go to a temporary file beside it, synced (or, for a file
 * that is no regular file, such as /dev/null, a FIFO or /dev/stdout, are
 * kept); the commit writes those in place, then renames every temporary
 * over its file. A failure before the renames leaves every file as it
 * was. Not locked: its owner's lock covers it. */
typedef struct rig_outputs rig_outputs;

/* An empty set. Its messages name a file by its path (`cannot write
 * y.bin: <why>`). RIG_ENOMEM. */
rig_status rig_outputs_make(rig_outputs **s, rig_error *err);
/* Adds path (named `label` in messages): refuses one whose folder is
 * missing or not writable (RIG_ESYS, `cannot write PATH: its folder DIR
 * does not exist`), a directory, a FIFO no process reads (`... a FIFO no
 * process reads`), and one that is the same file as another of the set
 * (RIG_EINVAL, `LABEL: the same file as LABEL2`). A file that is no
 * regular file is opened here, without waiting, and written in place
 * (/dev/stdout: this process's own descriptor, at its offset); a symbolic
 * link is followed, the end of its chain replaced. *index is for put. */
rig_status rig_outputs_add(rig_outputs *s, const char *path, const char *label, size_t *index,
                           rig_error *err);
/* File `index` takes the bytes put to `first` too (one input, two files). */
void rig_outputs_also(rig_outputs *s, size_t index, size_t first);
/* The file's bytes (and those of the files that take them too). */
rig_status rig_outputs_put(rig_outputs *s, size_t index, const void *b, size_t n, rig_error *err);
/* Whether a file of the set is written in place into fd's file (a
 * command's stdout: then its own words go elsewhere). */
bool rig_outputs_writes_fd(const rig_outputs *s, int fd);
/* The first half of the commit, for files written by several processes
 * that all rename only once each wrote its own: writes the in-place files
 * (each once). A file added but never put fails it (RIG_EREFUSED, `cannot
 * write PATH: its bytes never came`), every temporary removed. */
rig_status rig_outputs_in_place(rig_outputs *s, rig_error *err);
/* Writes the in-place files, then renames every temporary over its file. */
rig_status rig_outputs_commit(rig_outputs *s, rig_error *err);
/* Removes the temporaries written: no file changes. */
void rig_outputs_abort(rig_outputs *s);
/* Frees the set (NULL: nothing), removing the temporaries not renamed. */
void rig_outputs_free(rig_outputs *s);

/* ---- a description's program on this machine --------------------------------- */

/* A description loaded on this machine's devices with its inputs, each a
 * buffer on its device: what rig_run_file runs, and each machine of a
 * progrun job. */
typedef struct rig_run_machine rig_run_machine;

/* d loaded on devs (one per device of d; rails: a job's, or NULL), every
 * input made as zeros. The load's refusal as rig_program_load gives it;
 * an input's after `input <i>: `; RIG_ENOMEM. d is kept, not copied. */
rig_status rig_run_machine_open(const rig_desc *d, rig_device *const *devs, const rig_rails *rails,
                                rig_run_machine **m, rig_error *err);
/* Input i's first len bytes (len within the input). */
rig_status rig_run_machine_fill(rig_run_machine *m, size_t i, const void *bytes, size_t len,
                                rig_error *err);
/* Hands over one run, ints[k] for word k of the program's ints (those not
 * given 0, whatever a loop stored there in an earlier run): *ends, *nends
 * are its ends, valid until the next start. Allocates nothing. A refusal
 * as rig_program_run gives it. */
rig_status rig_run_machine_start(rig_run_machine *m, const int64_t *ints, size_t nints,
                                 const rig_point **ends, size_t *nends, rig_error *err);
/* Input i's bytes once the work writing them is done (malloc'd, *len of
 * them; NULL for 0 bytes). */
rig_status rig_run_machine_read(rig_run_machine *m, size_t i, uint8_t **bytes, size_t *len,
                                rig_error *err);
/* Releases the program and the inputs (NULL: nothing). */
void rig_run_machine_close(rig_run_machine *m);

/* An input's file: read into input `index` before the runs, or written
 * with its bytes after the last. */
typedef struct rig_run_io {
  int64_t index;
  const char *path;
} rig_run_io;

/* A word of a run's ints: `number`, or, when run_index is set, the run's
 * index (0, 1, ...: progrun's "run"). */
typedef struct rig_run_int {
  int64_t number;
  bool run_index;
} rig_run_int;

static inline rig_run_int rig_run_number(int64_t n) {
  rig_run_int x = {n, false};
  return x;
}
static inline rig_run_int rig_run_index(void) {
  rig_run_int x = {0, true};
  return x;
}

/* How rig_run_file runs a description; NULL options, or all zero but the
 * size: once, devices by arch, every input zeros, no file written.
 *
 * `size` is sizeof (rig_run_options) as the caller was built, so that
 * later fields can be added without breaking callers built before them:
 * librig reads the fields the size covers and takes the rest as zero; a
 * larger size (a newer rig_run.h) is taken when the bytes past the
 * fields this librig knows are zero. */
typedef struct rig_run_options {
  size_t size;             /* sizeof (rig_run_options): set it */
  uint64_t runs;           /* how many runs, one after the other; 0 is 1 */
  const rig_run_int *ints; /* the first words of every run's ints; the rest are 0 */
  size_t nints;
  const rig_run_io *inputs; /* each input's first bytes, from its file; the rest zeros */
  size_t ninputs;
  const rig_run_io *outputs; /* files given each input's bytes after the last run */
  size_t noutputs;
  const char *const *devices; /* one name per device of the description ("host",
                                 "cpu:1"); NULL: by arch */
  size_t ndevices;
  uint64_t *times; /* when not NULL: each run's time in ns, hand-over to ends reached */
  size_t ntimes;   /* room in times: the runs at least */
} rig_run_options;

/* Runs the description in the file at `path` on this machine, as progrun
 * runs it alone: the file read (rig_run_read_desc) and checked
 * (rig_desc_check); the options fitted to it; every output's file found
 * writable; every input's file read (a shorter one is zeros past its end,
 * a longer one refused, unread when its size says so); the devices mapped
 * (rig_run_map_devices, given by "devices"), the program loaded and its
 * inputs filled; then each run handed over and its ends waited for; then
 * the outputs, all or none: each into a temporary file beside its own,
 * then every one renamed over its file (a symbolic link's target is
 * replaced; a file that is no regular file, such as /dev/null, is written
 * in place). A failure leaves every output as it was.
 *
 * RIG_EINVAL for options whose size librig cannot take (`options: 8
 * bytes, fewer than the 96 of the first rig_run_options: set .size =
 * sizeof (rig_run_options)`, `options: 128 bytes, set past the 96 this
 * librig knows (a newer rig_run.h)`), for options that do not fit
 * (`PATH: ints: <n> ints for a
 * program of <m>`, `PATH: input <i>: no such input (the program has
 * <n>)`, `PATH: output <i>: ...`, `PATH: devices: <n> devices for a
 * program of <m>`, `input <i> given twice`, `times: room for <n> of
 * <runs> runs`), a rule the description breaks (`PATH: <rule>`), or a
 * longer input's file (`input 1=big.bin: 4097 bytes, more than the
 * input's 4096`); RIG_ESYS for a file that cannot be read or written
 * (`input 0=x.bin: cannot read x.bin: <why>`; an output's as progrun
 * says it, `cannot write out/y.bin: its folder out does not exist`); a device's
 * or the load's refusal as rig_run_map_devices and rig_program_load give
 * it, after `PATH: `; a run's as rig_program_run or the wait gives it,
 * after `run <r>: `; RIG_ENOMEM. */
rig_status rig_run_file(const char *path, const rig_run_options *o, rig_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
