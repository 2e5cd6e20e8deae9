/* The controller's requests (docs/jobs.md "Control protocol"): a frame to
 * an agent answered by a REPLY of its id, awaited by the caller; and copies
 * out, whose bytes a REPLY brings into memory registered before. */
#ifndef RIG_REQUEST_H
#define RIG_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol.h"
#include "rig/rig_base.h"

typedef struct rig_job rig_job;

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
/* The next request id. */
uint64_t rig_request_id(rig_job *job);
/* Registers a copy out's destination before its hand-over is sent. */
rig_status rig_request_expect(rig_job *job, uint64_t id, void *into, size_t len, rig_error *err);
/* A REPLY from rank src arrived (on the control thread): completes its
 * request, or lands a copy out's bytes. An answer that does not fit its
 * request fails the job. The value of the copy out whose bytes landed (its
 * point is reached: the caller moves its device's timeline), else 0. */
uint64_t rig_request_answer(rig_job *job, int src, const frame *f, const unsigned char *payload);
/* Frees every request left (the job is being freed). */
void rig_requests_free(rig_job *job);

#endif
