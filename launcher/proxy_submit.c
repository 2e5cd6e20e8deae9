/* How a proxy hands work over to its agent: as its route does
 * (route/route.h: into the device's ring, by memory or by message; a copy
 * of the agent's host memory mapped here made here; else as a frame of
 * the control protocol, with the helpers below). The agent takes all of
 * them in value order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "express.h"
#include "failure.h"
#include "job_state.h"
#include "proxy.h"
#include "route/route.h"

rig_status rig_proxy_send_copy(proxy *px, rig_job *job, const rig_work *w, rig_error *err) {
  bool src_there = rig_proxy_is_remote(w->src), dst_there = rig_proxy_is_remote(w->dst);
  frame f = {.h = {.device = px->index, .value = w->value}};
  if (!src_there && dst_there) {
    f.h.kind = F_COPY_IN;
    f.copy_in = (frame_copy_in){.memory = rig_proxy_remote_id(w->dst),
                                .offset = rig_proxy_remote_offset(w->dst)};
    return rig_ctl_send(&job->c, px->machine, &f, (const void *)(uintptr_t)w->src, w->length, err);
  }
  if (src_there && !dst_there) {
    /* Its bytes come back in a REPLY (a route whose reports could pass it
     * sends its copies out far, always). */
    f.h.kind = F_COPY_OUT;
    f.h.request = rig_request_id(job);
    f.copy_out = (frame_copy_out){.memory = rig_proxy_remote_id(w->src),
                                  .offset = rig_proxy_remote_offset(w->src),
                                  .length = w->length};
    rig_status st = rig_request_expect(job, f.h.request, (void *)(uintptr_t)w->dst, w->length, err);
    return st == RIG_OK ? rig_ctl_send(&job->c, px->machine, &f, NULL, 0, err) : st;
  }
  if (src_there && dst_there) {
    f.h.kind = F_COPY;
    f.copy = (frame_copy){.src = rig_proxy_remote_id(w->src),
                          .src_offset = rig_proxy_remote_offset(w->src),
                          .length = w->length,
                          .dst = rig_proxy_remote_id(w->dst),
                          .dst_offset = rig_proxy_remote_offset(w->dst)};
    return rig_ctl_send(&job->c, px->machine, &f, NULL, 0, err);
  }
  return rig_error_set(err, RIG_EREFUSED, "%s: a copy between two host memories",
                       rig_device_name(px->dev));
}

rig_status rig_proxy_words(proxy *px, const rig_work *w, const void **bytes, size_t *len,
                           rig_error *err) {
  /* Only words reach a proxy (the facts say it runs nothing else): their
   * bytes, read at the hand-over, travel with it. */
  const rig_part *p = rig_submission_part(w->sub, 0);
  if (rig_submission_nparts(w->sub) != 1 || p->kind != RIG_WORK_WORDS)
    return rig_error_set(err, RIG_EREFUSED, "%s: a submission of other than one words part",
                         rig_device_name(px->dev));
  uint64_t base = rig_work_side_address(w, p->u.words.side);
  if (rig_proxy_is_remote(base))
    return rig_error_set(err, RIG_EREFUSED, "%s: words in memory of another machine",
                         rig_device_name(px->dev));
  *bytes = (const void *)(uintptr_t)(base + p->u.words.offset);
  *len = p->u.words.length;
  return RIG_OK;
}

rig_status rig_proxy_send_words(proxy *px, rig_job *job, uint64_t value, const void *bytes,
                                size_t len, rig_error *err) {
  frame f = {.h = {.kind = F_WORDS, .device = px->index, .value = value}};
  return rig_ctl_send(&job->c, px->machine, &f, bytes, len, err);
}

rig_status rig_proxy_submit(void *st, const rig_work *w, rig_error *err) {
  proxy *px = st;
  rig_job *job;
  rig_status s = rig_proxy_job(px, &job, err);
  if (s != RIG_OK) return s;
  if (atomic_load(&job->failed)) return rig_job_error(job, err);
  return px->route->submit(px, job, w, err);
}
