/* What a GPU keeps per submission (prepare, once, at make): each launch's
 * dynamic shared-memory limit, and a CUDA graph of every span of two or
 * more consecutive launches, instantiated twice (one exec per block a
 * program alternates between, its copies). A run replays the exec of its
 * block with cuGraphLaunch and updates only the nodes whose parameters or
 * geometry changed since that exec last ran (cuGraphExecKernelNodeSetParams);
 * nothing is ever instantiated again. */
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

#define EXECS 2

typedef struct exec {
  CUgraphExec exec;
  const void *block; /* the block it last ran with */
  bool valid;        /* its nodes hold last[] */
  unsigned char **last;
  uint32_t (*geom)[7];
  uint64_t used; /* when it last ran, to replace the oldest */
} exec;

typedef struct graph {
  size_t first, n; /* parts first..first+n-1, all launches */
  CUgraph graph;
  CUgraphNode *nodes;
  exec execs[EXECS];
} graph;

typedef struct prep {
  size_t nparts;
  uint32_t *shared; /* per part: a launch's dynamic shared-memory limit */
  size_t *span;     /* per part: the launches of the graph it starts, or 0 */
  size_t *graph_of; /* per part that starts one: its graph */
  graph *graphs;
  size_t ngraphs;
  uint64_t runs;
} prep;

uint32_t cuda_shared_limit(void *state, size_t part) {
  prep *p = state;
  return p->shared[part];
}

size_t cuda_graph_span(void *state, size_t first) {
  prep *p = state;
  return p->span[first];
}

static void node_params(const rig_part *part, unsigned char *params, const uint32_t g[7],
                        void **extra, size_t *bytes, CUDA_KERNEL_NODE_PARAMS *np) {
  *bytes = part->u.launch.params_bytes;
  extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
  extra[1] = params;
  extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
  extra[3] = bytes;
  extra[4] = CU_LAUNCH_PARAM_END;
  memset(np, 0, sizeof *np);
  np->func = (CUfunction)(uintptr_t)part->u.launch.entry.value;
  np->gridDimX = g[0], np->gridDimY = g[1], np->gridDimZ = g[2];
  np->blockDimX = g[3], np->blockDimY = g[4], np->blockDimZ = g[5];
  np->sharedMemBytes = g[6];
  np->extra = extra;
}

/* A node's make-time geometry with every zero raised to one: the graph is
 * built before any run says its geometry, and each run sets its own. */
static void default_geometry(const rig_part *part, uint32_t g[7]) {
  for (int k = 0; k < 3; k++) {
    g[k] = part->u.launch.groups[k] ? part->u.launch.groups[k] : 1;
    g[3 + k] = part->u.launch.threads[k] ? part->u.launch.threads[k] : 1;
  }
  g[6] = 0;
}

static void graph_free(graph *gr) {
  for (int e = 0; e < EXECS; e++) {
    if (gr->execs[e].exec) rig_cu.GraphExecDestroy(gr->execs[e].exec);
    for (size_t k = 0; gr->execs[e].last && k < gr->n; k++) free(gr->execs[e].last[k]);
    free(gr->execs[e].last);
    free(gr->execs[e].geom);
  }
  if (gr->graph) rig_cu.GraphDestroy(gr->graph);
  free(gr->nodes);
}

/* Builds the graph of launches first..first+n-1 as a chain (parts run in
 * order). False if CUDA refuses any of it: the launches then go one by
 * one, which is slower but the same work. */
static bool graph_make(const rig_submission *sub, graph *gr) {
  if (rig_cu.GraphCreate(&gr->graph, 0) != CUDA_SUCCESS) return false;
  gr->nodes = calloc(gr->n, sizeof *gr->nodes);
  if (!gr->nodes) return false;
  for (size_t k = 0; k < gr->n; k++) {
    const rig_part *part = rig_submission_part(sub, gr->first + k);
    _Alignas(16) unsigned char params[RIG_MAX_PARAMS];
    memcpy(params, part->u.launch.params, part->u.launch.params_bytes);
    uint32_t g[7];
    default_geometry(part, g);
    void *extra[5];
    size_t bytes;
    CUDA_KERNEL_NODE_PARAMS np;
    node_params(part, params, g, extra, &bytes, &np);
    if (rig_cu.GraphAddKernelNode(&gr->nodes[k], gr->graph, k ? &gr->nodes[k - 1] : NULL, k ? 1 : 0,
                                  &np) != CUDA_SUCCESS)
      return false;
  }
  for (int e = 0; e < EXECS; e++) {
    exec *x = &gr->execs[e];
    x->last = calloc(gr->n, sizeof *x->last);
    x->geom = calloc(gr->n, sizeof *x->geom);
    if (!x->last || !x->geom) return false;
    for (size_t k = 0; k < gr->n; k++) {
      const rig_part *part = rig_submission_part(sub, gr->first + k);
      x->last[k] = malloc(part->u.launch.params_bytes ? part->u.launch.params_bytes : 1);
      if (!x->last[k]) return false;
    }
    if (rig_cu.GraphInstantiateWithFlags(&x->exec, gr->graph, 0) != CUDA_SUCCESS) return false;
  }
  return true;
}

