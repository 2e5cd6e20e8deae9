/* The agent: hosts its machine's devices for the controller. Frames come
 * from the control thread and go to queues, so that it never blocks:
 * requests (memory, images, programs, entries, rails, tracing, close) to
 * one request thread, in order; each device's hand-overs to that device's
 * executor (executor.h). A request the agent refuses is answered with its
 * reason; a hand-over that fails fails the job. */
#include "agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_rails.h"
#include "base/sync.h"
#include "executor.h"
#include "express.h"
#include "failure.h"
#include "far_copy.h"
#include "holdings.h"
#include "job_state.h"
#include "route/route.h"

struct agent {
  rig_job *job;
  size_t ndevices;
  rig_device **devices;
  executor **execs; /* per device, started at its first hand-over */
  holdings held;    /* memory, images and programs, by id */
  /* Requests travel in the record of a hand-over: a frame and its payload. */
  queue requests;
  pthread_t request_thread;
  rig_trace *trace; /* when the controller traces: this process's sink */
};

/* ---- answers ---------------------------------------------------------------------- */

static void reply(agent *a, const frame *req, rig_status st, uint64_t value, uint32_t max_threads,
                  const void *payload, size_t n) {
  frame f = {
      .h = {.kind = F_REPLY, .request = req->h.request, .value = value, .status = (int32_t)st},
      .reply.max_threads = max_threads};
  rig_ctl_send(&a->job->c, RIG_JOB_CONTROLLER, &f, payload, n, NULL);
}

static void refuse(agent *a, const frame *req, const rig_error *err) {
  reply(a, req, err->code, 0, 0, err->message, strlen(err->message));
}

/* ---- devices ------------------------------------------------------------------------- */

static rig_device *device_of(void *ctx, int64_t id) {
  agent *a = ctx;
  return id >= 0 && (size_t)id < a->ndevices ? a->devices[id] : NULL;
}

/* Device `device`'s executor, started at its first hand-over. */
rig_status rig_agent_executor(agent *a, uint32_t device, executor **out, rig_error *err) {
  if (device >= a->ndevices)
    return rig_error_set(err, RIG_EREFUSED, "machine %d: a hand-over to no device %u", a->job->rank,
                         device);
  if ((*out = a->execs[device])) return RIG_OK;
  rig_status st = rig_executor_start(a->job, &a->held, device, out, err);
  if (st == RIG_OK) a->execs[device] = *out;
  return st;
}

/* ---- requests ------------------------------------------------------------------------- */

static void do_alloc(agent *a, const frame *f) {
  rig_error err;
  rig_buffer *b;
  rig_device *d = device_of(a, f->h.device);
  if (!d) {
    rig_error_set(&err, RIG_EREFUSED, "no device %u", f->h.device);
    refuse(a, f, &err);
    return;
  }
  /* Memory of the host is shared with the controller where its route
   * maps it: it copies in and out of it itself (express.h). */
  const void *address = NULL;
  size_t len = 0;
  express *ex = a->job->express;
  b = f->h.device == 0 ? ex->route->share_memory(ex, f->alloc.bytes, &address, &len) : NULL;
  if (!b &&
      rig_buffer_create(d, (rig_buffer_kind)f->alloc.kind, f->alloc.bytes, &b, &err) != RIG_OK) {
    refuse(a, f, &err);
    return;
  }
  uint64_t id;
  if (rig_holdings_add(&a->held, (held){.buffer = b}, a->job->rank, &id, &err) != RIG_OK) {
    rig_buffer_release(b);
    refuse(a, f, &err);
    return;
  }
  reply(a, f, RIG_OK, id, 0, address, len);
}

static void do_image(agent *a, const frame *f, const unsigned char *bytes) {
  rig_error err;
  rig_device *d = device_of(a, f->h.device);
  size_t n = f->h.payload;
  held s = {0};
  rig_status st;
  if (!d) {
    st = rig_error_set(&err, RIG_EREFUSED, "no device %u", f->h.device);
  } else if (n >= 11 && memcmp(bytes, "rig.remote\n", 11) == 0) {
    st = rig_program_load_received(bytes, n, device_of, a, rig_job_rails(a->job), &s.program, &err);
  } else {
    st = rig_image_load(d, bytes, n, &s.image, &err);
  }
  uint64_t id;
  if (st == RIG_OK && (st = rig_holdings_add(&a->held, s, a->job->rank, &id, &err)) != RIG_OK) {
    rig_program_release(s.program);
    rig_image_release(s.image);
  }
  if (st != RIG_OK) {
    refuse(a, f, &err);
    return;
  }
  reply(a, f, RIG_OK, id, 0, NULL, 0);
}

