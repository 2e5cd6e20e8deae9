/* Hand-overs on a GPU's stream, in order: waits on other devices' words
 * (cuStreamWaitValue64), the work's parts (launches, graphs of consecutive
 * launches, fills given the stream as their queue, copies), then the
 * value into the device's word (cuStreamWriteValue64). The host never
 * waits for the GPU here. */
#include <string.h>

#include "cuda_internal.h"

bool cuda_can_wait(void *st, const rig_device *other) {
  cuda_gpu *g = st;
  /* The host's work is done when its submit returns: nothing to wait on. */
  if (rig_device_facts_of(other)->synchronous) return false;
  uint64_t v;
  uint32_t index = rig_device_index(other);
  const _Atomic uint64_t *w = rig_point_word(rig_point_make(index, 1), &v);
  return w && cuda_word_address(g, index, (const void *)w) != 0;
}

/* ---- parts ------------------------------------------------------------------ */

static void ready_call(void *user) {
  const cuda_ready *r = user;
  ((rig_ready_fn *)(uintptr_t)r->fn)((void *)(uintptr_t)r->counts, r->count);
}

/* A rail's ready, in stream order: the record stays until the GPU's word
 * passes the work that used it, so a reuse first waits for that. */
static CUresult ready_part(cuda_gpu *g, const rig_part *p, const unsigned char *params,
                           uint64_t value) {
  cuda_ready *r = &g->ready[g->nready++ % CUDA_READY_RING];
  if (r->value && atomic_load_explicit(g->word, memory_order_acquire) < r->value) {
    cuda_leave();
    rig_status st = rig_point_wait(rig_point_make(rig_device_index(g->dev), r->value), NULL);
    cuda_enter(g);
    if (st != RIG_OK) return CUDA_ERROR_LAUNCH_FAILED;
  }
  uint64_t word[2];
  memcpy(word, params, sizeof word);
  r->fn = p->u.fill.fn;
  r->counts = word[0];
  r->count = word[1];
  r->value = value;
  return rig_cu.LaunchHostFunc(g->stream, ready_call, r);
}

static CUresult launch(cuda_gpu *g, const rig_work *w, size_t i, const rig_part *p) {
  _Alignas(16) unsigned char params[RIG_MAX_PARAMS];
  size_t n = rig_work_params(w, i, params);
  uint32_t geom[7];
  memcpy(geom, rig_block_geometry(w->sub, (void *)w->block, i), sizeof geom);
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, params, CU_LAUNCH_PARAM_BUFFER_SIZE, &n,
                   CU_LAUNCH_PARAM_END};
  return rig_cu.LaunchKernel((CUfunction)(uintptr_t)p->u.launch.entry.value, geom[0], geom[1],
                             geom[2], geom[3], geom[4], geom[5], geom[6], g->stream, NULL, extra);
}

