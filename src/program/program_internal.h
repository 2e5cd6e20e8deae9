/* Private to src/program: a loaded program's state, made once at load, and
 * the helpers load and run share (values of leaves and holes, borrows).
 *
 * A program is a common head (struct rig_program, the public handle) and
 * the part of its kind: a local program (plocal: memory, images, prepared
 * steps, run state) or a program of another machine (premote, remote.c:
 * the submission of its run words). A program that runs words received
 * from another process also has a preceived (received.c). */
#ifndef RIG_PROGRAM_INTERNAL_H
#define RIG_PROGRAM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "base/array.h"
#include "rig/rig_program.h"

/* A program's memory: one or two copies, of its device; a Rail memory
 * borrows its end's area (one copy). */
typedef struct pmem {
  rig_buffer *copy[2];
  int ncopies;
} pmem;

/* A hole of a step's parameters to fill each run (it reads an Int). */
typedef struct phole {
  size_t part;
  const rig_desc_hole *hole;
} phole;

/* A geometry value that reads an Int: part, which of the seven (groups,
 * threads, shared), and the value. */
typedef struct pgeom {
  size_t part;
  int which;
  const rig_desc_value *value;
} pgeom;

/* A prepared submission: one per copy when the step needs two. */
typedef struct pprep {
  rig_submission *sub;
  unsigned char *base;  /* the block after load: load-time holes filled */
  unsigned char *block; /* the block runs fill */
  rig_buffer **slots;   /* Memory and Ints slots set at load; Input per run */
} pprep;

typedef struct pstep {
  const rig_desc_step *d;
  int64_t number; /* in pre-order: the `s` of messages */
  size_t end;     /* for a loop: the index after its body */
  /* A Submit step. */
  size_t submit_index;
  size_t device;
  int nprep;
  pprep prep[2];
  phole *holes; /* per-run holes, shared by both preparations */
  size_t nholes;
  pgeom *geoms;
  size_t ngeoms;
  size_t *run_offsets; /* Copy parts whose offsets read an Int: set each run */
  size_t nrun_offsets;
  bool reads_ints;
} pstep;

/* What only a program of this machine has. */
typedef struct plocal {
  pmem *mem;
  size_t nmem;
  rig_image **images;
  rig_buffer *ints[2]; /* 8 * ints bytes of host memory each */
  /* Borrows of memory m (m == nmem: the ints), copy k, on device d:
   * borrows[(m * 2 + k) * ndevices + d]. */
  rig_buffer **borrows;
  pstep *steps;
  size_t nsteps;
  rig_rails rails;
  bool ints_named;   /* a step passes the ints to a device (a slot, a move) */
  bool *input_named; /* [input * ndevices + d]: a step on d names it */
  rig_buffer *stage; /* host bytes for flags in memory the host cannot read */
  /* uint64_t: the values of a run's hole or offset terms, as many as any
   * step has (made at load and as steps are prepared: a run allocates
   * nothing), read through plocal_scratch. */
  rig_array scratch;
  /* Run state, under the head's run_lock. */
  uint64_t runs;
  rig_point *last;           /* per device: its last point in this run */
  bool *ran;                 /* per device: it ran a submission or a move */
  rig_buffer **snap;         /* per input: the run's buffer, retained */
  rig_buffer **in_borrow;    /* [input * ndevices + d] */
  rig_buffer **in_borrow_of; /* the input each was made of (retained) */
} plocal;

static inline uint64_t *plocal_scratch(const plocal *l) {
  return l->scratch.items;
}

typedef struct premote premote;
typedef struct preceived preceived;

typedef enum pkind { PKIND_LOCAL, PKIND_REMOTE } pkind;

struct rig_program {
  pkind kind;
  rig_desc *desc; /* the program's own copy */
  size_t ndevices;
  rig_device **devices;
  size_t nsubmits;
  uint32_t *threads; /* per launch in step order: its function's most */
  size_t nlaunches;
  bool *input_written; /* per input: a step writes it */
  /* A run is inside, on thread `runner`, while it holds run_lock. */
  pthread_mutex_t run_lock;
  _Atomic bool active;
  pthread_t runner;
  union {
    plocal *local;   /* PKIND_LOCAL */
    premote *remote; /* PKIND_REMOTE */
  };
  /* Runs received from another process, under recv_lock: the lock lives
   * here as the part is made at the first such run of a program that
   * rig_program_load_received did not load. */
  pthread_mutex_t recv_lock;
  preceived *received;
};

/* The copy of memory m that copy k of the run uses. */
static inline int pmem_copy(const plocal *l, int64_t m, int k) {
  return l->mem[m].ncopies == 2 ? k : 0;
}

/* A Fill's or a Launch's refs and params; no refs and NULL params for the
 * other parts. */
