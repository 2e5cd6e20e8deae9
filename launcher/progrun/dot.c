/* `progrun dot`: a description as a Graphviz graph (docs/cli.md, "dot"). A
 * node per part of each Submit (the Submit a cluster), per Move and per
 * Loop (its head, which reads the flag; the loop a cluster around its
 * body), and an edge from each to the earlier ones it follows, labelled
 * with why, by the core's ordering (docs/core.md, "Ordering: stamps"): a
 * use of memory follows other devices' last conflicting uses of it (a read
 * their writes and Unordered uses, a write every use, an Unordered use
 * their reads and writes); work on one device follows that device's
 * earlier work (`device order`). A loop's body is walked once: what a
 * second trip follows of the first is not drawn. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_job.h"

/* What a use names: memory m, input i, or the ints. */
typedef struct dot_mem {
  int kind; /* 0 memory, 1 input, 2 ints */
  int64_t index;
} dot_mem;

/* The last use of each kind (read, write, Unordered) of one memory by one
 * device: the node's name, or "" for none. */
enum { USE_READ, USE_WRITE, USE_UNORDERED, NUSES };
typedef struct dot_last {
  dot_mem mem;
  int64_t device;
  char node[NUSES][48];
} dot_last;

typedef struct dot_state {
  FILE *f;            /* the nodes and clusters */
  FILE *edges;        /* the edges: printed after every node, outside every cluster */
  const char *prefix; /* before every node's name: "m1_" in a job */
  dot_last *last;
  size_t nlast, room;
  /* The last node of each device, for `device order`. */
  struct {
    int64_t device;
    char node[48];
  } * devs;
  size_t ndevs, devroom;
  int64_t pseudo; /* the next device of a Move or a Loop's head: each its own */
  bool failed;    /* out of memory */
} dot_state;

static const char *const use_names[NUSES] = {"Read", "Write", "Unordered"};

static bool same_mem(dot_mem a, dot_mem b) {
  return a.kind == b.kind && a.index == b.index;
}

static void mem_name(dot_mem m, char *buf, size_t size) {
  if (m.kind == 0)
    snprintf(buf, size, "memory %" PRId64, m.index);
  else if (m.kind == 1)
    snprintf(buf, size, "input %" PRId64, m.index);
  else
    snprintf(buf, size, "ints");
}

static bool slot_mem(const rig_desc_slot *s, dot_mem *m) {
  switch (s->tag) {
    case RIG_SLOT_MEMORY:
      *m = (dot_mem){0, s->u.memory.memory};
      return true;
    case RIG_SLOT_INPUT:
      *m = (dot_mem){1, s->u.input};
      return true;
    case RIG_SLOT_INTS:
      *m = (dot_mem){2, 0};
      return true;
  }
  return false;
}

static dot_last *last_of(dot_state *s, dot_mem m, int64_t device) {
  for (size_t i = 0; i < s->nlast; i++)
    if (same_mem(s->last[i].mem, m) && s->last[i].device == device) return &s->last[i];
  if (s->nlast == s->room) {
    size_t room = s->room ? 2 * s->room : 16;
    dot_last *p = realloc(s->last, room * sizeof *p);
    if (!p) return s->failed = true, NULL;
    s->last = p;
    s->room = room;
  }
  dot_last *l = &s->last[s->nlast++];
  memset(l, 0, sizeof *l);
  l->mem = m;
  l->device = device;
  return l;
}

/* Whether a use of kind `now` follows another device's use of kind
 * `before`. */
static bool conflicts(int now, int before) {
  if (now == USE_WRITE) return true;
  if (now == USE_READ) return before != USE_READ;
  return before != USE_UNORDERED;
}

/* The uses of one node, before they are recorded: a memory used several
 * ways by one node is used the strongest way (two different uses make a
 * write). */
typedef struct dot_uses {
  dot_mem mem[64];
  int use[64];
  size_t n;
} dot_uses;

static void add_use(dot_uses *u, const rig_desc_slot *slot, int use) {
  dot_mem m;
  if (!slot_mem(slot, &m)) return;
  for (size_t i = 0; i < u->n; i++)
    if (same_mem(u->mem[i], m)) {
      if (u->use[i] != use) u->use[i] = USE_WRITE;
      return;
    }
  if (u->n == sizeof u->mem / sizeof u->mem[0]) return;
  u->mem[u->n] = m;
  u->use[u->n++] = use;
}

static int use_of(rig_desc_use u) {
  return u == RIG_USE_READ ? USE_READ : u == RIG_USE_WRITE ? USE_WRITE : USE_UNORDERED;
}

/* The node `node` on `device` with its uses: its edges, then its uses
 * recorded as the last of the device. */
