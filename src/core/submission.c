/* Submissions: parts prepared once on a device, their per-run state laid
 * out in a block the caller owns. make refuses what can never run. */
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

static size_t align8(size_t n) {
  return (n + 7) & ~(size_t)7;
}

static rig_use combine(rig_use a, rig_use b) {
  return a == b ? a : RIG_USE_WRITE;
}

static void name_slot(rig_submission *s, uint32_t k, rig_use use) {
  s->slot_use[k] = s->slot_named[k] ? combine(s->slot_use[k], use) : use;
  s->slot_named[k] = 1;
}

static rig_status check_side(const rig_submission *s, size_t i, const char *which, rig_side side,
                             uint64_t offset, uint64_t length, bool writes, rig_error *err) {
  bool is_slot = side.slot >= 0, is_fixed = side.fixed >= 0;
  if (is_slot == is_fixed)
    return rig_error_set(err, RIG_EINVAL, "part %zu: a %s that is neither a slot nor fixed memory",
                         i, which);
  if (is_slot && (size_t)side.slot >= s->nslots)
    return rig_error_set(err, RIG_EINVAL, "part %zu: a %s of slot %d of %zu", i, which, side.slot,
                         s->nslots);
  if (is_fixed) {
    if ((size_t)side.fixed >= s->nfixed)
      return rig_error_set(err, RIG_EINVAL, "part %zu: a %s of fixed memory %d of %zu", i, which,
                           side.fixed, s->nfixed);
    const rig_fixed *f = &s->fixed[side.fixed];
    uint64_t len = f->buffer->length;
    if (offset > len || length > len - offset)
      return rig_error_set(
          err, RIG_EINVAL, "part %zu: a %s of %llu bytes at %llu outside its %llu bytes", i, which,
          (unsigned long long)length, (unsigned long long)offset, (unsigned long long)len);
    if (writes && f->access != RIG_ACCESS_READ_WRITE)
      return rig_error_set(err, RIG_EINVAL, "part %zu: a %s that writes read-only fixed memory %d",
                           i, which, side.fixed);
  }
  return RIG_OK;
}

static rig_status check_refs(rig_submission *s, size_t i, const rig_ref *refs, size_t nrefs,
                             uint32_t params_bytes, rig_error *err) {
  for (size_t r = 0; r < nrefs; r++) {
    if (refs[r].slot >= s->nslots)
      return rig_error_set(err, RIG_EINVAL, "part %zu: a ref to slot %u of %zu", i, refs[r].slot,
                           s->nslots);
    if (refs[r].at % 8 != 0 || params_bytes < 8 || refs[r].at > params_bytes - 8)
      return rig_error_set(err, RIG_EINVAL,
                           "part %zu: a ref at %u outside its %u bytes of parameters", i,
                           refs[r].at, params_bytes);
    if (refs[r].use > RIG_USE_UNORDERED)
      return rig_error_set(err, RIG_EINVAL, "part %zu: a ref of use %d", i, (int)refs[r].use);
    name_slot(s, refs[r].slot, refs[r].use);
  }
  return RIG_OK;
}

static rig_status check_params(size_t i, uint32_t bytes, rig_error *err) {
  if (bytes % 4 != 0 || bytes > RIG_MAX_PARAMS)
    return rig_error_set(err, RIG_EINVAL,
                         "part %zu: %u bytes of parameters, not a whole number of 32-bit words up "
                         "to 4096",
                         i, bytes);
  return RIG_OK;
}

static rig_status refuse_kind(const rig_device *dev, size_t i, const char *what, rig_error *err) {
  return rig_error_set(err, RIG_EINVAL, "part %zu: %s runs no %s", i, dev->facts.name, what);
}