static inline const rig_desc_ref *rig_program_part_refs(const rig_desc_part *part, size_t *n) {
  *n = part->tag == RIG_PART_FILL     ? part->u.fill.nrefs
       : part->tag == RIG_PART_LAUNCH ? part->u.launch.nrefs
                                      : 0;
  return part->tag == RIG_PART_FILL     ? part->u.fill.refs
         : part->tag == RIG_PART_LAUNCH ? part->u.launch.refs
                                        : NULL;
}

static inline const rig_desc_data *rig_program_part_params(const rig_desc_part *part) {
  return part->tag == RIG_PART_FILL     ? &part->u.fill.params
         : part->tag == RIG_PART_LAUNCH ? &part->u.launch.params
                                        : NULL;
}

/* Whether a term reads an Int: its value is known only per run. */
static inline bool rig_program_terms_read_int(const rig_desc_terms *t) {
  for (size_t i = 0; i < t->n; i++)
    if (t->items[i].value.tag == RIG_VALUE_INT) return true;
  return false;
}

/* The error already in *err, its message kept, as RIG_EREFUSED: what
 * another process made, or a device would not take, is refused. */
rig_status rig_program_refused(rig_error *err);

/* m's copy k (m == nmem: the ints) as device d's work addresses it. */
rig_status rig_program_borrow(rig_program *p, int64_t m, int k, size_t d, rig_buffer **out,
                              rig_error *err);

/* The function `name` of image `image`; RIG_EREFUSED naming dev when the
 * image has none. */
rig_status rig_program_entry(rig_program *p, int64_t image, const rig_desc_string *name,
                             const rig_device *dev, rig_entry *e, rig_error *err);

/* The value of a leaf for copy k of the run. */
rig_status rig_program_leaf(rig_program *p, const rig_desc_leaf *l, int k, uint64_t *out,
                            rig_error *err);

/* ORs hole h's value into bytes (the bytes under it in `base` must not meet
 * the value), the value of term j being vals[j]. `what` names the data. */
rig_status rig_program_fill_hole(unsigned char *bytes, const unsigned char *base,
                                 const rig_desc_hole *h, const uint64_t *vals, const char *what,
                                 rig_error *err);

/* The exact sum of offset terms whose values are vals; false when a
 * product or a partial sum is past an OCaml int (the caller's message says
 * which offset). */
bool rig_program_offset(const rig_desc_terms *t, const int64_t *vals, int64_t *sum);

/* `code` (RIG_EREFUSED at load, RIG_EINVAL at run) naming step `step` and
 * part `part` when its launch's geometry value `which` (of the seven of
 * pgeom) is past 32 bits. */
rig_status rig_program_geometry(int64_t step, size_t part, int which, uint64_t v, rig_status code,
                                rig_error *err);

/* Launch part `part` (dp) of step `step`: its geometry as load knows it,
 * into g, and RIG_EREFUSED `step <s>: part <i>: ...` for a value past 32
 * bits or one dev cannot run (rig_launch_check, the rule rig_submit
 * applies; max_threads 0 when its function is not known yet). Leaves are
 * copy k's, or stand in like Ints when p is NULL (nothing made yet). */
rig_status rig_program_load_geometry(rig_program *p, int k, const rig_device *dev, int64_t step,
                                     size_t part, const rig_desc_part *dp, uint32_t max_threads,
                                     uint32_t g[7], rig_error *err);

/* Prepares Submit step s (program step index i) for each copy it needs. */
rig_status rig_program_prepare(rig_program *p, size_t i, rig_error *err);

/* The frame's counts and inputs, before any step (run.c). */
rig_status rig_program_check_frame(const rig_program *p, const rig_frame *f, rig_error *err);

/* Programs of another machine (remote.c). */
rig_status rig_program_load_remote(rig_program *p, rig_error *err);
rig_status rig_program_run_remote(rig_program *p, const rig_frame *f, const rig_point *waits,
                                  size_t nwaits, rig_point *ends, size_t *nends, rig_error *err);
void rig_program_free_remote(premote *r, size_t ninputs);

/* The received part (received.c), made by rig_program_load_received. */
void rig_program_free_received(preceived *r, size_t ninputs);

/* Tracing (trace.c): the process's sink, NULL when none; what a run
 * records into it. */
extern rig_trace *_Atomic rig_program_tracing;
void rig_program_trace_step(rig_trace *t, rig_trace_kind kind, const rig_device *dev, int64_t step,
                            uint64_t run, uint64_t begin, rig_point pt);
void rig_program_trace_run(rig_trace *t, uint64_t run);

/* Frees what a program made (also a partly made one). */
void rig_program_free(rig_program *p);

#endif