/* The parts of a submission; *call names the call that failed. */
static CUresult run_parts(cuda_gpu *g, const rig_work *w, const char **call, rig_status *st,
                          rig_error *err) {
  const rig_submission *s = w->sub;
  void *state = rig_submission_prepared(s);
  size_t nparts = rig_submission_nparts(s);
  for (size_t i = 0; i < nparts; i++) {
    const rig_part *p = rig_submission_part(s, i);
    CUresult r = CUDA_SUCCESS;
    switch (p->kind) {
      case RIG_WORK_LAUNCH: {
        size_t span = cuda_graph_span(state, i);
        if (span) {
          *call = "cuGraphLaunch";
          if ((*st = cuda_graph_run(g, state, i, w, err)) != RIG_OK) return CUDA_ERROR_UNKNOWN;
          i += span - 1;
        } else {
          *call = "cuLaunchKernel";
          r = launch(g, w, i, p);
        }
        break;
      }
      case RIG_WORK_FILL: {
        _Alignas(16) unsigned char params[RIG_MAX_PARAMS];
        rig_work_params(w, i, params);
        if (p->u.fill.ready) {
          *call = "cuLaunchHostFunc";
          r = ready_part(g, p, params, w->value);
        } else {
          int rc = ((rig_fill_fn *)(uintptr_t)p->u.fill.fn)(g->stream, params, w->value);
          if (rc != 0) {
            rig_device_lose(g->dev, "part %zu: a fill failed with %d", i, rc);
            rig_device_is_lost(g->dev, err);
            *st = RIG_ELOST;
            return CUDA_ERROR_UNKNOWN;
          }
        }
        break;
      }
      case RIG_WORK_COPY: {
        uint64_t src, dst;
        rig_work_copy_ends(w, i, &src, &dst);
        *call = "cuMemcpyAsync";
        if (p->u.copy.length) r = rig_cu.MemcpyAsync(dst, src, p->u.copy.length, g->stream);
        break;
      }
      case RIG_WORK_WORDS:
        break; /* refused at make: the GPU runs no words */
    }
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

/* What the GPU cannot run, refused before anything is handed over. */
static rig_status check(cuda_gpu *g, const rig_work *w, rig_error *err);

rig_status cuda_submit(void *st, const rig_work *w, rig_error *err) {
  cuda_gpu *g = st;
  if (w->sub) {
    rig_status s = check(g, w, err);
    if (s != RIG_OK) return s;
  }
  cuda_enter(g);
  CUresult r = CUDA_SUCCESS;
  const char *call = "cuStreamWaitValue64";
  for (size_t i = 0; r == CUDA_SUCCESS && i < w->nwaits; i++) {
    uint64_t v;
    const _Atomic uint64_t *word = rig_point_word(w->waits[i], &v);
    if (!word) continue;
    CUdeviceptr d = cuda_word_address(g, rig_point_device(w->waits[i]), (const void *)word);
    pthread_mutex_lock(&g->waits_lock);
    g->waits[g->nwaits % CUDA_READY_RING].on = w->waits[i];
    g->waits[g->nwaits++ % CUDA_READY_RING].value = w->value;
    pthread_mutex_unlock(&g->waits_lock);
    r = d ? rig_cu.StreamWaitValue64(g->stream, d, v, CU_STREAM_WAIT_VALUE_GEQ)
          : CUDA_ERROR_INVALID_VALUE;
  }
  rig_status s = RIG_OK;
  if (r == CUDA_SUCCESS) {
    if (w->sub) {
      r = run_parts(g, w, &call, &s, err);
    } else if (w->length) {
      call = "cuMemcpyAsync";
      r = rig_cu.MemcpyAsync(w->dst, w->src, w->length, g->stream);
    }
  }
  if (r == CUDA_SUCCESS) {
    call = "cuStreamWriteValue64";
    r = rig_cu.StreamWriteValue64(g->stream, g->word_dptr, w->value, CU_STREAM_WRITE_VALUE_DEFAULT);
  }
  cuda_leave();
  if (s != RIG_OK) return s;
  if (r != CUDA_SUCCESS) return cuda_fail(g, call, r, err);
  return RIG_OK;
}

static rig_status check(cuda_gpu *g, const rig_work *w, rig_error *err) {
  void *state = rig_submission_prepared(w->sub);
  size_t nparts = rig_submission_nparts(w->sub);
  for (size_t i = 0; i < nparts; i++) {
    const rig_part *p = rig_submission_part(w->sub, i);
    if (p->kind != RIG_WORK_LAUNCH) continue;
    const uint32_t *geom = rig_block_geometry(w->sub, (void *)w->block, i);
    /* The driver would refuse these, and a refusal there loses the GPU. */
    for (int k = 0; k < 3; k++) {
      if (geom[k] > g->max_groups[k])
        return rig_error_set(
            err, RIG_EINVAL, "part %zu: groups (%u, %u, %u) beyond %s's (%u, %u, %u)", i, geom[0],
            geom[1], geom[2], g->name, g->max_groups[0], g->max_groups[1], g->max_groups[2]);
      if (geom[3 + k] > g->max_threads[k])
        return rig_error_set(
            err, RIG_EINVAL, "part %zu: threads (%u, %u, %u) beyond %s's (%u, %u, %u)", i, geom[3],
            geom[4], geom[5], g->name, g->max_threads[0], g->max_threads[1], g->max_threads[2]);
    }
    uint32_t shared = geom[6];
    uint32_t most = cuda_shared_limit(state, i);
    if (shared > most)
      return rig_error_set(err, RIG_EINVAL,
                           "part %zu: %u bytes of shared memory, more than its function's %u on %s",
                           i, shared, most, g->name);
  }
  return RIG_OK;
}
