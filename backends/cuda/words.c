/* Other devices' timeline words as a GPU's stream addresses them (for
 * cuStreamWaitValue64): a GPU's own is pinned already; another's page is
 * registered (cuda_host_register) the first time the GPU waits on it, and
 * kept in the GPU's list by the device's index. Indices are never given
 * twice, so an entry never answers for a newer device; the entries of
 * devices that are gone are given back, on every GPU, before any new word
 * is registered (a new word may sit where a freed one was), and the list
 * grows as it must: it never runs out. */

#include "cuda_internal.h"

typedef struct cuda_word {
  uint32_t device; /* rig_device_index of the word's device */
  CUdeviceptr dptr;
  void *reg; /* cuda_host_register's */
} cuda_word;

static cuda_word *word_at(cuda_gpu *g, size_t i) {
  return rig_array_at(&g->words, i);
}

void cuda_words_init(cuda_gpu *g) {
  rig_array_init(&g->words, sizeof(cuda_word), 0);
}

static CUdeviceptr cached(cuda_gpu *g, uint32_t device) {
  CUdeviceptr d = 0;
  pthread_mutex_lock(&g->words_lock);
  for (size_t i = 0; i < g->words.n && !d; i++)
    if (word_at(g, i)->device == device) d = word_at(g, i)->dptr;
  pthread_mutex_unlock(&g->words_lock);
  return d;
}

/* Gives back g's entries of devices that are gone. */
static void drop_gone(cuda_gpu *g) {
  pthread_mutex_lock(&g->words_lock);
  for (size_t i = 0; i < g->words.n;) {
    if (rig_device_at(word_at(g, i)->device)) {
      i++;
      continue;
    }
    cuda_host_unregister(word_at(g, i)->reg);
    rig_array_remove(&g->words, i);
  }
  pthread_mutex_unlock(&g->words_lock);
}

static bool add(cuda_gpu *g, uint32_t device, const void *word, CUdeviceptr *d) {
  bool ok = false;
  pthread_mutex_lock(&g->words_lock);
  void *reg;
  rig_error ignored;
  /* Room first: a registration is never made that the list cannot keep. */
  if (rig_array_reserve(&g->words, 1) &&
      cuda_host_register(g, word, sizeof(uint64_t), d, &reg, &ignored) == RIG_OK) {
    rig_array_push(&g->words, &(cuda_word){device, *d, reg});
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
  for (size_t i = 0; i < g->words.n; i++) cuda_host_unregister(word_at(g, i)->reg);
  rig_array_free(&g->words);
  pthread_mutex_unlock(&g->words_lock);
}
