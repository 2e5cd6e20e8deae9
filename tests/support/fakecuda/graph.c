/* graph.c: graphs of kernel nodes, their executable instances and their
 * launches. Part of a test double of the CUDA driver API, for the tests
 * only. The nodes of a launch run one after another in the order they were
 * added (an order that respects their dependencies; a GPU may run
 * independent nodes at once). A launch takes a snapshot of the exec's
 * nodes, so that a later cuGraphExecKernelNodeSetParams changes only later
 * launches, as documented. Only the v1 fields of CUDA_KERNEL_NODE_PARAMS
 * are read: with func set the driver ignores kern and ctx. */
#include <stdlib.h>
#include <string.h>

#include "fakecuda_internal.h"

struct CUgraphNode_st {
  struct CUgraphNode_st *next; /* the graph's, in the order added */
  struct CUgraph_st *graph;
  fc_launch l;
};

struct CUgraph_st {
  struct CUgraph_st *live;
  uint64_t id; /* execs name their graph by id: the handle may be freed */
  struct CUgraphNode_st *nodes, *last;
  size_t count;
};

typedef struct exec_node {
  struct CUgraphNode_st *from; /* compared, never followed */
  fc_launch l;
} exec_node;

struct CUgraphExec_st {
  struct CUgraphExec_st *live;
  struct CUctx_st *ctx;
  unsigned gen; /* of ctx, when instantiated */
  uint64_t graph;
  size_t count;
  exec_node *nodes;
};

static struct CUgraph_st *graphs;
static struct CUgraphExec_st *execs;
static uint64_t next_id = 1;

static struct CUgraph_st *graph_valid(CUgraph g) {
  for (struct CUgraph_st *h = graphs; h; h = h->live)
    if (h == g) return h;
  return NULL;
}

static struct CUgraphExec_st *exec_valid(CUgraphExec e) {
  for (struct CUgraphExec_st *x = execs; x; x = x->live)
    if (x == e) return fc_alive(x->ctx, x->gen) ? x : NULL;
  return NULL;
}

static bool node_of(struct CUgraph_st *g, CUgraphNode n) {
  for (struct CUgraphNode_st *m = g->nodes; m; m = m->next)
    if (m == n) return true;
  return false;
}

static CUresult prepare(fc_launch *l, const CUDA_KERNEL_NODE_PARAMS *p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  const unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
  const unsigned block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
  return fc_launch_prepare(l, p->func, grid, block, p->sharedMemBytes, p->kernelParams, p->extra);
}

CUresult fc_GraphCreate(CUgraph *graph, unsigned int flags) {
  pthread_mutex_lock(&fc_lock);
  CUresult r = fc_initialized() ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
  if (!r && (!graph || flags != 0)) r = CUDA_ERROR_INVALID_VALUE;
  struct CUgraph_st *g = NULL;
  if (!r && !(g = calloc(1, sizeof *g))) r = CUDA_ERROR_OUT_OF_MEMORY;
  if (!r) {
    g->id = next_id++;
    g->live = graphs;
    graphs = g;
    fc_live_add(FC_LIVE_GRAPHS, 1);
    *graph = g;
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_GraphCreate);
}

CUresult fc_GraphAddKernelNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                               size_t ndeps, const CUDA_KERNEL_NODE_PARAMS *params) {
  pthread_mutex_lock(&fc_lock);
  CUresult r = fc_initialized() ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
  if (!r && (!node || (ndeps && !deps))) r = CUDA_ERROR_INVALID_VALUE;
  struct CUgraph_st *g = NULL;
  if (!r && !(g = graph_valid(graph))) r = CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; !r && i < ndeps; i++) {
    if (!node_of(g, deps[i])) r = CUDA_ERROR_INVALID_VALUE;
    for (size_t j = 0; !r && j < i; j++)
      if (deps[j] == deps[i]) r = CUDA_ERROR_INVALID_VALUE; /* a dependency twice */
  }
  struct CUgraphNode_st *n = NULL;
  if (!r && !(n = calloc(1, sizeof *n))) r = CUDA_ERROR_OUT_OF_MEMORY;
  if (!r) r = prepare(&n->l, params);
  if (!r) {
    n->graph = g;
    if (g->last) {
      g->last->next = n;
    } else {
      g->nodes = n;
    }
    g->last = n;
    g->count++;
    *node = n;
  } else {
    free(n);
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_GraphAddKernelNode);
}

static void free_exec_nodes(exec_node *nodes, size_t count) {
  for (size_t i = 0; i < count; i++) free(nodes[i].l.params);
  free(nodes);
}

