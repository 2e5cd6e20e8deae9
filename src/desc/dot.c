/* A description's graph (rig_desc_dot, which `progrun dot` prints;
 * docs/cli.md, "dot"): the walk. A node per part of each Submit (the
 * Submit a cluster naming its device), per Move (naming its source and
 * destination) and per Loop (its head, which reads the flag; the loop a
 * cluster around its body), and an edge to each from
 * the earlier ones it follows, labelled with why, by the core's ordering
 * (docs/core.md, "Ordering: stamps"): a use of memory follows other
 * devices' last conflicting uses of it (a read their writes and Unordered
 * uses, a write every use, an Unordered use their reads and writes); work
 * on one device follows that device's earlier work (`device order`). A
 * loop's body is walked once: what a second trip follows of the first is
 * not drawn. dot_graph.c keeps the edges no other path implies. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dot_internal.h"

/* What a use names: memory m, input i, or the ints. */
typedef struct dot_mem {
  int kind; /* 0 memory, 1 input, 2 ints */
  int64_t index;
} dot_mem;

/* The last use of each kind (read, write, Unordered) of one memory by one
 * device: its node, or SIZE_MAX for none. */
enum { USE_READ, USE_WRITE, USE_UNORDERED, NUSES };
typedef struct dot_last {
  dot_mem mem;
  int64_t device;
  size_t node[NUSES];
} dot_last;

typedef struct dot_device_last {
  int64_t device;
  size_t node;
} dot_device_last;

