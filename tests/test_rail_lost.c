/* A rail's peer lost while the other end waits (support/rail_lost.c, under an
 * mpirun of 2 ranks this suite starts, with RIG_JOB_SILENCE=3): killed
 * (SIGKILL) or stopped (SIGSTOP: alive, but silent), on the default
 * transports and on tcp,self. Every wait on the survivor's end is
 * released and the job fails naming machine 1, each within 15 s of the
 * signal; never a hang. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"
#include "rig_test.h"

static void lose_machine_1(const char *how, const char *tls) {
  rig_proc p = rig_proc_run_lost("RIG_TEST_RAIL_LOST", how, tls, NULL);
  CU_ASSERT_FALSE(p.timed_out);
  int released = -1;
  double released_after = 99, failed_after = 99;
  char cause[512] = "";
  const char *line = strstr(p.out, "released ");
  if (line) sscanf(line, "released %d after %lf s", &released, &released_after);
  line = strstr(p.out, "failed after ");
  if (line) sscanf(line, "failed after %lf s: %511[^\n]", &failed_after, cause);
  CU_ASSERT_EQUAL(released, 1);
  CU_ASSERT(released_after < 15);
  CU_ASSERT(failed_after < 15);
  CU_ASSERT(strncmp(cause, "machine 1: ", 11) == 0);
  /* A stopped peer leaves the survivor time to close the job (mpirun ends
   * the job at once when a rank is killed). */
  bool closed = strcmp(how, "kill") == 0 || strstr(p.out, "closed: machine 1: ");
  CU_ASSERT(closed);
  if (released != 1 || released_after >= 15 || failed_after >= 15 ||
      strncmp(cause, "machine 1: ", 11) != 0 || !closed || p.timed_out)
    fprintf(stderr, "%s on %s: exit %d after %.1f s\n--- stdout\n%s--- stderr\n%s---\n", how,
            tls ? tls : "the default transports", p.code, p.seconds, p.out, p.err);
  else
    printf("\n    %s, %s: released after %.2f s, failed after %.2f s: %s\n", how,
           tls ? tls : "default", released_after, failed_after, cause);
  rig_proc_free(&p);
}

static void test_a_killed_peer_releases_every_wait_and_fails_the_job_naming_it(void) {
  lose_machine_1("kill", NULL);
  lose_machine_1("kill", "tcp,self");
}

static void test_a_stopped_peer_releases_every_wait_and_fails_the_job_naming_it(void) {
  lose_machine_1("stop", NULL);
  lose_machine_1("stop", "tcp,self");
}

void rig_test_register(void) {
  static CU_TestInfo tests[] = {
      {"a killed peer releases every wait and fails the job naming it",
       test_a_killed_peer_releases_every_wait_and_fails_the_job_naming_it},
      {"a stopped peer releases every wait and fails the job naming it",
       test_a_stopped_peer_releases_every_wait_and_fails_the_job_naming_it},
      CU_TEST_INFO_NULL};
  rig_test_add_suite("rail lost", tests);
}
