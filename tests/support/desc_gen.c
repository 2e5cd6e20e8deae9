/* Random descriptions of any shape (see desc_gen.h). */
#include "desc_gen.h"

static const int64_t extremes[] = {0,
                                   1,
                                   -1,
                                   2,
                                   7,
                                   8,
                                   64,
                                   4096,
                                   RIG_INT_MAX,
                                   RIG_INT_MAX - 1,
                                   RIG_INT_MAX - 3,
                                   RIG_INT_MAX - 7,
                                   RIG_INT_MIN,
                                   RIG_INT_MIN + 1,
                                   INT64_C(1) << 60,
                                   RIG_INT_MAX / 8 + 1,
                                   INT32_MAX,
                                   (int64_t)UINT32_MAX};

int64_t rig_gen_int(rig_rng *r) {
  switch (rig_rng_below(r, 8)) {
    case 0:
      return extremes[rig_rng_below(r, sizeof extremes / sizeof *extremes)];
    case 1:
      return (int64_t)(rig_rng_next(r) << 1) >> 1; /* any 63-bit value */
    case 2:
      return -(int64_t)rig_rng_below(r, 10);
    default:
      return (int64_t)rig_rng_below(r, 16);
  }
}

static size_t gen_count(rig_rng *r, size_t max) {
  return rig_rng_below(r, 4) == 0 ? 0 : (size_t)rig_rng_below(r, max + 1);
}

static void gen_bytes(rig_rng *r, uint8_t *buf, size_t n) {
  for (size_t i = 0; i < n; i++) buf[i] = (uint8_t)rig_rng_next(r);
}

static const char *archs[] = {"x86_64", "cpu-x86_64", "sm_90", "aarch64", ""};

static rig_desc_leaf gen_leaf(rig_rng *r) {
  switch (rig_rng_below(r, 4)) {
    case 0:
      return rig_desc_address(rig_gen_int(r), rig_gen_int(r));
    case 1:
      return rig_desc_handle(rig_gen_int(r));
    case 2:
      return rig_desc_entry(rig_gen_int(r), rig_rng_below(r, 2) ? "kernel" : "");
    default:
      return rig_desc_ready(rig_gen_int(r));
  }
}

static rig_desc_value gen_value(rig_rng *r) {
  switch (rig_rng_below(r, 3)) {
    case 0:
      return rig_desc_fixed(rig_gen_int(r));
    case 1:
      return rig_desc_int(rig_gen_int(r));
    default:
      return rig_desc_leaf_value(gen_leaf(r));
  }
}

static void gen_data(rig_desc *d, rig_rng *r, rig_desc_data *data, bool leaves) {
  uint8_t buf[80];
  size_t n = gen_count(r, sizeof buf);
  gen_bytes(r, buf, n);
  rig_desc_data_set(d, data, buf, n);
  size_t holes = gen_count(r, 3);
  for (size_t i = 0; i < holes; i++) {
    rig_desc_hole *h = rig_desc_data_add_hole(d, data, rig_gen_int(r), rig_rng_below(r, 2),
                                              rig_gen_int(r), rig_gen_int(r));
    if (!h) return;
    size_t terms = gen_count(r, 3);
    for (size_t j = 0; j < terms; j++)
      rig_desc_terms_add(d, &h->terms, leaves ? rig_desc_leaf_value(gen_leaf(r)) : gen_value(r),
                         rig_gen_int(r));
  }
}

static void gen_terms(rig_desc *d, rig_rng *r, rig_desc_terms *t) {
  size_t n = gen_count(r, 3);
  for (size_t i = 0; i < n; i++) rig_desc_terms_add(d, t, gen_value(r), rig_gen_int(r));
}

static rig_desc_view gen_view(rig_rng *r) {
  return rig_desc_view_of(rig_gen_int(r), rig_gen_int(r), rig_gen_int(r));
}

static rig_desc_slot gen_slot(rig_rng *r) {
  switch (rig_rng_below(r, 3)) {
    case 0: {
      rig_desc_view v = gen_view(r);
      return rig_desc_slot_memory(v.memory, v.offset, v.length);
    }
    case 1:
      return rig_desc_slot_input(rig_gen_int(r));
    default:
      return rig_desc_slot_ints();
  }
}

static void gen_refs(rig_desc *d, rig_rng *r, rig_desc_part *p) {
  size_t n = gen_count(r, 3);
  for (size_t i = 0; i < n; i++)
    rig_desc_part_add_ref(d, p, rig_gen_int(r), rig_gen_int(r), rig_rng_below(r, 3));
}

