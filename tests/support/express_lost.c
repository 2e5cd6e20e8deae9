/* The MPI side of test_express_lost (run as `mpirun -n 2 express_lost kill`
 * or `... stop`, with RIG_TEST_KERNELS): the controller runs a program on
 * machine 1 whose host step sleeps 60 s, and waits on its end (a proxy's
 * point, which the agent would report by shared memory); once that wait
 * is seen asleep, it kills (SIGKILL) or stops (SIGSTOP) machine 1's
 * process. It prints whether the signal came during the wait, how long
 * after it the wait ended and with what:
 *
 *   signalled during the wait
 *   ended after 3.1 s: machine 1: silent for 3 s
 *   closed: machine 1: ...
 *
 * It leaves with _exit once closed: MPI_Finalize would wait on the lost
 * rank. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lost.h"
#include "rig/rig_job.h"
#include "rig/rig_program.h"
#include "wait.h"

typedef struct signaller {
  pid_t pid, waiter; /* machine 1's process; the thread that waits here */
  int sig;
  _Atomic bool waiting; /* said just before the wait is called */
  bool during;          /* the waiter was seen asleep when signalled */
  double at;
} signaller;

/* Whether the waiter is asleep in its wait: once it has said it waits,
 * the wait is the only place where it sleeps. */
static bool asleep_in_the_wait(signaller *s) {
  long nr;
  unsigned long arg0;
  return atomic_load(&s->waiting) && rig_thread_state(0, s->waiter, &nr, &arg0) == 'S';
}

/* Signals machine 1 once the controller's wait is seen asleep (or after a
 * hang's bound, so that the run ends and says so). */
static void *signal_during_the_wait(void *arg) {
  signaller *s = arg;
  rig_wait until = rig_wait_begin(RIG_HANG_S);
  bool asleep = false;
  while (!(asleep = asleep_in_the_wait(s)) && rig_wait_more(&until)) {
  }
  /* As seen: a waiter that wakes to progress UCX's worker (TCP) may be
   * running again a moment later, inside the same wait. */
  s->during = asleep;
  s->at = lost_now_s();
  kill(s->pid, s->sig);
  return NULL;
}

int main(int argc, char **argv) {
  int rank, sig, pids[2];
  rig_job *job = lost_start(&argc, &argv, &rank, &sig, pids);
  if (!job) return 2;
  rig_error err;
  if (rank != 0) {
    rig_job_serve(job, &err);
    rig_job_close(job, &err);
    MPI_Finalize();
    return 0;
  }
  size_t len = 0;
  void *kernels = lost_read_file(getenv("RIG_TEST_KERNELS"), &len);
  if (!kernels) {
    printf("no kernels at $RIG_TEST_KERNELS\n");
    fflush(stdout);
    _exit(2);
  }
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, rig_host_isa());
  rig_desc_add_image(d, 0, kernels, len);
  uint64_t seconds = 60;
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_submit_add_launch(d, s, 0, "pause_s", &seconds, sizeof seconds, rig_desc_fixed(1),
                             rig_desc_fixed(1));
  rig_device *host = rig_job_device(job, 1, 0);
  rig_program *p;
  if (rig_program_load(d, &host, 1, NULL, &p, &err) != RIG_OK) {
    printf("load: %s\n", err.message);
    fflush(stdout);
    _exit(2);
  }
  size_t npoints;
  rig_point *points = rig_program_step_points(p, &npoints);
  rig_frame f = {NULL, 0, NULL, 0, points, npoints};
  rig_point ends[4];
  size_t nends = 0;
  if (rig_program_run(p, &f, NULL, 0, ends, &nends, &err) != RIG_OK) {
    printf("run: %s\n", err.message);
    fflush(stdout);
    _exit(2);
  }
  signaller sg = {.pid = (pid_t)pids[1], .waiter = rig_thread_self(), .sig = sig};
  pthread_t th;
  pthread_create(&th, NULL, signal_during_the_wait, &sg);
  atomic_store(&sg.waiting, true);
  rig_status st = rig_point_wait(ends[0], &err);
  double ended = lost_now_s();
  pthread_join(th, NULL);
  if (sg.during)
    printf("signalled during the wait\n");
  else
    printf("signalled, the wait not seen asleep within %.0f s\n", RIG_HANG_S);
  if (st == RIG_OK)
    printf("ended after %.2f s: reached\n", ended - sg.at);
  else
    printf("ended after %.2f s: %s\n", ended - sg.at, err.message);
  fflush(stdout);
  rig_job_close(job, &err);
  printf("closed: %s\n", err.message);
  fflush(stdout);
  if (sig == SIGSTOP) kill((pid_t)pids[1], SIGKILL);
  _exit(0);
}
