/* Tracing a job, the controller's side: each agent's trace started, its
 * clock measured against this one's, and its trace gathered after the
 * runs (docs/internals.md "Tracing"; the agent's side is in agent.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failure.h"
#include "job_state.h"
#include "proxy.h"

/* The most events an agent's trace may answer with: its start's capacity. */
static size_t capacity_of(const rig_job *job) {
  return job->as_controller->trace_capacity;
}

static rig_status on_controller(rig_job *job, const char *what, rig_error *err) {
  if (!job->as_controller)
    return rig_error_set(err, RIG_EINVAL, "%s: on an agent (machine %d)", what, job->rank);
  return RIG_OK;
}

/* One ping of machine m: its round trip and offset. */
static rig_status ping(rig_job *job, int m, uint64_t *rtt, int64_t *offset, rig_error *err) {
  frame f = {.h = {.kind = F_PING}};
  request *r;
  uint64_t t0 = rig_trace_now();
  rig_status st = rig_request(job, m, &f, NULL, 0, &r, err);
  if (st != RIG_OK) return rig_error_prefix(err, "%s: its clock", rig_job_label(job, m));
  uint64_t t[2];
  if (r->len != sizeof t) {
    size_t len = r->len;
    rig_request_free(r);
    return rig_error_set(err, RIG_EJOB, "%s: a clock answer of %zu bytes, not %zu",
                         rig_job_label(job, m), len, sizeof t);
  }
  memcpy(t, r->payload, sizeof t);
  uint64_t t3 = r->arrived_ns;
  rig_request_free(r);
  /* The agent's time between arrival and answer is not the network's. */
  uint64_t there = t[1] >= t[0] ? t[1] - t[0] : 0;
  uint64_t total = t3 - t0;
  *rtt = total > there ? total - there : 0;
  *offset = (((int64_t)t[0] - (int64_t)t0) + ((int64_t)t[1] - (int64_t)t3)) / 2;
  return RIG_OK;
}

rig_status rig_job_trace_start(rig_job *job, size_t capacity, unsigned pings, rig_job_clock *clocks,
                               rig_error *err) {
  rig_status st = on_controller(job, "rig_job_trace_start", err);
  if (st != RIG_OK) return st;
  if (pings < 1 || pings > 1000)
    return rig_error_set(err, RIG_EINVAL, "%u pings to measure a clock (1 to 1000)", pings);
  if (job->as_controller->trace_capacity)
    return rig_error_set(err, RIG_EINVAL, "the job's trace is started already");
  job->as_controller->trace_capacity = capacity;
  clocks[0] = (rig_job_clock){0, 0};
  for (int m = 1; m < job->size; m++) {
    frame f = {.h = {.kind = F_TRACE_START, .value = capacity}};
    request *r;
    if ((st = rig_request(job, m, &f, NULL, 0, &r, err)) != RIG_OK)
      return rig_error_prefix(err, "%s: its trace", rig_job_label(job, m));
    rig_request_free(r);
    uint64_t best = UINT64_MAX;
    for (unsigned i = 0; i < pings; i++) {
      uint64_t rtt = 0;
      int64_t offset = 0;
      if ((st = ping(job, m, &rtt, &offset, err)) != RIG_OK) return st;
      if (rtt < best) {
        best = rtt;
        clocks[m] = (rig_job_clock){offset, (rtt + 1) / 2};
      }
    }
  }
  return RIG_OK;
}

rig_status rig_job_trace_gather(rig_job *job, int m, rig_trace **out, rig_error *err) {
  rig_status st = on_controller(job, "rig_job_trace_gather", err);
  if (st != RIG_OK) return st;
  if (m < 1 || m >= job->size)
    return rig_error_set(err, RIG_EINVAL, "no agent of machine %d (the job has %d)", m, job->size);
  if (!job->as_controller->trace_capacity)
    return rig_error_set(err, RIG_EINVAL, "the job's trace is not started");
  /* After the machine's work (the agent drains what came by frame, this
   * what went by its rings: express.h). */
  rig_proxies_drain(job, m);
  frame f = {.h = {.kind = F_TRACE}};
  request *r;
  if ((st = rig_request(job, m, &f, NULL, 0, &r, err)) != RIG_OK)
    return rig_error_prefix(err, "%s: its trace", rig_job_label(job, m));
  st = rig_trace_decode(r->payload, r->len, capacity_of(job), out, err);
  rig_request_free(r);
  return st == RIG_OK ? RIG_OK : rig_error_prefix(err, "%s", rig_job_label(job, m));
}