static void follow(dot_state *s, const char *node, int64_t device, const dot_uses *u) {
  for (size_t i = 0; i < s->ndevs; i++)
    if (s->devs[i].device == device)
      fprintf(s->edges, "  %s%s -> %s%s [label=\"device order\"];\n", s->prefix, node, s->prefix,
              s->devs[i].node);
  for (size_t k = 0; k < u->n; k++) {
    char mem[48];
    mem_name(u->mem[k], mem, sizeof mem);
    for (size_t i = 0; i < s->nlast; i++) {
      const dot_last *l = &s->last[i];
      if (!same_mem(l->mem, u->mem[k]) || l->device == device) continue;
      for (int before = 0; before < NUSES; before++)
        if (l->node[before][0] && conflicts(u->use[k], before))
          fprintf(s->edges, "  %s%s -> %s%s [label=\"%s: %s after %s\"];\n", s->prefix, node,
                  s->prefix, l->node[before], mem, use_names[u->use[k]], use_names[before]);
    }
  }
  for (size_t k = 0; k < u->n; k++) {
    dot_last *l = last_of(s, u->mem[k], device);
    if (l) snprintf(l->node[u->use[k]], sizeof l->node[0], "%s", node);
  }
  for (size_t i = 0; i < s->ndevs; i++)
    if (s->devs[i].device == device) {
      snprintf(s->devs[i].node, sizeof s->devs[i].node, "%s", node);
      return;
    }
  if (s->ndevs == s->devroom) {
    size_t room = s->devroom ? 2 * s->devroom : 8;
    void *p = realloc(s->devs, room * sizeof *s->devs);
    if (!p) {
      s->failed = true;
      return;
    }
    s->devs = p;
    s->devroom = room;
  }
  s->devs[s->ndevs].device = device;
  snprintf(s->devs[s->ndevs++].node, sizeof s->devs[0].node, "%s", node);
}

static void indent(FILE *f, int depth) {
  fprintf(f, "%*s", 2 * depth, "");
}

static const char *const part_names[] = {"Words", "Fill", "Copy", "Launch"};

static void submit(dot_state *s, int depth, size_t number, const rig_desc_submit *sub) {
  indent(s->f, depth);
  fprintf(s->f, "subgraph cluster_%ss%zu {\n", s->prefix, number);
  indent(s->f, depth + 1);
  fprintf(s->f, "label=\"step %zu: Submit on device %" PRId64 "\";\n", number, sub->device);
  char node[48];
  for (size_t p = 0; p < sub->nparts; p++) {
    const rig_desc_part *part = &sub->parts[p];
    snprintf(node, sizeof node, "s%zup%zu", number, p);
    indent(s->f, depth + 1);
    const char *name = (size_t)part->tag < 4 ? part_names[part->tag] : "part";
    fprintf(s->f, "%s%s [label=\"%zu %s\"];\n", s->prefix, node, p, name);
  }
  indent(s->f, depth);
  fputs("}\n", s->f);
  for (size_t p = 0; p < sub->nparts; p++) {
    const rig_desc_part *part = &sub->parts[p];
    dot_uses u = {.n = 0};
    const rig_desc_ref *refs = part->tag == RIG_PART_FILL     ? part->u.fill.refs
                               : part->tag == RIG_PART_LAUNCH ? part->u.launch.refs
                                                              : NULL;
    size_t nrefs = part->tag == RIG_PART_FILL     ? part->u.fill.nrefs
                   : part->tag == RIG_PART_LAUNCH ? part->u.launch.nrefs
                                                  : 0;
    for (size_t r = 0; r < nrefs; r++)
      if (refs[r].slot >= 0 && (size_t)refs[r].slot < sub->nslots)
        add_use(&u, &sub->slots[refs[r].slot], use_of(refs[r].use));
    if (part->tag == RIG_PART_COPY) {
      if (part->u.copy.src >= 0 && (size_t)part->u.copy.src < sub->nslots)
        add_use(&u, &sub->slots[part->u.copy.src], USE_READ);
      if (part->u.copy.dst >= 0 && (size_t)part->u.copy.dst < sub->nslots)
        add_use(&u, &sub->slots[part->u.copy.dst], USE_WRITE);
    } else if (part->tag == RIG_PART_WORDS) {
      rig_desc_slot words = {.tag = RIG_SLOT_MEMORY, .u.memory = part->u.words};
      add_use(&u, &words, USE_READ);
    }
    /* The submission's fixed memory: used by its first part, which the
     * others follow on the device. */
    for (size_t x = 0; p == 0 && x < sub->nfixed; x++) {
      rig_desc_slot fixed = {.tag = RIG_SLOT_MEMORY, .u.memory = sub->fixed[x].view};
      add_use(&u, &fixed, sub->fixed[x].access == RIG_ACCESS_READ ? USE_READ : USE_WRITE);
    }
    snprintf(node, sizeof node, "s%zup%zu", number, p);
    follow(s, node, sub->device, &u);
  }
}

