/* The job's rails by id (rail_table.h). */
#include "rail_table.h"

#include <stdio.h>
#include <stdlib.h>

#include "failure.h"
#include "job_state.h"

static job_rail *rail_at(const job_rails *t, size_t i) {
  return ((job_rail **)t->items.items)[i];
}

static job_rail *find(job_rails *t, int64_t id, size_t *at) {
  for (size_t i = 0; i < t->items.n; i++)
    if (rig_rail_id(rail_at(t, i)->rail) == id) {
      if (at) *at = i;
      return rail_at(t, i);
    }
  return NULL;
}

static const rig_rail_end *lookup(void *ctx, int64_t id) {
  job_rails *t = ctx;
  pthread_mutex_lock(&t->lock);
  job_rail *jr = find(t, id, NULL);
  const rig_rail_end *end = jr ? rig_rail_end_of(jr->rail) : NULL;
  pthread_mutex_unlock(&t->lock);
  return end;
}

void rig_job_rails_init(rig_job *job) {
  pthread_mutex_init(&job->rails.lock, NULL);
  rig_array_init(&job->rails.items, sizeof(job_rail *), 0);
  job->rails.lookup = (rig_rails){lookup, &job->rails};
}

rig_status rig_rail_table_add(job_rails *t, job_rail *jr, rig_error *err) {
  pthread_mutex_lock(&t->lock);
  bool added = rig_array_push(&t->items, &jr);
  pthread_mutex_unlock(&t->lock);
  return added ? RIG_OK : rig_error_set(err, RIG_ENOMEM, "out of memory for a rail");
}

job_rail *rig_rail_table_take(job_rails *t, int64_t id) {
  pthread_mutex_lock(&t->lock);
  size_t at;
  job_rail *jr = find(t, id, &at);
  if (jr) rig_array_remove(&t->items, at);
  pthread_mutex_unlock(&t->lock);
  return jr;
}

const rig_rails *rig_job_rails(rig_job *job) {
  return &job->rails.lookup;
}

job_rail *rig_rail_table_find(job_rails *t, int64_t id) {
  pthread_mutex_lock(&t->lock);
  job_rail *jr = find(t, id, NULL);
  pthread_mutex_unlock(&t->lock);
  return jr;
}

int64_t rig_rail_table_next_id(job_rails *t) {
  int64_t id = 1;
  pthread_mutex_lock(&t->lock);
  for (size_t i = 0; i < t->items.n; i++) {
    int64_t used = rig_rail_id(rail_at(t, i)->rail);
    if (used >= id) id = used + 1;
  }
  pthread_mutex_unlock(&t->lock);
  return id;
}

void rig_rail_table_failed(void *ctx, rig_rail *r, const char *why) {
  job_rail *jr = ctx;
  rig_job *job = jr->job;
  int peer = jr->ends[0] == job->rank ? jr->ends[1] : jr->ends[0];
  char cause[RIG_ERROR_MESSAGE_MAX + RIG_JOB_LABEL];
  /* A rail this end's program misused (a ready past what it may send)
   * is this machine's fault, else the peer's. */
  int who = rig_rail_misused(r) ? job->rank : peer;
  snprintf(cause, sizeof cause, "%s: %s", rig_job_label(job, who), why);
  rig_job_fail_with(job, true, cause);
}

void rig_job_rails_close(rig_job *job) {
  for (;;) {
    pthread_mutex_lock(&job->rails.lock);
    size_t n = job->rails.items.n;
    job_rail *jr = n ? rail_at(&job->rails, n - 1) : NULL;
    pthread_mutex_unlock(&job->rails.lock);
    if (!jr) break;
    if (job->as_controller) {
      /* The controller's release takes it out of the table. */
      rig_rail_release(jr->rail);
    } else {
      rig_rail_table_take(&job->rails, rig_rail_id(jr->rail));
      rig_rail_release(jr->rail);
      free(jr);
    }
  }
  rig_array_free(&job->rails.items);
  pthread_mutex_destroy(&job->rails.lock);
}
