/* What load and run share: borrows of a program's memory on its devices
 * (made once, cached per memory, copy and device), the values of leaves,
 * holes (a sum wrapping modulo 2^63, shifted, ORed into its bytes), and
 * exact offsets; the check of a launch's geometry; refusals made of other errors. */
#include <string.h>

#include "program_internal.h"

rig_status rig_program_borrow(rig_program *p, int64_t m, int k, size_t d, rig_buffer **out,
                              rig_error *err) {
  plocal *l = p->local;
  rig_buffer **slot = &l->borrows[((size_t)m * 2 + (size_t)k) * p->ndevices + d];
  if (!*slot) {
    rig_buffer *src = (size_t)m == l->nmem ? l->ints[k] : l->mem[m].copy[k];
    rig_status st = rig_buffer_borrow(p->devices[d], src, slot, err);
    if (st != RIG_OK) {
      if ((size_t)m == l->nmem)
        return rig_error_set(err, RIG_EREFUSED, "the ints: %s cannot borrow them",
                             rig_device_name(p->devices[d]));
      return rig_error_set(err, RIG_EREFUSED, "memory %lld: %s cannot borrow it", (long long)m,
                           rig_device_name(p->devices[d]));
    }
  }
  *out = *slot;
  return RIG_OK;
}

rig_status rig_program_entry(rig_program *p, int64_t image, const rig_desc_string *name,
                             const rig_device *dev, rig_entry *e, rig_error *err) {
  if (rig_image_entry(p->local->images[image], (const char *)name->bytes, name->len, e, err) !=
      RIG_OK)
    return rig_error_set(err, RIG_EREFUSED, "%s: image %lld has no function \"%.*s\"",
                         rig_device_name(dev), (long long)image,
                         (int)(name->len > 200 ? 200 : name->len), (const char *)name->bytes);
  return RIG_OK;
}

rig_status rig_program_leaf(rig_program *p, const rig_desc_leaf *l, int k, uint64_t *out,
                            rig_error *err) {
  plocal *loc = p->local;
  switch (l->tag) {
    case RIG_LEAF_ADDRESS: {
      rig_buffer *b;
      int64_t m = l->u.address.memory;
      rig_status st =
          rig_program_borrow(p, m, pmem_copy(loc, m, k), (size_t)l->u.address.on, &b, err);
      if (st != RIG_OK) return st;
      *out = rig_buffer_address(b);
      return RIG_OK;
    }
    case RIG_LEAF_HANDLE: {
      int64_t m = l->u.handle;
      *out = rig_buffer_handle(loc->mem[m].copy[pmem_copy(loc, m, k)]);
      return RIG_OK;
    }
    case RIG_LEAF_ENTRY: {
      int64_t i = l->u.entry.image;
      rig_entry e;
      rig_status st =
          rig_program_entry(p, i, &l->u.entry.name, rig_image_device(loc->images[i]), &e, err);
      if (st == RIG_OK) *out = e.value;
      return st;
    }
    case RIG_LEAF_READY: {
      const rig_rail_end *end = loc->rails.lookup(loc->rails.ctx, l->u.ready);
      *out = (uint64_t)(uintptr_t)end->ready;
      return RIG_OK;
    }
  }
  return rig_error_set(err, RIG_EINVAL, "a leaf of tag %d", (int)l->tag);
}

rig_status rig_program_fill_hole(unsigned char *bytes, const unsigned char *base,
                                 const rig_desc_hole *h, const uint64_t *vals, const char *what,
                                 rig_error *err) {
  /* The sum wraps modulo 2^63: computed modulo 2^64, then its low 63 bits
   * sign-extended; the word is that value's two's complement, shifted
   * right logically. */
  uint64_t u = (uint64_t)h->add;
  for (size_t j = 0; j < h->terms.n; j++) u += vals[j] * (uint64_t)h->terms.items[j].factor;
  uint64_t word = (uint64_t)((int64_t)(u << 1) >> 1) >> h->shift;
  size_t n = h->width == RIG_W32 ? 4 : 8;
  if (n == 4) word &= 0xffffffffu;
  uint64_t under = 0;
  for (size_t i = 0; i < n; i++) under |= (uint64_t)base[h->at + (int64_t)i] << (8 * i);
  if (under & word)
    return rig_error_set(err, RIG_EINVAL,
                         "%s: a hole at byte %lld: its value meets set bits of its bytes", what,
                         (long long)h->at);
  word |= under;
  for (size_t i = 0; i < n; i++) bytes[h->at + (int64_t)i] = (unsigned char)(word >> (8 * i));
  return RIG_OK;
}

bool rig_program_offset(const rig_desc_terms *t, const int64_t *vals, int64_t *sum) {
  int64_t s = 0;
  for (size_t i = 0; i < t->n; i++) {
    int64_t prod;
    if (__builtin_mul_overflow(vals[i], t->items[i].factor, &prod) || !rig_int_fits(prod) ||
        __builtin_add_overflow(s, prod, &s) || !rig_int_fits(s))
      return false;
  }
  *sum = s;
  return true;
}

static const char *const geometry_names[7] = {"groups",  "groups",  "groups",       "threads",
                                              "threads", "threads", "shared memory"};

rig_status rig_program_geometry(int64_t step, size_t part, int which, uint64_t v, rig_status code,
                                rig_error *err) {
  if (v > UINT32_MAX)
    return rig_error_set(err, code, "step %lld: part %zu: a launch's %s of %lld, outside 0 to %u",
                         (long long)step, part, geometry_names[which], (long long)v, UINT32_MAX);
  return RIG_OK;
}

rig_status rig_program_load_geometry(rig_program *p, int k, const rig_device *dev, int64_t step,
                                     size_t part, const rig_desc_part *dp, uint32_t max_threads,
                                     uint32_t g[7], rig_error *err) {
  const rig_desc_value *geo[7] = {&dp->u.launch.groups[0],  &dp->u.launch.groups[1],
                                  &dp->u.launch.groups[2],  &dp->u.launch.threads[0],
                                  &dp->u.launch.threads[1], &dp->u.launch.threads[2],
                                  &dp->u.launch.shared};
  rig_status st;
  for (int w = 0; w < 7; w++) {
    /* A value known only later stands as one every run either passes as
     * it is or has refused: 1 for a size (0 is refused, and more only
     * grows the threads), 0 for the shared memory. */
    uint64_t v = w == 6 ? 0 : 1;
    if (geo[w]->tag == RIG_VALUE_FIXED)
      v = (uint64_t)geo[w]->u.fixed;
    else if (geo[w]->tag == RIG_VALUE_LEAF && p &&
             (st = rig_program_leaf(p, &geo[w]->u.leaf, k, &v, err)) != RIG_OK)
      return st;
    if ((st = rig_program_geometry(step, part, w, v, RIG_EREFUSED, err)) != RIG_OK) return st;
    g[w] = (uint32_t)v;
  }
  if (rig_launch_check(dev, part, g, max_threads, err) != RIG_OK) {
    rig_error_prefix(err, "step %lld", (long long)step);
    return rig_program_refused(err);
  }
  return RIG_OK;
}

rig_status rig_program_refused(rig_error *err) {
  if (!err) return RIG_EREFUSED;
  /* Set again from a copy: the message is both the format's argument and
   * what the set overwrites. */
  char message[RIG_ERROR_MESSAGE_MAX];
  memcpy(message, err->message, sizeof message);
  return rig_error_set(err, RIG_EREFUSED, "%s", message);
}
