/* The job's control protocol (DISTRIBUTED.md "Control protocol"): frames
 * of a fixed header and a payload, one MPI message each, on the job's own
 * communicator, FIFO per direction per controller-agent pair (MPI's
 * non-overtaking order). */
#ifndef RIG_PROTOCOL_H
#define RIG_PROTOCOL_H

#include <stdint.h>

#define RIG_JOB_TAG 7201

typedef enum frame_kind {
  /* Controller to agent: requests, each answered by a REPLY of its id. */
  F_ALLOC = 1, /* device, a = kind, b = bytes -> value = memory id */
  F_IMAGE,     /* device, payload = bytes -> value = image id */
  F_ENTRY,     /* a = image id, payload = name -> value = entry value, a = max threads */
  F_CLOSE,     /* -> after all earlier work */
  /* Controller to agent: releases, unanswered. */
  F_FREE,   /* a = memory id */
  F_UNLOAD, /* a = image id */
  /* Controller to agent: hand-overs of value `value` of `device`, run in
   * order per device; the agent answers DONE once the work is done. */
  F_WORDS,    /* payload = run words */
  F_COPY_IN,  /* a = memory id, b = offset, payload = bytes */
  F_COPY_OUT, /* a = memory id, b = offset, c = length -> REPLY (payload = bytes), DONE */
  F_COPY,     /* a = src memory id, b = src offset, c = length, d = dst id, e = dst offset */
  /* Agent to controller. */
  F_REPLY, /* request, status, payload = the answer or the error's message */
  F_DONE,  /* device, value */
  /* Either way. */
  F_FAIL, /* payload = the job's root cause */
  F_BEAT,
  F_BYE, /* the last frame a rank sends its peer in this job: after the
            peer's BYE nothing more of this job is on its way, so the
            communicator may be freed */
} frame_kind;

typedef struct frame_header {
  uint64_t job; /* the job's id: a frame of an earlier job on a reused
                   communicator context is dropped */
  uint32_t kind;
  uint32_t device;
  uint64_t request;
  uint64_t value;
  uint64_t a, b, c, d, e;
  int32_t status;
  uint32_t payload; /* bytes after the header */
} frame_header;

#endif
