/* Requests and their answers (request.h). */
#include "request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failure.h"
#include "job_state.h"

uint64_t rig_request_id(rig_job *job) {
  return atomic_fetch_add(&job->as_controller->next_request, 1) + 1;
}

static rig_status new_request(rig_job *job, uint64_t id, request **out, rig_error *err) {
  request *r = calloc(1, sizeof *r);
  if (!r) return rig_error_set(err, RIG_ENOMEM, "out of memory for a request");
  r->id = id;
  pthread_mutex_lock(&job->lock);
  r->next = job->as_controller->requests;
  job->as_controller->requests = r;
  pthread_mutex_unlock(&job->lock);
  *out = r;
  return RIG_OK;
}

static void unlink_request(rig_job *job, request *r) {
  pthread_mutex_lock(&job->lock);
  for (request **p = &job->as_controller->requests; *p; p = &(*p)->next)
    if (*p == r) {
      *p = r->next;
      break;
    }
  pthread_mutex_unlock(&job->lock);
}

rig_status rig_request_expect(rig_job *job, uint64_t id, void *into, size_t len, rig_error *err) {
  request *r = NULL;
  rig_status st = new_request(job, id, &r, err);
  if (st == RIG_OK) {
    r->into = into;
    r->into_len = len;
  }
  return st;
}

void rig_request_free(request *r) {
  if (!r) return;
  free(r->payload);
  free(r);
}

uint64_t rig_request_answer(rig_job *job, int src, const frame *f, const unsigned char *payload) {
  const frame_header *h = &f->h;
  char cause[RIG_ERROR_MESSAGE_MAX];
  cause[0] = '\0';
  uint64_t moved = 0;
  pthread_mutex_lock(&job->lock);
  request *r = job->as_controller->requests, **p = &job->as_controller->requests;
  for (; r && r->id != h->request; p = &r->next, r = r->next) {
  }
  if (r && r->into) {
    /* A copy out: its bytes land before its DONE, which follows; an agent
     * that cannot copy fails the job instead of answering, so any other
     * answer is a broken one. */
    if (h->status == RIG_OK && h->payload == r->into_len) {
      memcpy(r->into, payload, h->payload);
      moved = h->value; /* the copy's value: its bytes are here */
    } else
      snprintf(cause, sizeof cause, "%s: a copy out answered with %u bytes of %zu",
               rig_job_label(job, src), h->payload, r->into_len);
    *p = r->next;
    free(r);
  } else if (r) {
    r->payload = malloc(h->payload ? h->payload : 1);
    if (r->payload) {
      memcpy(r->payload, payload, h->payload);
      r->len = h->payload;
      r->status = h->status;
      r->value = h->value;
      r->max_threads = f->reply.max_threads;
      r->arrived_ns = rig_trace_now();
      r->done = true;
    } else {
      /* The waiter wakes on the failure. */
      snprintf(cause, sizeof cause, "out of memory taking a reply");
    }
  }
  pthread_cond_broadcast(&job->changed);
  pthread_mutex_unlock(&job->lock);
  if (cause[0]) rig_job_fail_with(job, true, cause);
  return moved;
}

rig_status rig_request_post(rig_job *job, int dest, frame *f, const void *payload, size_t n,
                            request **posted, rig_error *err) {
  if (atomic_load(&job->failed)) return rig_job_error(job, err);
  f->h.request = rig_request_id(job);
  rig_status st = new_request(job, f->h.request, posted, err);
  /* A frame not sent has failed the job: the wait for it ends at once. */
  if (st == RIG_OK) rig_ctl_send(&job->c, dest, f, payload, n, NULL);
  return st;
}

rig_status rig_request_await(rig_job *job, request *r, request **reply, rig_error *err) {
  pthread_mutex_lock(&job->lock);
  while (!r->done && !atomic_load(&job->failed)) pthread_cond_wait(&job->changed, &job->lock);
  bool done = r->done;
  pthread_mutex_unlock(&job->lock);
  unlink_request(job, r);
  if (!done) {
    rig_request_free(r);
    return rig_job_error(job, err);
  }
  if (r->status != RIG_OK) {
    rig_status st =
        rig_error_set(err, (rig_status)r->status, "%.*s", (int)r->len, (const char *)r->payload);
    rig_request_free(r);
    return st;
  }
  *reply = r;
  return RIG_OK;
}

rig_status rig_request(rig_job *job, int dest, frame *f, const void *payload, size_t n,
                       request **reply, rig_error *err) {
  request *r;
  rig_status st = rig_request_post(job, dest, f, payload, n, &r, err);
  return st == RIG_OK ? rig_request_await(job, r, reply, err) : st;
}

void rig_requests_free(rig_job *job) {
  struct job_controller *ctrl = job->as_controller;
  if (!ctrl) return; /* an agent asks nothing */
  for (request *r = ctrl->requests, *next; r; r = next) {
    next = r->next;
    rig_request_free(r);
  }
  ctrl->requests = NULL;
}
