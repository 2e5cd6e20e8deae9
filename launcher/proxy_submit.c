/* How a proxy hands work over to its agent: as its route takes it
 * (proxy_route.h: into the device's ring, by memory or by message; a copy
 * of the agent's host memory mapped here made here), else as a frame of
 * the control protocol. The agent takes all of them in value order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "express.h"
#include "failure.h"
#include "job.h"
#include "proxy.h"
#include "proxy_route.h"

/* A copy as a frame of the control protocol. */
static rig_status copy_by_frame(proxy *px, rig_job *job, const rig_work *w, rig_error *err) {
  bool src_there = rig_proxy_is_remote(w->src), dst_there = rig_proxy_is_remote(w->dst);
  frame f = {.h = {.device = px->index, .value = w->value}};
  if (!src_there && dst_there) {
    f.h.kind = F_COPY_IN;
    f.copy_in = (frame_copy_in){.memory = rig_proxy_remote_id(w->dst),
                                .offset = rig_proxy_remote_offset(w->dst)};
    return rig_ctl_send(&job->c, px->machine, &f, (const void *)(uintptr_t)w->src, w->length, err);
  }
  if (src_there && !dst_there) {
    /* Its bytes come back in a REPLY; a machine reached by messages
     * reports by messages, which could pass the REPLY: its copies out go
     * far, always. */
    if (!px->route->copies_out_by_frame)
      return rig_error_set(err, RIG_EREFUSED, "%s: a copy out of no memory open to it",
                           rig_device_name(px->dev));
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

static rig_status submit_copy(proxy *px, rig_job *job, const rig_work *w, rig_error *err) {
  bool in = !rig_proxy_is_remote(w->src) && rig_proxy_is_remote(w->dst);
  bool out = rig_proxy_is_remote(w->src) && !rig_proxy_is_remote(w->dst);
  rig_status st;
  if ((in || out) && px->route->copy_near(px, job, w, &st, err)) return st;
  uint64_t there = in ? w->dst : w->src;
  ex_copy c = {rig_proxy_remote_id(there), rig_proxy_remote_offset(there), w->length,
               in ? w->src : w->dst};
  /* Small copies in carry their bytes; larger ones, and copies out, go
   * far where the agent reaches this memory itself. */
  proxy_handover near = {w->value, EX_IN, &c, (const void *)(uintptr_t)w->src, sizeof c, w->length};
  if (in && px->route->handover(px, job, &near, &st, err)) return st;
  proxy_handover far = {w->value, in ? EX_IN_FAR : EX_OUT_FAR, &c, NULL, sizeof c, 0};
  if ((in || out) && px->far && px->route->handover(px, job, &far, &st, err)) return st;
  return copy_by_frame(px, job, w, err);
}

rig_status rig_proxy_submit(void *st, const rig_work *w, rig_error *err) {
  proxy *px = st;
  rig_job *job;
  rig_status s = rig_proxy_job(px, &job, err);
  if (s != RIG_OK) return s;
  if (atomic_load(&job->failed)) return rig_job_error(job, err);
  /* A report by message past this is false (express_messages.c). */
  if (px->tl) atomic_store_explicit(&px->tl->posted, w->value, memory_order_release);
  if (!w->sub) return submit_copy(px, job, w, err);
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
  const void *bytes = (const void *)(uintptr_t)(base + p->u.words.offset);
  /* Into the agent's ring where it can; else (too long, the ring full, no
   * ring) as a frame: the agent takes both in value order. */
  proxy_handover words = {w->value, EX_WORDS, NULL, bytes, 0, p->u.words.length};
  if (px->route->handover(px, job, &words, &s, err)) return s;
  frame f = {.h = {.kind = F_WORDS, .device = px->index, .value = w->value}};
  return rig_ctl_send(&job->c, px->machine, &f, bytes, p->u.words.length, err);
}
