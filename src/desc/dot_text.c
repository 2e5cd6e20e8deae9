/* A description's graph as text (rig_desc_dot, rig_desc_dot_graph): the
 * walk (dot.c) writes the nodes, dot_graph.c the edges it found; the graph
 * is kept so that a drawing of several descriptions (progrun's of a job
 * file) finds the nodes its rails' edges join. */
#include <stdio.h>
#include <stdlib.h>

#include "dot_internal.h"

struct rig_desc_graph {
  dot_graph g;
};

static rig_status out_of_memory(rig_error *err) {
  return rig_error_set(err, RIG_ENOMEM, "out of memory for a description's graph");
}

/* What a memory stream holds once closed, in *text (NULL when writing
 * failed). */
static bool close_text(FILE *f, char **text) {
  bool bad = ferror(f) != 0;
  if (fclose(f) != 0 || bad) {
    free(*text);
    *text = NULL;
    return false;
  }
  return true;
}

rig_status rig_desc_dot_graph(const rig_desc *d, const rig_desc_dot_style *style, char **nodes,
                              char **edges, rig_desc_graph **graph, rig_error *err) {
  size_t nlen = 0, elen = 0;
  *nodes = *edges = NULL;
  *graph = calloc(1, sizeof **graph);
  FILE *nf = *graph ? open_memstream(nodes, &nlen) : NULL;
  FILE *ef = nf ? open_memstream(edges, &elen) : NULL;
  bool ok = ef != NULL;
  const char *prefix = style->prefix ? style->prefix : "";
  if (ok) {
    (*graph)->g = (dot_graph)DOT_GRAPH_INIT;
    ok = dot_walk(nf, &(*graph)->g, d, style->devices, style->ndevices, prefix, style->depth) &&
         dot_graph_print(ef, &(*graph)->g, prefix, style->all);
  }
  if (nf) ok = close_text(nf, nodes) && ok;
  if (ef) ok = close_text(ef, edges) && ok;
  if (ok) return RIG_OK;
  free(*nodes);
  free(*edges);
  *nodes = *edges = NULL;
  rig_desc_graph_free(*graph);
  *graph = NULL;
  return out_of_memory(err);
}

const char *rig_desc_graph_rail_end(const rig_desc_graph *g, int64_t rail, bool sends) {
  size_t node = dot_graph_rail_end(&g->g, rail, sends);
  return node == SIZE_MAX ? NULL : g->g.names.t.items[node];
}

void rig_desc_graph_free(rig_desc_graph *g) {
  if (!g) return;
  dot_graph_free(&g->g);
  free(g);
}

rig_status rig_desc_dot(const rig_desc *d, bool all, char **text, rig_error *err) {
  rig_desc_dot_style style = {.depth = 1, .all = all};
  char *nodes, *edges;
  rig_desc_graph *g;
  *text = NULL;
  rig_status st = rig_desc_dot_graph(d, &style, &nodes, &edges, &g, err);
  if (st != RIG_OK) return st;
  rig_desc_graph_free(g);
  size_t len = 0;
  FILE *f = open_memstream(text, &len);
  if (f) fprintf(f, "digraph program {\n" RIG_DESC_DOT_HEAD "%s%s}\n", nodes, edges);
  free(nodes);
  free(edges);
  if (f && close_text(f, text)) return RIG_OK;
  return out_of_memory(err);
}