/* Only flags 0: the double has none of the instantiation options. */
CUresult fc_GraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long flags) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  if (!r && (!exec || flags != 0)) r = CUDA_ERROR_INVALID_VALUE;
  struct CUgraph_st *g = NULL;
  if (!r && !(g = graph_valid(graph))) r = CUDA_ERROR_INVALID_VALUE;
  struct CUgraphExec_st *x = NULL;
  if (!r && !(x = calloc(1, sizeof *x))) r = CUDA_ERROR_OUT_OF_MEMORY;
  if (!r && !(x->nodes = calloc(g->count ? g->count : 1, sizeof *x->nodes)))
    r = CUDA_ERROR_OUT_OF_MEMORY;
  size_t i = 0;
  for (struct CUgraphNode_st *n = r ? NULL : g->nodes; n && !r; n = n->next) {
    if (!fc_function_valid(n->l.func)) {
      r = CUDA_ERROR_INVALID_VALUE; /* its module was unloaded */
    } else if (fc_function_context(n->l.func) != ctx) {
      r = CUDA_ERROR_INVALID_CONTEXT;
    } else if (!(r = fc_launch_copy(&x->nodes[i].l, &n->l))) {
      x->nodes[i++].from = n;
    }
  }
  if (!r) {
    x->ctx = ctx;
    x->gen = ctx->gen;
    x->graph = g->id;
    x->count = i;
    x->live = execs;
    execs = x;
    fc_live_add(FC_LIVE_EXECS, 1);
    *exec = x;
  } else if (x) {
    free_exec_nodes(x->nodes, i);
    free(x);
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_GraphInstantiateWithFlags);
}

typedef struct graph_op {
  fc_op op;
  size_t count;
  exec_node *nodes; /* the snapshot */
} graph_op;

static bool run_graph(fc_op *op, struct CUctx_st *ctx) {
  graph_op *g = (graph_op *)op;
  for (size_t i = 0; i < g->count; i++)
    if (!fc_launch_run(&g->nodes[i].l, ctx)) return false;
  return true;
}

static void drop_graph(fc_op *op) {
  graph_op *g = (graph_op *)op;
  free_exec_nodes(g->nodes, g->count);
}

CUresult fc_GraphLaunch(CUgraphExec exec, CUstream stream) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  if (!r) r = fc_stream_get(stream, ctx);
  if (!r && !exec_valid(exec)) r = CUDA_ERROR_INVALID_VALUE;
  if (!r && exec->ctx != ctx) r = CUDA_ERROR_INVALID_CONTEXT;
  graph_op *op = NULL;
  if (!r && !(op = calloc(1, sizeof *op))) r = CUDA_ERROR_OUT_OF_MEMORY;
  if (!r && !(op->nodes = calloc(exec->count ? exec->count : 1, sizeof *op->nodes)))
    r = CUDA_ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; !r && i < exec->count; i++) {
    if (!(r = fc_launch_copy(&op->nodes[i].l, &exec->nodes[i].l))) op->count++;
  }
  if (!r) {
    op->op.run = run_graph;
    op->op.drop = drop_graph;
    fc_stream_push(stream, &op->op);
  } else if (op) {
    free_exec_nodes(op->nodes, op->count);
    free(op);
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_GraphLaunch);
}

/* The node must be of the graph the exec came from, and keep its
 * function; the geometry and the parameter bytes are replaced. */
CUresult fc_GraphExecKernelNodeSetParams(CUgraphExec exec, CUgraphNode node,
                                         const CUDA_KERNEL_NODE_PARAMS *params) {
  pthread_mutex_lock(&fc_lock);
  CUresult r = fc_initialized() ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
  if (!r && !exec_valid(exec)) r = CUDA_ERROR_INVALID_VALUE;
  exec_node *to = NULL;
  for (size_t i = 0; !r && i < exec->count && !to; i++)
    if (exec->nodes[i].from == node) to = &exec->nodes[i];
  struct CUgraph_st *g = NULL;
  if (!r && to) {
    for (g = graphs; g && g->id != exec->graph; g = g->live) {
    }
  }
  /* A node of a destroyed graph is no node (its handle may be reused). */
  if (!r && (!to || !g || !node_of(g, node))) r = CUDA_ERROR_INVALID_VALUE;
  if (!r && (!params || params->func != to->l.func)) r = CUDA_ERROR_INVALID_VALUE;
  fc_launch l;
  if (!r) r = prepare(&l, params);
  if (!r) {
    free(to->l.params);
    to->l = l;
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_GraphExecKernelNodeSetParams);
}

CUresult fc_GraphExecDestroy(CUgraphExec exec) {
  pthread_mutex_lock(&fc_lock);
  CUresult r = fc_initialized() ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
  struct CUgraphExec_st **p = &execs;
  while (!r && *p && *p != exec) p = &(*p)->live;
  if (!r && (!*p || !fc_alive(exec->ctx, exec->gen))) r = CUDA_ERROR_INVALID_VALUE;
  if (!r) {
    *p = exec->live;
    free_exec_nodes(exec->nodes, exec->count);
    free(exec);
    fc_live_add(FC_LIVE_EXECS, -1);
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_GraphExecDestroy);
}

/* Its execs stay usable, as the driver's. */
CUresult fc_GraphDestroy(CUgraph graph) {
  pthread_mutex_lock(&fc_lock);
  CUresult r = fc_initialized() ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
  struct CUgraph_st **p = &graphs;
  while (!r && *p && *p != graph) p = &(*p)->live;
  if (!r && !*p) r = CUDA_ERROR_INVALID_VALUE;
  if (!r) {
    *p = graph->live;
    while (graph->nodes) {
      struct CUgraphNode_st *n = graph->nodes;
      graph->nodes = n->next;
      free(n->l.params);
      free(n);
    }
    free(graph);
    fc_live_add(FC_LIVE_GRAPHS, -1);
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_GraphDestroy);
}
