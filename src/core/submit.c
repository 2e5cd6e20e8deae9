/* Hand-overs: rig_submit and rig_buffer_copy_submit. Each gathers the
 * points its work must follow from the stamps of the memory it names and
 * from `waits`, keeps those the device can wait on in its queue, waits on
 * the host for the rest, hands the work over under the device's lock, then
 * raises the stamps. Nothing here allocates. */
#include <stdio.h>
#include <string.h>

#include "core_internal.h"

rig_status rig_waits_resolve(rig_device *dev, const rig_waitset *ws, rig_point *inq, size_t *ninq,
                             rig_error *err) {
  *ninq = 0;
  for (size_t i = 0; i < ws->n; i++) {
    rig_point p = ws->p[i];
    if (rig_point_reached(p)) continue;
    rig_device *other = rig_device_at(rig_point_device(p));
    if (!other)
      return rig_error_set(err, RIG_EINVAL, "a wait for a point of no device (%u)",
                           rig_point_device(p));
    if (rig_device_lost_now(other)) return rig_device_lost_error(other, err);
    if (dev->drv->can_wait && dev->drv->can_wait(dev->st, other)) {
      inq[(*ninq)++] = p;
      continue;
    }
    rig_status st = rig_point_wait(p, err);
    if (st != RIG_OK) return st;
  }
  return RIG_OK;
}

static uint64_t side_length(const rig_submission *s, rig_buffer *const *slots, rig_side side) {
  return side.slot >= 0 ? slots[side.slot]->length : s->fixed[side.fixed].buffer->length;
}

/* One rule for a launch's geometry: rig_submit applies it to each block,
 * and a program's load to the geometry no run changes. */
rig_status rig_launch_check(const rig_device *d, size_t i, const uint32_t g[7],
                            uint32_t max_threads, rig_error *err) {
  if (!g[0] || !g[1] || !g[2])
    return rig_error_set(err, RIG_EINVAL, "part %zu: groups (%u, %u, %u) with a zero dimension", i,
                         g[0], g[1], g[2]);
  if (!g[3] || !g[4] || !g[5])
    return rig_error_set(err, RIG_EINVAL, "part %zu: threads (%u, %u, %u) with a zero dimension", i,
                         g[3], g[4], g[5]);
  /* Exact: g[3] * g[4] fits 64 bits, and is at most max before the last. */
  uint64_t t = (uint64_t)g[3] * g[4];
  if (max_threads && (t > max_threads || t * g[5] > max_threads))
    return rig_error_set(err, RIG_EINVAL,
                         "part %zu: threads (%u, %u, %u), more than its function's %u", i, g[3],
                         g[4], g[5], max_threads);
  if (g[6] > d->facts.max_shared)
    return rig_error_set(err, RIG_EINVAL, "part %zu: %u bytes of shared memory, more than %s's %u",
                         i, g[6], d->facts.name, d->facts.max_shared);
  return RIG_OK;
}

