/* Releases that wait for their devices: memory whose last use is not
 * reached, submissions whose last hand-over is not done, images whose
 * owner's last runs are not. Drained by later
 * calls that allocate or release, and by rig_reclaim. */
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static rig_mem *mems;
static rig_submission *subs;

/* An image released once points are past (rig_image_release_after). */
typedef struct deferred_image {
  struct deferred_image *next;
  rig_image *img;
  size_t n;
  rig_point after[];
} deferred_image;
static deferred_image *images;
static _Atomic size_t pending;

void rig_defer_mem(rig_mem *m) {
  pthread_mutex_lock(&lock);
  m->next_deferred = mems;
  mems = m;
  atomic_fetch_add(&pending, 1);
  pthread_mutex_unlock(&lock);
}

void rig_defer_submission(rig_submission *s) {
  pthread_mutex_lock(&lock);
  s->next_deferred = subs;
  subs = s;
  atomic_fetch_add(&pending, 1);
  pthread_mutex_unlock(&lock);
}

/* Its last hand-over is over: reached, or its device lost and no thread
 * of the driver still in it (the submission's parts, its images' code). */
static bool submission_done(const rig_submission *s) {
  uint64_t v = atomic_load(&s->last);
  return v == 0 || rig_device_past(s->dev, v);
}

static bool points_past(const rig_point *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    rig_device *d = p[i] == RIG_POINT_REACHED ? NULL : rig_device_at(rig_point_device(p[i]));
    if (d && !rig_device_past(d, rig_point_value(p[i]))) return false;
  }
  return true;
}

void rig_image_release_after(rig_image *img, const rig_point *after, size_t n) {
  if (!img) return;
  deferred_image *di = points_past(after, n) ? NULL : malloc(sizeof *di + n * sizeof *after);
  if (!di) {
    /* Past already; or out of memory, and the release cannot wait. */
    rig_image_release(img);
    return;
  }
  di->img = img;
  di->n = n;
  memcpy(di->after, after, n * sizeof *after);
  pthread_mutex_lock(&lock);
  di->next = images;
  images = di;
  atomic_fetch_add(&pending, 1);
  pthread_mutex_unlock(&lock);
  rig_reclaim();
}

size_t rig_reclaim_pending(void) {
  return atomic_load(&pending);
}

void rig_reclaim(void) {
  if (atomic_load_explicit(&pending, memory_order_relaxed) == 0) return;
  /* Collect what is ready under the lock; free it after, since freeing a
   * submission releases memory that may defer again. */
  rig_mem *free_mems = NULL;
  rig_submission *free_subs = NULL;
  pthread_mutex_lock(&lock);
  for (rig_mem **p = &mems; *p;) {
    rig_mem *m = *p;
    if (rig_stamps_reached(&m->stamps)) {
      *p = m->next_deferred;
      m->next_deferred = free_mems;
      free_mems = m;
      atomic_fetch_sub(&pending, 1);
    } else {
      p = &m->next_deferred;
    }
  }
  for (rig_submission **p = &subs; *p;) {
    rig_submission *s = *p;
    if (submission_done(s)) {
      *p = s->next_deferred;
      s->next_deferred = free_subs;
      free_subs = s;
      atomic_fetch_sub(&pending, 1);
    } else {
      p = &s->next_deferred;
    }
  }
  deferred_image *free_images = NULL;
  for (deferred_image **p = &images; *p;) {
    deferred_image *di = *p;
    if (points_past(di->after, di->n)) {
      *p = di->next;
      di->next = free_images;
      free_images = di;
      atomic_fetch_sub(&pending, 1);
    } else {
      p = &di->next;
    }
  }
  pthread_mutex_unlock(&lock);
  while (free_images) {
    deferred_image *next = free_images->next;
    rig_image_release(free_images->img);
    free(free_images);
    free_images = next;
  }
  while (free_mems) {
    rig_mem *next = free_mems->next_deferred;
    rig_mem_free_now(free_mems);
    free_mems = next;
  }
  while (free_subs) {
    rig_submission *next = free_subs->next_deferred;
    rig_submission_free_now(free_subs);
    free_subs = next;
  }
}

void rig_submission_release(rig_submission *s) {
  if (!s || atomic_fetch_sub(&s->refs, 1) != 1) return;
  if (submission_done(s))
    rig_submission_free_now(s);
  else
    rig_defer_submission(s);
  rig_reclaim();
}
