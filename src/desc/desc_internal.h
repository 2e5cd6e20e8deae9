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
size_t rig_arena_room(size_t n);
/* Room for an array of n elements of size elem: NULL when out of memory or
 * when n * elem overflows. */
void *rig_arena_array(rig_desc_arena *a, size_t n, size_t elem);
/* Makes room for one more element in *items (of *n elements of size elem)
 * and returns it zeroed, with *n increased; NULL when out of memory. */
void *rig_arena_push(rig_desc_arena *a, void *items_ptr, size_t *n, size_t elem);

/* A copy of len bytes in the arena (len 0 gives a non-NULL empty string). */
rig_desc_string rig_arena_string(rig_desc_arena *a, const void *bytes, size_t len, bool *ok);
/* A leaf with its Entry name copied into the arena. */
bool rig_arena_own_leaf(rig_desc_arena *a, rig_desc_leaf *leaf);

/* How the decoders fail. The byte decoder (decode.c) and the JSON reader
 * (json_read.c, json_params.c) meet a fault deep in a walk of the input
 * and longjmp from there to the one setjmp of their entry point, which
 * makes it a rig_status and a rig_error as every other call does. The
 * jump is bounded and safe:
 *  - it discards only frames of the file's own walk, whose recursion only
 *    loop bodies deepen, and a body deeper than RIG_DESC_MAX_DEPTH is
 *    refused before it is read; it never leaves a function of jansson or of
 *    the arena, which return before the walk decides to fail;
 *  - nothing is allocated but in the description's arena, freed with the
 *    description when the entry point fails, so no allocation is lost; the
 *    entry point owns and frees, on every path, what lies outside the jump
 *    (decode.c's reader, json_read.c's jansson tree), and json_read.c's
 *    get_file frees the path it joined and closes its file before it fails;
 *  - no local of the function that calls setjmp changes between it and a
 *    jump but a volatile one (decode.c's stage; json_read.c calls setjmp in
 *    walk(), which has none), so none is indeterminate after it. */

#endif
