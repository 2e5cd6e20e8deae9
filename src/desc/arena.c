/* The arena a description owns: chunks of growing size, freed at once. */
#include <stdlib.h>
#include <string.h>

#include "desc_internal.h"

#define ARENA_FIRST   4096
#define ARENA_LARGEST (1u << 20)

typedef struct chunk {
  struct chunk *next;
  size_t used, size;
  _Alignas(16) unsigned char data[];
} chunk;

struct rig_desc_arena {
  chunk *head;
  size_t next_size;
};

rig_desc_arena *rig_arena_create(void) {
  rig_desc_arena *a = calloc(1, sizeof *a);
  if (a) a->next_size = ARENA_FIRST;
  return a;
}

void rig_arena_free(rig_desc_arena *a) {
  if (!a) return;
  for (chunk *c = a->head, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  free(a);
}

static chunk *arena_chunk(rig_desc_arena *a, size_t n) {
  size_t size = a->next_size;
  if (size < n) size = n;
  chunk *c = malloc(sizeof *c + size);
  if (!c) return NULL;
  c->used = 0;
  c->size = size;
  if (n > a->next_size) {
    /* A large request gets its own chunk behind the head, so the head's
     * remaining room stays in use. */
    if (a->head) {
      c->next = a->head->next;
      a->head->next = c;
    } else {
      c->next = NULL;
      a->head = c;
    }
    return c;
  }
  c->next = a->head;
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
