/* Private to the job (launcher/): the control thread's transport, the
 * controller's requests and proxies, and the agent's tables. */
#ifndef RIG_JOB_INTERNAL_H
#define RIG_JOB_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "protocol.h"
#include "rig/rig_driver.h"
#include "rig/rig_job.h"
#include "rig/rig_program.h"

/* ---- the control thread ----------------------------------------------------- */

typedef struct outmsg {
  struct outmsg *next;
  int dest;
  size_t len;
  unsigned char *buf; /* header then payload */
} outmsg;

typedef struct ctl {
  MPI_Comm comm;
  uint64_t job_id;
  pthread_t thread;
  bool started;
  pthread_mutex_t lock; /* the outgoing queue */
  outmsg *head, *tail;
  _Atomic uint32_t wake; /* futex: bumped when something is queued */
  _Atomic bool sleeping; /* the thread may be asleep on wake */
  _Atomic bool stop;     /* leave once every queued frame is sent */
  int byes;              /* BYE frames received (they may come before we leave) */
  bool quiet;            /* every peer's BYE came: the communicator is idle */
  MPI_Request *reqs;
  unsigned char **bufs;
  size_t ninflight, room;
  double *heard; /* per rank: when a frame last came from it */
  double *sent;  /* per rank: when a frame last went to it */
} ctl;

/* Queues a frame for rank dest; never blocks on the network. A frame
 * that cannot be queued fails the job (a lost frame breaks the protocol):
 * RIG_EJOB with its cause. A sender that only has the job to tell passes
 * err NULL and leaves the status, the job's failure says it. */
rig_status rig_ctl_send(rig_job *job, int dest, const frame *f, const void *payload, size_t n,
                        rig_error *err);
rig_status rig_ctl_start(rig_job *job, rig_error *err);
/* Sends what is queued and a BYE to each peer, takes frames until each
 * peer's BYE (or a bound passes: a peer is gone), then stops the thread.
 * Whether the communicator is idle: only then may it be freed. */
bool rig_ctl_stop(rig_job *job);

/* ---- the controller ------------------------------------------------------------ */

/* A request waiting for its reply. */
typedef struct request {
  struct request *next;
  uint64_t id;
  bool done;
  int32_t status;
  uint64_t value;
  uint32_t max_threads;   /* an entry's */
  unsigned char *payload; /* malloc'd reply payload */
  size_t len;
  void *into; /* a copy out: where its bytes go */
  size_t into_len;
  uint64_t arrived_ns; /* rig_trace_now when the reply came (a ping's) */
} request;

/* What a job's proxies reach it through: a proxy may outlive its job (a
 * buffer on it released after the close), so the link is held by the job
 * and by each proxy, and freed by the last of them. */
typedef struct proxy_link {
  rig_job *_Atomic job;
  _Atomic int refs;
  struct express *express; /* the proxies' words and rings live as long */
} proxy_link;

typedef struct proxy {
  proxy_link *link;
  int machine;
  uint32_t index; /* the device's index on its machine */
  rig_device *dev;
  _Atomic uint64_t word;      /* the shadow timeline, moved by DONE */
  _Atomic uint64_t *timeline; /* word, or the express word */
  struct ex_word *xw;         /* the express word (express.h), or NULL */
  struct ex_ring *ring;       /* the device's express ring, or NULL */
} proxy;

typedef struct proxy_image {
  uint64_t id; /* the agent's */
} proxy_image;

/* Makes the proxies of machine m's devices. */
rig_status rig_proxies_make(rig_job *job, int m, rig_error *err);
/* A DONE report: moves the shadow word of device `index` of machine m. */
void rig_proxy_done(rig_job *job, int m, uint32_t index, uint64_t value);
/* Loses every proxy with the job's root cause. */
void rig_proxies_lose(rig_job *job);
/* Whether some proxy has work handed over and not yet reported done: the
 * controller's control thread then keeps polling, so that a done report
 * is seen (and a machine's run stamped) when it arrives, not at the end of
 * a sleep. */
bool rig_proxies_busy(rig_job *job);
/* The job is being freed: its proxies leave the device table once nothing
 * uses them (rig_device_unregister), and the job lets go of the link. */
void rig_proxies_free(rig_job *job);

