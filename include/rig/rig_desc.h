/* rig_desc.h: a program's description as C data, one to one with the seed's
 * types (Rig_program's OCaml interface, "Descriptions"), a builder, the bytes of format
 * version 4, the JSON text form, and the checker of every rule that needs no
 * device.
 *
 * Integers are the seed's OCaml ints held in int64_t; array counts are
 * size_t. A description owns all its arrays and strings (they live in an
 * arena freed by rig_desc_free), so a description is built, decoded or
 * edited in place and freed with one call. Decoding only decodes: anything
 * the types can hold round-trips, ill-formed descriptions included, and
 * rig_desc_check judges. */
#ifndef RIG_DESC_H
#define RIG_DESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rig_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exported; the rest of librig is hidden (src/librig.map). */
#pragma GCC visibility push(default)

#define RIG_DESC_FORMAT_VERSION 4
/* Loops nest at most this deep: deeper is refused by the codec and checker. */
#define RIG_DESC_MAX_DEPTH 64
/* A launch's or fill's parameters are at most this many bytes. */
#define RIG_DESC_MAX_PARAMS 4096

typedef struct rig_desc_string {
  const uint8_t *bytes; /* not NUL-terminated; may hold any byte */
  size_t len;
} rig_desc_string;

/* leaf */
typedef enum rig_desc_leaf_tag {
  RIG_LEAF_ADDRESS = 0,
  RIG_LEAF_HANDLE = 1,
  RIG_LEAF_ENTRY = 2,
  RIG_LEAF_READY = 3,
} rig_desc_leaf_tag;

typedef struct rig_desc_leaf {
  rig_desc_leaf_tag tag;
  union {
    struct {
      int64_t memory;
      int64_t on;
    } address;      /* Address { memory; on } */
    int64_t handle; /* Handle memory */
    struct {
      int64_t image;
      rig_desc_string name;
    } entry;       /* Entry { image; name } */
    int64_t ready; /* Ready rail */
  } u;
} rig_desc_leaf;

/* width */
typedef enum rig_desc_width { RIG_W32 = 0, RIG_W64 = 1 } rig_desc_width;

/* value */
typedef enum rig_desc_value_tag {
  RIG_VALUE_FIXED = 0,
  RIG_VALUE_INT = 1,
  RIG_VALUE_LEAF = 2,
} rig_desc_value_tag;

typedef struct rig_desc_value {
  rig_desc_value_tag tag;
  union {
    int64_t fixed;      /* Fixed n */
    int64_t int_index;  /* Int i: word i of the run's ints */
    rig_desc_leaf leaf; /* Leaf l */
  } u;
} rig_desc_value;

/* A (value, factor) pair of a hole's terms or an offset's terms. In a
 * `leaf data` (a memory's init, an image's binary) every term's value is a
 * Leaf; the codec writes and reads the bare leaf there. */
typedef struct rig_desc_term {
  rig_desc_value value;
  int64_t factor;
} rig_desc_term;

typedef struct rig_desc_terms {
  rig_desc_term *items;
  size_t n;
} rig_desc_terms;

/* 'a hole */
typedef struct rig_desc_hole {
  int64_t at;
  rig_desc_width width;
  rig_desc_terms terms;
  int64_t add;
  int64_t shift;
} rig_desc_hole;

/* 'a data */
typedef struct rig_desc_data {
  rig_desc_string bytes;
  rig_desc_hole *holes;
  size_t nholes;
} rig_desc_data;

/* copies */
typedef enum rig_desc_copies { RIG_COPIES_ONE = 0, RIG_COPIES_TWO = 1 } rig_desc_copies;

/* area */
typedef enum rig_desc_area {
  RIG_AREA_OUTBOUND = 0,
  RIG_AREA_INBOUND = 1,
  RIG_AREA_COUNTS = 2,
} rig_desc_area;

/* memory */
typedef enum rig_desc_memory_tag { RIG_MEMORY_ALLOC = 0, RIG_MEMORY_RAIL = 1 } rig_desc_memory_tag;

typedef struct rig_desc_memory {
  rig_desc_memory_tag tag;
  union {
    struct {
      int64_t device;
      rig_buffer_kind kind;
      int64_t bytes;
      rig_desc_data init; /* leaf data */
      rig_desc_copies copies;
    } alloc;
    struct {
      int64_t rail;
      rig_desc_area area;
    } rail;
  } u;
} rig_desc_memory;

/* image */
typedef struct rig_desc_image {
  int64_t device;
  rig_desc_data binary; /* leaf data */
} rig_desc_image;

