/* An agent's holdings by id (holdings.h). */
#include "holdings.h"

#include <stdlib.h>

void rig_holdings_init(holdings *t) {
  pthread_mutex_init(&t->lock, NULL);
  rig_idtab_init(&t->ids, 0);
}

void rig_holdings_free(holdings *t) {
  for (uint64_t id = 1; id < rig_idtab_end(&t->ids); id++) {
    held *h = rig_idtab_get(&t->ids, id);
    if (!h) continue;
    rig_program_release(h->program);
    rig_image_release(h->image);
    rig_buffer_release(h->buffer);
    free(h);
  }
  rig_idtab_free(&t->ids);
  pthread_mutex_destroy(&t->lock);
}

rig_status rig_holdings_add(holdings *t, held h, int rank, uint64_t *id, rig_error *err) {
  held *kept = malloc(sizeof *kept);
  if (kept) *kept = h;
  pthread_mutex_lock(&t->lock);
  bool added = kept && rig_idtab_add(&t->ids, kept, id);
  pthread_mutex_unlock(&t->lock);
  if (added) return RIG_OK;
  free(kept);
  return rig_error_set(err, RIG_ENOMEM, "out of memory on machine %d", rank);
}

held rig_holdings_get(holdings *t, uint64_t id) {
  held h = {0};
  pthread_mutex_lock(&t->lock);
  const held *kept = rig_idtab_get(&t->ids, id);
  if (kept) h = *kept;
  pthread_mutex_unlock(&t->lock);
  return h;
}

held rig_holdings_take(holdings *t, uint64_t id) {
  held h = {0};
  pthread_mutex_lock(&t->lock);
  held *kept = rig_idtab_take(&t->ids, id);
  pthread_mutex_unlock(&t->lock);
  if (kept) h = *kept;
  free(kept);
  return h;
}

rig_program *rig_holdings_program(void *ctx, uint64_t id) {
  return rig_holdings_get(ctx, id).program;
}

rig_buffer *rig_holdings_buffer(void *ctx, uint64_t id) {
  return rig_holdings_get(ctx, id).buffer;
}
