/* Private to src/desc: what the files of a description's graph share
 * (rig_desc_dot, docs/cli.md "dot"): the edges of one program's graph
 * (dot_graph.c) and the walk that draws its nodes and finds its edges
 * (dot.c). */
#ifndef RIG_DESC_DOT_INTERNAL_H
#define RIG_DESC_DOT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/array.h"
#include "rig/rig_desc.h"

/* Past this many nodes in one program every edge is drawn: the
 * reduction's reachability takes nodes^2 bits (8 MiB here), and no
 * renderer draws such a graph legibly anyway. */
#define DOT_MAX_REDUCED 8192

/* A node's name (without the job's prefix): s3, s3p0. */
typedef char dot_name[32];

typedef struct dot_edge {
  size_t from, to; /* nodes: from is earlier, to follows it */
  char why[96];    /* `memory 0: Read after Write`, `device order` */
} dot_edge;

/* A node that uses an end of a rail: one that sends on it (uses its
 * Outbound area, or makes counts ready through a Ready leaf), or one that
 * receives (uses its Inbound area, or its Counts to wait for arrivals). */
typedef struct dot_rail_use {
  int64_t rail;
  size_t node;
  bool sends, receives;
} dot_rail_use;

/* Nodes in the order the walk made them (each edge's from before its to,
 * so that order is topological), the edges between them, and the nodes
 * that use rails' ends. */
typedef struct dot_graph {
  RIG_ARRAY_OF(dot_name) names; /* the nodes' */
  RIG_ARRAY_OF(dot_edge) edges;
  RIG_ARRAY_OF(dot_rail_use) rails;
  bool failed; /* out of memory */
} dot_graph;

/* An empty graph. */
#define DOT_GRAPH_INIT                                                                             \
  {                                                                                                \
    RIG_ARRAY_OF_INIT(dot_name, 0), RIG_ARRAY_OF_INIT(dot_edge, 0),                                \
        RIG_ARRAY_OF_INIT(dot_rail_use, 0), false                                                  \
  }

/* A new node's index (SIZE_MAX out of memory, g->failed set). */
size_t dot_graph_node(dot_graph *g, const char *name);
void dot_graph_edge(dot_graph *g, size_t from, size_t to, const char *why);
void dot_graph_rail(dot_graph *g, int64_t rail, size_t node, bool sends, bool receives);
/* The last node that sends on `rail` (sends) or the first that receives
 * on it (!sends), or SIZE_MAX for none. */
size_t dot_graph_rail_end(const dot_graph *g, int64_t rail, bool sends);
/* The edges on f, each `PREFIXfrom -> PREFIXto [label="why"]`: those
 * between one pair of nodes as one edge naming every reason; with `all`
 * false only those no other path implies (the transitive reduction).
 * False out of memory. */
bool dot_graph_print(FILE *f, dot_graph *g, const char *prefix, bool all);
void dot_graph_free(dot_graph *g);

/* The walk (dot.c): d's nodes and clusters on f, two spaces a level from
 * `depth`, each name after `prefix`; its edges into g. `devices` names
 * the devices standing for d's (a job file's part), or is NULL. False out
 * of memory. */
bool dot_walk(FILE *f, dot_graph *g, const rig_desc *d, const char *const *devices, size_t ndevices,
              const char *prefix, int depth);

#endif
