/* The job's FIFO (queue.h): a list under a lock, with conditions for its
 * takers and for those who wait for it to empty. */
#include "queue.h"

void rig_queue_init(queue *q) {
  *q = (queue){0};
  pthread_mutex_init(&q->lock, NULL);
  pthread_cond_init(&q->more, NULL);
  pthread_cond_init(&q->empty, NULL);
}

void rig_queue_destroy(queue *q) {
  pthread_mutex_destroy(&q->lock);
  pthread_cond_destroy(&q->more);
  pthread_cond_destroy(&q->empty);
}

void rig_queue_push(queue *q, queue_link *it) {
  pthread_mutex_lock(&q->lock);
  it->next = NULL;
  if (q->tail)
    q->tail->next = it;
  else
    q->head = it;
  q->tail = it;
  pthread_cond_signal(&q->more);
  pthread_mutex_unlock(&q->lock);
}

/* Under the lock. */
static queue_link *pop(queue *q) {
  queue_link *it = q->head;
  q->head = it->next;
  if (!q->head) q->tail = NULL;
  q->busy++;
  return it;
}

queue_link *rig_queue_take(queue *q) {
  pthread_mutex_lock(&q->lock);
  while (!q->head && !q->stop) pthread_cond_wait(&q->more, &q->lock);
  queue_link *it = q->head ? pop(q) : NULL;
  pthread_mutex_unlock(&q->lock);
  return it;
}

queue_link *rig_queue_take_if(queue *q, bool (*pick)(const queue_link *head, void *ctx),
                              void *ctx) {
  pthread_mutex_lock(&q->lock);
  queue_link *it = q->head && pick(q->head, ctx) ? pop(q) : NULL;
  pthread_mutex_unlock(&q->lock);
  return it;
}

queue_link *rig_queue_take_all(queue *q) {
  pthread_mutex_lock(&q->lock);
  queue_link *all = q->head;
  q->head = q->tail = NULL;
  pthread_mutex_unlock(&q->lock);
  return all;
}

void rig_queue_finished(queue *q) {
  pthread_mutex_lock(&q->lock);
  q->busy--;
  if (!q->head && !q->busy) pthread_cond_broadcast(&q->empty);
  pthread_mutex_unlock(&q->lock);
}

void rig_queue_drain(queue *q) {
  pthread_mutex_lock(&q->lock);
  while (q->head || q->busy) pthread_cond_wait(&q->empty, &q->lock);
  pthread_mutex_unlock(&q->lock);
}

bool rig_queue_idle(queue *q) {
  pthread_mutex_lock(&q->lock);
  bool idle = !q->head && !q->busy;
  pthread_mutex_unlock(&q->lock);
  return idle;
}

void rig_queue_stop(queue *q) {
  pthread_mutex_lock(&q->lock);
  q->stop = true;
  pthread_cond_broadcast(&q->more);
  pthread_mutex_unlock(&q->lock);
}
