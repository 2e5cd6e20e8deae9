/* idtab.h: a table of small integer ids to pointers, ids counting from 1
 * (0 is never an id), indexed directly: a lookup is one load. For ids a
 * table gives itself (rig_idtab_add: one past every id given, never one
 * given before, so a late message cannot reach a later object) or that
 * another table gave (rig_idtab_put). NULL is what an id not holding
 * anything answers. Not locked: its owner's lock covers it. Private to
 * librig (never installed). */
#ifndef RIG_BASE_IDTAB_H
#define RIG_BASE_IDTAB_H

#include <stdbool.h>
#include <stdint.h>

#include "array.h"

typedef struct rig_idtab {
  rig_array at; /* void *, by id - 1 */
} rig_idtab;

/* Empty, of ids up to `max` (0: as many as memory allows). */
void rig_idtab_init(rig_idtab *t, uint64_t max);
/* Frees the table, not what it points to (the caller's, rig_idtab_end). */
void rig_idtab_free(rig_idtab *t);

/* p under a new id (*id), one past every id given or put (false: out of
 * memory, or past the bound). */
bool rig_idtab_add(rig_idtab *t, void *p, uint64_t *id);
/* p under `id` (false: id 0, past the bound, or out of memory); what the
 * id held before is the caller's to have read (rig_idtab_get). */
bool rig_idtab_put(rig_idtab *t, uint64_t id, void *p);
/* What id holds, or NULL. */
void *rig_idtab_get(const rig_idtab *t, uint64_t id);
/* The same, and id holds nothing from now on. */
void *rig_idtab_take(rig_idtab *t, uint64_t id);
/* One past the highest id given or put: ids 1 to end - 1 may hold. */
uint64_t rig_idtab_end(const rig_idtab *t);

#endif
