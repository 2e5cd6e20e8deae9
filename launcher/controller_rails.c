/* Rails between the machines of a job (docs/rails.md), the controller's
 * side: it makes both ends, on their machines (itself included), carries
 * each end's address to the other through the control protocol, and
 * releases them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failure.h"
#include "job_state.h"

/* The controller's release: the agents' ends are asked first, so that
 * both ends drop together (each waits for the other's goodbye). */
static void rail_release(void *ctx, rig_rail *r) {
  job_rail *jr = ctx;
  rig_job *job = jr->job;
  rig_rail_table_take(&job->rails, rig_rail_id(r));
  for (int e = 0; e < 2; e++) {
    if (jr->ends[e] == job->rank) continue;
    frame f = {.h.kind = F_RAIL_RELEASE, .rail.id = rig_rail_id(r)};
    rig_error ignored;
    if (rig_request_post(job, jr->ends[e], &f, NULL, 0, &jr->releasing[e], &ignored) != RIG_OK)
      jr->releasing[e] = NULL;
  }
}

static void rail_released(void *ctx, rig_rail *r) {
  job_rail *jr = ctx;
  rig_rail_set_hooks(r, &(rig_rail_hooks){0});
  for (int e = 0; e < 2; e++) {
    request *reply = NULL;
    rig_error ignored;
    if (jr->releasing[e] &&
        rig_request_await(jr->job, jr->releasing[e], &reply, &ignored) == RIG_OK)
      rig_request_free(reply);
  }
  free(jr);
}

/* ---- the controller ------------------------------------------------------------------ */

static rig_status check_rail(rig_job *job, int64_t id, int a, int b, const rig_rail_transfer *send,
                             size_t nsend, const rig_rail_transfer *receive, size_t nreceive,
                             rig_error *err) {
  if (!job->as_controller)
    return rig_error_set(err, RIG_EINVAL,
                         "rig_job_rail on machine %d: only the controller makes rails", job->rank);
  if (a == b)
    return rig_error_set(err, RIG_EINVAL, "rail %lld: between machine %d and itself", (long long)id,
                         a);
  if (a < 0 || a >= job->size || b < 0 || b >= job->size)
    return rig_error_set(err, RIG_EINVAL, "rail %lld: machine %d is not in this job of %d",
                         (long long)id, a < 0 || a >= job->size ? a : b, job->size);
  rig_status st = rig_rail_check(send, nsend, receive, nreceive, err);
  if (st != RIG_OK) {
    rig_error_prefix(err, "rail %lld", (long long)id);
    return st;
  }
  if (id < 1)
    return rig_error_set(err, RIG_EINVAL, "rail %lld: an id is at least 1", (long long)id);
  if (rig_rail_table_find(&job->rails, id))
    return rig_error_set(err, RIG_EINVAL, "rail %lld: an id already in use", (long long)id);
  if (atomic_load(&job->failed)) return rig_job_error(job, err);
  return RIG_OK;
}

/* One end's transfers, as it sees them: send first. */
static unsigned char *end_payload(const rig_rail_transfer *send, size_t nsend,
                                  const rig_rail_transfer *receive, size_t nreceive, size_t *n) {
  *n = (nsend + nreceive) * sizeof *send;
  unsigned char *p = malloc(*n ? *n : 1);
  if (!p) return NULL;
  if (nsend) memcpy(p, send, nsend * sizeof *send);
  if (nreceive) memcpy(p + nsend * sizeof *send, receive, nreceive * sizeof *receive);
  return p;
}

/* This process's rail: its end when it is one, else an id only. here: 0
 * or 1 the end it is, -1 neither. */
static rig_status make_here(int64_t id, int here, const rig_rail_transfer *send, size_t nsend,
                            const rig_rail_transfer *receive, size_t nreceive, rig_rail **out,
                            rig_error *err) {
  if (here == 0) return rig_rail_create(id, send, nsend, receive, nreceive, out, err);
  if (here == 1) return rig_rail_create(id, receive, nreceive, send, nsend, out, err);
  return rig_rail_create_elsewhere(id, out, err);
}

/* Each end made on its machine; its address in address[e] (made[e] holds
 * an agent's answer). */