typedef struct dot_state {
  FILE *f;            /* the nodes and clusters */
  dot_graph *g;       /* the edges */
  const char *prefix; /* before every node's name: "m1_" in a job */
  const rig_desc *d;
  const char *const *devices; /* a job file's names of d's devices, or NULL */
  size_t ndevices;
  RIG_ARRAY_OF(dot_last) last;
  /* The last node of each device, for `device order`. */
  RIG_ARRAY_OF(dot_device_last) devs;
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
  for (size_t i = 0; i < s->last.t.n; i++) {
    dot_last *l = &s->last.t.items[i];
    if (same_mem(l->mem, m) && l->device == device) return l;
  }
  if (!RIG_ARRAY_PUSH(&s->last, ((dot_last){.mem = m, .device = device})))
    return s->failed = true, NULL;
  dot_last *l = &s->last.t.items[s->last.t.n - 1];
  for (int k = 0; k < NUSES; k++) l->node[k] = SIZE_MAX;
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
  int64_t ready[8]; /* the rails its Ready leaves name */
  size_t nready;
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

static void set_device_last(dot_state *s, int64_t device, size_t node) {
  for (size_t i = 0; i < s->devs.t.n; i++)
    if (s->devs.t.items[i].device == device) {
      s->devs.t.items[i].node = node;
      return;
    }
  if (!RIG_ARRAY_PUSH(&s->devs, ((dot_device_last){device, node}))) s->failed = true;
}

/* The rails' ends a node uses: through Rail memory, or a Ready leaf. */
static void rail_uses(dot_state *s, size_t node, const dot_uses *u) {
  const rig_desc *d = s->d;
  for (size_t k = 0; k < u->n; k++) {
    int64_t m = u->mem[k].index;
    if (u->mem[k].kind != 0 || m < 0 || (size_t)m >= d->nmemory ||
        d->memory[m].tag != RIG_MEMORY_RAIL)
      continue;
    rig_desc_area area = d->memory[m].u.rail.area;
    dot_graph_rail(s->g, d->memory[m].u.rail.rail, node, area == RIG_AREA_OUTBOUND,
                   area != RIG_AREA_OUTBOUND);
  }
  for (size_t k = 0; k < u->nready; k++) dot_graph_rail(s->g, u->ready[k], node, true, false);
}

/* The node `name` on `device` with its uses: its edges from what it
 * follows, then its uses recorded as the last of the device. */
static void follow(dot_state *s, const char *name, int64_t device, const dot_uses *u) {
  size_t node = dot_graph_node(s->g, name);
  if (node == SIZE_MAX) return;
  rail_uses(s, node, u);
  for (size_t i = 0; i < s->devs.t.n; i++)
    if (s->devs.t.items[i].device == device)
      dot_graph_edge(s->g, s->devs.t.items[i].node, node, "device order");
  for (size_t k = 0; k < u->n; k++) {
    char mem[48], why[96];
    mem_name(u->mem[k], mem, sizeof mem);
    for (size_t i = 0; i < s->last.t.n; i++) {
      const dot_last *l = &s->last.t.items[i];
      if (!same_mem(l->mem, u->mem[k]) || l->device == device) continue;
      for (int before = 0; before < NUSES; before++)
        if (l->node[before] != SIZE_MAX && conflicts(u->use[k], before)) {
          snprintf(why, sizeof why, "%s: %s after %s", mem, use_names[u->use[k]],
                   use_names[before]);
          dot_graph_edge(s->g, l->node[before], node, why);
        }
    }
  }
  for (size_t k = 0; k < u->n; k++) {
    dot_last *l = last_of(s, u->mem[k], device);
    if (l) l->node[u->use[k]] = node;
  }
  set_device_last(s, device, node);
}

/* ---- labels ------------------------------------------------------------------ */

/* A description's string in a label: as it is when printable ASCII
 * without `"` or `\`, else 0x and its hex (as dump shows it). */
static void dot_string(FILE *f, const uint8_t *b, size_t len) {
  bool printable = true;
  for (size_t i = 0; i < len; i++)
    if (b[i] < 0x20 || b[i] > 0x7e || b[i] == '"' || b[i] == '\\') printable = false;
  if (printable) {
    fwrite(b, 1, len, f);
    return;
  }
  fputs("0x", f);
  for (size_t i = 0; i < len; i++) fprintf(f, "%02x", b[i]);
}

static void indent(FILE *f, int depth) {
  fprintf(f, "%*s", 2 * depth, "");
}

/* A slot as a label says it: `memory 2`, `memory 3 (rail 1 Inbound)`,
 * `input 0`, `ints`. */
static void slot_label(FILE *f, const rig_desc *d, const rig_desc_slot *slot) {
  if (slot->tag == RIG_SLOT_INPUT) {
    fprintf(f, "input %" PRId64, slot->u.input);
  } else if (slot->tag == RIG_SLOT_INTS) {
    fputs("ints", f);
  } else {
    int64_t m = slot->u.memory.memory;
    fprintf(f, "memory %" PRId64, m);
    if (m >= 0 && (size_t)m < d->nmemory && d->memory[m].tag == RIG_MEMORY_RAIL)
      fprintf(f, " (rail %" PRId64 " %s)", d->memory[m].u.rail.rail,
              rig_desc_area_name(d->memory[m].u.rail.area));
  }
}

static void value_label(FILE *f, rig_desc_value v) {
  if (v.tag == RIG_VALUE_FIXED)
    fprintf(f, "%" PRId64, v.u.fixed);
  else if (v.tag == RIG_VALUE_INT)
    fprintf(f, "Int(%" PRId64 ")", v.u.int_index);
  else
    fputs("a leaf's", f);
}

/* The device a Submit runs on: the job file's name for it, or its number
 * and arch. */
static void device_label(FILE *f, const dot_state *s, int64_t device) {
  const rig_desc *d = s->d;
  if (device >= 0 && (size_t)device < s->ndevices && s->devices) {
    const char *name = s->devices[device];
    dot_string(f, (const uint8_t *)name, strlen(name));
    fprintf(f, " (device %" PRId64 ")", device);
    return;
  }
  fprintf(f, "device %" PRId64, device);
  if (device >= 0 && (size_t)device < d->ndevices) {
    fputs(", ", f);
    dot_string(f, d->devices[device].bytes, d->devices[device].len);
  }
}

static void part_label(FILE *f, const dot_state *s, const rig_desc_submit *sub, size_t p) {
  const rig_desc_part *part = &sub->parts[p];
  if (sub->nparts > 1) fprintf(f, "%zu: ", p);
  switch (part->tag) {
    case RIG_PART_LAUNCH:
      fputs("Launch ", f);
      dot_string(f, part->u.launch.name.bytes, part->u.launch.name.len);
      break;
    case RIG_PART_FILL:
      fputs("Fill ", f);
      if (part->u.fill.fill.tag == RIG_LEAF_ENTRY)
        dot_string(f, part->u.fill.fill.u.entry.name.bytes, part->u.fill.fill.u.entry.name.len);
      else
        fputs("(not an entry)", f);
      break;
    case RIG_PART_COPY: {
      int64_t src = part->u.copy.src, dst = part->u.copy.dst;
      fputs("Copy ", f);
      if (src >= 0 && (size_t)src < sub->nslots)
        slot_label(f, s->d, &sub->slots[src]);
      else
        fprintf(f, "slot %" PRId64, src);
      fputs(" → ", f);
      if (dst >= 0 && (size_t)dst < sub->nslots)
        slot_label(f, s->d, &sub->slots[dst]);
      else
        fprintf(f, "slot %" PRId64, dst);
      fprintf(f, "\\n%" PRId64 " bytes", part->u.copy.length);
      break;
    }
    case RIG_PART_WORDS: {
      rig_desc_slot words = {.tag = RIG_SLOT_MEMORY, .u.memory = part->u.words};
      fputs("Words ", f);
      slot_label(f, s->d, &words);
      break;
    }
    default:
      fputs("part", f);
  }
}

/* ---- steps ------------------------------------------------------------------- */

/* A part's uses: its refs (a launch's, a fill's), a copy's source (read)
 * and destination (write), a words part's view (read); the Submit's fixed
 * memory, as declared, by its first part, which the others follow on the
 * device. */
static void part_uses(const rig_desc_submit *sub, size_t p, dot_uses *u) {
  const rig_desc_part *part = &sub->parts[p];
  const rig_desc_ref *refs = part->tag == RIG_PART_FILL     ? part->u.fill.refs
                             : part->tag == RIG_PART_LAUNCH ? part->u.launch.refs
                                                            : NULL;
  size_t nrefs = part->tag == RIG_PART_FILL     ? part->u.fill.nrefs
                 : part->tag == RIG_PART_LAUNCH ? part->u.launch.nrefs
                                                : 0;
  for (size_t r = 0; r < nrefs; r++)
    if (refs[r].slot >= 0 && (size_t)refs[r].slot < sub->nslots)
      add_use(u, &sub->slots[refs[r].slot], use_of(refs[r].use));
  if (part->tag == RIG_PART_COPY) {
    if (part->u.copy.src >= 0 && (size_t)part->u.copy.src < sub->nslots)
      add_use(u, &sub->slots[part->u.copy.src], USE_READ);
    if (part->u.copy.dst >= 0 && (size_t)part->u.copy.dst < sub->nslots)
      add_use(u, &sub->slots[part->u.copy.dst], USE_WRITE);
  } else if (part->tag == RIG_PART_WORDS) {
    rig_desc_slot words = {.tag = RIG_SLOT_MEMORY, .u.memory = part->u.words};
    add_use(u, &words, USE_READ);
  }
  for (size_t x = 0; p == 0 && x < sub->nfixed; x++) {
    rig_desc_slot fixed = {.tag = RIG_SLOT_MEMORY, .u.memory = sub->fixed[x].view};
    add_use(u, &fixed, sub->fixed[x].access == RIG_ACCESS_READ ? USE_READ : USE_WRITE);
  }
  /* A Ready leaf in its parameters: the kernel makes the rail's counts
   * ready, so it sends on it. */
  const rig_desc_data *params = part->tag == RIG_PART_FILL     ? &part->u.fill.params
                                : part->tag == RIG_PART_LAUNCH ? &part->u.launch.params
                                                               : NULL;
  for (size_t h = 0; params && h < params->nholes; h++)
    for (size_t t = 0; t < params->holes[h].terms.n; t++) {
      const rig_desc_value *v = &params->holes[h].terms.items[t].value;
      if (v->tag == RIG_VALUE_LEAF && v->u.leaf.tag == RIG_LEAF_READY &&
          u->nready < sizeof u->ready / sizeof u->ready[0])
        u->ready[u->nready++] = v->u.leaf.u.ready;
    }
}

/* The node a step's drawing starts with: a Submit of one part is that
 * part's node; of more (or none) its title's. */
static void top_node(const rig_desc_step *st, size_t number, char *buf, size_t size) {
  if (st->tag == RIG_STEP_SUBMIT && st->u.submit.nparts == 1)
    snprintf(buf, size, "s%zup0", number);
  else
    snprintf(buf, size, "s%zu", number);
}

/* A Submit of one part is one node saying both; of more, a cluster of its
 * parts under a title node (a node, not the cluster's label, so that
 * edges are routed around it rather than across it). */
static void submit(dot_state *s, int depth, size_t number, const rig_desc_submit *sub) {
  FILE *f = s->f;
  if (sub->nparts == 1) {
    indent(f, depth);
    fprintf(f, "%ss%zup0 [label=\"step %zu: Submit on ", s->prefix, number, number);
    device_label(f, s, sub->device);
    fputs("\\n", f);
    part_label(f, s, sub, 0);
    fputs("\"];\n", f);
  } else {
    indent(f, depth);
    fprintf(f, "subgraph cluster_%ss%zu {\n", s->prefix, number);
    indent(f, depth + 1);
    fprintf(f, "%ss%zu [label=\"step %zu: Submit on ", s->prefix, number, number);
    device_label(f, s, sub->device);
    fprintf(f, "%s\", shape=plaintext];\n", sub->nparts ? "" : "\\n(no parts)");
    for (size_t p = 0; p < sub->nparts; p++) {
      indent(f, depth + 1);
      fprintf(f, "%ss%zup%zu [label=\"", s->prefix, number, p);
      part_label(f, s, sub, p);
      fputs("\"];\n", f);
    }
    if (sub->nparts) {
      indent(f, depth + 1);
      fprintf(f, "%ss%zu -> %ss%zup0 [style=invis];\n", s->prefix, number, s->prefix, number);
    }
    indent(f, depth);
    fputs("}\n", f);
  }
  for (size_t p = 0; p < sub->nparts; p++) {
    dot_uses u = {.n = 0};
    part_uses(sub, p, &u);
    char node[32];
    snprintf(node, sizeof node, "s%zup%zu", number, p);
    follow(s, node, sub->device, &u);
  }
}

static void move(dot_state *s, int depth, size_t number, const rig_desc_step *st) {
  indent(s->f, depth);
  fprintf(s->f, "%ss%zu [label=\"step %zu: Move\\n", s->prefix, number, number);
  slot_label(s->f, s->d, &st->u.move.src);
  fputs(" → ", s->f);
  slot_label(s->f, s->d, &st->u.move.dst);
  fprintf(s->f, "\\n%" PRId64 " bytes\", style=rounded];\n", st->u.move.length);
  dot_uses u = {.n = 0};
  add_use(&u, &st->u.move.src, USE_READ);
  add_use(&u, &st->u.move.dst, USE_WRITE);
  char node[32];
  snprintf(node, sizeof node, "s%zu", number);
  follow(s, node, s->pseudo--, &u);
}

static void steps(dot_state *s, int depth, const rig_desc_steps *ss, size_t *number);

/* The steps of a body, in every loop's body too. */
static size_t count_steps(const rig_desc_steps *ss) {
  size_t n = ss->n;
  for (size_t i = 0; i < ss->n; i++)
    if (ss->items[i].tag == RIG_STEP_LOOP) n += count_steps(&ss->items[i].u.loop.body);
  return n;
}

/* A loop: a cluster around its head (which reads the flag, and says what
 * the loop is) and its body, the head drawn above the body. */
static void loop(dot_state *s, int depth, size_t number, const rig_desc_step *st, size_t *next) {
  FILE *f = s->f;
  indent(f, depth);
  fprintf(f, "subgraph cluster_%ss%zu {\n", s->prefix, number);
  indent(f, depth + 1);
  fprintf(f, "%ss%zu [label=\"step %zu: Loop\\n", s->prefix, number, number);
  value_label(f, st->u.loop.trips);
  fputs(" trips", f);
  if (st->u.loop.has_trip) fprintf(f, ", trip into Int(%" PRId64 ")", st->u.loop.trip);
  if (st->u.loop.has_flag) {
    fprintf(f, "\\nuntil byte %" PRId64 " of ", st->u.loop.flag_at);
    slot_label(f, s->d, &st->u.loop.flag_slot);
    fputs(" is 0", f);
  }
  fputs("\", shape=ellipse];\n", f);
  dot_uses u = {.n = 0};
  if (st->u.loop.has_flag) add_use(&u, &st->u.loop.flag_slot, USE_READ);
  char node[32];
  snprintf(node, sizeof node, "s%zu", number);
  follow(s, node, s->pseudo--, &u);
  size_t first = *next;
  steps(s, depth + 1, &st->u.loop.body, next);
  /* Each step of the body (its top level) below the head. */
  const rig_desc_steps *body = &st->u.loop.body;
  for (size_t i = 0, k = first; i < body->n; i++) {
    char top[32];
    top_node(&body->items[i], k, top, sizeof top);
    indent(f, depth + 1);
    fprintf(f, "%s%s -> %s%s [style=invis];\n", s->prefix, node, s->prefix, top);
    k += 1 + (body->items[i].tag == RIG_STEP_LOOP ? count_steps(&body->items[i].u.loop.body) : 0);
  }
  indent(f, depth);
  fputs("}\n", f);
}

static void steps(dot_state *s, int depth, const rig_desc_steps *ss, size_t *number) {
  for (size_t i = 0; i < ss->n; i++) {
    const rig_desc_step *st = &ss->items[i];
    size_t n = (*number)++;
    if (st->tag == RIG_STEP_SUBMIT) {
      submit(s, depth, n, &st->u.submit);
    } else if (st->tag == RIG_STEP_MOVE) {
      move(s, depth, n, st);
    } else if (st->tag == RIG_STEP_LOOP) {
      /* Numbered in pre-order: the body's steps before what follows. */
      loop(s, depth, n, st, number);
    }
  }
}

bool dot_walk(FILE *f, dot_graph *g, const rig_desc *d, const char *const *devices, size_t ndevices,
              const char *prefix, int depth) {
  dot_state s = {.f = f,
                 .g = g,
                 .prefix = prefix ? prefix : "",
                 .d = d,
                 .devices = devices,
                 .ndevices = devices ? ndevices : 0,
                 .last = RIG_ARRAY_OF_INIT(dot_last, 0),
                 .devs = RIG_ARRAY_OF_INIT(dot_device_last, 0),
                 .pseudo = -1};
  size_t number = 0;
  steps(&s, depth, &d->steps, &number);
  rig_array_free(&s.last.a);
  rig_array_free(&s.devs.a);
  return !s.failed && !g->failed;
}
