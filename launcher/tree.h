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

#include <pthread.h>

#include "rig/rig_base.h"
#include "rig/rig_job.h"

typedef struct rig_job rig_job;

/* Runs in flight at most (RIG_JOB_IN_FLIGHT): run r starts on a machine
 * once run r - W is done on every machine. */
#define TREE_IN_FLIGHT_MAX 2

/* The tree's MPI tags (runs' and bytes'). */
enum {
  TAG_START = 1, /* run q may start: q */
  TAG_DONE,      /* run q is done in the sender's subtree: q, its slowest's ns, machine */
  TAG_SHARE,     /* a shared buffer: its length, then its bytes */
  TAG_SCATTER,   /* machine 0 to one machine: its length, then its bytes */
  TAG_GATHER,    /* one machine to machine 0: its length, then its bytes */
  TAG_AGREE_UP,  /* whether the sender's subtree agrees */
  TAG_AGREE_DOWN /* whether every machine does */
};

typedef struct job_tree job_tree;

/* How the runs' words go between a machine and its tree neighbours: by
 * shared memory where every machine is on one host (tree_memory.c), by
 * UCX messages across hosts (tree_peers.c), else by MPI (tree_mpi.c);
 * chosen once at the start (tree.c: the first whose `open` every machine
 * takes) and kept, a table of operations: nothing outside a way's file
 * asks which it is. The run protocol (tree_runs.c) reads the mailbox
 * that `take` fills, and sends by `start` and `done`. */
typedef struct tree_way {
  const char *name; /* for logs */
  /* The way's making, collective (bounded as the start is): *ok whether
   * every machine takes it (else the next is tried, MPI last). */
  rig_status (*open)(rig_job *job, bool *pending, bool *ok, rig_error *err);
  /* The words come since into the mailbox, each checked (a neighbour's
   * word is input from the wire): RIG_EJOB naming it, else RIG_OK. */
  rig_status (*take)(rig_job *job, rig_error *err);
  /* Whether run q's start (to every child) or its end (to the parent) may
   * go now: a send of the same slot two runs before may be under way. */
  bool (*may_send)(rig_job *job, bool start, uint64_t q);
  rig_status (*start)(rig_job *job, uint64_t q, rig_error *err);
  rig_status (*done)(rig_job *job, uint64_t q, uint64_t ns, int64_t machine, rig_error *err);
  /* A wait for a word: begins (on) and ends (off), a turn of progress
   * (whether it did anything), a sleep once yielding is over (*nap_ns:
   * the sleep's growing length, for ways that nap), seen: the mailbox's
   * word before the last look. */
  void (*waiting)(bool on);
  bool (*progress)(void);
  void (*sleep)(job_tree *t, uint32_t seen, long *nap_ns);
  /* Every send done: the words may go. */
  bool (*settled)(rig_job *job);
  /* How long a wait spins before it yields: rig_wait_spin_s where a word
   * comes within a microsecond (one host's), none where it takes a system
   * call to come (a message's: the waiter progresses the transport). */
  double (*spin_s)(void);
} tree_way;

extern const tree_way rig_tree_by_memory, rig_tree_by_messages, rig_tree_by_mpi;

struct job_tree {
  MPI_Comm comm;      /* a duplicate of the job's, made at the start */
  unsigned fanout;    /* K */
  unsigned depth;     /* hops from machine 0 to the deepest machine */
  unsigned in_flight; /* W: 1 or 2, machine 0's, agreed at the start */
  int parent;         /* -1 on machine 0 */
  int first, nchildren;
  bool pending; /* a request was left pending (the job failed): comm stays */
  /* What the bytes' calls (share, scatter, gather, agree) use, made once:
   * per child a word, and a request per child and two more. */
  uint64_t *words;
  MPI_Request *reqs;
  _Atomic uint64_t messages, bytes; /* sent by this machine on the tree */
  const tree_way *way;              /* the runs' words' */

  /* ---- runs (tree_runs.c), under runs_lock -------------------------------
   * The tree numbers runs itself, from 0 for the job's first, whatever
   * the callers call them (a caller's second series of runs may number
   * them from 0 again). A run's start goes down as soon as it may (on
   * machine 0, once run q - W is known done everywhere; elsewhere, once it
   * came), and a subtree's end of a run goes up as soon as it is whole,
   * by whichever of this process's threads waits (base/count_wait.h's
   * chores), so that neither waits for the next run's own work. */
  pthread_mutex_t runs_lock;
  bool runs_made;        /* the mailbox is there: cleared under the jobs' lock (jobs.h) */
  bool runs_open;        /* waiting threads' chores take it: under the jobs' lock (jobs.h) */
  bool serving;          /* this machine's run is in flight: rails served (rig_rails_serve) */
  uint64_t begun, ended; /* runs begun and ended here */
  uint64_t reported;     /* the subtree's runs sent up; machine 0: known done everywhere */
  uint64_t started;      /* runs whose start went to the children */
  uint64_t returned;     /* machine 0: runs whose slowest its caller got */
  uint64_t last_run;     /* the caller's number of the run ended last */
  uint64_t planned;      /* machine 0: runs past the last planned (0: none planned) */
  uint64_t own_ns[TREE_IN_FLIGHT_MAX];      /* this machine's time of run q, at q % 2 */
  rig_job_slowest slow[TREE_IN_FLIGHT_MAX]; /* machine 0: run q's slowest, at q % 2 */
  /* The mailbox, this process's own, filled by the way's take (or its
   * handler) with words checked: the runs whose start came, per child the
   * runs whose end came (with its subtree's slowest at slot q % 2), and a
   * word bumped at each message. */
  _Atomic uint64_t start_came;
  _Atomic uint64_t *done_came;
  uint64_t *done_ns;     /* [child * 2 + q % 2] */
  int64_t *done_machine; /* [child * 2 + q % 2] */
  _Atomic uint32_t mail;