/* view */
typedef struct rig_desc_view {
  int64_t memory;
  int64_t offset;
  int64_t length;
} rig_desc_view;

/* slot */
typedef enum rig_desc_slot_tag {
  RIG_SLOT_MEMORY = 0,
  RIG_SLOT_INPUT = 1,
  RIG_SLOT_INTS = 2,
} rig_desc_slot_tag;

typedef struct rig_desc_slot {
  rig_desc_slot_tag tag;
  union {
    rig_desc_view memory; /* Memory view */
    int64_t input;        /* Input i */
  } u;
} rig_desc_slot;

/* use */
typedef rig_use rig_desc_use; /* rig_base.h */

/* ref */
typedef struct rig_desc_ref {
  int64_t slot;
  int64_t at;
  rig_desc_use use;
} rig_desc_ref;

/* part */
typedef enum rig_desc_part_tag {
  RIG_PART_WORDS = 0,
  RIG_PART_FILL = 1,
  RIG_PART_COPY = 2,
  RIG_PART_LAUNCH = 3,
} rig_desc_part_tag;

typedef struct rig_desc_part {
  rig_desc_part_tag tag;
  union {
    rig_desc_view words;
    struct {
      rig_desc_leaf fill;
      rig_desc_data params; /* value data */
      rig_desc_ref *refs;
      size_t nrefs;
    } fill;
    struct {
      int64_t src;
      rig_desc_terms src_offset;
      int64_t dst;
      rig_desc_terms dst_offset;
      int64_t length;
    } copy;
    struct {
      int64_t image;
      rig_desc_string name;
      rig_desc_data params; /* value data */
      rig_desc_ref *refs;
      size_t nrefs;
      rig_desc_value groups[3];
      rig_desc_value threads[3];
      rig_desc_value shared;
    } launch;
  } u;
} rig_desc_part;

/* (view, access) of a submit's fixed memory */
typedef struct rig_desc_fixed_view {
  rig_desc_view view;
  rig_access access;
} rig_desc_fixed_view;

/* submit */
typedef struct rig_desc_submit {
  int64_t device;
  rig_desc_part *parts;
  size_t nparts;
  rig_desc_slot *slots;
  size_t nslots;
  rig_desc_fixed_view *fixed;
  size_t nfixed;
} rig_desc_submit;

/* step */
typedef enum rig_desc_step_tag {
  RIG_STEP_SUBMIT = 0,
  RIG_STEP_MOVE = 1,
  RIG_STEP_LOOP = 2,
} rig_desc_step_tag;

typedef struct rig_desc_step rig_desc_step;

typedef struct rig_desc_steps {
  rig_desc_step *items;
  size_t n;
} rig_desc_steps;

struct rig_desc_step {
  rig_desc_step_tag tag;
  union {
    rig_desc_submit submit;
    struct {
      rig_desc_slot src;
      rig_desc_terms src_offset;
      rig_desc_slot dst;
      rig_desc_terms dst_offset;
      int64_t length;
    } move;
    struct {
      rig_desc_value trips;
      bool has_trip;
      int64_t trip;
      bool has_flag;
      rig_desc_slot flag_slot;
      int64_t flag_at;
      rig_desc_steps body;
    } loop;
  } u;
};

/* input */
typedef struct rig_desc_input {
  int64_t device;
  int64_t bytes;
} rig_desc_input;

typedef struct rig_desc_arena rig_desc_arena;

/* t */
typedef struct rig_desc {
  rig_desc_string *devices; /* each device's arch */
  size_t ndevices;
  rig_desc_memory *memory;
  size_t nmemory;
  rig_desc_image *images;
  size_t nimages;
  rig_desc_input *inputs;
  size_t ninputs;
  int64_t ints;
  rig_desc_steps steps;
  rig_desc_arena *arena; /* owns every array and string above */
} rig_desc;

/* ---- Making and freeing ------------------------------------------------ */

/* An empty description (no devices, memory, images, inputs, ints or steps),
 * or NULL when out of memory. */
rig_desc *rig_desc_create(void);

/* Frees d and everything it owns. NULL is ignored. */
void rig_desc_free(rig_desc *d);

/* A deep copy of d, or NULL when out of memory or when d cannot be written
 * as bytes (rig_desc_to_bytes refuses it; rig_desc_check does too). */
rig_desc *rig_desc_copy(const rig_desc *d);