static void do_entry(agent *a, const frame *f, const unsigned char *name) {
  rig_error err;
  uint64_t image = f->entry.image;
  size_t n = f->h.payload;
  held s = rig_holdings_get(&a->held, image);
  if (s.program) {
    /* A program's functions: "run", and "launch:<i>" for the threads the
     * i-th launch's function may have. */
    uint32_t threads[1];
    unsigned long i;
    char text[32];
    snprintf(text, sizeof text, "%.*s", (int)(n < 31 ? n : 31), (const char *)name);
    if (n == 3 && memcmp(name, "run", 3) == 0) {
      reply(a, f, RIG_OK, image, 0, NULL, 0);
    } else if (sscanf(text, "launch:%lu", &i) == 1 &&
               i < rig_program_threads(s.program, threads, 0)) {
      uint32_t *all = calloc(i + 1, sizeof *all);
      if (all) rig_program_threads(s.program, all, i + 1);
      reply(a, f, RIG_OK, 0, all ? all[i] : 0, NULL, 0);
      free(all);
    } else {
      rig_error_set(&err, RIG_EREFUSED, "a program has no function \"%s\"", text);
      refuse(a, f, &err);
    }
    return;
  }
  rig_entry e;
  if (!s.image) {
    rig_error_set(&err, RIG_EREFUSED, "no image %llu", (unsigned long long)image);
    refuse(a, f, &err);
  } else if (rig_image_entry(s.image, (const char *)name, n, &e, &err) != RIG_OK) {
    refuse(a, f, &err);
  } else {
    reply(a, f, RIG_OK, e.value, e.max_threads, NULL, 0);
  }
}

/* Every hand-over queued before the request is done. */
static void drain_handovers(agent *a) {
  for (size_t d = 0; d < a->ndevices; d++)
    if (a->execs[d]) rig_executor_drain(a->execs[d]);
}

static void do_close(agent *a, const frame *f) {
  drain_handovers(a);
  reply(a, f, RIG_OK, 0, 0, NULL, 0);
  rig_job_mark_closed(a->job);
}

/* The trace the controller asked for becomes this process's sink. */
static void do_trace_start(agent *a, const frame *f) {
  rig_error err;
  /* The controller's message names this machine. */
  if (a->trace) {
    rig_error_set(&err, RIG_EINVAL, "a trace started twice");
    refuse(a, f, &err);
  } else if (f->h.value > SIZE_MAX ||
             rig_trace_make((size_t)f->h.value, &a->trace, &err) != RIG_OK) {
    if (f->h.value > SIZE_MAX)
      rig_error_set(&err, RIG_EINVAL, "a trace of %llu events", (unsigned long long)f->h.value);
    refuse(a, f, &err);
  } else {
    rig_trace_set(a->trace);
    reply(a, f, RIG_OK, 0, 0, NULL, 0);
  }
}

/* The trace, once the hand-overs before the request are done and every
 * step's reach seen (or a bound passed: those steps show no work). */
static void do_trace(agent *a, const frame *f) {
  rig_error err;
  uint8_t *bytes = NULL;
  size_t len = 0;
  if (!a->trace) {
    rig_error_set(&err, RIG_EINVAL, "no trace started");
    refuse(a, f, &err);
    return;
  }
  drain_handovers(a);
  rig_trace_settle(a->trace, 10000);
  if (rig_trace_encode(a->trace, &bytes, &len, &err) != RIG_OK) {
    refuse(a, f, &err);
    return;
  }
  reply(a, f, RIG_OK, 0, 0, bytes, len);
  free(bytes);
}

/* The controller opens its memory to this machine's far copies. */
static void do_far_open(agent *a, const frame *f, const unsigned char *payload) {
  rig_error err;
  if (!a->job->express)
    rig_error_set(&err, RIG_EREFUSED, "no far copies here");
  else if (rig_far_open(a->job->express, f->window.address, f->window.length, payload, f->h.payload,
                        &err) == RIG_OK) {
    reply(a, f, RIG_OK, 0, 0, NULL, 0);
    return;
  }
  refuse(a, f, &err);
}

static void rail_answer(rig_job *job, const frame *req, rig_status st, const void *payload,
                        size_t n) {
  reply(job->as_agent->agent, req, st, 0, 0, payload, n);
}

