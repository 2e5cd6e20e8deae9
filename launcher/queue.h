/* A FIFO of the job's items, for one or more takers: the control thread's
 * outgoing frames, the agent's requests and each device's hand-overs. An
 * item embeds a queue_link first; the queue never allocates. */
#ifndef RIG_QUEUE_H
#define RIG_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct queue_link {
  struct queue_link *next;
} queue_link;

typedef struct queue {
  pthread_mutex_t lock;
  pthread_cond_t more, empty;
  queue_link *head, *tail;
  size_t busy; /* items taken and not finished */
  bool stop;
} queue;

void rig_queue_init(queue *q);
void rig_queue_destroy(queue *q);
void rig_queue_push(queue *q, queue_link *it);
/* The head, waiting for one; NULL once the queue is stopped and empty.
 * The taker calls queue_finished when it is done with it. */
queue_link *rig_queue_take(queue *q);
/* The head if pick(head, ctx) says so, without waiting (then also
 * queue_finished). pick runs under the queue's lock. */
queue_link *rig_queue_take_if(queue *q, bool (*pick)(const queue_link *head, void *ctx), void *ctx);
/* Every item, in order, without waiting (not counted as busy). */
queue_link *rig_queue_take_all(queue *q);
void rig_queue_finished(queue *q);
/* Waits until nothing is queued or being handled. */
void rig_queue_drain(queue *q);
bool rig_queue_idle(queue *q);
/* Takers leave once the queue is empty. */
void rig_queue_stop(queue *q);

#endif