  /* By MPI (tree_mpi.c): each child's DONE as it comes (three words), the
   * START from the parent, the START to the children and this machine's
   * DONE at slot q % 2; requests: per child its DONE's, its STARTs' two
   * slots, the parent's START, the DONEs up's two slots. */
  uint64_t *run_words;
  MPI_Request *run_reqs;
  /* By shared memory (tree_memory.c): this machine's box, which its
   * neighbours write, and theirs, mapped here. */
  struct rig_area *box, **theirs;
  /* By UCX messages (tree_peers.c). */
  bool self_held;
  bool heard;              /* its messages find it: under the open jobs' lock (jobs.h) */
  bool listening;          /* holds the messages' handler (tree_peers.c) */
  struct rig_peer **peers; /* per child, then the parent */
  void *lost;              /* their losses' contexts */
};

/* Makes the tree's communicator (collective, bounded as the start is) and
 * places this machine in it. */
rig_status rig_tree_start(rig_job *job, bool *pending, rig_error *err);
/* Frees the communicator unless a request was left on it. */
void rig_tree_free(rig_job *job);

/* The runs' state (tree_runs.c): made at the start (after the tree's
 * place, before its way), open to the process's waiting threads' chores
 * once the tree is up (closed again before it goes), freed with the tree:
 * whether a request of it is left to MPI. */
rig_status rig_tree_runs_make(rig_job *job, rig_error *err);
void rig_tree_runs_open(rig_job *job);
bool rig_tree_runs_free(rig_job *job);

/* Each way's making (its `open`), and its free: whether something of it
 * is left to MPI (the tree keeps it). */
rig_status rig_tree_memory_start(rig_job *job, bool *pending, bool *ok, rig_error *err);
void rig_tree_memory_free(rig_job *job);
rig_status rig_tree_peers_start(rig_job *job, bool *pending, bool *ok, rig_error *err);
void rig_tree_peers_free(rig_job *job);
rig_status rig_tree_mpi_start(rig_job *job, rig_error *err);
bool rig_tree_mpi_free(rig_job *job);

/* Swaps n bytes each way with every neighbour over the tree's
 * communicator (tree_peers.c): theirs[i] (malloc'd) and lens[i] for child
 * i, then the parent; at most max bytes each (more: none). */
rig_status rig_tree_swap(rig_job *job, const void *mine, size_t n, size_t max, void **theirs,
                         size_t *lens, bool *pending, rig_error *err);
/* A start (to a child) or a done (to the parent) of the tree's run `run`,
 * as a UCX message. */
rig_status rig_tree_send(rig_job *job, int to, bool start, uint64_t run, uint64_t ns,
                         int64_t machine, rig_error *err);
/* Naps *nap_ns, doubling it up to a millisecond (the ways without a wake). */
void rig_tree_nap(job_tree *t, uint32_t seen, long *nap_ns);

/* ---- the tree's words by MPI (tree_mpi.c) ---------------------------------- */

/* The tree made and the job not failed; else why. */
rig_status rig_tree_usable(rig_job *job, rig_error *err);
/* An MPI call's result rc: a failure is the job's, this machine's. */
rig_status rig_tree_mpi(rig_job *job, int rc, const char *call, rig_error *err);
/* A message that could not be sent (a peer gone): the job's failure. */
rig_status rig_tree_send_failed(rig_job *job, rig_error *err);
/* Waits for n requests, or for the job's failure (the requests are then
 * left to MPI, and the tree keeps what they use): spins a little, yields
 * RIG_WAIT_YIELD_S, then naps, longer and longer up to a millisecond. */
rig_status rig_tree_mpi_wait(rig_job *job, MPI_Request *reqs, int n, rig_error *err);
/* Sends and receives on the tree's communicator (sends counted). */
rig_status rig_tree_isend(rig_job *job, const void *b, size_t n, MPI_Datatype type, int to, int tag,
                          MPI_Request *req, rig_error *err);
rig_status rig_tree_irecv(rig_job *job, void *b, size_t n, MPI_Datatype type, int from, int tag,
                          MPI_Request *req, rig_error *err);
/* A word a machine sent that is not the one the protocol wants: the job
 * fails, naming it. */
rig_status rig_tree_out_of_step(rig_job *job, int from, const char *what, uint64_t got,
                                uint64_t want, rig_error *err);
/* An agent whose wait on the tree outlasted the controller's close of the
 * job by a grace: err says so. */
bool rig_tree_closed(rig_job *job, rig_error *err);

#endif
