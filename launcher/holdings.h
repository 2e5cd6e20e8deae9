/* What an agent holds for the controller, by id (holdings.c): memory,
 * images and programs. Ids count from 1 and are never reused, so that a
 * late frame cannot reach a later holding. */
#ifndef RIG_HOLDINGS_H
#define RIG_HOLDINGS_H

#include <pthread.h>
#include <stdint.h>

#include "base/idtab.h"
#include "rig/rig_program.h"

typedef struct held {
  rig_buffer *buffer;
  rig_image *image;
  rig_program *program;
} held;

typedef struct holdings {
  pthread_mutex_t lock;
  rig_idtab ids; /* held *, each its own allocation */
} holdings;

void rig_holdings_init(holdings *t);
/* Releases everything still held (after its work) and frees the table. */
void rig_holdings_free(holdings *t);
/* Holds h under a new id (*id); RIG_ENOMEM naming machine `rank`. */
rig_status rig_holdings_add(holdings *t, held h, int rank, uint64_t *id, rig_error *err);
/* What id holds (all NULL: nothing). */
held rig_holdings_get(holdings *t, uint64_t id);
/* The same, and the id holds nothing from now on. */
held rig_holdings_take(holdings *t, uint64_t id);
/* The lookups a received program's runs use (ctx: the holdings). */
rig_program *rig_holdings_program(void *ctx, uint64_t id);
rig_buffer *rig_holdings_buffer(void *ctx, uint64_t id);

#endif
