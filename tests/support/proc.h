/* Running a command for a test: its stdout and stderr captured, its exit
 * status and how long it took, under a timeout that kills its whole
 * process group. */
#ifndef RIG_PROC_H
#define RIG_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct rig_proc {
  char *out, *err; /* NUL-terminated, malloc'd */
  int code;        /* exit status, 128 + signal, or -1 when it timed out */
  bool timed_out;
  double seconds;
  pid_t pid;
} rig_proc;

/* Starts argv (argv[0] a path) with extra environment (NAME=VALUE, NULL
 * terminated, or NULL) without waiting. */
pid_t rig_proc_start(char *const *argv, char *const *env, int out_fd, int err_fd);
/* Runs argv to its end, or kills its process group after timeout_s. */
rig_proc rig_proc_run(char *const *argv, char *const *env, double timeout_s);
/* As rig_proc_run, but calls during(ctx, pid) once, after delay_s. */
rig_proc rig_proc_run_during(char *const *argv, char *const *env, double timeout_s, double delay_s,
                             void (*during)(void *ctx, pid_t pid), void *ctx);
void rig_proc_free(rig_proc *p);

/* Fills argv[0..k) with the launcher and its flags for this build's MPI:
 * RIG_TEST_MPIEXEC (mpirun by default), -n n, then RIG_TEST_MPIEXEC_FLAGS
 * split at spaces (Open MPI's --oversubscribe --bind-to none; nothing
 * under MPICH's hydra). With recovery, the flag that keeps the other
 * ranks running when one dies (RIG_TEST_MPIEXEC_RECOVERY). Returns k, at
 * most 16: argv must have room for 16 and what follows. */
size_t rig_proc_mpiexec(char **argv, int n, bool recovery);

/* Why the ranks of this build's MPI do not outlive a rank killed under
 * them, or NULL where they do (Open MPI with --enable-recovery). MPICH
 * 4.0's ch4:ucx aborts every rank when a peer it talks to dies: the cause
 * is then MPICH's, and a test that kills a rank skips, saying this. */
const char *rig_proc_no_survivor(void);

/* The loss tests' run: `mpirun -n 2 --enable-recovery PROGRAM how` (PROGRAM
 * from $program_var), with RIG_JOB_SILENCE=3, UCX_TLS=tls unless tls is
 * NULL, and `extra` (NAME=VALUE, or NULL) in its environment, 90 s at most.
 * --enable-recovery keeps the survivor alive, as a launcher that leaves it
 * running would: it learns of the loss itself (on one host, from the
 * job's silence bound). */
rig_proc rig_proc_run_lost(const char *program_var, const char *how, const char *tls,
                           const char *extra);

#endif
