/* The growable array (array.h). */
#include "array.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assert.h"

/* A first allocation of at least this many bytes: a few small pushes do
 * not each reallocate. */
#define FIRST_BYTES 256
#define FIRST_ITEMS 16

void rig_array_init(rig_array *a, size_t size, size_t max) {
  rig_assert(size > 0);
  *a = (rig_array){NULL, 0, 0, size, max};
}

void rig_array_free(rig_array *a) {
  free(a->items);
  a->items = NULL;
  a->n = a->room = 0;
}

/* The most items memory (size_t) or the bound allows. */
static size_t limit(const rig_array *a) {
  size_t most = SIZE_MAX / a->size;
  return a->max && a->max < most ? a->max : most;
}

bool rig_array_reserve(rig_array *a, size_t more) {
  rig_assert(a->size > 0);
  if (a->room - a->n >= more) return true;
  size_t most = limit(a);
  if (more > most - a->n) return false;
  size_t need = a->n + more;
  size_t first = FIRST_BYTES / a->size > FIRST_ITEMS ? FIRST_BYTES / a->size : FIRST_ITEMS;
  size_t room = a->room ? (a->room <= most / 2 ? 2 * a->room : most) : first;
  if (room > most) room = most;
  if (room < need) room = need;
  void *items = realloc(a->items, room * a->size);
  if (!items) return false;
  a->items = items;
  a->room = room;
  return true;
}

bool rig_array_append(rig_array *a, const void *items, size_t count) {
  if (!rig_array_reserve(a, count)) return false;
  if (count) memcpy(rig_array_at(a, a->n), items, count * a->size);
  a->n += count;
  return true;
}

bool rig_array_resize(rig_array *a, size_t n) {
  if (n > a->n) {
    if (!rig_array_reserve(a, n - a->n)) return false;
    memset(rig_array_at(a, a->n), 0, (n - a->n) * a->size);
  }
  a->n = n;
  return true;
}

void rig_array_remove(rig_array *a, size_t i) {
  rig_assert(i < a->n);
  if (i != --a->n) memcpy(rig_array_at(a, i), rig_array_at(a, a->n), a->size);
}

void *rig_array_take(rig_array *a) {
  void *items = a->items;
  a->items = NULL;
  a->n = a->room = 0;
  return items;
}

size_t rig_array_index(const rig_array *a, size_t i) {
  if (i >= a->n) {
    fprintf(stderr, "librig: an array's item %zu read past its %zu items\n", i, a->n);
    abort();
  }
  return i;
}