/* ---- Building ------------------------------------------------------------
 *
 * Each call appends to one of d's arrays, copying what it is given into d,
 * and returns the new element's index (or a pointer to it). A pointer an
 * add returns stays valid until the next add to the same array; a step added
 * to a loop's body is given as a pointer to that loop step, or NULL for the
 * description's top-level steps. Out of memory, an index call returns -1, a
 * pointer call NULL and a rig_status call RIG_ENOMEM; no call takes a
 * rig_error, since its code says all there is to say. The builder does not
 * check rules: rig_desc_check does. */

rig_desc_string rig_desc_str(const char *s); /* borrows s (no copy) */

int64_t rig_desc_add_device(rig_desc *d, const char *arch);
int64_t rig_desc_add_alloc(rig_desc *d, int64_t device, rig_buffer_kind kind, int64_t bytes,
                           rig_desc_copies copies);
int64_t rig_desc_add_rail(rig_desc *d, int64_t rail, rig_desc_area area);
int64_t rig_desc_add_image(rig_desc *d, int64_t device, const void *binary, size_t len);
int64_t rig_desc_add_input(rig_desc *d, int64_t device, int64_t bytes);
/* Sets how many ints a run's frame holds (the description's `ints`). */
void rig_desc_set_ints(rig_desc *d, int64_t ints);
/* The init of Alloc memory `memory` (its bytes and holes, which
 * rig_desc_data_set and rig_desc_data_add_hole fill), or NULL when memory
 * `memory` is not an Alloc of d. */
rig_desc_data *rig_desc_memory_init(rig_desc *d, int64_t memory);
/* Sets the init bytes of Alloc memory `memory` to a copy of len bytes;
 * RIG_OK, RIG_ENOMEM, or RIG_EINVAL when it is not an Alloc of d. */
rig_status rig_desc_memory_set_init(rig_desc *d, int64_t memory, const void *bytes, size_t len);

/* Sets the bytes of a data (a memory's init, an image's binary, a part's
 * params) to a copy of len bytes; RIG_OK or RIG_ENOMEM. */
rig_status rig_desc_data_set(rig_desc *d, rig_desc_data *data, const void *bytes, size_t len);
rig_desc_hole *rig_desc_data_add_hole(rig_desc *d, rig_desc_data *data, int64_t at,
                                      rig_desc_width width, int64_t add, int64_t shift);
/* Appends a term to a hole's or an offset's terms; RIG_OK or RIG_ENOMEM. */
rig_status rig_desc_terms_add(rig_desc *d, rig_desc_terms *terms, rig_desc_value value,
                              int64_t factor);

/* Steps: `loop` is the loop step whose body receives the new step, or NULL. */
rig_desc_submit *rig_desc_add_submit(rig_desc *d, rig_desc_step *loop, int64_t device);
rig_desc_step *rig_desc_add_move(rig_desc *d, rig_desc_step *loop, rig_desc_slot src,
                                 rig_desc_slot dst, int64_t length);
rig_desc_step *rig_desc_add_loop(rig_desc *d, rig_desc_step *loop, rig_desc_value trips);
/* Sets the loop's trip word, or its flag. */
void rig_desc_loop_set_trip(rig_desc_step *loop, int64_t trip);
void rig_desc_loop_set_flag(rig_desc_step *loop, rig_desc_slot slot, int64_t at);

int64_t rig_desc_submit_add_slot(rig_desc *d, rig_desc_submit *s, rig_desc_slot slot);
/* Appends a view the submit fixes; RIG_OK or RIG_ENOMEM. */
rig_status rig_desc_submit_add_fixed(rig_desc *d, rig_desc_submit *s, rig_desc_view view,
                                     rig_access access);
rig_desc_part *rig_desc_submit_add_words(rig_desc *d, rig_desc_submit *s, rig_desc_view view);
rig_desc_part *rig_desc_submit_add_fill(rig_desc *d, rig_desc_submit *s, rig_desc_leaf fill,
                                        const void *params, size_t len);
rig_desc_part *rig_desc_submit_add_copy(rig_desc *d, rig_desc_submit *s, int64_t src, int64_t dst,
                                        int64_t length);
/* A launch of `name` of image `image` with groups and threads of one
 * dimension each ({n, 1, 1}) and no shared memory; set the fields after for
 * more. */
rig_desc_part *rig_desc_submit_add_launch(rig_desc *d, rig_desc_submit *s, int64_t image,
                                          const char *name, const void *params, size_t len,
                                          rig_desc_value groups, rig_desc_value threads);
/* Appends a ref to a fill or launch part; RIG_OK, RIG_ENOMEM, or RIG_EINVAL
 * when the part is neither (a words or copy part has no refs). */
