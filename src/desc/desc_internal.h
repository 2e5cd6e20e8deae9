/* Private to src/desc: the arena every description's arrays live in, and
 * the growth rule the builder and decoder share. */
#ifndef RIG_DESC_INTERNAL_H
#define RIG_DESC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rig/rig_desc.h"

/* Bump allocation in chunks; everything is freed with the arena. */
rig_desc_arena *rig_arena_create(void);
void rig_arena_free(rig_desc_arena *a);
/* n bytes aligned to 16, zeroed when zero is set; NULL when out of memory. */
void *rig_arena_alloc(rig_desc_arena *a, size_t n, bool zero);

/* Arrays hold room for n rounded up to a power of two, so that appending
 * to any array (built or decoded) knows its room from n alone. */
size_t rig_array_room(size_t n);
/* Room for an array of n elements of size elem: NULL when out of memory or
 * when n * elem overflows. */
void *rig_array_alloc(rig_desc_arena *a, size_t n, size_t elem);
/* Makes room for one more element in *items (of *n elements of size elem)
 * and returns it zeroed, with *n increased; NULL when out of memory. */
void *rig_array_push(rig_desc_arena *a, void *items_ptr, size_t *n, size_t elem);

/* A copy of len bytes in the arena (len 0 gives a non-NULL empty string). */
rig_desc_string rig_arena_string(rig_desc_arena *a, const void *bytes, size_t len, bool *ok);
/* A leaf with its Entry name copied into the arena. */
bool rig_arena_own_leaf(rig_desc_arena *a, rig_desc_leaf *leaf);

#endif
