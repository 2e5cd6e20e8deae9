/* An agent's holdings by id (holdings.h). */
#include "holdings.h"

#include <stdlib.h>
#include <string.h>

void rig_holdings_init(holdings *t) {
  *t = (holdings){0};
  pthread_mutex_init(&t->lock, NULL);
}

void rig_holdings_free(holdings *t) {
  for (size_t i = 0; i < t->n; i++) {
    rig_program_release(t->items[i].program);
    rig_image_release(t->items[i].image);
    rig_buffer_release(t->items[i].buffer);
  }
  free(t->items);
  pthread_mutex_destroy(&t->lock);
}

rig_status rig_holdings_add(holdings *t, held h, int rank, uint64_t *id, rig_error *err) {
  pthread_mutex_lock(&t->lock);
  if (t->n == t->room) {
    size_t room = t->room ? 2 * t->room : 64;
    held *bigger = realloc(t->items, room * sizeof *bigger);
    if (!bigger) {
      pthread_mutex_unlock(&t->lock);
      return rig_error_set(err, RIG_ENOMEM, "out of memory on machine %d", rank);
    }
    t->items = bigger;
    t->room = room;
  }
  t->items[t->n++] = h;
  *id = t->n;
  pthread_mutex_unlock(&t->lock);
  return RIG_OK;
}

held rig_holdings_get(holdings *t, uint64_t id) {
  held h = {0};
  pthread_mutex_lock(&t->lock);
  if (id >= 1 && id <= t->n) h = t->items[id - 1];
  pthread_mutex_unlock(&t->lock);
  return h;
}

held rig_holdings_take(holdings *t, uint64_t id) {
  held h = {0};
  pthread_mutex_lock(&t->lock);
  if (id >= 1 && id <= t->n) {
    h = t->items[id - 1];
    memset(&t->items[id - 1], 0, sizeof h);
  }
  pthread_mutex_unlock(&t->lock);
  return h;
}

rig_program *rig_holdings_program(void *ctx, uint64_t id) {
  return rig_holdings_get(ctx, id).program;
}

rig_buffer *rig_holdings_buffer(void *ctx, uint64_t id) {
  return rig_holdings_get(ctx, id).buffer;
}