/* Copies a part's params and refs into storage the submission owns. */
static rig_status own_part(rig_sub_part *sp, const rig_part *p, rig_error *err) {
  sp->p = *p;
  const void *params = NULL;
  uint32_t pbytes = 0;
  const rig_ref *refs = NULL;
  size_t nrefs = 0;
  if (p->kind == RIG_WORK_FILL) {
    params = p->u.fill.params, pbytes = p->u.fill.params_bytes;
    refs = p->u.fill.refs, nrefs = p->u.fill.nrefs;
  } else if (p->kind == RIG_WORK_LAUNCH) {
    params = p->u.launch.params, pbytes = p->u.launch.params_bytes;
    refs = p->u.launch.refs, nrefs = p->u.launch.nrefs;
  } else if (p->kind == RIG_WORK_WORDS) {
    rig_ref *uc = malloc((p->u.words.nuses ? p->u.words.nuses : 1) * sizeof *uc);
    if (!uc) return rig_error_set(err, RIG_ENOMEM, "out of memory for a submission");
    if (p->u.words.nuses) memcpy(uc, p->u.words.uses, p->u.words.nuses * sizeof *uc);
    sp->p.u.words.uses = uc;
    return RIG_OK;
  } else {
    return RIG_OK;
  }
  void *pc = malloc(pbytes ? pbytes : 1);
  rig_ref *rc = malloc((nrefs ? nrefs : 1) * sizeof *rc);
  if (!pc || !rc) {
    free(pc);
    free(rc);
    return rig_error_set(err, RIG_ENOMEM, "out of memory for a submission");
  }
  if (pbytes) memcpy(pc, params, pbytes);
  if (nrefs) memcpy(rc, refs, nrefs * sizeof *rc);
  if (p->kind == RIG_WORK_FILL) {
    sp->p.u.fill.params = pc;
    sp->p.u.fill.refs = rc;
    if (p->u.fill.image) rig_image_retain(p->u.fill.image);
  } else {
    sp->p.u.launch.params = pc;
    sp->p.u.launch.refs = rc;
    rig_image_retain(p->u.launch.image);
  }
  return RIG_OK;
}

static rig_status check_part(rig_submission *s, size_t i, const rig_part *p, rig_error *err) {
  const rig_device *dev = s->dev;
  rig_status st;
  switch (p->kind) {
    case RIG_WORK_WORDS:
      if (!dev->facts.runs_words) return refuse_kind(dev, i, "words", err);
      if (p->u.words.length % 4 != 0)
        return rig_error_set(err, RIG_EINVAL, "part %zu: %llu bytes of words", i,
                             (unsigned long long)p->u.words.length);
      st = check_side(s, i, "words", p->u.words.side, p->u.words.offset, p->u.words.length, false,
                      err);
      if (st == RIG_OK && p->u.words.side.slot >= 0)
        name_slot(s, (uint32_t)p->u.words.side.slot, RIG_USE_READ);
      for (size_t u = 0; st == RIG_OK && u < p->u.words.nuses; u++) {
        const rig_ref *use = &p->u.words.uses[u];
        if (use->slot >= s->nslots)
          return rig_error_set(err, RIG_EINVAL, "part %zu: a use of slot %u of %zu", i, use->slot,
                               s->nslots);
        name_slot(s, use->slot, use->use);
      }
      return st;
    case RIG_WORK_FILL:
      if (!dev->facts.runs_fills) return refuse_kind(dev, i, "fills", err);
      if ((st = check_params(i, p->u.fill.params_bytes, err)) != RIG_OK) return st;
      if (p->u.fill.ready && p->u.fill.params_bytes < 16)
        return rig_error_set(
            err, RIG_EINVAL,
            "part %zu: a ready fill's %u bytes of parameters, not two 64-bit words", i,
            p->u.fill.params_bytes);
      if (!p->u.fill.fn)
        return rig_error_set(err, RIG_EINVAL, "part %zu: a fill of no function", i);
      return check_refs(s, i, p->u.fill.refs, p->u.fill.nrefs, p->u.fill.params_bytes, err);
    case RIG_WORK_COPY:
      if (!dev->facts.runs_copies) return refuse_kind(dev, i, "copies", err);
      if ((st = check_side(s, i, "copy's source", p->u.copy.src, p->u.copy.src_offset,
                           p->u.copy.length, false, err)) != RIG_OK)
        return st;
      if ((st = check_side(s, i, "copy's destination", p->u.copy.dst, p->u.copy.dst_offset,
                           p->u.copy.length, true, err)) != RIG_OK)
        return st;
      if (p->u.copy.src.slot >= 0) name_slot(s, (uint32_t)p->u.copy.src.slot, RIG_USE_READ);
      if (p->u.copy.dst.slot >= 0) name_slot(s, (uint32_t)p->u.copy.dst.slot, RIG_USE_WRITE);
      return RIG_OK;
    case RIG_WORK_LAUNCH:
      if (!dev->facts.runs_launches) return refuse_kind(dev, i, "launches", err);
      if (!p->u.launch.image)
        return rig_error_set(err, RIG_EINVAL, "part %zu: a launch of no image", i);
      if (p->u.launch.image->dev != dev)
        return rig_error_set(err, RIG_EINVAL, "part %zu: a launch of an image of %s on %s", i,
                             p->u.launch.image->dev->facts.name, dev->facts.name);
      if ((st = check_params(i, p->u.launch.params_bytes, err)) != RIG_OK) return st;
      return check_refs(s, i, p->u.launch.refs, p->u.launch.nrefs, p->u.launch.params_bytes, err);
  }
  return rig_error_set(err, RIG_EINVAL, "part %zu: a part of kind %d", i, (int)p->kind);
}