rig_status rig_desc_part_add_ref(rig_desc *d, rig_desc_part *part, int64_t slot, int64_t at,
                                 rig_desc_use use);
/* The params of a fill or launch part. */
rig_desc_data *rig_desc_part_params(rig_desc_part *part);

/* Constructors of small values. */
static inline rig_desc_view rig_desc_view_of(int64_t memory, int64_t offset, int64_t length) {
  rig_desc_view v = {memory, offset, length};
  return v;
}
static inline rig_desc_slot rig_desc_slot_memory(int64_t memory, int64_t offset, int64_t length) {
  rig_desc_slot s;
  s.tag = RIG_SLOT_MEMORY;
  s.u.memory = rig_desc_view_of(memory, offset, length);
  return s;
}
static inline rig_desc_slot rig_desc_slot_input(int64_t input) {
  rig_desc_slot s;
  s.tag = RIG_SLOT_INPUT;
  s.u.input = input;
  return s;
}
static inline rig_desc_slot rig_desc_slot_ints(void) {
  rig_desc_slot s;
  s.tag = RIG_SLOT_INTS;
  s.u.input = 0;
  return s;
}
static inline rig_desc_value rig_desc_fixed(int64_t n) {
  rig_desc_value v;
  v.tag = RIG_VALUE_FIXED;
  v.u.fixed = n;
  return v;
}
static inline rig_desc_value rig_desc_int(int64_t i) {
  rig_desc_value v;
  v.tag = RIG_VALUE_INT;
  v.u.int_index = i;
  return v;
}
static inline rig_desc_leaf rig_desc_address(int64_t memory, int64_t on) {
  rig_desc_leaf l;
  l.tag = RIG_LEAF_ADDRESS;
  l.u.address.memory = memory;
  l.u.address.on = on;
  return l;
}
static inline rig_desc_leaf rig_desc_handle(int64_t memory) {
  rig_desc_leaf l;
  l.tag = RIG_LEAF_HANDLE;
  l.u.handle = memory;
  return l;
}
/* Borrows name; the builder's add calls copy it into the description. */
static inline rig_desc_leaf rig_desc_entry(int64_t image, const char *name) {
  rig_desc_leaf l;
  l.tag = RIG_LEAF_ENTRY;
  l.u.entry.image = image;
  l.u.entry.name = rig_desc_str(name);
  return l;
}
static inline rig_desc_leaf rig_desc_ready(int64_t rail) {
  rig_desc_leaf l;
  l.tag = RIG_LEAF_READY;
  l.u.ready = rail;
  return l;
}
static inline rig_desc_value rig_desc_leaf_value(rig_desc_leaf leaf) {
  rig_desc_value v;
  v.tag = RIG_VALUE_LEAF;
  v.u.leaf = leaf;
  return v;
}

/* ---- Bytes (docs/format.md) --------------------------------------------------- */

/* d as bytes of format version 4, in a buffer the caller frees with free().
 * RIG_EINVAL if a leaf data's term is not a Leaf or loops nest deeper than
 * RIG_DESC_MAX_DEPTH (such bytes would not decode); RIG_ENOMEM. */
rig_status rig_desc_to_bytes(const rig_desc *d, uint8_t **bytes, size_t *len, rig_error *err);

/* The description that rig_desc_to_bytes wrote as bytes; RIG_EMALFORMED with
 * docs/format.md's message otherwise. Never reads outside bytes[0..len), never
 * allocates more than a constant times len. */
rig_status rig_desc_of_bytes(const void *bytes, size_t len, rig_desc **d, rig_error *err);

/* Whether bytes start with the description magic "rig.program\n". */
bool rig_desc_is_bytes(const void *bytes, size_t len);

/* ---- the listing (docs/cli.md, "dump") -------------------------------------- */

/* d's readable listing, as `progrun dump` prints it: every field, one
 * thing a line, nested by indentation, steps numbered in pre-order as the
 * checker's messages number them; data over 256 bytes by its start and a
 * digest. *text is NUL-terminated, malloc'd (the caller frees it).
 * RIG_ENOMEM. */
rig_status rig_desc_listing(const rig_desc *d, char **text, rig_error *err);

/* ---- the graph (docs/cli.md, "dot") ------------------------------------------ */

/* d's steps as a Graphviz digraph `program`, as `progrun dot` prints it: a
 * node per part of each Submit, per Move and per Loop's head, and an edge
 * to each from the earlier ones it follows by the core's ordering
 * (docs/core.md, "Ordering: stamps"), labelled with why; with `all` false
 * only the edges no other path implies. Draws a description that breaks
 * rules too. *text is NUL-terminated, malloc'd (the caller frees it).
 * RIG_ENOMEM. */
