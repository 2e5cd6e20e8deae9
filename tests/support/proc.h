/* Running a command for a test: its stdout and stderr captured, its exit
 * status and how long it took, under a timeout that kills its whole
 * process group; and, while it runs, a hook that waits on what it does
 * (what it said so far, its processes) to act on it. */
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

/* A command that runs, as the hook of rig_proc_run_during sees it. */
typedef struct rig_proc_live rig_proc_live;
pid_t rig_proc_live_pid(const rig_proc_live *l);
/* Whether its stderr holds text so far. */
bool rig_proc_live_said(rig_proc_live *l, const char *text);
/* Whether it has ended (its output closed, or its timeout passed). */
bool rig_proc_live_ended(const rig_proc_live *l);
/* Waits until cond(ctx) holds, polling; false when the command ended or a
 * hang's bound (RIG_HANG_S, wait.h) passed first. */
bool rig_proc_live_until(rig_proc_live *l, bool (*cond)(void *ctx), void *ctx);

/* As rig_proc_run, but calls during(ctx, live) at once, on a thread of its
 * own, while the command runs and its output is read: the hook waits there
 * on what it needs to see, not on time. The run is over once both the
 * command and the hook are. */
rig_proc rig_proc_run_during(char *const *argv, char *const *env, double timeout_s,
                             void (*during)(void *ctx, rig_proc_live *l), void *ctx);
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
