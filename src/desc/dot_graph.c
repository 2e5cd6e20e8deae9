/* The edges of a program's graph: gathered while walking, then merged (one
 * edge a pair of nodes, naming every reason) and reduced to those no other
 * path implies, so that what a step follows reads at a glance. */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dot_internal.h"

size_t dot_graph_node(dot_graph *g, const char *name) {
  if (!rig_array_reserve(&g->names.a, 1)) return g->failed = true, SIZE_MAX;
  snprintf(g->names.t.items[g->names.t.n], sizeof(dot_name), "%s", name);
  return g->names.t.n++;
}

void dot_graph_edge(dot_graph *g, size_t from, size_t to, const char *why) {
  if (from == SIZE_MAX || to == SIZE_MAX || from == to) return;
  dot_edge e = {.from = from, .to = to};
  snprintf(e.why, sizeof e.why, "%s", why);
  if (!RIG_ARRAY_PUSH(&g->edges, e)) g->failed = true;
}

void dot_graph_rail(dot_graph *g, int64_t rail, size_t node, bool sends, bool receives) {
  if (node == SIZE_MAX) return;
  if (!RIG_ARRAY_PUSH(&g->rails, ((dot_rail_use){rail, node, sends, receives}))) g->failed = true;
}

size_t dot_graph_rail_end(const dot_graph *g, int64_t rail, bool sends) {
  size_t found = SIZE_MAX;
  for (size_t i = 0; i < g->rails.t.n; i++) {
    const dot_rail_use *u = &g->rails.t.items[i];
    if (u->rail != rail || !(sends ? u->sends : u->receives)) continue;
    found = u->node;
    if (!sends) break;
  }
  return found;
}

void dot_graph_free(dot_graph *g) {
  rig_array_free(&g->names.a);
  rig_array_free(&g->edges.a);
  rig_array_free(&g->rails.a);
  memset(g, 0, sizeof *g);
}

/* By the earlier node, then the later, then the order found (the walk's
 * order of reasons), so that the output is stable. */
static int by_nodes(const void *a, const void *b) {
  const dot_edge *x = a, *y = b;
  if (x->from != y->from) return x->from < y->from ? -1 : 1;
  if (x->to != y->to) return x->to < y->to ? -1 : 1;
  return x < y ? -1 : x > y;
}

/* The edges between one pair of nodes: edges[first, first + count). */
typedef struct dot_pair {
  size_t from, to, first, count;
  bool implied;
} dot_pair;

/* Marks every pair that another path implies: reach[v] is the set of
 * nodes v reaches, a bit each, `words` per row. Pairs are sorted by
 * `from` then `to`, and a node reaches only later ones, so the latest
 * node's row is complete before any earlier one needs it. */
static bool reduce(size_t nnodes, dot_pair *pairs, size_t n) {
  size_t words = (nnodes + 63) / 64;
  uint64_t *reach = calloc(nnodes * words + 1, sizeof *reach);
  if (!reach) return false;
  size_t end = n;
  for (size_t v = nnodes; v-- > 0;) {
    size_t first = end;
    while (first > 0 && pairs[first - 1].from == v) first--;
    uint64_t *row = &reach[v * words];
    for (size_t i = first; i < end; i++) {
      size_t w = pairs[i].to;
      row[w / 64] |= UINT64_C(1) << (w % 64);
      for (size_t k = 0; k < words; k++) row[k] |= reach[w * words + k];
    }
    /* v -> t is implied when another node v leads to reaches t. */
    for (size_t i = first; i < end; i++)
      for (size_t k = first; k < end && !pairs[i].implied; k++) {
        size_t w = pairs[k].to, t = pairs[i].to;
        if (w != t && (reach[w * words + t / 64] >> (t % 64) & 1)) pairs[i].implied = true;
      }
    end = first;
  }
  free(reach);
  return true;
}

/* The edges grouped by their pair of nodes, sorted. */
static dot_pair *pairs_of(dot_graph *g, size_t *npairs) {
  if (g->edges.t.n > 0) qsort(g->edges.t.items, g->edges.t.n, sizeof *g->edges.t.items, by_nodes);
  dot_pair *pairs = malloc((g->edges.t.n + 1) * sizeof *pairs);
  if (!pairs) return NULL;
  size_t n = 0;
  for (size_t i = 0; i < g->edges.t.n; i++) {
    const dot_edge *e = &g->edges.t.items[i];
    if (n > 0 && pairs[n - 1].from == e->from && pairs[n - 1].to == e->to) {
      pairs[n - 1].count++;
      continue;
    }
    pairs[n++] = (dot_pair){e->from, e->to, i, 1, false};
  }
  *npairs = n;
  return pairs;
}

bool dot_graph_print(FILE *f, dot_graph *g, const char *prefix, bool all) {
  if (g->failed) return false;
  size_t n = 0;
  dot_pair *pairs = pairs_of(g, &n);
  if (!pairs) return false;
  if (!all && g->names.t.n > DOT_MAX_REDUCED)
    fprintf(f, "  /* %zu nodes, more than the %d progrun reduces: every edge drawn */\n",
            g->names.t.n, DOT_MAX_REDUCED);
  else if (!all && !reduce(g->names.t.n, pairs, n)) {
    free(pairs);
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    const dot_pair *p = &pairs[i];
    if (p->implied) continue;
    fprintf(f, "  %s%s -> %s%s [label=\"", prefix, g->names.t.items[p->from], prefix,
            g->names.t.items[p->to]);
    /* Every reason, one a line, each once (one use may be found twice). */
    for (size_t k = p->first; k < p->first + p->count; k++) {
      bool seen = false;
      for (size_t j = p->first; j < k && !seen; j++)
        seen = strcmp(g->edges.t.items[j].why, g->edges.t.items[k].why) == 0;
      if (!seen) fprintf(f, "%s%s", k > p->first ? "\\n" : "", g->edges.t.items[k].why);
    }
    fputs("\"];\n", f);
  }
  free(pairs);
  return true;
}