static void *request_main(void *arg) {
  agent *a = arg;
  handover *it;
  while ((it = (handover *)rig_queue_take(&a->requests))) {
    const frame *f = &it->f;
    held s;
    switch (f->h.kind) {
      case F_ALLOC:
        do_alloc(a, f);
        break;
      case F_IMAGE:
        do_image(a, f, it->payload);
        break;
      case F_ENTRY:
        do_entry(a, f, it->payload);
        break;
      case F_CLOSE:
        do_close(a, f);
        break;
      case F_TRACE_START:
        do_trace_start(a, f);
        break;
      case F_TRACE:
        do_trace(a, f);
        break;
      case F_RAIL_MAKE:
      case F_RAIL_ATTACH:
      case F_RAIL_RELEASE:
        rig_agent_rail(a->job, f, it->payload, rail_answer);
        break;
      case F_FAR_OPEN:
        do_far_open(a, f, it->payload);
        break;
      case F_FAR_CLOSE:
        if (a->job->express) rig_far_close(a->job->express, f->window.address, f->window.length);
        break;
      case F_FREE:
        s = rig_holdings_take(&a->held, f->release.id);
        rig_buffer_release(s.buffer);
        break;
      case F_UNLOAD:
        s = rig_holdings_take(&a->held, f->release.id);
        rig_program_release(s.program);
        rig_image_release(s.image);
        break;
      default:
        break;
    }
    rig_handover_free(it);
    rig_queue_finished(&a->requests);
  }
  return NULL;
}

/* ---- the agent ------------------------------------------------------------------------------ */

void rig_agent_frame(agent *a, const frame *f, const unsigned char *payload) {
  const frame_header *h = &f->h;
  if (h->kind == F_PING) {
    /* Answered here, on the control thread, so that the times it gives
     * are as near the frame's arrival and its answer's leaving as can be. */
    uint64_t t[2] = {rig_trace_now(), 0};
    t[1] = rig_trace_now();
    reply(a, f, RIG_OK, 0, 0, t, sizeof t);
    return;
  }
  handover *it = calloc(1, sizeof *it);
  if (it) it->payload = malloc(h->payload ? h->payload : 1);
  if (!it || !it->payload) {
    free(it);
    rig_job_fail_with(a->job, true, "out of memory taking a frame");
    return;
  }
  it->f = *f;
  if (h->payload) memcpy(it->payload, payload, h->payload);
  switch (h->kind) {
    case F_WORDS:
    case F_COPY_IN:
    case F_COPY_OUT:
    case F_COPY: {
      executor *e;
      rig_error err;
      if (rig_agent_executor(a, h->device, &e, &err) != RIG_OK) {
        rig_handover_free(it);
        rig_job_fail_with(a->job, true, err.message);
        return;
      }
      rig_executor_push(e, it);
      return;
    }
    default:
      rig_queue_push(&a->requests, &it->link);
  }
}

rig_status rig_agent_create(rig_job *job, agent **out, rig_error *err) {
  agent *a = calloc(1, sizeof *a);
  if (!a) return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  a->job = job;
  a->ndevices = job->machines[job->rank].ndevices;
  a->devices = job->devices[job->rank];
  a->execs = calloc(a->ndevices ? a->ndevices : 1, sizeof *a->execs);
  if (!a->execs) {
    free(a);
    return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  }
  rig_holdings_init(&a->held);
  rig_queue_init(&a->requests);
  if (pthread_create(&a->request_thread, NULL, request_main, a) != 0) {
    rig_queue_destroy(&a->requests);
    rig_holdings_free(&a->held);
    free(a->execs);
    free(a);
    return rig_error_set(err, RIG_ESYS, "cannot start the agent's request thread");
  }
  /* Its route starts the executors that run from the start (route/route.h). */
  rig_status st = job->express->route->agent_start(a, a->ndevices, err);
  if (st != RIG_OK) {
    rig_agent_free(a);
    return st;
  }
  *out = a;
  return RIG_OK;
}

void rig_agent_free(agent *a) {
  rig_agent_free_within(a, -1);
}

bool rig_agent_free_within(agent *a, double grace) {
  rig_queue_stop(&a->requests);
  bool ended = true;
  if (grace < 0)
    pthread_join(a->request_thread, NULL);
  else
    ended = rig_join_within(a->request_thread, grace);
  for (size_t d = 0; d < a->ndevices; d++)
    if (a->execs[d]) {
      if (grace < 0)
        rig_executor_stop(a->execs[d]);
      else if (!rig_executor_stop_within(a->execs[d], ended ? grace : 0))
        ended = false;
      else
        a->execs[d] = NULL;
    }
  /* A thread still inside work keeps what it uses: the holdings, the
   * queues, the agent, the job. */
  if (!ended) return false;
  /* What the controller left loaded goes now (after its work). */
  rig_holdings_free(&a->held);
  free(a->execs);
  if (a->trace) {
    rig_trace_set(NULL);
    rig_trace_free(a->trace);
  }
  rig_queue_destroy(&a->requests);
  free(a);
  return true;
}
