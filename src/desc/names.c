/* The seed's constructor names, and counting a description's steps. */
#include "desc_internal.h"

const char *rig_desc_kind_name(rig_buffer_kind k) {
  switch (k) {
    case RIG_KIND_DEVICE:
      return "Device";
    case RIG_KIND_PINNED:
      return "Pinned";
    case RIG_KIND_MAPPED:
      return "Mapped";
  }
  return "?";
}

const char *rig_desc_access_name(rig_access a) {
  return a == RIG_ACCESS_READ ? "Read" : a == RIG_ACCESS_READ_WRITE ? "Read_write" : "?";
}

const char *rig_desc_use_name(rig_desc_use u) {
  switch (u) {
    case RIG_USE_READ:
      return "Read";
    case RIG_USE_WRITE:
      return "Write";
    case RIG_USE_UNORDERED:
      return "Unordered";
  }
  return "?";
}

const char *rig_desc_area_name(rig_desc_area a) {
  switch (a) {
    case RIG_AREA_OUTBOUND:
      return "Outbound";
    case RIG_AREA_INBOUND:
      return "Inbound";
    case RIG_AREA_COUNTS:
      return "Counts";
  }
  return "?";
}

const char *rig_desc_copies_name(rig_desc_copies c) {
  return c == RIG_COPIES_ONE ? "One" : c == RIG_COPIES_TWO ? "Two" : "?";
}

const char *rig_desc_width_name(rig_desc_width w) {
  return w == RIG_W32 ? "W32" : w == RIG_W64 ? "W64" : "?";
}

static void count(const rig_desc_steps *steps, size_t *submits, size_t *all) {
  for (size_t i = 0; i < steps->n; i++) {
    const rig_desc_step *s = &steps->items[i];
    (*all)++;
    if (s->tag == RIG_STEP_SUBMIT) (*submits)++;
    if (s->tag == RIG_STEP_LOOP) count(&s->u.loop.body, submits, all);
  }
}

size_t rig_desc_count_submits(const rig_desc *d) {
  size_t submits = 0, all = 0;
  count(&d->steps, &submits, &all);
  return submits;
}

size_t rig_desc_count_steps(const rig_desc *d) {
  size_t submits = 0, all = 0;
  count(&d->steps, &submits, &all);
  return all;
}