static size_t part_block_bytes(const rig_part *p) {
  switch (p->kind) {
    case RIG_WORK_FILL:
      return align8(p->u.fill.params_bytes);
    case RIG_WORK_LAUNCH:
      return align8(p->u.launch.params_bytes) + align8(7 * sizeof(uint32_t));
    case RIG_WORK_COPY:
      return 2 * sizeof(uint64_t);
    case RIG_WORK_WORDS:
      return 0;
  }
  return 0;
}

static void fill_defaults(rig_submission *s) {
  for (size_t i = 0; i < s->nparts; i++) {
    const rig_part *p = &s->parts[i].p;
    unsigned char *b = s->defaults + s->parts[i].block_at;
    if (p->kind == RIG_WORK_FILL) {
      if (p->u.fill.params_bytes) memcpy(b, p->u.fill.params, p->u.fill.params_bytes);
    } else if (p->kind == RIG_WORK_LAUNCH) {
      if (p->u.launch.params_bytes) memcpy(b, p->u.launch.params, p->u.launch.params_bytes);
      uint32_t g[7] = {p->u.launch.groups[0],  p->u.launch.groups[1],  p->u.launch.groups[2],
                       p->u.launch.threads[0], p->u.launch.threads[1], p->u.launch.threads[2],
                       p->u.launch.shared};
      memcpy(b + align8(p->u.launch.params_bytes), g, sizeof g);
    } else if (p->kind == RIG_WORK_COPY) {
      uint64_t o[2] = {p->u.copy.src_offset, p->u.copy.dst_offset};
      memcpy(b, o, sizeof o);
    }
  }
}

rig_status rig_submission_make(rig_device *dev, const rig_part *parts, size_t nparts, size_t nslots,
                               const rig_fixed *fixed, size_t nfixed, rig_submission **out,
                               rig_error *err) {
  rig_reclaim();
  if (rig_device_lost_now(dev)) return rig_device_lost_error(dev, err);
  if (nslots > RIG_MAX_SLOTS)
    return rig_error_set(err, RIG_EINVAL, "%zu slots, more than %d", nslots, RIG_MAX_SLOTS);
  rig_submission *s = calloc(1, sizeof *s);
  if (!s) return rig_error_set(err, RIG_ENOMEM, "out of memory for a submission");
  atomic_init(&s->refs, 1);
  s->dev = dev;
  rig_device_ref(dev);
  s->nslots = nslots;
  s->parts = calloc(nparts ? nparts : 1, sizeof *s->parts);
  s->slot_use = calloc(nslots ? nslots : 1, sizeof *s->slot_use);
  s->slot_named = calloc(nslots ? nslots : 1, 1);
  s->fixed = calloc(nfixed ? nfixed : 1, sizeof *s->fixed);
  s->fixed_addr = calloc(nfixed ? nfixed : 1, sizeof *s->fixed_addr);
  rig_status st = RIG_OK;
  if (!s->parts || !s->slot_use || !s->slot_named || !s->fixed || !s->fixed_addr)
    st = rig_error_set(err, RIG_ENOMEM, "out of memory for a submission");
  for (size_t i = 0; st == RIG_OK && i < nfixed; i++) {
    rig_buffer *b = fixed[i].buffer;
    if (!b) {
      st = rig_error_set(err, RIG_EINVAL, "fixed memory %zu: no buffer", i);
      break;
    }
    if (fixed[i].access == RIG_ACCESS_READ_WRITE && b->access == RIG_ACCESS_READ) {
      st = rig_error_set(err, RIG_EINVAL, "fixed memory %zu: read-only memory the work writes", i);
      break;
    }
    uint64_t base;
    if (b->device == dev) {
      s->fixed_addr[i] = b->address;
    } else if ((st = rig_mem_address_on(b->mem, dev, &base, err)) == RIG_OK) {
      s->fixed_addr[i] = base + b->offset;
    } else {
      st = rig_error_set(err, RIG_EINVAL, "fixed memory %zu: %s does not address memory of %s", i,
                         dev->facts.name, b->mem->owner->facts.name);
      break;
    }
    s->fixed[i].buffer = rig_buffer_retain(b);
    s->fixed[i].access = fixed[i].access;
    s->nfixed = i + 1;
  }
  size_t block = 0;
  for (size_t i = 0; st == RIG_OK && i < nparts; i++) {
    if ((st = check_part(s, i, &parts[i], err)) != RIG_OK) break;
    if ((st = own_part(&s->parts[i], &parts[i], err)) != RIG_OK) break;
    s->nparts = i + 1;
    s->parts[i].block_at = block;
    block += part_block_bytes(&parts[i]);
  }
  if (st == RIG_OK) {
    s->block_bytes = block;
    s->defaults = calloc(block ? block : 8, 1);
    if (!s->defaults) st = rig_error_set(err, RIG_ENOMEM, "out of memory for a submission");
  }
  if (st != RIG_OK) {
    rig_submission_free_now(s);
    return st;
  }
  fill_defaults(s);
  if (dev->drv->prepare) {
    if ((st = dev->drv->prepare(dev->st, s, &s->prepared, err)) != RIG_OK) {
      rig_submission_free_now(s);
      return st;
    }
    s->is_prepared = true;
  }
  *out = s;
  return RIG_OK;
}

