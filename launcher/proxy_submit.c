/* How a proxy hands work over to its agent (docs/jobs.md "Runs by shared
 * memory", docs/internals.md "Across hosts"): into the device's ring,
 * stored there when the controller maps it, sent as a message when the
 * agent is reached so; a copy of the agent's host memory that the
 * controller maps made here; the rest as frames of the control protocol.
 * The agent takes all of them in value order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "express.h"
#include "failure.h"
#include "job.h"
#include "proxy.h"
#include "remote.h"

/* Copies of at least this many bytes wait for the device's earlier work
 * and are made here (express.h). */
#define NEAR_WAIT (UINT64_C(1) << 20)

/* Waits until the device's timeline shows `before` (false: the job failed
 * first). A waiter progresses the worker a little itself: the report may
 * be one of its messages. */
static bool wait_timeline(proxy *px, rig_job *job, uint64_t before) {
  while (atomic_load_explicit(&px->tl->value, memory_order_acquire) < before) {
    if (atomic_load(&job->failed)) return false;
    if (px->by_messages && rig_peer_progress()) continue;
    rig_express_sleep(px->tl, before, 1000000);
  }
  return true;
}

/* Into the agent's ring: stored when the ring is mapped here (false when
 * its slot is still busy: the ring is full), sent as a message when the
 * agent is reached so (once its slot is free). False too when the bytes do
 * not fit a slot, or neither way is open: then a frame carries it. */
static bool into_ring(proxy *px, rig_job *job, uint64_t value, uint32_t kind, const void *head,
                      size_t hlen, const void *bytes, size_t len, rig_status *st, rig_error *err) {
  if (hlen + len > EX_SLOT_BYTES) return false;
  if (px->ring) {
    if (!rig_express_claim(px->ring, px->tl, value)) return false;
    rig_express_publish(px->ring, value, kind, head, hlen, bytes, len);
    *st = RIG_OK;
    return true;
  }
  if (!px->by_messages) return false;
  if (value > EX_RING && !wait_timeline(px, job, value - EX_RING))
    *st = rig_job_error(job, err);
  else
    *st = rig_remote_handover(px->link->express, px->machine, px->index, value, kind, head, hlen,
                              bytes, len, err);
  return true;
}

/* A copy between the controller's memory and the agent's host memory that
 * the controller maps: made here once the device's earlier work is done,
 * and a mark of its value in the ring. The core waited for the memory's
 * users on other devices, not for this device's own earlier work. A large
 * copy waits for it (the agent's copy would be slower); a small one goes
 * the agent's way, in order. */
static bool copy_near(proxy *px, rig_job *job, const rig_work *w, rig_status *st, rig_error *err) {
  bool in = rig_proxy_is_remote(w->dst);
  uint64_t there = in ? w->dst : w->src, len;
  unsigned char *near;
  if (!px->ring ||
      !(near = rig_express_mem(px->link->express, px->machine, rig_proxy_remote_id(there), &len)))
    return false;
  uint64_t at = rig_proxy_remote_offset(there), before = w->value - 1;
  if (at > len || w->length > len - at) return false;
  bool ready = atomic_load_explicit(&px->tl->value, memory_order_acquire) >= before ||
               (w->length >= NEAR_WAIT && wait_timeline(px, job, before));
  if (atomic_load(&job->failed)) {
    *st = rig_job_error(job, err);
    return true;
  }
  if (!ready || !rig_express_claim(px->ring, px->tl, w->value)) return false;
  if (in)
    memcpy(near + at, (const void *)(uintptr_t)w->src, w->length);
  else
    memcpy((void *)(uintptr_t)w->dst, near + at, w->length);
  rig_express_publish(px->ring, w->value, EX_DONE, NULL, 0, NULL, 0);
  *st = RIG_OK;
  return true;
}

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
    if (px->by_messages)
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
  if ((in || out) && copy_near(px, job, w, &st, err)) return st;
  uint64_t there = in ? w->dst : w->src;
  ex_copy c = {rig_proxy_remote_id(there), rig_proxy_remote_offset(there), w->length,
               in ? w->src : w->dst};
  /* Small copies in carry their bytes; larger ones, and copies out, go
   * far where the agent reaches this memory itself. */
  if (in && into_ring(px, job, w->value, EX_IN, &c, sizeof c, (const void *)(uintptr_t)w->src,
                      w->length, &st, err))
    return st;
  if ((in || out) && px->far &&
      into_ring(px, job, w->value, in ? EX_IN_FAR : EX_OUT_FAR, &c, sizeof c, NULL, 0, &st, err))
    return st;
  return copy_by_frame(px, job, w, err);
}

rig_status rig_proxy_submit(void *st, const rig_work *w, rig_error *err) {
  proxy *px = st;
  rig_job *job;
  rig_status s = rig_proxy_job(px, &job, err);
  if (s != RIG_OK) return s;
  if (atomic_load(&job->failed)) return rig_job_error(job, err);
  /* A report by message past this is false (remote.c). */
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
  if (into_ring(px, job, w->value, EX_WORDS, NULL, 0, bytes, p->u.words.length, &s, err)) return s;
  frame f = {.h = {.kind = F_WORDS, .device = px->index, .value = w->value}};
  return rig_ctl_send(&job->c, px->machine, &f, bytes, p->u.words.length, err);
}