static void gen_submit(rig_desc *d, rig_rng *r, rig_desc_step *loop) {
  rig_desc_submit *s = rig_desc_add_submit(d, loop, rig_gen_int(r));
  if (!s) return;
  size_t parts = gen_count(r, 3);
  for (size_t i = 0; i < parts; i++) {
    rig_desc_part *p = NULL;
    switch (rig_rng_below(r, 4)) {
      case 0:
        rig_desc_submit_add_words(d, s, gen_view(r));
        break;
      case 1:
        p = rig_desc_submit_add_fill(d, s, gen_leaf(r), "", 0);
        if (p) gen_data(d, r, &p->u.fill.params, false);
        break;
      case 2:
        p = rig_desc_submit_add_copy(d, s, rig_gen_int(r), rig_gen_int(r), rig_gen_int(r));
        if (p) {
          gen_terms(d, r, &p->u.copy.src_offset);
          gen_terms(d, r, &p->u.copy.dst_offset);
        }
        p = NULL;
        break;
      default:
        p = rig_desc_submit_add_launch(d, s, rig_gen_int(r), rig_rng_below(r, 2) ? "k" : "main", "",
                                       0, gen_value(r), gen_value(r));
        if (p) {
          gen_data(d, r, &p->u.launch.params, false);
          for (int k = 1; k < 3; k++) {
            p->u.launch.groups[k] = gen_value(r);
            p->u.launch.threads[k] = gen_value(r);
          }
          p->u.launch.shared = gen_value(r);
          /* Launch values built directly hold borrowed Entry names; those
           * come from string literals here, which outlive the description. */
        }
        break;
    }
    if (p) gen_refs(d, r, p);
  }
  size_t slots = gen_count(r, 3);
  for (size_t i = 0; i < slots; i++) rig_desc_submit_add_slot(d, s, gen_slot(r));
  size_t fixed = gen_count(r, 2);
  for (size_t i = 0; i < fixed; i++)
    rig_desc_submit_add_fixed(d, s, gen_view(r), rig_rng_below(r, 2));
}

static void gen_steps(rig_desc *d, rig_rng *r, rig_desc_step *loop, int depth, int max_depth) {
  size_t n = gen_count(r, depth == 0 ? 6 : 3);
  for (size_t i = 0; i < n; i++) {
    unsigned kind = rig_rng_below(r, 3);
    if (kind == 2 && depth < max_depth) {
      rig_desc_step *l = rig_desc_add_loop(d, loop, gen_value(r));
      if (!l) return;
      if (rig_rng_below(r, 2)) rig_desc_loop_set_trip(l, rig_gen_int(r));
      if (rig_rng_below(r, 2)) rig_desc_loop_set_flag(l, gen_slot(r), rig_gen_int(r));
      /* Sometimes a chain of single loops straight down to the limit. */
      if (rig_rng_below(r, 8) == 0) {
        rig_desc_step *inner = l;
        for (int k = depth + 1; k < max_depth; k++) {
          inner = rig_desc_add_loop(d, inner, gen_value(r));
          if (!inner) return;
        }
        gen_steps(d, r, inner, max_depth, max_depth);
      } else {
        gen_steps(d, r, l, depth + 1, max_depth);
      }
    } else if (kind == 1) {
      rig_desc_step *m = rig_desc_add_move(d, loop, gen_slot(r), gen_slot(r), rig_gen_int(r));
      if (!m) return;
      gen_terms(d, r, &m->u.move.src_offset);
      gen_terms(d, r, &m->u.move.dst_offset);
    } else {
      gen_submit(d, r, loop);
    }
  }
}

rig_desc *rig_gen_desc(rig_rng *r, int max_depth) {
  rig_desc *d = rig_desc_create();
  if (!d) return NULL;
  size_t n = gen_count(r, 3);
  for (size_t i = 0; i < n; i++)
    rig_desc_add_device(d, archs[rig_rng_below(r, sizeof archs / sizeof *archs)]);
  n = gen_count(r, 4);
  for (size_t i = 0; i < n; i++) {
    if (rig_rng_below(r, 4) == 0) {
      rig_desc_add_rail(d, rig_gen_int(r), rig_rng_below(r, 3));
    } else {
      int64_t m = rig_desc_add_alloc(d, rig_gen_int(r), rig_rng_below(r, 3), rig_gen_int(r),
                                     rig_rng_below(r, 2));
      if (m >= 0) gen_data(d, r, &d->memory[m].u.alloc.init, true);
    }
  }
  n = gen_count(r, 2);
  for (size_t i = 0; i < n; i++) {
    int64_t k = rig_desc_add_image(d, rig_gen_int(r), "", 0);
    if (k >= 0) gen_data(d, r, &d->images[k].binary, true);
  }
  n = gen_count(r, 3);
  for (size_t i = 0; i < n; i++) rig_desc_add_input(d, rig_gen_int(r), rig_gen_int(r));
  d->ints = rig_gen_int(r);
  gen_steps(d, r, NULL, 0, max_depth);
  return d;
}
