/* progrun's MPI side: job files, and `progrun run` on every machine of an
 * MPI job (rank 0 the controller, every other rank an agent). */
#ifndef RIG_CLI_JOB_H
#define RIG_CLI_JOB_H

#include "cli.h"
#include "rig/rig_rail.h"

typedef struct cli_job_io {
  int64_t index;
  char *path; /* resolved against the job file's folder */
} cli_job_io;

/* One machine's part of a job file. */
typedef struct cli_job_machine {
  char *program;
  char **devices;
  size_t ndevices;
  cli_job_io *inputs, *outputs;
  size_t ninputs, noutputs;
  cli_int *ints;
  size_t nints;
} cli_job_machine;

/* A rail of a job file: `send` flows from between[0] to between[1]. */
typedef struct cli_job_rail {
  int64_t id;
  int between[2];
  rig_rail_transfer *send, *receive;
  size_t nsend, nreceive;
} cli_job_rail;

typedef struct cli_jobfile {
  cli_job_rail *rails; /* made before any machine loads */
  size_t nrails;
  cli_job_machine *machines;
  size_t n;
  cli_job_machine every; /* for the machines past `machines` */
  bool has_every;
  uint64_t runs; /* 0: not given */
} cli_jobfile;

/* Whether path is a job file (JSON with "machines"). */
bool cli_is_jobfile(const char *path);
int cli_jobfile_read(const char *path, cli_jobfile *out, rig_error *err);
void cli_jobfile_free(cli_jobfile *j);
/* A malformed job file: CLI_EXIT_USAGE, err set to "<where>: <message>"
 * (where NULL: the message alone). */
int cli_jobfile_bad(rig_error *err, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The job file's "rails" (json_t *rails; NULL when it has none), into
 * out->rails; the exit code, the message naming the JSON path. */
int cli_jobfile_rails(void *rails, cli_jobfile *out, rig_error *err);
/* Refuses a rail naming a machine past the job's `machines`. */
int cli_jobfile_rails_fit(const cli_jobfile *j, size_t machines, const char *file, rig_error *err);
void cli_jobfile_rails_free(cli_jobfile *j);

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

/* Whether this process was started by a launcher that makes it a rank of
 * an MPI job (mpirun, srun --mpi=pmix). */
bool cli_under_mpi(void);
/* A launch that would run N separate jobs (srun without PMIx): the message
 * to give instead, or NULL. */
const char *cli_singletons(void);

/* `progrun run` as a job: every rank calls it. */
int cli_run_job(int argc, char **argv);
/* `progrun run JOBFILE` on this machine alone (machine 0's part). */
int cli_run_jobfile_here(int argc, char **argv);

#endif
