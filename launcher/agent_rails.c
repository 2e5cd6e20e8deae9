/* An agent's rail ends (docs/rails.md): made, attached and dropped on the
 * controller's requests, in order with its other requests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_rails.h"
#include "job_state.h"

void rig_agent_rail(rig_job *job, const frame *f, const unsigned char *payload,
                    void (*answer)(rig_job *job, const frame *req, rig_status st,
                                   const void *payload, size_t n)) {
  const frame_rail *fr = &f->rail;
  rig_error err;
  rig_status st = RIG_OK;
  if (f->h.kind == F_RAIL_MAKE) {
    size_t room = f->h.payload / sizeof(rig_rail_transfer);
    if (fr->nsend > room || fr->nreceive > room - fr->nsend ||
        (fr->nsend + fr->nreceive) * sizeof(rig_rail_transfer) != f->h.payload) {
      st = rig_error_set(&err, RIG_EINVAL, "rail %lld: a request of %u bytes for %llu transfers",
                         (long long)fr->id, f->h.payload,
                         (unsigned long long)(fr->nsend + fr->nreceive));
    } else if (fr->peer >= (uint32_t)job->size) {
      st = rig_error_set(&err, RIG_EINVAL, "rail %lld: no machine %u", (long long)fr->id, fr->peer);
    }
    /* The payload is not aligned for the transfers: copied out first. */
    rig_rail_transfer *t = NULL;
    if (st == RIG_OK && !(t = malloc(f->h.payload ? f->h.payload : 1)))
      st = rig_error_set(&err, RIG_ENOMEM, "out of memory for rail %lld", (long long)fr->id);
    if (st == RIG_OK) memcpy(t, payload, f->h.payload);
    job_rail *jr = NULL;
    if (st == RIG_OK && !(jr = calloc(1, sizeof *jr)))
      st = rig_error_set(&err, RIG_ENOMEM, "out of memory for rail %lld", (long long)fr->id);
    if (st == RIG_OK)
      st = rig_rail_create(fr->id, t, fr->nsend, t + fr->nsend, fr->nreceive, &jr->rail, &err);
    free(t);
    if (st == RIG_OK) {
      jr->job = job;
      jr->ends[0] = job->rank;
      jr->ends[1] = (int)fr->peer;
      rig_rail_set_hooks(jr->rail, &(rig_rail_hooks){.failed = rig_rail_table_failed, .ctx = jr});
      if ((st = rig_rail_table_add(&job->rails, jr, &err)) != RIG_OK) rig_rail_release(jr->rail);
    }
    if (st != RIG_OK) {
      free(jr);
      answer(job, f, st, err.message, strlen(err.message));
      return;
    }
    const void *address;
    size_t len;
    rig_rail_address(jr->rail, &address, &len);
    answer(job, f, RIG_OK, address, len);
    return;
  }
  if (f->h.kind == F_RAIL_ATTACH) {
    job_rail *jr = rig_rail_table_find(&job->rails, fr->id);
    if (!jr)
      st = rig_error_set(&err, RIG_EINVAL, "no rail %lld here", (long long)fr->id);
    else
      st = rig_rail_attach(jr->rail, payload, f->h.payload, &err);
    answer(job, f, st, st == RIG_OK ? NULL : err.message, st == RIG_OK ? 0 : strlen(err.message));
    return;
  }
  /* RELEASE: after the loads that used it (requests run in order). */
  job_rail *jr = rig_rail_table_take(&job->rails, fr->id);
  if (jr) {
    rig_rail_release(jr->rail);
    free(jr);
  }
  answer(job, f, RIG_OK, NULL, 0);
}