/* Sends a request and waits for its reply (RIG_EJOB if the job fails
 * first); *reply is then owned by the caller (rig_request_free). */
rig_status rig_request(rig_job *job, int dest, frame *f, const void *payload, size_t n,
                       request **reply, rig_error *err);
/* The two halves of rig_request: send it now, wait for its reply later
 * (every posted request is awaited: that frees it). */
rig_status rig_request_post(rig_job *job, int dest, frame *f, const void *payload, size_t n,
                            request **posted, rig_error *err);
rig_status rig_request_await(rig_job *job, request *r, request **reply, rig_error *err);
void rig_request_free(request *r);
/* A REPLY from rank src arrived: completes its request (on the control
 * thread). An answer that does not fit its request fails the job. */
void rig_request_answer(rig_job *job, int src, const frame *f, const unsigned char *payload);
/* Registers a copy out's destination before its hand-over is sent. */
rig_status rig_request_expect(rig_job *job, uint64_t id, void *into, size_t len, rig_error *err);

/* ---- the agent ------------------------------------------------------------------ */

typedef struct agent agent;
rig_status rig_agent_create(rig_job *job, agent **out, rig_error *err);
void rig_agent_free(agent *a);
/* A frame from the controller (on the control thread: never blocks). */
void rig_agent_frame(agent *a, const frame *f, const unsigned char *payload);

/* ---- rails ------------------------------------------------------------------------ */

/* A rail of the job, as the controller made it (ends: its two machines),
 * or an agent's end of one. */
typedef struct job_rail {
  rig_job *job;
  rig_rail *rail;
  int ends[2];
  request *releasing[2]; /* RAIL_RELEASE requests posted to the agents' ends */
} job_rail;

typedef struct job_rails {
  pthread_mutex_t lock;
  job_rail **items;
  size_t n, room;
  rig_rails lookup; /* this machine's ends by id, for its loads */
} job_rails;

void rig_job_rails_init(rig_job *job);
/* Releases every rail still made (the controller's, or an agent's ends)
 * and frees the table. */
void rig_job_rails_close(rig_job *job);
/* An agent's rail requests (on its request thread). */
void rig_agent_rail(rig_job *job, const frame *f, const unsigned char *payload,
                    void (*answer)(rig_job *job, const frame *req, rig_status st,
                                   const void *payload, size_t n));

/* ---- the job ---------------------------------------------------------------------- */

struct rig_job {
  ctl c;
  int rank, size;
  rig_machine *machines; /* the controller: all; an agent: its own at [rank] */
  /* Devices per machine: local ones on machine `rank`, proxies elsewhere. */
  rig_device ***devices;
  proxy ***proxies;
  /* Failure: the first one is the root cause. */
  pthread_mutex_t lock;
  pthread_cond_t changed; /* a reply came, the job closed or failed */
  _Atomic bool failed;
  bool cause_set; /* under lock: the first failure claimed the cause */
  char cause[RIG_ERROR_MESSAGE_MAX];
  /* Controller: requests in flight. */
  request *requests;
  _Atomic uint64_t next_request;
  proxy_link *link;
  job_rails rails;
  struct express *express; /* express.h; the controller's moves to the link */
  size_t trace_capacity;   /* tracing: each agent trace's events (0: off) */
  /* Agent. */
  agent *agent;
  bool closed;
  bool start_pending; /* a collective of the start never completed */
};

/* MPI's return code rc of `call` ("MPI_Bcast") as a status: RIG_OK, or
 * RIG_EJOB naming the call with MPI's error string. */
rig_status rig_mpi_status(int rc, const char *call, rig_error *err);
/* The job's root cause as RIG_EJOB. */
rig_status rig_job_error(rig_job *job, rig_error *err);
/* Waits for a collective of the job's start within the silence bound
 * (*pending: it never completed, its buffers stay). */
rig_status rig_job_start_wait(MPI_Request *req, const char *call, bool *pending, rig_error *err);
/* Sets the root cause (first call only) and tells every other rank. */
void rig_job_fail_with(rig_job *job, bool tell, const char *cause);

/* This machine as it describes itself: host name, devices (opened here), hwloc. */
rig_status rig_machine_describe(rig_machine *m, int rank, rig_device ***devices, rig_error *err);

#endif
