/* Releases that wait for their devices: memory whose last use is not
 * reached, submissions whose last hand-over is not done. Drained by later
 * calls that allocate or release, and by rig_reclaim. */
#include "core_internal.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static rig_mem *mems;
static rig_submission *subs;
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
  pthread_mutex_unlock(&lock);
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
