/* The job's state (struct rig_job), which every module of the job reads;
 * each module's calls go one way (docs/internals.md "The job layer"). */
#ifndef RIG_JOB_STATE_H
#define RIG_JOB_STATE_H

#include <pthread.h>
#include <stdatomic.h>

#include "control.h"
#include "rail_table.h"
#include "request.h"
#include "rig/rig_job.h"
#include "tree.h"

/* What differs by role, chosen once with it (job.c, as soon as
 * bootstrap.c decides it): the files below job.c reach the role's
 * behaviour through these pointers, calling none of the files above. */
struct job_role {
  /* A frame neither a failure nor the word that there is none (job.c). */
  void (*frame)(rig_job *job, int src, const frame *f, const unsigned char *payload);
  rig_status (*start)(rig_job *job, rig_error *err); /* its part, after the collectives */
  rig_status (*serve)(rig_job *job, rig_error *err); /* rig_job_serve */
  rig_status (*close)(rig_job *job, rig_error *err); /* before the control thread stops */
  bool (*busy)(rig_job *job);                        /* the control thread's hook */
  /* A failure (failure.c): machine `from`'s cause taken, under the job's
   * lock (first: it is the job's); whether this rank tells it on. */
  bool (*took)(rig_job *job, bool first, bool tell, int from, uint64_t run, rig_status code,
               const char *cause);
  void (*tell)(rig_job *job, rig_status code, uint64_t run, const char *cause); /* then */
  bool relays; /* a cause heard from another machine is told on */
  /* After a failure (told.c): rank src's goodbye, under the job's lock. */
  void (*bye)(rig_job *job, int src);
  bool (*await_told)(rig_job *job); /* rig_job_await_told, the job failed */
};

/* What only the controller (MPI rank RIG_JOB_CONTROLLER) keeps. */
struct job_controller {
  struct proxy ***proxies; /* per machine: its devices' proxies */
  struct proxy_link *link; /* what the proxies reach the job through (proxy.h) */
  request *requests;       /* in flight (request.h), under the job's lock */
  _Atomic uint64_t next_request;
  size_t trace_capacity; /* tracing: each agent trace's events (0: off) */
  /* What each machine said of the failure (told.c), under the job's lock. */
  struct job_said *said;
  int nsaid;
  void (*on_fail)(rig_job *job); /* after the cause is set: the proxies lost */
};

/* What only an agent (every other rank) keeps. */
struct job_agent {
  struct agent *agent;
  bool closed;               /* the controller closed the job, under the job's lock */
  _Atomic int64_t closed_ns; /* when it did (rig_now_s, in ns), for the tree's waits */
  /* How the failure is told once (told.c), under the job's lock: its own
   * cause went to the controller; the controller's cause and goodbye came. */
  bool told_own, heard_controller, bye_from_controller;
};

/* The job's failure, on every rank, under the job's lock (failure.c). */
struct job_failure {
  bool set;     /* the first failure claimed the cause */
  bool stopped; /* the cause is this process's own stop */
  char cause[RIG_ERROR_MESSAGE_MAX];
  rig_status code;         /* what the cause stands for (rig_job_cause) */
  int from;                /* the machine whose word the cause is */
  uint64_t run;            /* the run it came in there, plus one (0: none known) */
  void (*user)(void *ctx); /* rig_job_on_failure's */
  void *user_ctx;
};

struct rig_job {
  ctl c;
  int rank, size;
  rig_machine *machines;         /* the controller: all; an agent: its own at [rank] */
  char (*labels)[RIG_JOB_LABEL]; /* every machine's name in messages (control.h) */
  bool one_host;                 /* every machine on this host (the labels name none) */
  /* Devices per machine: local ones on machine `rank`, proxies elsewhere. */
  rig_device ***devices;
  /* The role, decided once where the rank is learned (bootstrap.c): exactly
   * one of these is set, and what only that role keeps is in it. */
  struct job_controller *as_controller;
  struct job_agent *as_agent;
  const struct job_role *role; /* what it does by its role (above) */
  /* The end: the first failure is the root cause (failure.h). */
  pthread_mutex_t lock;
  pthread_cond_t changed; /* a reply came, the job closed or failed */
  _Atomic bool failed;
  struct job_failure failure; /* under lock */
  /* This rank is closing the job: a neighbour's UCX endpoint that closes
   * now is its close, not its loss (express_messages.c, tree_peers.c). */
  _Atomic bool closing;
  job_rails rails;
  job_tree tree;           /* machine-local runs' (tree.h) */
  struct express *express; /* express.h; the controller's moves to the link */
  /* The express the job's messages reach (express_messages.c), wherever it
   * lives: under the open jobs' lock (jobs.h). */
  struct express *heard;
  /* The express whose peers the control thread knocks (express_messages.h): set
   * before it starts, freed after it stops. */
  struct express *knocks;
  bool start_pending;             /* a collective of the start never completed */
  struct rig_job *abandoned_next; /* kept for a thread still in work (job.c) */
};

#endif
