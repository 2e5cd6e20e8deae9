/* `progrun dot` of a job file (docs/cli.md, "dot"): a cluster per part,
 * each its program's graph as librig draws it (rig_desc_dot_graph), and
 * each rail's two directions between the machines' clusters, which are
 * the job file's and so progrun's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli_job.h"

/* s in a quoted label: `"` and `\\` escaped. */
static void quoted(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    fputc(*s, f);
  }
}

static void anchor_of(const cli_jobfile *j, size_t m, char *buf, size_t size) {
  if (m < j->n)
    snprintf(buf, size, "m%zu", m);
  else
    snprintf(buf, size, "every");
}

/* The part drawing machine m: its own, or `every`'s past `machines`
 * (SIZE_MAX: none). */
static size_t part_of(const cli_jobfile *j, int64_t m) {
  if (m >= 0 && (size_t)m < j->n) return (size_t)m;
  return j->has_every ? j->n : SIZE_MAX;
}

/* The program's rail id that stands for job rail `id` on machine m, drawn
 * by `part`: the id itself where the part maps none, else the id its map
 * gives that rail on m (-1: none, a map check refuses). */
static int64_t program_rail(const cli_jobfile *j, size_t part, int64_t m, int64_t id) {
  const cli_job_machine *jm = part < j->n ? &j->machines[part] : &j->every;
  if (!jm->has_rail_map) return id;
  cli_rail_map map;
  rig_error err;
  int64_t found = -1;
  if (cli_jobfile_rail_map(j, jm, "", m, cli_jobfile_machines(j), &map, &err) == CLI_EXIT_OK)
    for (size_t k = 0; k < map.n && found < 0; k++)
      if (map.pairs[k][1] == id) found = map.pairs[k][0];
  cli_rail_map_free(&map);
  return found;
}

/* One direction of a rail, from the node that sends on it (the last that
 * writes its Outbound area or makes it ready) on one machine to the one
 * that receives (the first that reads its Inbound area or its Counts) on
 * the other; a machine's cluster where no node is found. Time flows
 * down: an edge to a later machine places its receiver below its sender;
 * one back to an earlier machine (an acknowledgement, a ring's last) is
 * no constraint, so that it closes no cycle. */
static void rail_edge(FILE *f, const cli_jobfile *j, rig_desc_graph *const *graphs,
                      const cli_job_rail *r, int dir) {
  const rig_rail_transfer *t = dir == 0 ? r->send : r->receive;
  size_t n = dir == 0 ? r->nsend : r->nreceive;
  if (n == 0) return;
  uint64_t bytes = 0;
  for (size_t i = 0; i < n; i++) bytes += t[i].length;
  char ends[2][48], clip[2][64];
  bool down = r->between[dir] < r->between[1 - dir];
  for (int k = 0; k < 2; k++) {
    int64_t m = r->between[k == 0 ? dir : 1 - dir];
    size_t part = part_of(j, m);
    char anchor[24];
    clip[k][0] = '\0';
    if (part == SIZE_MAX) {
      /* A machine no part draws (a file that check refuses): a node of
       * its own saying so. */
      snprintf(ends[k], sizeof ends[k], "m%" PRId64, m);
      fprintf(f, "  %s [label=\"machine %" PRId64 ": no part of the job\", shape=plaintext];\n",
              ends[k], m);
      continue;
    }
    anchor_of(j, part, anchor, sizeof anchor);
    int64_t id = program_rail(j, part, m, r->id);
    const char *node = id < 0 ? NULL : rig_desc_graph_rail_end(graphs[part], id, k == 0);
    if (!node) {
      snprintf(ends[k], sizeof ends[k], "%s", anchor);
      snprintf(clip[k], sizeof clip[k], ", %s=cluster_%s", k == 0 ? "ltail" : "lhead", anchor);
    } else {
      snprintf(ends[k], sizeof ends[k], "%s_%s", anchor, node);
    }
  }
  fprintf(f,
          "  %s -> %s [label=\"rail %" PRId64 " %s: %" PRIu64 " bytes\", style=dashed, "
          "color=blue, fontcolor=blue%s%s%s];\n",
          ends[0], ends[1], r->id, dir == 0 ? "send" : "receive", bytes,
          down ? "" : ", constraint=false", clip[0], clip[1]);
}

/* Each part's cluster: its title, an anchor for rails' edges that find
 * no node, its program's graph (into *g); its edges into `edges`. */
static int part(FILE *out, FILE *edges, const cli_jobfile *j, size_t i, const rig_desc *d,
                rig_desc_graph **g, bool all) {
  const cli_job_machine *jm = i < j->n ? &j->machines[i] : &j->every;
  char anchor[24], prefix[28];
  anchor_of(j, i, anchor, sizeof anchor);
  snprintf(prefix, sizeof prefix, "%s_", anchor);
  fprintf(out, "  subgraph cluster_%s {\n", anchor);
  if (i < j->n)
    fprintf(out, "    label=\"machine %zu: ", i);
  else
    fputs("    label=\"every other machine: ", out);
  quoted(out, jm->program);
  fputs("\";\n", out);
  fprintf(out, "    %s [shape=point, style=invis];\n", anchor);
  rig_desc_dot_style style = {.prefix = prefix,
                              .devices = (const char *const *)jm->devices,
                              .ndevices = jm->ndevices,
                              .depth = 2,
                              .all = all};
  char *nodes = NULL, *text = NULL;
  rig_error err = {0};
  rig_status st = rig_desc_dot_graph(d, &style, &nodes, &text, g, &err);
  if (st == RIG_OK) fprintf(out, "%s", nodes);
  fputs("  }\n", out);
  if (st == RIG_OK) fprintf(edges, "%s", text);
  free(nodes);
  free(text);
  return st == RIG_OK ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

int cli_dot_job_print(FILE *out, const cli_jobfile *j, rig_desc *const *descs, bool all) {
  size_t n = j->n + (j->has_every ? 1 : 0);
  rig_desc_graph **graphs = calloc(n + 1, sizeof *graphs);
  char *text = NULL;
  size_t len = 0;
  FILE *edges = graphs ? open_memstream(&text, &len) : NULL;
  if (!edges) {
    free(graphs);
    return CLI_EXIT_FAIL;
  }
  fputs("digraph job {\n" RIG_DESC_DOT_HEAD, out);
  int rc = CLI_EXIT_OK;
  for (size_t i = 0; rc == CLI_EXIT_OK && i < n; i++)
    rc = part(out, edges, j, i, descs[i], &graphs[i], all);
  for (size_t r = 0; rc == CLI_EXIT_OK && r < j->nrails; r++)
    for (int dir = 0; dir < 2; dir++) rail_edge(edges, j, graphs, &j->rails[r], dir);
  if (fclose(edges) != 0) rc = CLI_EXIT_FAIL;
  if (rc == CLI_EXIT_OK) fprintf(out, "%s}\n", text ? text : "");
  free(text);
  for (size_t i = 0; i < n; i++) rig_desc_graph_free(graphs[i]);
  free(graphs);
  return rc;
}