/* What the device cannot run with this block and these slots. */
static rig_status check_run(const rig_submission *s, const void *block, rig_buffer *const *slots,
                            rig_error *err) {
  const rig_device *d = s->dev;
  for (size_t k = 0; k < s->nslots; k++) {
    const rig_buffer *b = slots[k];
    if (!b) return rig_error_set(err, RIG_EINVAL, "slot %zu: no buffer", k);
    if (b->device != d)
      return rig_error_set(err, RIG_EINVAL, "slot %zu: a buffer %s addresses, not %s", k,
                           b->device->facts.name, d->facts.name);
    if (s->slot_named[k] && s->slot_use[k] != RIG_USE_READ && b->access == RIG_ACCESS_READ)
      return rig_error_set(err, RIG_EINVAL, "slot %zu: read-only memory the work writes", k);
  }
  for (size_t i = 0; i < s->nparts; i++) {
    const rig_part *p = &s->parts[i].p;
    if (p->kind == RIG_WORK_LAUNCH) {
      rig_status st = rig_launch_check(d, i, rig_block_geometry(s, (void *)block, i),
                                       p->u.launch.entry.max_threads, err);
      if (st != RIG_OK) return st;
    } else if (p->kind == RIG_WORK_COPY) {
      const uint64_t *o = rig_block_offsets(s, (void *)block, i);
      uint64_t n = p->u.copy.length;
      uint64_t sl = side_length(s, slots, p->u.copy.src), dl = side_length(s, slots, p->u.copy.dst);
      if (o[0] > sl || n > sl - o[0])
        return rig_error_set(err, RIG_EINVAL,
                             "part %zu: a copy's source of %llu bytes at %llu outside its %llu "
                             "bytes",
                             i, (unsigned long long)n, (unsigned long long)o[0],
                             (unsigned long long)sl);
      if (o[1] > dl || n > dl - o[1])
        return rig_error_set(err, RIG_EINVAL,
                             "part %zu: a copy's destination of %llu bytes at %llu outside its "
                             "%llu bytes",
                             i, (unsigned long long)n, (unsigned long long)o[1],
                             (unsigned long long)dl);
    } else if (p->kind == RIG_WORK_WORDS && p->u.words.side.slot >= 0) {
      uint64_t sl = slots[p->u.words.side.slot]->length;
      if (p->u.words.offset > sl || p->u.words.length > sl - p->u.words.offset)
        return rig_error_set(err, RIG_EINVAL, "part %zu: words outside their slot's %llu bytes", i,
                             (unsigned long long)sl);
    }
  }
  return RIG_OK;
}

static rig_status raise_failed(rig_error *err) {
  return rig_error_set(err, RIG_ENOMEM, "out of memory recording a use");
}

rig_status rig_submit(rig_submission *s, const void *block, rig_buffer *const *slots,
                      const rig_point *waits, size_t nwaits, rig_point *point, rig_error *err) {
  rig_device *d = s->dev;
  if (rig_device_lost_now(d)) return rig_device_lost_error(d, err);
  if (s->nslots && !slots)
    return rig_error_set(err, RIG_EINVAL, "%zu slots and no buffers", s->nslots);
  if (!block) block = s->defaults;
  rig_status st = check_run(s, block, slots, err);
  if (st != RIG_OK) return st;

  rig_waitset ws = {.n = 0};
  for (size_t k = 0; st == RIG_OK && k < s->nslots; k++)
    if (s->slot_named[k])
      st = rig_stamps_follow(&slots[k]->mem->stamps, d->index, s->slot_use[k], &ws, err);
  for (size_t i = 0; st == RIG_OK && i < s->nfixed; i++)
    st = rig_stamps_follow(&s->fixed[i].buffer->mem->stamps, d->index,
                           s->fixed[i].access == RIG_ACCESS_READ ? RIG_USE_READ : RIG_USE_WRITE,
                           &ws, err);
  for (size_t i = 0; st == RIG_OK && i < nwaits; i++)
    st = rig_waitset_add(&ws, d->index, waits[i], err);
  rig_point inq[RIG_WAITSET_MAX];
  size_t ninq = 0;
  if (st == RIG_OK) st = rig_waits_resolve(d, &ws, inq, &ninq, err);
  if (st != RIG_OK) return st;

  uint64_t addr[RIG_MAX_SLOTS];
  for (size_t k = 0; k < s->nslots; k++) addr[k] = slots[k]->address;
  rig_work w = {.waits = inq, .nwaits = ninq, .sub = s, .block = block, .slot_addr = addr};
  st = rig_device_handover(d, &w, err);
  if (st != RIG_OK) return st;

  uint64_t v = w.value;
  bool ok = true;
  for (size_t k = 0; k < s->nslots; k++)
    if (s->slot_named[k])
      ok &= rig_stamps_raise(&slots[k]->mem->stamps, d->index, s->slot_use[k], v);
  for (size_t i = 0; i < s->nfixed; i++)
    ok &= rig_stamps_raise(&s->fixed[i].buffer->mem->stamps, d->index,
                           s->fixed[i].access == RIG_ACCESS_READ ? RIG_USE_READ : RIG_USE_WRITE, v);
  uint64_t old = atomic_load(&s->last);
  while (old < v && !atomic_compare_exchange_weak(&s->last, &old, v)) {
  }
  *point = rig_point_make(d->index, v);
  /* A use that could not be recorded orders nothing: wait for the work. */
  if (!ok) return rig_point_wait(*point, err) == RIG_OK ? raise_failed(err) : RIG_ELOST;
  return RIG_OK;
}