static void steps(dot_state *s, int depth, const rig_desc_steps *ss, size_t *number) {
  for (size_t i = 0; i < ss->n; i++) {
    const rig_desc_step *st = &ss->items[i];
    size_t n = (*number)++;
    char node[48];
    snprintf(node, sizeof node, "s%zu", n);
    dot_uses u = {.n = 0};
    switch (st->tag) {
      case RIG_STEP_SUBMIT:
        submit(s, depth, n, &st->u.submit);
        break;
      case RIG_STEP_MOVE:
        indent(s->f, depth);
        fprintf(s->f, "%s%s [label=\"step %zu: Move\"];\n", s->prefix, node, n);
        add_use(&u, &st->u.move.src, USE_READ);
        add_use(&u, &st->u.move.dst, USE_WRITE);
        follow(s, node, s->pseudo--, &u);
        break;
      case RIG_STEP_LOOP:
        indent(s->f, depth);
        fprintf(s->f, "subgraph cluster_%s%s {\n", s->prefix, node);
        indent(s->f, depth + 1);
        fprintf(s->f, "label=\"step %zu: Loop\";\n", n);
        indent(s->f, depth + 1);
        fprintf(s->f, "%s%s [label=\"step %zu: Loop%s\", shape=ellipse];\n", s->prefix, node, n,
                st->u.loop.has_flag ? " (reads its flag)" : "");
        if (st->u.loop.has_flag) add_use(&u, &st->u.loop.flag_slot, USE_READ);
        follow(s, node, s->pseudo--, &u);
        steps(s, depth + 1, &st->u.loop.body, number);
        indent(s->f, depth);
        fputs("}\n", s->f);
        break;
      default:
        break;
    }
  }
}

int cli_dot_desc(FILE *f, FILE *edges, const rig_desc *d, const char *prefix, int depth) {
  dot_state s = {.f = f, .edges = edges, .prefix = prefix ? prefix : "", .pseudo = -1};
  size_t number = 0;
  steps(&s, depth, &d->steps, &number);
  free(s.last);
  free(s.devs);
  return s.failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* The edges gathered apart, then printed after the nodes. */
typedef struct dot_edges {
  FILE *f;
  char *text;
  size_t len;
} dot_edges;

int cli_dot_print(FILE *out, const rig_desc *d) {
  dot_edges e = {0};
  if (!(e.f = open_memstream(&e.text, &e.len))) return CLI_EXIT_FAIL;
  fputs("digraph program {\n  compound=true;\n  node [shape=box];\n", out);
  int rc = cli_dot_desc(out, e.f, d, "", 1);
  if (fclose(e.f) != 0) rc = CLI_EXIT_FAIL;
  if (rc == CLI_EXIT_OK) fprintf(out, "%s}\n", e.text ? e.text : "");
  free(e.text);
  return rc;
}

/* s in a quoted label: `"` and `\\` escaped. */
static void quoted(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    fputc(*s, f);
  }
}

int cli_dot_job_print(FILE *out, const cli_jobfile *j, rig_desc *const *descs) {
  dot_edges e = {0};
  if (!(e.f = open_memstream(&e.text, &e.len))) return CLI_EXIT_FAIL;
  fputs("digraph job {\n  compound=true;\n  node [shape=box];\n", out);
  int rc = CLI_EXIT_OK;
  size_t n = j->n + (j->has_every ? 1 : 0);
  for (size_t i = 0; rc == CLI_EXIT_OK && i < n; i++) {
    char anchor[48], prefix[52];
    const cli_job_machine *jm = i < j->n ? &j->machines[i] : &j->every;
    if (i < j->n)
      snprintf(anchor, sizeof anchor, "m%zu", i);
    else
      snprintf(anchor, sizeof anchor, "every");
    snprintf(prefix, sizeof prefix, "%s_", anchor);
    fprintf(out, "  subgraph cluster_%s {\n", anchor);
    if (i < j->n)
      fprintf(out, "    label=\"machine %zu: ", i);
    else
      fputs("    label=\"every: ", out);
    quoted(out, jm->program);
    fputs("\";\n", out);
    if (i < j->n)
      fprintf(out, "    %s [label=\"machine %zu\", shape=plaintext];\n", anchor, i);
    else
      fputs("    every [label=\"every\", shape=plaintext];\n", out);
    rc = cli_dot_desc(out, e.f, descs[i], prefix, 2);
    fputs("  }\n", out);
  }
  /* A rail's edge joins its machines' clusters, machines past `machines`
   * being `every`'s. */
  for (size_t r = 0; rc == CLI_EXIT_OK && r < j->nrails; r++) {
    char ends[2][48];
    for (int k = 0; k < 2; k++) {
      size_t m = (size_t)j->rails[r].between[k];
      if (m < j->n)
        snprintf(ends[k], sizeof ends[k], "m%zu", m);
      else
        snprintf(ends[k], sizeof ends[k], "every");
    }
    fprintf(e.f,
            "  %s -> %s [label=\"rail %" PRId64
            "\", ltail=cluster_%s, lhead=cluster_%s, style=dashed];\n",
            ends[0], ends[1], j->rails[r].id, ends[0], ends[1]);
  }
  if (fclose(e.f) != 0) rc = CLI_EXIT_FAIL;
  if (rc == CLI_EXIT_OK) fprintf(out, "%s}\n", e.text ? e.text : "");
  free(e.text);
  return rc;
}
