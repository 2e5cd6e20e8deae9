/* A work as a driver sees it: its parts' per-run state and fixed memory,
 * packing it into a queue (a copy that outlives the hand-over), and the
 * works a thread runs now (rig_working). */
#include <string.h>

#include "base/assert.h"
#include "core_internal.h"

/* One word per thread, read once per program run and set twice per work
 * that runs host code: cheap on both paths. */
static _Thread_local const rig_working *working;

const rig_working *rig_working_now(void) {
  return working;
}

void rig_submission_label(rig_submission *s, size_t part, const char *label) {
  if (!s || part >= s->nparts) return;
  char *to = s->parts[part].label;
  size_t n = label ? strlen(label) : 0;
  if (n >= RIG_PART_LABEL_MAX) n = RIG_PART_LABEL_MAX - 1;
  memcpy(to, label ? label : "", n);
  to[n] = '\0';
}

/* Appends s to buf[*at..n) (NUL kept), as a signal handler may. */
static void put(char *buf, size_t n, size_t *at, const char *s) {
  while (*s && *at + 1 < n) buf[(*at)++] = *s++;
  if (n) buf[*at < n ? *at : n - 1] = '\0';
}

size_t rig_working_describe(char *buf, size_t n) {
  const rig_working *w = working;
  if (!n) return 0;
  buf[0] = '\0';
  if (!w || !w->sub) return 0;
  const rig_submission *s = w->sub;
  size_t at = 0;
  if (w->part < s->nparts && s->parts[w->part].label[0]) {
    put(buf, n, &at, s->parts[w->part].label);
  } else {
    char digits[24], *d = digits + sizeof digits;
    size_t v = w->part;
    *--d = '\0';
    do *--d = (char)('0' + v % 10);
    while ((v /= 10) && d > digits);
    put(buf, n, &at, "part ");
    put(buf, n, &at, d);
  }
  put(buf, n, &at, " on ");
  put(buf, n, &at, s->dev->facts.name);
  return at;
}

const rig_working *rig_working_set(const rig_working *w) {
  const rig_working *outer = working;
  working = w;
  return outer;
}

const void *rig_work_part_block(const rig_work *w, size_t part) {
  return (const unsigned char *)w->block + w->sub->parts[part].block_at;
}

size_t rig_work_params(const rig_work *w, size_t part, void *params) {
  rig_assert(part < w->sub->nparts);
  const rig_part *p = &w->sub->parts[part].p;
  rig_assert(p->kind == RIG_WORK_FILL || p->kind == RIG_WORK_LAUNCH);
  bool fill = p->kind == RIG_WORK_FILL;
  size_t n = fill ? p->u.fill.params_bytes : p->u.launch.params_bytes;
  const rig_ref *refs = fill ? p->u.fill.refs : p->u.launch.refs;
  size_t nrefs = fill ? p->u.fill.nrefs : p->u.launch.nrefs;
  unsigned char *bytes = params;
  memcpy(bytes, rig_work_part_block(w, part), n);
  for (size_t r = 0; r < nrefs; r++) {
    uint64_t at;
    memcpy(&at, bytes + refs[r].at, 8);
    at += w->slot_addr[refs[r].slot];
    memcpy(bytes + refs[r].at, &at, 8);
  }
  return n;
}

uint64_t rig_work_side_address(const rig_work *w, rig_side side) {
  rig_assert(side.slot >= 0 ? (size_t)side.slot < w->sub->nslots
                            : side.fixed >= 0 && (size_t)side.fixed < w->sub->nfixed);
  return side.slot >= 0 ? w->slot_addr[side.slot] : w->sub->fixed_addr[side.fixed];
}

void rig_work_copy_ends(const rig_work *w, size_t part, uint64_t *src, uint64_t *dst) {
  const rig_part *p = &w->sub->parts[part].p;
  rig_assert(p->kind == RIG_WORK_COPY);
  const uint64_t *offsets = rig_work_part_block(w, part);
  *src = rig_work_side_address(w, p->u.copy.src) + offsets[0];
  *dst = rig_work_side_address(w, p->u.copy.dst) + offsets[1];
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
