/* The id table (idtab.h), on a growable array of pointers. */
#include "idtab.h"

#include <stddef.h>

void rig_idtab_init(rig_idtab *t, uint64_t max) {
  rig_array_init(&t->at, sizeof(void *), max > SIZE_MAX ? SIZE_MAX : (size_t)max);
}

void rig_idtab_free(rig_idtab *t) {
  rig_array_free(&t->at);
}

static void **slots(const rig_idtab *t) {
  return t->at.items;
}

bool rig_idtab_add(rig_idtab *t, void *p, uint64_t *id) {
  if (!rig_array_push(&t->at, &p)) return false;
  *id = t->at.n;
  return true;
}

bool rig_idtab_put(rig_idtab *t, uint64_t id, void *p) {
  if (id == 0 || id > SIZE_MAX) return false;
  if (id > t->at.n && !rig_array_resize(&t->at, (size_t)id)) return false;
  slots(t)[id - 1] = p;
  return true;
}

void *rig_idtab_get(const rig_idtab *t, uint64_t id) {
  return id >= 1 && id <= t->at.n ? slots(t)[id - 1] : NULL;
}

void *rig_idtab_take(rig_idtab *t, uint64_t id) {
  void *p = rig_idtab_get(t, id);
  if (p) slots(t)[id - 1] = NULL;
  return p;
}

uint64_t rig_idtab_end(const rig_idtab *t) {
  return (uint64_t)t->at.n + 1;
}
