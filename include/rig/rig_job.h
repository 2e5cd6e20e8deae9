/* rig_job.h: the MPI job (docs/jobs.md "The job";
 * docs/jobs.md). One MPI rank is one machine: rank 0 is the controller,
 * every other rank runs an agent that hosts its machine's devices and loads
 * and runs programs on them for the controller. On the controller,
 * rig_job_device gives proxy devices: devices of this process whose driver
 * forwards every call to the machine's agent, so that rig_program_load on
 * them is the seed's "program of another machine".
 *
 * The library duplicates the communicator it is given and never uses
 * MPI_COMM_WORLD on its own; MPI_Init_thread (with MPI_THREAD_MULTIPLE) and
 * MPI_Finalize stay the caller's. One control thread per process owns the
 * job's MPI traffic. */
#ifndef RIG_JOB_H
#define RIG_JOB_H

#include <mpi.h>

#include "rig_core.h"
#include "rig_program.h"
#include "rig_rail.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exported; the rest of librig is hidden (src/librig.map). */
#pragma GCC visibility push(default)

typedef struct rig_job rig_job;

/* A device of a machine, as its agent described it at the start. */
typedef struct rig_machine_device {
  char name[64];
  char arch[32];
  uint64_t budget;
  char bus_id[16]; /* its PCI bus id, or "" */
  int numa;        /* the NUMA node nearest it, or -1 */
} rig_machine_device;

/* A machine of the job: its rank, host name, devices and topology. */
typedef struct rig_machine {
  int rank;
  char host[64];
  size_t ndevices;
  rig_machine_device *devices;
  char topology[256]; /* hwloc's summary: packages, cores, PUs, memory */
} rig_machine;

/* This machine as it describes itself to a job (progrun info): opens every
 * device of every family. Free with rig_machine_clear. */
rig_status rig_machine_describe_local(rig_machine *m, rig_error *err);
void rig_machine_clear(rig_machine *m);

/* What hwloc sees of this machine from this process (progrun info). */
typedef struct rig_topology_facts {
  /* The PUs this process (so its workers, which inherit it) is bound to,
   * and the NUMA nodes they lie in, as hwloc lists them ("0-15", "0");
   * "unknown" where the binding is not known. */
  char cpus[512], numa[128];
  /* rig_machine's topology: packages, NUMA nodes and their memory, cores,
   * PUs, the cores bound to; "unknown" where hwloc has no topology. */
  char summary[256];
  /* The NUMA nodes' memory, which may be less than the system's (memory no
   * node holds is not counted); 0 where unknown. */
  uint64_t numa_bytes;
} rig_topology_facts;

/* This machine's topology as the process's one copy of it holds it (loaded
 * once per process, shared with the worker pool and the devices). */
void rig_machine_topology(rig_topology_facts *t);

/* Starts the job: collective over comm. Requires MPI_THREAD_MULTIPLE
 * (RIG_EJOB otherwise, saying what was granted). Every rank describes its
 * machine and the controller gathers them. */
rig_status rig_job_start(MPI_Comm comm, rig_job **job, rig_error *err);

/* The job's silence bound in seconds: RIG_JOB_SILENCE as librig reads it
 * (docs/environment.md), or its default where unset or invalid
 * (rig_environment_check says which). Also what bounds MPI's start, which
 * an application that embeds a job may bound by it too. */
double rig_job_silence(void);

/* How the job names machine m in its messages: "machine 2", or "machine 2
 * (node3)" when the job spans more than one host. */
const char *rig_job_label(const rig_job *job, int m);

/* This process's machine (its rank in the job's communicator). */
int rig_job_rank(const rig_job *job);
size_t rig_job_machines(const rig_job *job);
/* Machine m as it described itself (the controller knows them all; an
 * agent only itself). */
const rig_machine *rig_job_machine(const rig_job *job, size_t m);

/* Device `index` of machine m (its order in rig_job_machine's list): on
 * the controller, machine 0's own devices and other machines' proxies;
 * NULL when there is none. */