static rig_status make_ends(job_rail *jr, int here, const rig_rail_transfer *send, size_t nsend,
                            const rig_rail_transfer *receive, size_t nreceive, request **made,
                            const void **address, size_t *len, rig_error *err) {
  int64_t id = rig_rail_id(jr->rail);
  for (int e = 0; e < 2; e++) {
    if (e == here) {
      rig_rail_address(jr->rail, &address[e], &len[e]);
      continue;
    }
    size_t n;
    unsigned char *payload = e == 0 ? end_payload(send, nsend, receive, nreceive, &n)
                                    : end_payload(receive, nreceive, send, nsend, &n);
    if (!payload)
      return rig_error_set(err, RIG_ENOMEM, "out of memory for rail %lld", (long long)id);
    frame f = {.h.kind = F_RAIL_MAKE,
               .rail = {.id = id,
                        .peer = (uint32_t)jr->ends[1 - e],
                        .nsend = e == 0 ? nsend : nreceive,
                        .nreceive = e == 0 ? nreceive : nsend}};
    rig_status st = rig_request(jr->job, jr->ends[e], &f, payload, n, &made[e], err);
    free(payload);
    if (st != RIG_OK) {
      rig_error_prefix(err, "%s", rig_job_label(jr->job, jr->ends[e]));
      return st;
    }
    address[e] = made[e]->payload;
    len[e] = made[e]->len;
  }
  return RIG_OK;
}

/* Each end attached to the other's address. */
static rig_status attach_ends(job_rail *jr, int here, const void **address, const size_t *len,
                              rig_error *err) {
  for (int e = 0; e < 2; e++) {
    rig_status st;
    if (e == here) {
      st = rig_rail_attach(jr->rail, address[1 - e], len[1 - e], err);
      if (st != RIG_OK) rig_job_unreached(jr->job, jr->ends[e], jr->ends[1 - e], err);
      if (st != RIG_OK) return st;
      continue;
    }
    frame f = {.h.kind = F_RAIL_ATTACH, .rail.id = rig_rail_id(jr->rail)};
    request *reply = NULL;
    st = rig_request(jr->job, jr->ends[e], &f, address[1 - e], len[1 - e], &reply, err);
    if (st != RIG_OK) {
      rig_job_unreached(jr->job, jr->ends[e], jr->ends[1 - e], err);
      rig_error_prefix(err, "%s", rig_job_label(jr->job, jr->ends[e]));
      return st;
    }
    rig_request_free(reply);
  }
  return RIG_OK;
}

rig_status rig_job_rail_as(rig_job *job, int64_t id, int a, int b, const rig_rail_transfer *send,
                           size_t nsend, const rig_rail_transfer *receive, size_t nreceive,
                           rig_rail **out, rig_error *err) {
  rig_status st = check_rail(job, id, a, b, send, nsend, receive, nreceive, err);
  if (st != RIG_OK) return st;
  job_rail *jr = calloc(1, sizeof *jr);
  if (!jr) return rig_error_set(err, RIG_ENOMEM, "out of memory for rail %lld", (long long)id);
  jr->job = job;
  jr->ends[0] = a;
  jr->ends[1] = b;
  int here = a == 0 ? 0 : b == 0 ? 1 : -1;
  if ((st = make_here(id, here, send, nsend, receive, nreceive, &jr->rail, err)) != RIG_OK) {
    free(jr);
    return st;
  }
  /* From here on a failure releases what was made, the agents' ends too. */
  rig_rail_hooks hooks = {rig_rail_table_failed, rail_release, rail_released, jr};
  rig_rail_set_hooks(jr->rail, &hooks);
  if ((st = rig_rail_table_add(&job->rails, jr, err)) != RIG_OK) {
    rig_rail_set_hooks(jr->rail, &(rig_rail_hooks){0});
    rig_rail_release(jr->rail);
    free(jr);
    return st;
  }
  request *made[2] = {NULL, NULL};
  const void *address[2] = {NULL, NULL};
  size_t len[2] = {0, 0};
  st = make_ends(jr, here, send, nsend, receive, nreceive, made, address, len, err);
  if (st == RIG_OK) st = attach_ends(jr, here, address, len, err);
  rig_request_free(made[0]);
  rig_request_free(made[1]);
  if (st != RIG_OK) {
    rig_rail_release(jr->rail);
    return st;
  }
  *out = jr->rail;
  return RIG_OK;
}

rig_status rig_job_rail(rig_job *job, int a, int b, const rig_rail_transfer *send, size_t nsend,
                        const rig_rail_transfer *receive, size_t nreceive, rig_rail **out,
                        rig_error *err) {
  /* The job's one id space. */
  int64_t id = rig_rail_table_next_id(&job->rails);
  return rig_job_rail_as(job, id, a, b, send, nsend, receive, nreceive, out, err);
}