/* The device that runs a copy between two memories: the host when it
 * addresses both, else the destination's or the source's device when it
 * addresses the other. */
static rig_device *copy_runner(rig_mem *src, rig_mem *dst, uint64_t *sa, uint64_t *da,
                               rig_error *err) {
  rig_device *host = rig_host();
  if (src->info.host && dst->info.host) {
    *sa = (uint64_t)(uintptr_t)src->info.host;
    *da = (uint64_t)(uintptr_t)dst->info.host;
    return host;
  }
  rig_device *cand[2] = {dst->owner, src->owner};
  for (int i = 0; i < 2; i++) {
    rig_device *d = cand[i];
    if (d == host || !d->facts.runs_copies) continue;
    rig_error ignored;
    if (rig_mem_address_on(src, d, sa, &ignored) == RIG_OK &&
        rig_mem_address_on(dst, d, da, &ignored) == RIG_OK)
      return d;
  }
  rig_error_set(err, RIG_EREFUSED, "no device copies from memory of %s to memory of %s",
                src->owner->facts.name, dst->owner->facts.name);
  return NULL;
}

rig_status rig_buffer_copy_submit(rig_buffer *src, uint64_t src_offset, rig_buffer *dst,
                                  uint64_t dst_offset, uint64_t length, const rig_point *waits,
                                  size_t nwaits, rig_point *point, rig_error *err) {
  if (src_offset > src->length || length > src->length - src_offset)
    return rig_error_set(err, RIG_EINVAL,
                         "a copy's source of %llu bytes at %llu outside its %llu bytes",
                         (unsigned long long)length, (unsigned long long)src_offset,
                         (unsigned long long)src->length);
  if (dst_offset > dst->length || length > dst->length - dst_offset)
    return rig_error_set(err, RIG_EINVAL,
                         "a copy's destination of %llu bytes at %llu outside its %llu bytes",
                         (unsigned long long)length, (unsigned long long)dst_offset,
                         (unsigned long long)dst->length);
  if (dst->access == RIG_ACCESS_READ)
    return rig_error_set(err, RIG_EINVAL, "a copy to read-only memory");
  if (rig_device_lost_now(src->mem->owner)) return rig_device_lost_error(src->mem->owner, err);
  if (rig_device_lost_now(dst->mem->owner)) return rig_device_lost_error(dst->mem->owner, err);
  uint64_t sa, da;
  rig_device *d = copy_runner(src->mem, dst->mem, &sa, &da, err);
  if (!d) return RIG_EREFUSED;

  rig_waitset ws = {.n = 0};
  rig_status st = rig_stamps_follow(&src->mem->stamps, d->index, RIG_USE_READ, &ws, err);
  if (st == RIG_OK) st = rig_stamps_follow(&dst->mem->stamps, d->index, RIG_USE_WRITE, &ws, err);
  for (size_t i = 0; st == RIG_OK && i < nwaits; i++)
    st = rig_waitset_add(&ws, d->index, waits[i], err);
  rig_point inq[RIG_WAITSET_MAX];
  size_t ninq = 0;
  if (st == RIG_OK) st = rig_waits_resolve(d, &ws, inq, &ninq, err);
  if (st != RIG_OK) return st;

  rig_work w = {.waits = inq,
                .nwaits = ninq,
                .src = sa + src->offset + src_offset,
                .dst = da + dst->offset + dst_offset,
                .length = length};
  st = rig_device_handover(d, &w, err);
  if (st != RIG_OK) return st;
  bool ok = rig_stamps_raise(&src->mem->stamps, d->index, RIG_USE_READ, w.value);
  ok &= rig_stamps_raise(&dst->mem->stamps, d->index, RIG_USE_WRITE, w.value);
  *point = rig_point_make(d->index, w.value);
  if (!ok) return rig_point_wait(*point, err) == RIG_OK ? raise_failed(err) : RIG_ELOST;
  return RIG_OK;
}
