/* The process's open jobs (jobs.h): a few at once, in a table of fixed
 * size (a waiting thread's chores keep as many on its stack). */
#include "jobs.h"

#include <pthread.h>

#include "job_state.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static rig_job *table[RIG_JOBS_MAX]; /* under lock */
static size_t n;

rig_status rig_jobs_add(rig_job *job, rig_error *err) {
  pthread_mutex_lock(&lock);
  rig_status st = RIG_OK;
  if (n == RIG_JOBS_MAX)
    st = rig_error_set(err, RIG_EREFUSED, "more than %zu jobs at once", n);
  else
    table[n++] = job;
  pthread_mutex_unlock(&lock);
  return st;
}

void rig_jobs_remove(rig_job *job) {
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < n; i++)
    if (table[i] == job) {
      table[i] = table[--n];
      break;
    }
  pthread_mutex_unlock(&lock);
}

void rig_jobs_lock(void) {
  pthread_mutex_lock(&lock);
}

void rig_jobs_unlock(void) {
  pthread_mutex_unlock(&lock);
}

rig_job *rig_jobs_find(uint64_t id) {
  for (size_t i = 0; i < n; i++)
    if (table[i]->c.job_id == id) return table[i];
  return NULL;
}

bool rig_jobs_holds(const rig_job *job) {
  for (size_t i = 0; i < n; i++)
    if (table[i] == job) return true;
  return false;
}

bool rig_jobs_try_each(void (*fn)(rig_job *job, void *ctx), void *ctx) {
  if (pthread_mutex_trylock(&lock) != 0) return false;
  for (size_t i = 0; i < n; i++) fn(table[i], ctx);
  pthread_mutex_unlock(&lock);
  return true;
}
