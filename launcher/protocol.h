/* The job's control protocol (docs/jobs.md "Control protocol"): frames
 * of a fixed part (a common header and the body of its kind) and a
 * payload, one MPI message each, on the job's own communicator, FIFO per
 * direction per controller-agent pair (MPI's non-overtaking order). */
#ifndef RIG_PROTOCOL_H
#define RIG_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#define RIG_JOB_TAG 7201

typedef enum frame_kind {
  /* Controller to agent: requests, each answered by a REPLY of its id. */
  F_ALLOC = 1, /* device, alloc -> value = memory id */
  F_IMAGE,     /* device, payload = bytes -> value = image id */
  F_ENTRY,     /* entry, payload = name -> value = entry value, reply */
  F_CLOSE,     /* -> after all earlier work */
  /* Controller to agent: releases, unanswered. */
  F_FREE,   /* release (a memory id) */
  F_UNLOAD, /* release (an image id) */
  /* Controller to agent: hand-overs of value `value` of `device`, run in
   * order per device; the agent answers DONE once the work is done. */
  F_WORDS,    /* payload = run words */
  F_COPY_IN,  /* copy_in, payload = bytes */
  F_COPY_OUT, /* copy_out -> REPLY (payload = bytes), DONE */
  F_COPY,     /* copy */
  /* Agent to controller. */
  F_REPLY, /* request, status, reply, payload = the answer or the error's message */
  F_DONE,  /* device, value */
  /* Either way. */
  F_FAIL, /* payload = the job's root cause */
  F_BEAT,
  F_BYE, /* the last frame a rank sends its peer in this job: after the
            peer's BYE nothing more of this job is on its way, so the
            communicator may be freed */
  /* Controller to agent: rails, each answered by a REPLY. */
  F_RAIL_MAKE,    /* rail, payload = send then receive transfers -> the end's address */
  F_RAIL_ATTACH,  /* rail, payload = the peer end's address */
  F_RAIL_RELEASE, /* rail -> once the end is dropped */
  /* Controller to agent: tracing (docs/internals.md "Tracing"), each
   * answered by a REPLY. */
  F_PING,        /* -> payload = the agent's clock at arrival, then at the answer */
  F_TRACE_START, /* value = the events' capacity -> once the agent's trace is the sink */
  F_TRACE,       /* -> after all earlier work: payload = the encoded trace */
  /* Controller to agent: the controller's memory an agent may reach itself
   * for far copies (express.h), opened by a request, closed unanswered. */
  F_FAR_OPEN,  /* window -> once the agent checks far copies against it */
  F_FAR_CLOSE, /* window */
} frame_kind;

/* What every frame has; a field a kind does not use is 0. */
typedef struct frame_header {
  uint64_t job; /* the job's id: a frame of an earlier job on a reused
                   communicator context is dropped */
  uint32_t kind;
  uint32_t device;  /* the device's index on the agent's machine */
  uint64_t request; /* a request's id, which its REPLY repeats */
  uint64_t value;   /* a hand-over's or DONE's value; a REPLY's answer */
  int32_t status;   /* a REPLY's rig_status */
  uint32_t payload; /* bytes after the fixed part */
} frame_header;

/* The bodies. Fields are laid out without padding, so that every byte a
 * frame puts on the wire is one its sender set. */
typedef struct frame_alloc {
  uint32_t kind; /* rig_buffer_kind */
  uint32_t unused;
  uint64_t bytes;
} frame_alloc;

typedef struct frame_release {
  uint64_t id; /* FREE: a memory's, UNLOAD: an image's */
} frame_release;

typedef struct frame_entry {
  uint64_t image;
} frame_entry;

typedef struct frame_copy_in {
  uint64_t memory, offset; /* the bytes are the payload */
} frame_copy_in;

typedef struct frame_copy_out {
  uint64_t memory, offset, length;
} frame_copy_out;

typedef struct frame_copy {
  uint64_t src, src_offset, length, dst, dst_offset;
} frame_copy;

typedef struct frame_reply {
  uint32_t max_threads; /* ENTRY's: the threads the entry may have */
  uint32_t unused;
} frame_reply;

typedef struct frame_rail {
  int64_t id;
  uint32_t peer; /* the machine of the other end */
  uint32_t unused;
  uint64_t nsend, nreceive; /* MAKE's transfers, as this end sees them */
} frame_rail;

typedef struct frame_window {
  uint64_t address, length; /* in the controller's address space */
} frame_window;

/* A frame's fixed part, as it goes on the wire before its payload. */
typedef struct frame {
  frame_header h;
  union { /* by h.kind */
    frame_alloc alloc;
    frame_release release;
    frame_entry entry;
    frame_copy_in copy_in;
    frame_copy_out copy_out;
    frame_copy copy;
    frame_reply reply;
    frame_rail rail;
    frame_window window;
  };
} frame;

_Static_assert(sizeof(frame_alloc) == 16 && sizeof(frame_reply) == 8 && sizeof(frame_rail) == 32 &&
                   sizeof(frame) == sizeof(frame_header) + sizeof(frame_copy),
               "a frame's fixed part has no padding");

/* The bytes of the body of a frame of this kind (0: none, or a kind no
 * one sends). */
static inline size_t frame_body_size(uint32_t kind) {
  switch (kind) {
    case F_ALLOC:
      return sizeof(frame_alloc);
    case F_ENTRY:
      return sizeof(frame_entry);
    case F_FREE:
    case F_UNLOAD:
      return sizeof(frame_release);
    case F_COPY_IN:
      return sizeof(frame_copy_in);
    case F_COPY_OUT:
      return sizeof(frame_copy_out);
    case F_COPY:
      return sizeof(frame_copy);
    case F_REPLY:
      return sizeof(frame_reply);
    case F_RAIL_MAKE:
    case F_RAIL_ATTACH:
    case F_RAIL_RELEASE:
      return sizeof(frame_rail);
    case F_FAR_OPEN:
    case F_FAR_CLOSE:
      return sizeof(frame_window);
  }
  return 0;
}

#endif
