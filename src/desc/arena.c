/* The arena a description owns: chunks of growing size, freed at once.
 *
 * A large description is mostly fresh memory: decoding one writes about
 * three times its bytes, once, so the cost of faulting that memory in
 * outweighs the decoding (a 4 KiB page fault costs microseconds in a
 * virtual machine). Chunks from a huge page up are therefore mapped here,
 * aligned to a huge page and advised to be backed by huge pages, which
 * faults 512 times less often; smaller ones come from malloc, so small
 * descriptions cost no more than before. A mapped chunk's unused tail is
 * never touched, but it is committed memory where overcommit is strict:
 * the chunks stop growing at 8 MiB, which costs no speed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "desc_internal.h"

#define ARENA_FIRST   4096
#define ARENA_MAPPED  (2u << 20) /* a huge page on x86-64 and arm64 (4 KiB pages) */
#define ARENA_LARGEST (8u << 20)

typedef struct chunk {
  struct chunk *next; /* in its own list: malloc's or mapped */
  size_t used, size;
  size_t mapped; /* the bytes of its mapping, 0 when malloc's */
  _Alignas(16) unsigned char data[];
} chunk;

/* Two lists, so that malloc's chunks are reached from malloc's memory alone
 * (LeakSanitizer does not scan mappings). */
struct rig_desc_arena {
  chunk *head; /* where small allocations are cut from */
  chunk *heap, *maps;
  size_t next_size;
};

rig_desc_arena *rig_arena_create(void) {
  rig_desc_arena *a = calloc(1, sizeof *a);
  if (a) a->next_size = ARENA_FIRST;
  return a;
}

void rig_arena_free(rig_desc_arena *a) {
  if (!a) return;
  for (chunk *c = a->heap, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  for (chunk *c = a->maps, *next; c; c = next) {
    next = c->next;
    munmap(c, c->mapped);
  }
  free(a);
}

/* A chunk of at least `size` bytes of data, mapped at a huge page's
 * boundary: a mapping a huge page longer is trimmed at both ends. */
static chunk *map_chunk(size_t size) {
  size_t huge = ARENA_MAPPED;
  if (size > SIZE_MAX - sizeof(chunk) - 2 * huge) return NULL;
  size_t len = (sizeof(chunk) + size + huge - 1) & ~(huge - 1);
  unsigned char *p =
      mmap(NULL, len + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  size_t lead = (huge - (uintptr_t)p % huge) % huge;
  if (lead) munmap(p, lead);
  if (huge - lead) munmap(p + lead + len, huge - lead);
  chunk *c = (chunk *)(p + lead);
#ifdef MADV_HUGEPAGE
  madvise(c, len, MADV_HUGEPAGE); /* advice only: without it, 4 KiB pages */
#endif
  c->mapped = len;
  c->size = len - sizeof(chunk);
  return c;
}

static chunk *arena_chunk(rig_desc_arena *a, size_t n) {
  size_t size = a->next_size;
  if (size < n) size = n;
  chunk *c;
  if (size >= ARENA_MAPPED) {
    c = map_chunk(size);
    if (!c) return NULL;
    c->next = a->maps;
    a->maps = c;
  } else {
    if (size > SIZE_MAX - sizeof *c) return NULL;
    c = malloc(sizeof *c + size);
    if (!c) return NULL;
    c->mapped = 0;
    c->size = size;
    c->next = a->heap;
    a->heap = c;
  }
  c->used = 0;
  if (n > a->next_size) {
    /* A large request gets its own chunk, and the head's remaining room
     * stays in use. */
    if (!a->head) a->head = c;
    return c;
  }
  a->head = c;
  if (a->next_size < ARENA_LARGEST) a->next_size *= 2;
  return c;
}

void *rig_arena_alloc(rig_desc_arena *a, size_t n, bool zero) {
  if (n > SIZE_MAX - 15) return NULL;
  n = (n + 15) & ~(size_t)15;
  if (n == 0) n = 16;
  chunk *c = a->head;
  if (!c || c->size - c->used < n) {
    c = arena_chunk(a, n);
    if (!c) return NULL;
  }
  void *p = c->data + c->used;
  c->used += n;
  if (zero) memset(p, 0, n);
  return p;
}

size_t rig_arena_room(size_t n) {
  if (n <= 1) return n;
  size_t r = 1;
  while (r < n) r <<= 1;
  return r;
}

void *rig_arena_array(rig_desc_arena *a, size_t n, size_t elem) {
  size_t room = rig_arena_room(n);
  if (room == 0) return NULL;
  if (room > SIZE_MAX / elem) return NULL;
  return rig_arena_alloc(a, room * elem, false);
}

void *rig_arena_push(rig_desc_arena *a, void *items_ptr, size_t *n, size_t elem) {
  unsigned char **items = items_ptr;
  size_t room = rig_arena_room(*n);
  if (*n == room) {
    size_t grown = room ? room * 2 : 1;
    if (grown > SIZE_MAX / elem) return NULL;
    unsigned char *bigger = rig_arena_alloc(a, grown * elem, false);
    if (!bigger) return NULL;
    if (*n) memcpy(bigger, *items, *n * elem);
    *items = bigger;
  }
  unsigned char *slot = *items + *n * elem;
  memset(slot, 0, elem);
  (*n)++;
  return slot;
}

rig_desc_string rig_arena_string(rig_desc_arena *a, const void *bytes, size_t len, bool *ok) {
  rig_desc_string s = {NULL, 0};
  uint8_t *copy = rig_arena_alloc(a, len ? len : 1, false);
  if (!copy) {
    *ok = false;
    return s;
  }
  if (len) memcpy(copy, bytes, len);
  s.bytes = copy;
  s.len = len;
  return s;
}

bool rig_arena_own_leaf(rig_desc_arena *a, rig_desc_leaf *leaf) {
  if (leaf->tag != RIG_LEAF_ENTRY) return true;
  bool ok = true;
  leaf->u.entry.name = rig_arena_string(a, leaf->u.entry.name.bytes, leaf->u.entry.name.len, &ok);
  return ok;
}