void rig_submission_free_now(rig_submission *s) {
  if (s->is_prepared && s->dev->drv->forget) s->dev->drv->forget(s->dev->st, s->prepared);
  for (size_t i = 0; i < s->nparts; i++) {
    rig_part *p = &s->parts[i].p;
    if (p->kind == RIG_WORK_FILL) {
      free((void *)p->u.fill.params);
      free((void *)p->u.fill.refs);
      if (p->u.fill.image) rig_image_release(p->u.fill.image);
    } else if (p->kind == RIG_WORK_LAUNCH) {
      free((void *)p->u.launch.params);
      free((void *)p->u.launch.refs);
      rig_image_release(p->u.launch.image);
    } else if (p->kind == RIG_WORK_WORDS) {
      free((void *)p->u.words.uses);
    }
  }
  for (size_t i = 0; i < s->nfixed; i++) rig_buffer_release(s->fixed[i].buffer);
  free(s->parts);
  free(s->slot_use);
  free(s->slot_named);
  free(s->fixed);
  free(s->fixed_addr);
  free(s->defaults);
  rig_device_unref(s->dev);
  free(s);
}

rig_device *rig_submission_device(const rig_submission *s) {
  return s->dev;
}
size_t rig_submission_slots(const rig_submission *s) {
  return s->nslots;
}
rig_use rig_submission_slot_use(const rig_submission *s, size_t k) {
  return s->slot_use[k];
}
uint64_t rig_submission_address(const rig_submission *s, size_t fixed) {
  return s->fixed_addr[fixed];
}
rig_point rig_submission_last(const rig_submission *s) {
  uint64_t v = atomic_load(&s->last);
  return v ? rig_point_make(s->dev->index, v) : RIG_POINT_REACHED;
}
void *rig_submission_prepared(const rig_submission *s) {
  return s->prepared;
}
size_t rig_submission_nparts(const rig_submission *s) {
  return s->nparts;
}
const rig_part *rig_submission_part(const rig_submission *s, size_t i) {
  return &s->parts[i].p;
}
size_t rig_submission_block_bytes(const rig_submission *s) {
  return s->block_bytes;
}
void rig_submission_block_init(const rig_submission *s, void *block) {
  if (s->block_bytes) memcpy(block, s->defaults, s->block_bytes);
}
void *rig_block_params(const rig_submission *s, void *block, size_t part) {
  return (unsigned char *)block + s->parts[part].block_at;
}
uint32_t *rig_block_geometry(const rig_submission *s, void *block, size_t part) {
  const rig_part *p = &s->parts[part].p;
  return (uint32_t *)((unsigned char *)block + s->parts[part].block_at +
                      align8(p->u.launch.params_bytes));
}
uint64_t *rig_block_offsets(const rig_submission *s, void *block, size_t part) {
  return (uint64_t *)((unsigned char *)block + s->parts[part].block_at);
}
