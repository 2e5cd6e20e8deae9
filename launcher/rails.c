/* Rails between the machines of a job (docs/rails.md): the controller
 * makes both ends, on their machines (itself included), carries each end's
 * address to the other through the control protocol, and releases them;
 * an agent makes, attaches and drops its ends on request. Each machine
 * finds its ends by id when it loads a program. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_internal.h"

/* ---- the table ------------------------------------------------------------------ */

static job_rail *find(job_rails *t, int64_t id, size_t *at) {
  for (size_t i = 0; i < t->n; i++)
    if (rig_rail_id(t->items[i]->rail) == id) {
      if (at) *at = i;
      return t->items[i];
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
  job->rails.lookup = (rig_rails){lookup, &job->rails};
}

static rig_status add(job_rails *t, job_rail *jr, rig_error *err) {
  pthread_mutex_lock(&t->lock);
  if (t->n == t->room) {
    size_t room = t->room ? 2 * t->room : 8;
    job_rail **bigger = realloc(t->items, room * sizeof *bigger);
    if (!bigger) {
      pthread_mutex_unlock(&t->lock);
      return rig_error_set(err, RIG_ENOMEM, "out of memory for a rail");
    }
    t->items = bigger;
    t->room = room;
  }
  t->items[t->n++] = jr;
  pthread_mutex_unlock(&t->lock);
  return RIG_OK;
}

/* Takes the rail out of the table: its id is free again. */
static job_rail *take(job_rails *t, int64_t id) {
  pthread_mutex_lock(&t->lock);
  size_t at;
  job_rail *jr = find(t, id, &at);
  if (jr) t->items[at] = t->items[--t->n];
  pthread_mutex_unlock(&t->lock);
  return jr;
}

const rig_rails *rig_job_rails(rig_job *job) {
  return &job->rails.lookup;
}

/* ---- hooks ---------------------------------------------------------------------- */

static void rail_failed(void *ctx, rig_rail *r, const char *why) {
  (void)r;
  job_rail *jr = ctx;
  rig_job *job = jr->job;
  int peer = jr->ends[0] == job->rank ? jr->ends[1] : jr->ends[0];
  char cause[RIG_ERROR_MESSAGE_MAX + 32];
  snprintf(cause, sizeof cause, "machine %d: %s", peer, why);
  rig_job_fail_with(job, true, cause);
}

/* The controller's release: the agents' ends are asked first, so that
 * both ends drop together (each waits for the other's goodbye). */
static void rail_release(void *ctx, rig_rail *r) {
  job_rail *jr = ctx;
  rig_job *job = jr->job;
  take(&job->rails, rig_rail_id(r));
  for (int e = 0; e < 2; e++) {
    if (jr->ends[e] == job->rank) continue;
    frame f = {.h.kind = F_RAIL_RELEASE, .rail.id = rig_rail_id(r)};
    rig_error ignored;
    if (rig_request_post(job, jr->ends[e], &f, NULL, 0, &jr->releasing[e], &ignored) != RIG_OK)
      jr->releasing[e] = NULL;
  }
}

static void rail_released(void *ctx, rig_rail *r) {
  job_rail *jr = ctx;
  rig_rail_set_hooks(r, &(rig_rail_hooks){0});
  for (int e = 0; e < 2; e++) {
    request *reply = NULL;
    rig_error ignored;
    if (jr->releasing[e] &&
        rig_request_await(jr->job, jr->releasing[e], &reply, &ignored) == RIG_OK)
      rig_request_free(reply);
  }
  free(jr);
}

/* ---- the controller ------------------------------------------------------------------ */

static bool id_in_use(rig_job *job, int64_t id) {
  pthread_mutex_lock(&job->rails.lock);
  bool used = find(&job->rails, id, NULL) != NULL;
  pthread_mutex_unlock(&job->rails.lock);
  return used;
}

static rig_status check_rail(rig_job *job, int64_t id, int a, int b, const rig_rail_transfer *send,
                             size_t nsend, const rig_rail_transfer *receive, size_t nreceive,
                             rig_error *err) {
  if (job->rank != 0)
    return rig_error_set(err, RIG_EINVAL,
                         "rig_job_rail on machine %d: only the controller makes rails", job->rank);
  if (a == b)
    return rig_error_set(err, RIG_EINVAL, "rail %lld: between machine %d and itself", (long long)id,
                         a);
  if (a < 0 || a >= job->size || b < 0 || b >= job->size)
    return rig_error_set(err, RIG_EINVAL, "rail %lld: machine %d is not in this job of %d",
                         (long long)id, a < 0 || a >= job->size ? a : b, job->size);
  rig_status st = rig_rail_check(send, nsend, receive, nreceive, err);
  if (st != RIG_OK) {
    rig_error_prefix(err, "rail %lld", (long long)id);
    return st;
  }
  if (id < 1)
    return rig_error_set(err, RIG_EINVAL, "rail %lld: an id is at least 1", (long long)id);
  if (id_in_use(job, id))
    return rig_error_set(err, RIG_EINVAL, "rail %lld: an id already in use", (long long)id);
  if (atomic_load(&job->failed)) return rig_job_error(job, err);
  return RIG_OK;
}

/* One end's transfers, as it sees them: send first. */
static unsigned char *end_payload(const rig_rail_transfer *send, size_t nsend,
                                  const rig_rail_transfer *receive, size_t nreceive, size_t *n) {
  *n = (nsend + nreceive) * sizeof *send;
  unsigned char *p = malloc(*n ? *n : 1);
  if (!p) return NULL;
  if (nsend) memcpy(p, send, nsend * sizeof *send);
  if (nreceive) memcpy(p + nsend * sizeof *send, receive, nreceive * sizeof *receive);
  return p;
}

rig_status rig_job_rail_as(rig_job *job, int64_t id, int a, int b, const rig_rail_transfer *send,
                           size_t nsend, const rig_rail_transfer *receive, size_t nreceive,
                           rig_rail **out, rig_error *err) {
  rig_status st = check_rail(job, id, a, b, send, nsend, receive, nreceive, err);
  if (st != RIG_OK) return st;
  job_rail *jr = calloc(1, sizeof *jr);
  if (!jr) return rig_error_set(err, RIG_ENOMEM, "out of memory for rail %lld", (long long)id);
  jr->job = job;
  jr->ends[0] = a;
  jr->ends[1] = b;
  /* This process's rail: its end when it is one, else an id only. */
  int here = a == 0 ? 0 : b == 0 ? 1 : -1;
  if (here == 0)
    st = rig_rail_create(id, send, nsend, receive, nreceive, &jr->rail, err);
  else if (here == 1)
    st = rig_rail_create(id, receive, nreceive, send, nsend, &jr->rail, err);
  else
    st = rig_rail_create_elsewhere(id, &jr->rail, err);
  if (st != RIG_OK) {
    free(jr);
    return st;
  }
  /* From here on a failure releases what was made, the agents' ends too. */
  rig_rail_hooks hooks = {rail_failed, rail_release, rail_released, jr};
  rig_rail_set_hooks(jr->rail, &hooks);
  if ((st = add(&job->rails, jr, err)) != RIG_OK) {
    rig_rail_set_hooks(jr->rail, &(rig_rail_hooks){0});
    rig_rail_release(jr->rail);
    free(jr);
    return st;
  }
  /* Each end made, then each attached to the other's address. */
  request *made[2] = {NULL, NULL};
  const void *address[2] = {NULL, NULL};
  size_t len[2] = {0, 0};
  for (int e = 0; e < 2 && st == RIG_OK; e++) {
    if (e == here) {
      rig_rail_address(jr->rail, &address[e], &len[e]);
      continue;
    }
    size_t n;
    unsigned char *payload = e == 0 ? end_payload(send, nsend, receive, nreceive, &n)
                                    : end_payload(receive, nreceive, send, nsend, &n);
    if (!payload) {
      st = rig_error_set(err, RIG_ENOMEM, "out of memory for rail %lld", (long long)id);
      break;
    }
    frame f = {.h.kind = F_RAIL_MAKE,
               .rail = {.id = id,
                        .peer = (uint32_t)jr->ends[1 - e],
                        .nsend = e == 0 ? nsend : nreceive,
                        .nreceive = e == 0 ? nreceive : nsend}};
    st = rig_request(job, jr->ends[e], &f, payload, n, &made[e], err);
    free(payload);
    if (st == RIG_OK) {
      address[e] = made[e]->payload;
      len[e] = made[e]->len;
    } else {
      rig_error_prefix(err, "machine %d", jr->ends[e]);
    }
  }
  for (int e = 0; e < 2 && st == RIG_OK; e++) {
    if (e == here) {
      st = rig_rail_attach(jr->rail, address[1 - e], len[1 - e], err);
      continue;
    }
    frame f = {.h.kind = F_RAIL_ATTACH, .rail.id = id};
    request *reply = NULL;
    st = rig_request(job, jr->ends[e], &f, address[1 - e], len[1 - e], &reply, err);
    if (st == RIG_OK)
      rig_request_free(reply);
    else
      rig_error_prefix(err, "machine %d", jr->ends[e]);
  }
  rig_request_free(made[0]);
  rig_request_free(made[1]);
  if (st != RIG_OK) {
    rig_rail_release(jr->rail);
    return st;
  }
  *out = jr->rail;
  return RIG_OK;
}

rig_status rig_job_rail(rig_job *job, int a, int b, const rig_rail_transfer *send, size_t nsend,
                        const rig_rail_transfer *receive, size_t nreceive, rig_rail **out,
                        rig_error *err) {
  /* The job's one id space: the next id above every rail made. */
  int64_t id = 1;
  pthread_mutex_lock(&job->rails.lock);
  for (size_t i = 0; i < job->rails.n; i++) {
    int64_t used = rig_rail_id(job->rails.items[i]->rail);
    if (used >= id) id = used + 1;
  }
  pthread_mutex_unlock(&job->rails.lock);
  return rig_job_rail_as(job, id, a, b, send, nsend, receive, nreceive, out, err);
}

void rig_job_rails_close(rig_job *job) {
  for (;;) {
    pthread_mutex_lock(&job->rails.lock);
    job_rail *jr = job->rails.n ? job->rails.items[job->rails.n - 1] : NULL;
    pthread_mutex_unlock(&job->rails.lock);
    if (!jr) break;
    if (job->rank == 0) {
      /* The controller's release takes it out of the table. */
      rig_rail_release(jr->rail);
    } else {
      take(&job->rails, rig_rail_id(jr->rail));
      rig_rail_release(jr->rail);
      free(jr);
    }
  }
  free(job->rails.items);
  job->rails.items = NULL;
  job->rails.n = job->rails.room = 0;
  pthread_mutex_destroy(&job->rails.lock);
}

/* ---- an agent's ends ------------------------------------------------------------------- */

void rig_agent_rail(rig_job *job, const frame *f, const unsigned char *payload,
                    void (*answer)(rig_job *job, const frame *req, rig_status st,
                                   const void *payload, size_t n)) {
  const frame_rail *fr = &f->rail;
  rig_error err;
  rig_status st = RIG_OK;
  if (f->h.kind == F_RAIL_MAKE) {
    size_t room = f->h.payload / sizeof(rig_rail_transfer);
    if (fr->nsend > room || fr->nreceive > room - fr->nsend ||
        (fr->nsend + fr->nreceive) * sizeof(rig_rail_transfer) != f->h.payload) {
      st = rig_error_set(&err, RIG_EINVAL, "rail %lld: a request of %u bytes for %llu transfers",
                         (long long)fr->id, f->h.payload,
                         (unsigned long long)(fr->nsend + fr->nreceive));
    } else if (fr->peer >= (uint32_t)job->size) {
      st = rig_error_set(&err, RIG_EINVAL, "rail %lld: no machine %u", (long long)fr->id, fr->peer);
    }
    /* The payload is not aligned for the transfers: copied out first. */
    rig_rail_transfer *t = NULL;
    if (st == RIG_OK && !(t = malloc(f->h.payload ? f->h.payload : 1)))
      st = rig_error_set(&err, RIG_ENOMEM, "out of memory for rail %lld", (long long)fr->id);
    if (st == RIG_OK) memcpy(t, payload, f->h.payload);
    job_rail *jr = NULL;
    if (st == RIG_OK && !(jr = calloc(1, sizeof *jr)))
      st = rig_error_set(&err, RIG_ENOMEM, "out of memory for rail %lld", (long long)fr->id);
    if (st == RIG_OK)
      st = rig_rail_create(fr->id, t, fr->nsend, t + fr->nsend, fr->nreceive, &jr->rail, &err);
    free(t);
    if (st == RIG_OK) {
      jr->job = job;
      jr->ends[0] = job->rank;
      jr->ends[1] = (int)fr->peer;
      rig_rail_set_hooks(jr->rail, &(rig_rail_hooks){.failed = rail_failed, .ctx = jr});
      if ((st = add(&job->rails, jr, &err)) != RIG_OK) rig_rail_release(jr->rail);
    }
    if (st != RIG_OK) {
      free(jr);
      answer(job, f, st, err.message, strlen(err.message));
      return;
    }
    const void *address;
    size_t len;
    rig_rail_address(jr->rail, &address, &len);
    answer(job, f, RIG_OK, address, len);
    return;
  }
  if (f->h.kind == F_RAIL_ATTACH) {
    pthread_mutex_lock(&job->rails.lock);
    job_rail *jr = find(&job->rails, fr->id, NULL);
    pthread_mutex_unlock(&job->rails.lock);
    if (!jr)
      st = rig_error_set(&err, RIG_EINVAL, "no rail %lld on machine %d", (long long)fr->id,
                         job->rank);
    else
      st = rig_rail_attach(jr->rail, payload, f->h.payload, &err);
    answer(job, f, st, st == RIG_OK ? NULL : err.message, st == RIG_OK ? 0 : strlen(err.message));
    return;
  }
  /* RELEASE: after the loads that used it (requests run in order). */
  job_rail *jr = take(&job->rails, fr->id);
  if (jr) {
    rig_rail_release(jr->rail);
    free(jr);
  }
  answer(job, f, RIG_OK, NULL, 0);
}
