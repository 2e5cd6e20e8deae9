/* Other devices' timeline words as a GPU's stream addresses them (for
 * cuStreamWaitValue64): a GPU's own is pinned already; another's page is
 * registered (cuda_host_register) the first time the GPU waits on it, and
 * kept in the GPU's list by the device's index. Indices are never given
 * twice, so an entry never answers for a newer device; the entries of
 * devices that are gone are given back, on every GPU, before any new word
 * is registered (a new word may sit where a freed one was), and the list
 * grows as it must: it never runs out. */
#include <stdlib.h>

#include "cuda_internal.h"

typedef struct cuda_word {
  uint32_t device; /* rig_device_index of the word's device */
  CUdeviceptr dptr;
  void *reg; /* cuda_host_register's */
} cuda_word;

static CUdeviceptr cached(cuda_gpu *g, uint32_t device) {
  CUdeviceptr d = 0;
  pthread_mutex_lock(&g->words_lock);
  for (size_t i = 0; i < g->nwords && !d; i++)
    if (g->words[i].device == device) d = g->words[i].dptr;
  pthread_mutex_unlock(&g->words_lock);
  return d;
}

/* Gives back g's entries of devices that are gone. */
static void drop_gone(cuda_gpu *g) {
  pthread_mutex_lock(&g->words_lock);
  for (size_t i = 0; i < g->nwords;) {
    if (rig_device_at(g->words[i].device)) {
      i++;
      continue;
    }
    cuda_host_unregister(g->words[i].reg);
    g->words[i] = g->words[--g->nwords];
  }
  pthread_mutex_unlock(&g->words_lock);
}

static bool add(cuda_gpu *g, uint32_t device, const void *word, CUdeviceptr *d) {
  bool ok = false;
  pthread_mutex_lock(&g->words_lock);
  if (g->nwords == g->words_room) {
    size_t room = g->words_room ? 2 * g->words_room : 16;
    cuda_word *more = realloc(g->words, room * sizeof *more);
    if (more) {
      g->words = more;
      g->words_room = room;
    }
  }
  void *reg;
  rig_error ignored;
  if (g->nwords < g->words_room &&
      cuda_host_register(g, word, sizeof(uint64_t), d, &reg, &ignored) == RIG_OK) {
    g->words[g->nwords++] = (cuda_word){device, *d, reg};
    ok = true;
  }
  pthread_mutex_unlock(&g->words_lock);
  return ok;
}

CUdeviceptr cuda_word_address(cuda_gpu *g, uint32_t device, const void *word) {
  for (unsigned i = 0; i < rig_cuda_count(); i++) {
    cuda_gpu *o = rig_cuda_gpu(i);
    if (o && (const void *)o->word == word) return o->word_dptr;
  }
  CUdeviceptr d = cached(g, device);
  if (d) return d;
  for (unsigned i = 0; i < rig_cuda_count(); i++)
    if (rig_cuda_gpu(i)) drop_gone(rig_cuda_gpu(i));
  /* Two threads may both miss: the second entry of a device is harmless
   * (one registration, counted twice, both given back). */
  return add(g, device, word, &d) ? d : 0;
}

void cuda_words_drop(cuda_gpu *g) {
  pthread_mutex_lock(&g->words_lock);
  for (size_t i = 0; i < g->nwords; i++) cuda_host_unregister(g->words[i].reg);
  free(g->words);
  g->words = NULL;
  g->nwords = g->words_room = 0;
  pthread_mutex_unlock(&g->words_lock);
}
