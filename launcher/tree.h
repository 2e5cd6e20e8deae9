/* The job's tree (docs/jobs.md, "Jobs of many machines"): machine m's
 * children are K*m+1 .. K*m+K (K = RIG_JOB_FANOUT, 1 a chain), its parent
 * (m-1)/K. Runs start down it and end up it; bytes every machine needs
 * follow it, each crossing a link once. Its messages go on a communicator
 * of its own, sent and waited for by the caller's thread (no hop through
 * the control thread); every wait ends when the job fails. Beats, the
 * root cause and the close stay on each agent's own link to the
 * controller (control.h): a dead machine inside the tree is found as a
 * dead leaf is. */
#ifndef RIG_TREE_H
#define RIG_TREE_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rig/rig_base.h"

typedef struct rig_job rig_job;

typedef struct job_tree {
  MPI_Comm comm;   /* a duplicate of the job's, made at the start */
  unsigned fanout; /* K */
  unsigned depth;  /* hops from machine 0 to the deepest machine */
  int parent;      /* -1 on machine 0 */
  int first, nchildren;
  bool pending; /* a request was left pending (the job failed): comm stays */
  bool started; /* run_begin sent its children's starts */
  /* What a run's messages use, made once (a run allocates nothing): per
   * child a DONE's three words, then the START's word, then this
   * machine's DONE; and a request per child and two more. */
  uint64_t *words;
  MPI_Request *reqs;
  _Atomic uint64_t messages, bytes; /* sent by this machine on the tree */
  /* The runs' words by UCX messages (tree_peers.c), where every machine
   * has an address: else by MPI. The mailbox: the run after the last
   * whose start came, per child the run after its last done (with its
   * subtree's slowest), and a word bumped at each message. */
  bool by_messages, self_held;
  bool listening; /* holds the messages' handler (tree_peers.c) */
  _Atomic uint64_t start_came;
  _Atomic uint64_t *done_came;
  uint64_t *done_ns;
  int64_t *done_machine;
  _Atomic uint32_t mail;
  double yield_s[2];       /* how long a wait for dones [0], a start [1], yields first */
  struct rig_peer **peers; /* per child, then the parent */
  void *lost;              /* their losses' contexts */
} job_tree;

/* Makes the tree's communicator (collective, bounded as the start is) and
 * places this machine in it. */
rig_status rig_tree_start(rig_job *job, bool *pending, rig_error *err);
/* Frees the communicator unless a request was left on it. */
void rig_tree_free(rig_job *job);

/* The runs' words by UCX messages (tree_peers.c): the neighbours' addresses
 * swapped on the tree's communicator and connected, when every machine
 * has one (else by_messages stays false). */
rig_status rig_tree_peers_start(rig_job *job, bool *pending, rig_error *err);
void rig_tree_peers_free(rig_job *job);
/* A start (to a child) or a done (to the parent) of run `run`. */
rig_status rig_tree_send(rig_job *job, int to, bool start, uint64_t run, uint64_t ns,
                         int64_t machine, rig_error *err);
/* Waits for run's start from the parent, or its done from every child; or
 * the job's failure. */
rig_status rig_tree_await(rig_job *job, bool start, uint64_t run, rig_error *err);
/* An agent whose wait on the tree outlasted the controller's close of the
 * job by a grace: err says so. */
bool rig_tree_closed(rig_job *job, rig_error *err);

#endif
