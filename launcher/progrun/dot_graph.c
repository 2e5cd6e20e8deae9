/* The edges of a program's graph: gathered while walking, then merged (one
 * edge a pair of nodes, naming every reason) and reduced to those no other
 * path implies, so that what a step follows reads at a glance. */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dot.h"

size_t dot_graph_node(dot_graph *g, const char *name) {
  if (g->nnodes == g->noderoom) {
    size_t room = g->noderoom ? 2 * g->noderoom : 64;
    dot_name *p = realloc(g->names, room * sizeof *p);
    if (!p) return g->failed = true, SIZE_MAX;
    g->names = p;
    g->noderoom = room;
  }
  snprintf(g->names[g->nnodes], sizeof g->names[0], "%s", name);
  return g->nnodes++;
}

void dot_graph_edge(dot_graph *g, size_t from, size_t to, const char *why) {
  if (from == SIZE_MAX || to == SIZE_MAX || from == to) return;
  if (g->nedges == g->edgeroom) {
    size_t room = g->edgeroom ? 2 * g->edgeroom : 64;
    dot_edge *p = realloc(g->edges, room * sizeof *p);
    if (!p) {
      g->failed = true;
      return;
    }
    g->edges = p;
    g->edgeroom = room;
  }
  dot_edge *e = &g->edges[g->nedges++];
  e->from = from;
  e->to = to;
  snprintf(e->why, sizeof e->why, "%s", why);
}

void dot_graph_rail(dot_graph *g, int64_t rail, size_t node, bool sends, bool receives) {
  if (node == SIZE_MAX) return;
  if (g->nrails == g->railroom) {
    size_t room = g->railroom ? 2 * g->railroom : 8;
    dot_rail_use *p = realloc(g->rails, room * sizeof *p);
    if (!p) {
      g->failed = true;
      return;
    }
    g->rails = p;
    g->railroom = room;
  }
  g->rails[g->nrails++] = (dot_rail_use){rail, node, sends, receives};
}

size_t dot_graph_rail_end(const dot_graph *g, int64_t rail, bool sends) {
  size_t found = SIZE_MAX;
  for (size_t i = 0; i < g->nrails; i++) {
    const dot_rail_use *u = &g->rails[i];
    if (u->rail != rail || !(sends ? u->sends : u->receives)) continue;
    found = u->node;
    if (!sends) break;
  }
  return found;
}

void dot_graph_free(dot_graph *g) {
  free(g->names);
  free(g->edges);
  free(g->rails);
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
static int reduce(size_t nnodes, dot_pair *pairs, size_t n) {
  size_t words = (nnodes + 63) / 64;
  uint64_t *reach = calloc(nnodes * words + 1, sizeof *reach);
  if (!reach) return CLI_EXIT_FAIL;
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
  return CLI_EXIT_OK;
}

/* The edges grouped by their pair of nodes, sorted. */
static dot_pair *pairs_of(dot_graph *g, size_t *npairs) {
  if (g->nedges > 0) qsort(g->edges, g->nedges, sizeof *g->edges, by_nodes);
  dot_pair *pairs = malloc((g->nedges + 1) * sizeof *pairs);
  if (!pairs) return NULL;
  size_t n = 0;
  for (size_t i = 0; i < g->nedges; i++) {
    const dot_edge *e = &g->edges[i];
    if (n > 0 && pairs[n - 1].from == e->from && pairs[n - 1].to == e->to) {
      pairs[n - 1].count++;
      continue;
    }
    pairs[n++] = (dot_pair){e->from, e->to, i, 1, false};
  }
  *npairs = n;
  return pairs;
}

int dot_graph_print(FILE *f, dot_graph *g, const char *prefix, bool all) {
  if (g->failed) return CLI_EXIT_FAIL;
  size_t n = 0;
  dot_pair *pairs = pairs_of(g, &n);
  if (!pairs) return CLI_EXIT_FAIL;
  if (!all && g->nnodes > DOT_MAX_REDUCED)
    fprintf(f, "  /* %zu nodes, more than the %d progrun reduces: every edge drawn */\n", g->nnodes,
            DOT_MAX_REDUCED);
  else if (!all && reduce(g->nnodes, pairs, n) != CLI_EXIT_OK) {
    free(pairs);
    return CLI_EXIT_FAIL;
  }
  for (size_t i = 0; i < n; i++) {
    const dot_pair *p = &pairs[i];
    if (p->implied) continue;
    fprintf(f, "  %s%s -> %s%s [label=\"", prefix, g->names[p->from], prefix, g->names[p->to]);
    /* Every reason, one a line, each once (one use may be found twice). */
    for (size_t k = p->first; k < p->first + p->count; k++) {
      bool seen = false;
      for (size_t j = p->first; j < k && !seen; j++)
        seen = strcmp(g->edges[j].why, g->edges[k].why) == 0;
      if (!seen) fprintf(f, "%s%s", k > p->first ? "\\n" : "", g->edges[k].why);
    }
    fputs("\"];\n", f);
  }
  free(pairs);
  return CLI_EXIT_OK;
}
