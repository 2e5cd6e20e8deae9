/* A work as a driver sees it: its parts' per-run state and fixed memory,
 * packing it into a queue (a copy that outlives the hand-over), and the
 * works a thread runs now (rig_working). */
#include <string.h>

#include "core_internal.h"

/* One word per thread, read once per program run and set twice per work
 * that runs host code: cheap on both paths. */
static _Thread_local const rig_working *working;

const rig_working *rig_working_now(void) {
  return working;
}

const rig_working *rig_working_set(const rig_working *w) {
  const rig_working *outer = working;
  working = w;
  return outer;
}

const void *rig_work_part_block(const rig_work *w, size_t part) {
  return (const unsigned char *)w->block + w->sub->parts[part].block_at;
}

uint64_t rig_work_fixed_address(const rig_work *w, size_t fixed) {
  return w->sub->fixed_addr[fixed];
}

static size_t up8(size_t n) {
  return (n + 7) & ~(size_t)7;
}

size_t rig_work_bytes(const rig_work *w) {
  size_t n = up8(sizeof *w) + w->nwaits * sizeof(rig_point);
  if (w->sub) n += up8(w->sub->block_bytes) + w->sub->nslots * sizeof(uint64_t);
  return n;
}

const rig_work *rig_work_pack(const rig_work *w, void *into) {
  unsigned char *p = into;
  rig_work *c = into;
  *c = *w;
  p += up8(sizeof *w);
  if (w->nwaits) memcpy(p, w->waits, w->nwaits * sizeof(rig_point));
  c->waits = (const rig_point *)p;
  p += w->nwaits * sizeof(rig_point);
  if (w->sub) {
    if (w->sub->block_bytes) memcpy(p, w->block, w->sub->block_bytes);
    c->block = p;
    p += up8(w->sub->block_bytes);
    if (w->sub->nslots) memcpy(p, w->slot_addr, w->sub->nslots * sizeof(uint64_t));
    c->slot_addr = (const uint64_t *)p;
  }
  return c;
}