rig_status cuda_prepare(void *st, const rig_submission *sub, void **state, rig_error *err) {
  cuda_gpu *g = st;
  size_t n = rig_submission_nparts(sub);
  prep *p = calloc(1, sizeof *p);
  if (p) {
    p->nparts = n;
    p->shared = calloc(n ? n : 1, sizeof *p->shared);
    p->span = calloc(n ? n : 1, sizeof *p->span);
    p->graph_of = calloc(n ? n : 1, sizeof *p->graph_of);
    p->graphs = calloc(n ? n : 1, sizeof *p->graphs);
  }
  if (!p || !p->shared || !p->span || !p->graph_of || !p->graphs) {
    cuda_forget(st, p);
    return rig_error_set(err, RIG_ENOMEM, "%s: out of memory for a submission", g->name);
  }
  cuda_enter(g);
  for (size_t i = 0; i < n; i++) {
    const rig_part *part = rig_submission_part(sub, i);
    if (part->kind != RIG_WORK_LAUNCH) continue;
    int most = 0;
    CUresult r = rig_cu.FuncGetAttribute(&most, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         (CUfunction)(uintptr_t)part->u.launch.entry.value);
    p->shared[i] = r == CUDA_SUCCESS && most > 0 ? (uint32_t)most : 0;
  }
  for (size_t i = 0; i < n;) {
    size_t k = i;
    while (k < n && rig_submission_part(sub, k)->kind == RIG_WORK_LAUNCH) k++;
    if (k - i >= 2) {
      graph *gr = &p->graphs[p->ngraphs];
      gr->first = i;
      gr->n = k - i;
      if (graph_make(sub, gr)) {
        p->span[i] = gr->n;
        p->graph_of[i] = p->ngraphs++;
      } else {
        graph_free(gr);
        memset(gr, 0, sizeof *gr);
      }
    }
    i = k > i ? k : i + 1;
  }
  cuda_leave();
  *state = p;
  return RIG_OK;
}

void cuda_forget(void *st, void *state) {
  cuda_gpu *g = st;
  prep *p = state;
  if (!p) return;
  cuda_enter(g);
  for (size_t i = 0; p->graphs && i < p->ngraphs; i++) graph_free(&p->graphs[i]);
  cuda_leave();
  free(p->shared);
  free(p->span);
  free(p->graph_of);
  free(p->graphs);
  free(p);
}

/* The exec for this block: the one that last ran it, else the oldest. */
static exec *pick(graph *gr, const void *block) {
  exec *best = &gr->execs[0];
  for (int e = 0; e < EXECS; e++) {
    if (gr->execs[e].block == block) return &gr->execs[e];
    if (gr->execs[e].used < best->used) best = &gr->execs[e];
  }
  best->block = block;
  return best;
}

rig_status cuda_graph_run(cuda_gpu *g, void *state, size_t first, const rig_work *w,
                          rig_error *err) {
  prep *p = state;
  graph *gr = &p->graphs[p->graph_of[first]];
  exec *x = pick(gr, w->block);
  for (size_t k = 0; k < gr->n; k++) {
    size_t i = gr->first + k;
    const rig_part *part = rig_submission_part(w->sub, i);
    _Alignas(16) unsigned char params[RIG_MAX_PARAMS];
    size_t n = rig_work_params(w, i, params);
    uint32_t geom[7];
    memcpy(geom, rig_block_geometry(w->sub, (void *)w->block, i), sizeof geom);
    if (x->valid && !memcmp(x->last[k], params, n) && !memcmp(x->geom[k], geom, sizeof geom))
      continue;
    void *extra[5];
    size_t bytes;
    CUDA_KERNEL_NODE_PARAMS np;
    node_params(part, params, geom, extra, &bytes, &np);
    CUresult r = rig_cu.GraphExecKernelNodeSetParams(x->exec, gr->nodes[k], &np);
    if (r != CUDA_SUCCESS) {
      x->valid = false;
      return cuda_fail(g, "cuGraphExecKernelNodeSetParams", r, err);
    }
    memcpy(x->last[k], params, n);
    memcpy(x->geom[k], geom, sizeof geom);
  }
  x->valid = true;
  x->used = ++p->runs;
  CUresult r = rig_cu.GraphLaunch(x->exec, g->stream);
  if (r != CUDA_SUCCESS) return cuda_fail(g, "cuGraphLaunch", r, err);
  return RIG_OK;
}
