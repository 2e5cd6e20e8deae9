/* The MPI side of test_rail_lost (run as `mpirun -n 2 rail_lost kill` or
 * `... stop`): the controller makes rail 1 to machine 1 and waits on its
 * end for bytes that never come; once that wait has begun, it kills
 * (SIGKILL) or stops (SIGSTOP) machine 1's process. It prints how long
 * after the signal its wait was released and the job failed, and the job's
 * cause, each line as it happens:
 *
 *   released 1 after 2.9 s
 *   failed after 2.9 s: machine 1: silent for 3 s
 *   closed: machine 1: ...
 *
 * (released 0: the wait was not released within 60 s, a hang). It leaves
 * with _exit once closed: MPI_Finalize would wait on the lost rank. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lost.h"
#include "rig/rig_job.h"
#include "wait.h"

static _Atomic uint64_t *arrived(const rig_rail_end *e) {
  return (_Atomic uint64_t *)((unsigned char *)rig_buffer_host(e->counts) + RIG_RAIL_ARRIVED_AT);
}

typedef struct waiter {
  const rig_rail_end *e;
  _Atomic bool waiting, released;
  double at;
} waiter;

static void *wait_arrived(void *arg) {
  waiter *w = arg;
  /* Said just before the poll of the count: from here on it waits. */
  atomic_store(&w->waiting, true);
  double deadline = lost_now_s() + RIG_HANG_S;
  while (atomic_load_explicit(arrived(w->e), memory_order_acquire) < 1 && lost_now_s() < deadline)
    sched_yield();
  w->at = lost_now_s();
  atomic_store(&w->released, atomic_load(arrived(w->e)) >= 1);
  return NULL;
}

int main(int argc, char **argv) {
  int rank, sig, pids[2];
  rig_job *job = lost_start(&argc, &argv, &rank, &sig, pids);
  if (!job) return 2;
  rig_error err;
  static const rig_rail_transfer t[1] = {{0, 0, 64}};
  if (rank != 0) {
    const rig_rails *rails = rig_job_rails(job);
    double deadline = lost_now_s() + 30;
    while (!rails->lookup(rails->ctx, 1) && lost_now_s() < deadline) sched_yield();
    MPI_Barrier(MPI_COMM_WORLD);
    rig_job_serve(job, &err);
    rig_job_close(job, &err);
    MPI_Finalize();
    return 0;
  }
  rig_rail *r;
  if (rig_job_rail(job, 0, 1, t, 1, t, 1, &r, &err) != RIG_OK) {
    printf("rig_job_rail: %s\n", err.message);
    fflush(stdout);
    _exit(2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  waiter w = {rig_rail_end_of(r), false, false, 0};
  pthread_t th;
  pthread_create(&th, NULL, wait_arrived, &w);
  rig_wait begun = rig_wait_begin(RIG_HANG_S);
  while (!atomic_load(&w.waiting) && rig_wait_more(&begun)) {
  }
  double t0 = lost_now_s();
  kill((pid_t)pids[1], sig);
  printf("signalled machine 1\n");
  fflush(stdout);
  rig_wait failing = rig_wait_begin(RIG_HANG_S);
  while (!rig_job_failed(job, NULL) && rig_wait_more(&failing)) {
  }
  double failed_at = lost_now_s();
  pthread_join(th, NULL);
  printf("released %d after %.2f s\n", (int)atomic_load(&w.released), w.at - t0);
  if (rig_job_failed(job, &err))
    printf("failed after %.2f s: %s\n", failed_at - t0, err.message);
  else
    printf("not failed after %.0f s\n", RIG_HANG_S);
  fflush(stdout);
  rig_rail_release(r);
  rig_job_close(job, &err);
  printf("closed: %s\n", err.message);
  fflush(stdout);
  if (sig == SIGSTOP) kill((pid_t)pids[1], SIGKILL);
  _exit(0);
}