rig_device *rig_job_device(rig_job *job, size_t machine, size_t index);
/* The device of machine m named `name` ("cpu:1"), or NULL. */
rig_device *rig_job_device_named(rig_job *job, size_t machine, const char *name);

/* On an agent: serves the controller until it closes the job (RIG_OK) or
 * the job fails (RIG_EJOB with the root cause). */
rig_status rig_job_serve(rig_job *job, rig_error *err);

/* The first failure of the job, its root cause: every rank learns it, every
 * proxy is lost with it, and later calls answer RIG_EJOB with it. Returns
 * RIG_EJOB. */
rig_status rig_job_fail(rig_job *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, for a cause of a known kind: code is what the cause stands
 * for (RIG_EINVAL or RIG_EMALFORMED: a fault of the input, such as a job
 * file's program that a machine refuses; RIG_EREFUSED, RIG_ENOMEM,
 * RIG_ELOST or RIG_ESYS; any other is RIG_EJOB), which every rank learns
 * with the cause (rig_job_cause). Returns RIG_EJOB. */
rig_status rig_job_fail_as(rig_job *job, rig_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Whether the job failed, and why (RIG_EJOB with the root cause). */
bool rig_job_failed(const rig_job *job, rig_error *why);
/* Whether the job failed with a root cause that came during a run of the
 * machine it came from (between its rig_job_run_begin and
 * rig_job_run_end), and which (*run, the caller's number there). Other
 * machines may be runs ahead or behind it: W = 2 lets them be. */
bool rig_job_failed_in_run(const rig_job *job, uint64_t *run);
/* Whether this process itself was stopped or starved past the silence
 * bound (SIGSTOP, a debugger: a gap in the job's own thread's turns), and
 * why ("machine 0: stopped for 12 s, past the 10 s silence bound: ..."):
 * decided from what this process saw, whether or not the job has failed
 * yet. Its peers then took it for gone: what they did since (leaving, a
 * launcher ending the job) is the stop's doing, not theirs. */
bool rig_job_stopped(rig_job *job, rig_error *why);
/* A failure told once (docs/jobs.md, "Failure"). On the controller: the
 * job's root cause as it is to be told, machines that failed alike named
 * together ("FILE: machines 0-3: host: image 0 has no function ..."),
 * after waiting up to `seconds` for each agent's word (they come at once;
 * only a machine gone makes it wait). Machines named together are from
 * then on the job's cause on every rank (rig_job_cause): the agents are
 * sent it, before the goodbye. */
void rig_job_told_cause(rig_job *job, double seconds, rig_error *why);
/* On the controller leaving a failed job without its close (its own
 * thread still in work): a goodbye to every agent, which then leaves. */
void rig_job_goodbye(rig_job *job);
/* On an agent after a failure: waits, up to the silence bound, for the
 * controller's goodbye, which it sends once it told the cause. True when
 * the controller took the cause and said goodbye: this machine need not
 * tell it; false when the controller is out of reach. */
bool rig_job_await_told(rig_job *job);
/* fn(ctx) is called once, when the job fails (at once if it has): on the
 * thread of librig that found the failure, after every rank was told. It
 * must not block or call librig: it wakes whoever tells the failure while
 * the thread that runs is busy (a host kernel of this machine's own), so
 * that the failure is told when it happens. NULL: none. */
void rig_job_on_failure(rig_job *job, void (*fn)(void *ctx), void *ctx);
/* What the root cause stands for: RIG_OK while the job has not failed,
 * the code its rig_job_fail_as gave, else RIG_EJOB (a machine lost, a run
 * failing); why, when not NULL, gets that code and the cause. */
rig_status rig_job_cause(const rig_job *job, rig_error *why);

/* ---- machine-local runs (docs/jobs.md, "Jobs of many machines") ----
 * Every machine loads its own program on its own devices (rig_program_load
 * with rig_job_rails) and runs it itself; the job's tree (fan-out K,
 * RIG_JOB_FANOUT; machine m's children K*m+1 .. K*m+K) starts each run
 * down it and ends it up it, so that machine 0 sends K messages a run
 * whatever the job's size. Each call below is collective, waits by the
 * caller's thread (spinning, yielding, then napping up to a millisecond),
 * and ends with RIG_EJOB, the job's root cause, when the job fails: the
 * buffers it was given may then still be read by MPI until the process
 * ends (keep them). */

/* The tree as this machine sees it, and what it sent on it. */
typedef struct rig_job_tree {
  unsigned fanout, depth; /* K, and the deepest machine's hops from machine 0 */
  int parent;             /* -1 on machine 0 */
  int children;
  uint64_t messages, bytes; /* sent by this machine on the tree, so far */
  unsigned in_flight;       /* W: runs in flight at once (RIG_JOB_IN_FLIGHT, machine 0's) */
} rig_job_tree;
void rig_job_tree_facts(const rig_job *job, rig_job_tree *out);

/* Runs in flight: W at most (rig_job_tree.in_flight, RIG_JOB_IN_FLIGHT,
 * 2 by default): run r starts on a machine once run r - W is done on every
 * machine (and run r - 1 on the machine itself), so that with W = 2 the
 * tree's end of run r and start of run r + 1 are off the path of run r +
 * 1's work, and a copy of a rail or of a program's memory that run r + 2
 * writes is one no machine reads any more (run r is done everywhere).
 * With W = 1 each run starts only once the one before is done everywhere.
 *
 * Run `run` may start here: waits for the parent's word (machine 0 does
 * not), then passes it to the children, before this machine's own run
 * (whose work may wait on theirs, by a rail). The caller's run numbers
 * name runs in messages; the tree counts the runs begun itself, so a
 * caller's second series of runs may number them from 0 again. Each run
 * begun is ended once, before the next begins. */
rig_status rig_job_run_begin(rig_job *job, uint64_t run, rig_error *err);
/* The slowest machine of a subtree in a run, its run's time, and which
 * run it is (the caller's number; RIG_JOB_NO_RUN: none). */
#define RIG_JOB_NO_RUN UINT64_MAX
typedef struct rig_job_slowest {
  uint64_t ns;
  int machine;
  uint64_t run;
} rig_job_slowest;
/* This machine's run `run` is done (it took ns): waits for its children's
 * reports of run `run` - W + 1 (the run itself with W = 1; the one before
 * with W = 2, often there already) and reports its subtree's slowest in
 * it to its parent. On machine 0 that run is then done on every machine,
 * and *slowest (may be NULL) is the job's slowest machine in it, run
 * RIG_JOB_NO_RUN for the first W - 1 runs. */
rig_status rig_job_run_end(rig_job *job, uint64_t run, uint64_t ns, rig_job_slowest *slowest,
                           rig_error *err);
/* On machine 0, before a series of runs (optional): it has `runs` runs,
 * so that the tree starts none past the last. Without it machine 0 sends
 * each child the start of run q + 1 while it runs run q, and one start,
 * past the series' last run, is not taken (a next series takes it). */
void rig_job_runs_plan(rig_job *job, uint64_t runs);
/* After the last run's rig_job_run_end, on every machine: waits for the
 * run still in flight (W = 2) to end everywhere, and reports it up; on
 * machine 0, *slowest (may be NULL) is then the job's slowest machine in
 * it (run RIG_JOB_NO_RUN: none was left). Every run begun is then done on
 * every machine. */
rig_status rig_job_runs_done(rig_job *job, rig_job_slowest *slowest, rig_error *err);

/* Bytes every machine needs, down the tree from machine 0 in 1 MiB pieces,
 * each crossing each link once: machine 0 gives *bytes, *len; every other
 * machine gets a malloc'd *bytes (free it) and *len. */
rig_status rig_job_share(rig_job *job, void **bytes, size_t *len, rig_error *err);
/* Machine 0 sends machine m (1 <= m < machines) parts[m], lens[m] bytes;
 * every other machine gets its own as a malloc'd *bytes, *len. */
rig_status rig_job_scatter(rig_job *job, const void *const *parts, const size_t *lens, void **bytes,
                           size_t *len, rig_error *err);
/* Every other machine sends n bytes at mine; machine 0 gets machine m's as
 * malloc'd parts[m], lens[m] (arrays of rig_job_machines elements). */
rig_status rig_job_gather(rig_job *job, const void *mine, size_t n, void **parts, size_t *lens,
                          rig_error *err);
/* Whether every machine says `mine` true: up the tree, the verdict down. */
rig_status rig_job_agree(rig_job *job, bool mine, bool *all, rig_error *err);

/* ---- rails (docs/rails.md) ---- */

/* On the controller: makes a rail between machines a != b of the job (the
 * controller's included): `send` flows from a to b, `receive` from b to a.
 * Both ends are made and registered on their machines, their addresses
 * exchanged through the job, and the call returns once both can take
 * transfers. The rail's id is the next of the job's one id space (above
 * every rail made; rig_rail_id), or `id` with rig_job_rail_as. RIG_EINVAL,
 * with nothing made, on an agent, for a == b, a machine outside the job,
 * the transfers rig_rail_check refuses, or an id in use; RIG_EJOB if the
 * job fails. Release with rig_rail_release, after the programs that use
 * it; rig_job_close releases those left. */
rig_status rig_job_rail(rig_job *job, int a, int b, const rig_rail_transfer *send, size_t nsend,
                        const rig_rail_transfer *receive, size_t nreceive, rig_rail **rail,
                        rig_error *err);
rig_status rig_job_rail_as(rig_job *job, int64_t id, int a, int b, const rig_rail_transfer *send,
                           size_t nsend, const rig_rail_transfer *receive, size_t nreceive,
                           rig_rail **rail, rig_error *err);
/* This machine's ends of the job's rails, for rig_program_load (an agent
 * passes its own to the programs it loads). */
const rig_rails *rig_job_rails(rig_job *job);

/* Without a controller (an application that loads its own program on
 * every rank): collective between this rank and `peer` of comm, each
 * giving its own view (`send` flows from here to the peer). Makes this
 * rank's end of rail `id`, exchanges addresses over comm and returns once
 * both ends are attached; the two views must mirror each other. Release
 * with rig_rail_release on both ranks (each waits, within RIG_JOB_SILENCE,
 * for the other's). */
rig_status rig_rail_connect(MPI_Comm comm, int peer, int64_t id, const rig_rail_transfer *send,
                            size_t nsend, const rig_rail_transfer *receive, size_t nreceive,
                            rig_rail **rail, rig_error *err);

/* ---- tracing (docs/internals.md "Tracing") ---- */

/* A machine's clock (rig_trace_now) against the controller's: offset_ns
 * is the machine's less the controller's, within error_ns. */
typedef struct rig_job_clock {
  int64_t offset_ns;
  uint64_t error_ns;
} rig_job_clock;

/* On the controller, before the runs: every agent makes a trace of
 * `capacity` events the sink of its process's runs, and each agent's
 * clock is measured NTP's way over the control protocol: `pings` (1 to
 * 1000) exchanges t0 (sent), t1 (arrived there), t2 (answered there), t3
 * (answer arrived), the one of the smallest round trip kept: offset
 * ((t1 - t0) + (t2 - t3)) / 2, error its round trip / 2. clocks has room
 * for rig_job_machines (clocks[0], this machine, is 0 within 0).
 * RIG_EINVAL on an agent, for pings outside or a trace started already;
 * RIG_EJOB if the job fails; an agent's refusal as it gave it. */
rig_status rig_job_trace_start(rig_job *job, size_t capacity, unsigned pings, rig_job_clock *clocks,
                               rig_error *err);
/* On the controller, after the runs: machine m's trace (1 <= m <
 * machines), once every hand-over to it is done and its trace settled;
 * free it with rig_trace_free. RIG_EINVAL for another m, or a trace the
 * agent's answer does not hold (`machine <m>: a malformed trace: ...`). */
rig_status rig_job_trace_gather(rig_job *job, int m, rig_trace **out, rig_error *err);

/* On the controller: ends every agent's loop after all work handed to it,
 * and frees the job (every rank leaves it). On an agent, after
 * rig_job_serve returned: frees the job. RIG_EJOB if the job had failed. */
rig_status rig_job_close(rig_job *job, rig_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
