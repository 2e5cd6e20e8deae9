/* The MPI side of test_express_lost (run as `mpirun -n 2 express_lost kill`
 * or `... stop`, with RIG_TEST_KERNELS): the controller runs a program on
 * machine 1 whose host step sleeps 60 s, and waits on its end (a proxy's
 * point, which the agent would report by shared memory); meanwhile it
 * kills (SIGKILL) or stops (SIGSTOP) machine 1's process. It prints how
 * long the wait took to end and with what:
 *
 *   ended after 3.1 s: machine 1: silent for 3 s
 *   closed: machine 1: ...
 *
 * It leaves with _exit once closed: MPI_Finalize would wait on the lost
 * rank. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lost.h"
#include "rig/rig_job.h"
#include "rig/rig_program.h"

typedef struct signaller {
  pid_t pid;
  int sig;
  double at;
} signaller;

/* Signals machine 1 once the wait below has surely begun. */
static void *signal_later(void *arg) {
  signaller *s = arg;
  struct timespec ts = {0, 300 * 1000 * 1000};
  nanosleep(&ts, NULL);
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
  signaller sg = {(pid_t)pids[1], sig, 0};
  pthread_t th;
  pthread_create(&th, NULL, signal_later, &sg);
  rig_status st = rig_point_wait(ends[0], &err);
  double ended = lost_now_s();
  pthread_join(th, NULL);
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
