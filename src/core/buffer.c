/* Buffers: references to memory (whole, a view, a borrow on another
 * device), all sharing the memory's stamps. The memory returns to its
 * device once the last reference is gone and its last use is reached. */
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

static rig_buffer *new_ref(rig_mem *m, rig_device *dev, uint64_t offset, uint64_t length,
                           uint64_t address, rig_access access) {
  rig_buffer *b = malloc(sizeof *b);
  if (!b) return NULL;
  atomic_init(&b->refs, 1);
  atomic_fetch_add(&m->refs, 1);
  b->mem = m;
  b->device = dev;
  b->offset = offset;
  b->length = length;
  b->address = address;
  b->access = access;
  return b;
}

rig_status rig_buffer_create(rig_device *dev, rig_buffer_kind kind, uint64_t bytes,
                             rig_buffer **out, rig_error *err) {
  rig_reclaim();
  if (rig_device_lost_now(dev)) return rig_device_lost_error(dev, err);
  if (kind > RIG_KIND_MAPPED)
    return rig_error_set(err, RIG_EINVAL, "a buffer of kind %d", (int)kind);
  rig_mem *m = calloc(1, sizeof *m);
  if (!m) return rig_error_set(err, RIG_ENOMEM, "out of memory for a buffer");
  rig_status st = dev->drv->alloc(dev->st, kind, bytes, &m->info, err);
  if (st != RIG_OK) {
    free(m);
    return st;
  }
  m->owner = dev;
  rig_device_ref(dev);
  m->kind = kind;
  m->bytes = bytes;
  rig_stamps_init(&m->stamps);
  pthread_mutex_init(&m->lock, NULL);
  rig_buffer *b = new_ref(m, dev, 0, bytes, m->info.address, RIG_ACCESS_READ_WRITE);
  if (!b) {
    rig_mem_free_now(m);
    return rig_error_set(err, RIG_ENOMEM, "out of memory for a buffer");
  }
  *out = b;
  return RIG_OK;
}

rig_status rig_buffer_adopt(void *host, uint64_t bytes, void (*release)(void *ctx), void *ctx,
                            rig_buffer **out, rig_error *err) {
  rig_device *dev = rig_host();
  rig_mem *m = calloc(1, sizeof *m);
  if (!m) return rig_error_set(err, RIG_ENOMEM, "out of memory for a buffer");
  m->info.address = m->info.handle = (uint64_t)(uintptr_t)host;
  m->info.host = host;
  m->adopted = release;
  m->adopted_ctx = ctx;
  m->owner = dev;
  rig_device_ref(dev);
  m->kind = RIG_KIND_DEVICE;
  m->bytes = bytes;
  rig_stamps_init(&m->stamps);
  pthread_mutex_init(&m->lock, NULL);
  rig_buffer *b = new_ref(m, dev, 0, bytes, m->info.address, RIG_ACCESS_READ_WRITE);
  if (!b) {
    /* The memory stays the caller's. */
    m->adopted = NULL;
    rig_device_unref(dev);
    rig_stamps_fini(&m->stamps);
    pthread_mutex_destroy(&m->lock);
    free(m);
    return rig_error_set(err, RIG_ENOMEM, "out of memory for a buffer");
  }
  *out = b;
  return RIG_OK;
}

rig_status rig_buffer_view(rig_buffer *b, uint64_t offset, uint64_t length, rig_buffer **out,
                           rig_error *err) {
  if (offset > b->length || length > b->length - offset)
    return rig_error_set(err, RIG_EINVAL, "a view of %llu bytes at %llu outside %llu bytes",
                         (unsigned long long)length, (unsigned long long)offset,
                         (unsigned long long)b->length);
  rig_buffer *v =
      new_ref(b->mem, b->device, b->offset + offset, length, b->address + offset, b->access);
  if (!v) return rig_error_set(err, RIG_ENOMEM, "out of memory for a view");
  *out = v;
  return RIG_OK;
}

rig_status rig_buffer_read_only(rig_buffer *b, rig_buffer **out, rig_error *err) {
  rig_buffer *v = new_ref(b->mem, b->device, b->offset, b->length, b->address, RIG_ACCESS_READ);
  if (!v) return rig_error_set(err, RIG_ENOMEM, "out of memory for a view");
  *out = v;
  return RIG_OK;
}