rig_status rig_desc_dot(const rig_desc *d, bool all, char **text, rig_error *err);

/* What follows `digraph NAME {` in every graph rig_desc_dot draws (time
 * flows down; clusters' titles at their left), for a drawing that places
 * descriptions' graphs among its own. */
#define RIG_DESC_DOT_HEAD                                                                          \
  "  compound=true;\n"                                                                             \
  "  graph [fontname=\"Helvetica\", fontsize=12, labeljust=l];\n"                                  \
  "  node [shape=box, fontname=\"Helvetica\", fontsize=11];\n"                                     \
  "  edge [fontname=\"Helvetica\", fontsize=9];\n"

/* How rig_desc_dot_graph draws one description among others (progrun's
 * drawing of a job file: a cluster per machine, rails between them). */
typedef struct rig_desc_dot_style {
  const char *prefix;         /* before every node's and cluster's name ("m1_"); NULL: none */
  const char *const *devices; /* names standing for d's devices, or NULL: number and arch */
  size_t ndevices;
  int depth; /* the nodes' indentation, two spaces a level */
  bool all;  /* every edge, not only those no other path implies */
} rig_desc_dot_style;

/* A drawn description's nodes, kept to find the ends of its rails. */
typedef struct rig_desc_graph rig_desc_graph;

/* d's graph in pieces: its nodes and clusters (*nodes) and its edges
 * (*edges), text as rig_desc_dot writes between the head and the closing
 * `}`, and *graph (freed with rig_desc_graph_free). RIG_ENOMEM. */
rig_status rig_desc_dot_graph(const rig_desc *d, const rig_desc_dot_style *style, char **nodes,
                              char **edges, rig_desc_graph **graph, rig_error *err);
/* The name (without the prefix) of the last node that sends on `rail` (uses
 * its Outbound area, or makes its counts ready through a Ready leaf) when
 * `sends`, else of the first that receives (uses its Inbound area or its
 * Counts); NULL for none. Valid until the graph is freed. */
const char *rig_desc_graph_rail_end(const rig_desc_graph *g, int64_t rail, bool sends);
void rig_desc_graph_free(rig_desc_graph *g);

/* ---- JSON text (docs/format.md, docs/json.md) ------------------------------- */

/* d as JSON text (NUL-terminated, freed with free()). */
rig_status rig_desc_to_json(const rig_desc *d, char **text, rig_error *err);

/* The description in JSON text of len bytes. An image's or init's bytes may
 * be {"file": PATH}, read relative to base_dir (NULL refuses files).
 * RIG_EMALFORMED naming the JSON path (`steps[3].Submit.parts[0]: ...`). */
rig_status rig_desc_of_json(const char *text, size_t len, const char *base_dir, rig_desc **d,
                            rig_error *err);

/* ---- Checking (docs/rules.md, rules 3 to 8) --------- */

/* What the checker knows of the rails a load will have. NULL means none is
 * known: the sizes of Outbound and Inbound areas are then unknown, and the
 * rules that need them are left to the load that has the rail. */
typedef struct rig_desc_rail_sizes {
  /* The bytes of area `area` of rail `rail`, or -1 when unknown. */
  int64_t (*area_bytes)(void *ctx, int64_t rail, rig_desc_area area);
  void *ctx;
} rig_desc_rail_sizes;

/* RIG_OK, or RIG_EINVAL with the message of the first rule d breaks, in the
 * order of docs/program.md; in time linear in d's size. Checks nothing that needs
 * a device (device count, arch, rails given). */
rig_status rig_desc_check(const rig_desc *d, rig_error *err);
rig_status rig_desc_check_rails(const rig_desc *d, const rig_desc_rail_sizes *rails,
                                rig_error *err);

/* ---- Walking ------------------------------------------------------------- */

/* The number of Submit steps, a loop's body counted once, and of all steps
 * (Submit, Move, Loop) in pre-order. */
size_t rig_desc_count_submits(const rig_desc *d);
size_t rig_desc_count_steps(const rig_desc *d);

/* Names for printing (the seed's constructor names). */
const char *rig_desc_kind_name(rig_buffer_kind k);
const char *rig_desc_access_name(rig_access a);
const char *rig_desc_use_name(rig_desc_use u);
const char *rig_desc_area_name(rig_desc_area a);
const char *rig_desc_copies_name(rig_desc_copies c);
const char *rig_desc_width_name(rig_desc_width w);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
