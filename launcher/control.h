/* The control thread's transport (docs/jobs.md "Control protocol"): the
 * one thread of a process that owns the job's MPI traffic. It sends the
 * frames callers queue, takes every frame that arrives, beats to quiet
 * peers and watches for silent ones. It knows frames only: what a frame
 * means and what a failure does are the job's, given as hooks. */
#ifndef RIG_CONTROL_H
#define RIG_CONTROL_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "base/array.h"
#include "protocol.h"
#include "queue.h"
#include "rig/rig_base.h"

typedef struct rig_job rig_job;

/* How the job names a machine in messages: "machine 2", or "machine 2
 * (node3)" when the job spans more than one host. */
#define RIG_JOB_LABEL 96

/* The controller's rank in the job's communicator (bootstrap.c decides
 * the role by it): where an agent's frames go. */
#define RIG_JOB_CONTROLLER 0

typedef struct ctl_hooks {
  rig_job *job; /* every hook's first argument */
  /* A frame of this job from rank src (neither a beat nor a goodbye), on
   * the control thread: it must never block. */
  void (*deliver)(rig_job *job, int src, const frame *f, const unsigned char *payload);
  /* Whether a report is awaited soon: the thread then polls instead of
   * napping, so that it is seen when it arrives. */
  bool (*busy)(rig_job *job);
  /* The job fails with cause (tell: the peers are told); err, when not
   * NULL, gets the job's root cause as RIG_EJOB, which is returned. */
  rig_status (*fail)(rig_job *job, bool tell, const char *cause, rig_error *err);
  /* A frame went to rank dest: the job may knock there (rig_ctl_knock),
   * so that a control thread asleep takes it at once. May be NULL. */
  void (*knock)(rig_job *job, int dest);
  /* Rank src's goodbye came, on the control thread. May be NULL. */
  void (*bye)(rig_job *job, int src);
} ctl_hooks;

typedef struct ctl {
  MPI_Comm comm;
  uint64_t job_id;
  int rank, size;
  /* The controller (rank 0) talks with every agent, an agent with the
   * controller alone: the job's role, given once (bootstrap.c). */
  bool controller;
  const _Atomic bool *failed;          /* the job's: no beat or silence counts then */
  const char (*labels)[RIG_JOB_LABEL]; /* the job's names of its machines */
  ctl_hooks hooks;
  pthread_t thread;
  bool started;
  queue out;             /* frames to send (ctl_out) */
  _Atomic uint32_t wake; /* futex: bumped when something is queued */
  _Atomic bool sleeping; /* the thread may be asleep on wake */
  _Atomic bool stop;     /* leave once every queued frame is sent */
  int peers;             /* the ranks it talks with (rig_ctl_peer) */
  int byes;              /* BYE frames received (they may come before we leave) */
  _Atomic int byes_out;  /* BYE frames whose send completed */
  bool quiet;            /* every peer's BYE came: the communicator is idle */
  rig_array sends;       /* ctl_send (control.c): frames MPI is sending */
  double *heard;         /* per rank: when a frame last came from it */
  double *sent;          /* per rank: when a frame last went to it */
  bool *bye_sent;        /* per rank: its BYE went; nothing of this job follows it */
  /* Every peer knocks before its frames come (set before the start): a
   * quiet thread may then nap long. */
  bool knocked_by_all;
  _Atomic bool knocked;    /* a knock came since the thread last looked */
  _Atomic uint64_t knocks; /* knocks taken, ever (what a job's tests see) */
  _Atomic int64_t turn_ns; /* when the thread last turned (rig_ctl_stalled) */
  /* How long rig_ctl_stop waits for the thread; 0: the silence bound and
   * RIG_CTL_STOP_MARGIN_S (the thread's own bound, and a sanitizer's
   * slowness). */
  double stop_wait_s;
} ctl;

#define RIG_CTL_STOP_MARGIN_S 5.0

/* MPI's return code rc of `call` ("MPI_Bcast") as a status: RIG_OK, or
 * RIG_EJOB naming the call with MPI's error string. */
rig_status rig_mpi_status(int rc, const char *call, rig_error *err);

/* Queues a frame for rank dest; never blocks on the network. A frame
 * that cannot be queued fails the job (a lost frame breaks the protocol):
 * RIG_EJOB with its cause. A sender that only has the job to tell passes
 * err NULL and leaves the status, the job's failure says it. */
rig_status rig_ctl_send(ctl *c, int dest, const frame *f, const void *payload, size_t n,
                        rig_error *err);
/* Whether c talks with rank r: the controller with every agent, an agent
 * with the controller. */
bool rig_ctl_peer(const ctl *c, int r);
/* Starts the thread on c's communicator, rank, size and hooks. */
rig_status rig_ctl_start(ctl *c, rig_error *err);
/* Whether this process was itself stopped or starved past the silence
 * bound: its control thread has not turned for that long. Then a loss
 * another thread sees (a peer that left, taking it for gone) is this
 * machine's own failure: cause (n bytes) says so. Any thread. */
bool rig_ctl_stalled(ctl *c, char *cause, size_t n);
/* A BYE to each peer after what is queued, waited for up to `bound`
 * seconds: a process leaving at once (a failure told) lets its peers
 * know, without stopping the thread. */
void rig_ctl_goodbye(ctl *c, double bound);
/* How rig_ctl_stop ended. */
typedef enum ctl_end {
  CTL_IDLE,  /* the communicator is idle: it may be freed */
  CTL_BUSY,  /* sends to a peer gone are in flight: it must not be */
  CTL_STUCK, /* the thread did not end within its bound (MPI did not
              * return): c is left as it is, in the thread's use */
} ctl_end;
/* Sends what is queued and a BYE to each peer, takes frames until each
 * peer's BYE (or a bound passes: a peer is gone), then stops the thread.
 * The wait for the thread is bounded too: a call into MPI that never
 * returns (Open MPI 4.1's TCP transport, a peer killed, seen spinning in
 * MPI_Test) must not hang the close. */
ctl_end rig_ctl_stop(ctl *c);
/* A peer's frame is on its way (a knock by another channel): the thread
 * wakes and polls a while. Never blocks; any thread. */
void rig_ctl_knock(ctl *c);

#endif