rig_status rig_mem_address_on(rig_mem *m, rig_device *dev, uint64_t *address, rig_error *err) {
  if (dev == m->owner) {
    *address = m->info.address;
    return RIG_OK;
  }
  if (rig_device_lost_now(dev)) return rig_device_lost_error(dev, err);
  pthread_mutex_lock(&m->lock);
  for (rig_mapping *p = m->maps; p; p = p->next)
    if (p->dev == dev) {
      *address = p->address;
      pthread_mutex_unlock(&m->lock);
      return RIG_OK;
    }
  rig_status st = RIG_OK;
  rig_mapping *map = calloc(1, sizeof *map);
  if (!map) {
    st = rig_error_set(err, RIG_ENOMEM, "out of memory for a borrow");
  } else if (dev->drv->map) {
    st = dev->drv->map(dev->st, m->owner, &m->info, m->bytes, &map->address, &map->mapping, err);
  } else if (m->info.host && dev->facts.maps_host) {
    map->address = (uint64_t)(uintptr_t)m->info.host;
  } else {
    st = rig_error_set(err, RIG_EREFUSED, "%s cannot address memory of %s", dev->facts.name,
                       m->owner->facts.name);
  }
  if (st == RIG_OK) {
    map->dev = dev;
    rig_device_ref(dev);
    map->next = m->maps;
    m->maps = map;
    *address = map->address;
  } else {
    free(map);
  }
  pthread_mutex_unlock(&m->lock);
  return st;
}

rig_status rig_buffer_borrow(rig_device *dev, rig_buffer *b, rig_buffer **out, rig_error *err) {
  if (dev == b->device) {
    *out = rig_buffer_retain(b);
    return RIG_OK;
  }
  uint64_t base;
  rig_status st = rig_mem_address_on(b->mem, dev, &base, err);
  if (st != RIG_OK) return st;
  rig_buffer *v = new_ref(b->mem, dev, b->offset, b->length, base + b->offset, b->access);
  if (!v) return rig_error_set(err, RIG_ENOMEM, "out of memory for a borrow");
  *out = v;
  return RIG_OK;
}

rig_buffer *rig_buffer_retain(rig_buffer *b) {
  atomic_fetch_add(&b->refs, 1);
  return b;
}

void rig_buffer_release(rig_buffer *b) {
  if (!b) return;
  if (atomic_fetch_sub(&b->refs, 1) != 1) return;
  rig_mem_release(b->mem);
  free(b);
  rig_reclaim();
}

void rig_mem_release(rig_mem *m) {
  if (atomic_fetch_sub(&m->refs, 1) != 1) return;
  if (rig_stamps_reached(&m->stamps))
    rig_mem_free_now(m);
  else
    rig_defer_mem(m);
}

void rig_mem_free_now(rig_mem *m) {
  for (rig_mapping *p = m->maps, *next; p; p = next) {
    next = p->next;
    if (p->dev->drv->unmap && p->mapping) p->dev->drv->unmap(p->dev->st, p->mapping);
    rig_device_unref(p->dev);
    free(p);
  }
  if (m->adopted)
    m->adopted(m->adopted_ctx);
  else
    m->owner->drv->free(m->owner->st, &m->info);
  rig_device_unref(m->owner);
  rig_stamps_fini(&m->stamps);
  pthread_mutex_destroy(&m->lock);
  free(m);
}

rig_device *rig_buffer_device(const rig_buffer *b) {
  return b->device;
}
rig_device *rig_buffer_owner(const rig_buffer *b) {
  return b->mem->owner;
}
uint64_t rig_buffer_address(const rig_buffer *b) {
  return b->address;
}
uint64_t rig_buffer_handle(const rig_buffer *b) {
  return b->mem->info.handle;
}
void *rig_buffer_host(const rig_buffer *b) {
  return b->mem->info.host ? (char *)b->mem->info.host + b->offset : NULL;
}
uint64_t rig_buffer_length(const rig_buffer *b) {
  return b->length;
}
uint64_t rig_buffer_offset(const rig_buffer *b) {
  return b->offset;
}
rig_access rig_buffer_access(const rig_buffer *b) {
  return b->access;
}
rig_buffer_kind rig_buffer_kind_of(const rig_buffer *b) {
  return b->mem->kind;
}
bool rig_buffer_same_memory(const rig_buffer *a, const rig_buffer *b) {
  return a->mem == b->mem;
}

rig_status rig_buffer_wait(rig_buffer *b, rig_access access, rig_error *err) {
  if (rig_device_lost_now(b->mem->owner)) return rig_device_lost_error(b->mem->owner, err);
  rig_waitset ws = {.n = 0};
  rig_use use = access == RIG_ACCESS_READ ? RIG_USE_READ : RIG_USE_WRITE;
  /* As the host: its own synchronous work is done already. */
  rig_status st = rig_stamps_follow(&b->mem->stamps, 0, use, &ws, err);
  for (size_t i = 0; st == RIG_OK && i < ws.n; i++) st = rig_point_wait(ws.p[i], err);
  return st;
}
