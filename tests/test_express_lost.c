/* An agent lost while the controller waits on a proxy's point
 * (support/express_lost.c, under an mpirun of 2 ranks this suite starts,
 * with RIG_JOB_SILENCE=3): killed (SIGKILL) in the middle of a run, or
 * stopped (SIGSTOP: alive, but silent), once the controller is seen asleep
 * in its wait, on the default transports (the agent would report by
 * shared memory) and on tcp,self. The wait ends, after the signal, with
 * the job's cause, naming machine 1; never a hang (the run's 90 s). How
 * long it took is printed for the reader, not asserted. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"
#include "rig_test.h"

static void lose_machine_1(const char *how, const char *tls) {
  const char *why = rig_proc_no_survivor();
  if (why && strcmp(how, "kill") == 0) {
    rig_test_skip(CU_get_current_test()->pName, why);
    return;
  }
  char kernels[1024];
  const char *k = getenv("RIG_TEST_KERNELS");
  snprintf(kernels, sizeof kernels, "RIG_TEST_KERNELS=%s", k ? k : "");
  rig_proc p = rig_proc_run_lost("RIG_TEST_EXPRESS_LOST", how, tls, kernels);
  CU_ASSERT_FALSE(p.timed_out);
  bool during = strstr(p.out, "signalled during the wait\n") != NULL;
  CU_ASSERT(during);
  double ended_after = -1;
  char cause[512] = "";
  const char *line = strstr(p.out, "ended after ");
  bool ended = line && sscanf(line, "ended after %lf s: %511[^\n]", &ended_after, cause) == 2;
  CU_ASSERT(ended && ended_after >= 0);
  CU_ASSERT(rig_test_names_machine(cause, 1));
  bool closed = strcmp(how, "kill") == 0 ||
                (strstr(p.out, "closed: machine 1: ") || strstr(p.out, "closed: machine 1 ("));
  CU_ASSERT(closed);
  if (!during || !ended || ended_after < 0 || !rig_test_names_machine(cause, 1) || !closed ||
      p.timed_out)
    fprintf(stderr, "%s on %s: exit %d after %.1f s\n--- stdout\n%s--- stderr\n%s---\n", how,
            tls ? tls : "the default transports", p.code, p.seconds, p.out, p.err);
  else
    printf("\n    %s, %s: the wait ended after %.2f s: %s\n", how, tls ? tls : "default",
           ended_after, cause);
  rig_proc_free(&p);
}

static void test_a_killed_agent_ends_the_wait_with_the_jobs_cause(void) {
  lose_machine_1("kill", NULL);
  lose_machine_1("kill", "tcp,self");
}

static void test_a_stopped_agent_ends_the_wait_with_the_jobs_cause(void) {
  lose_machine_1("stop", NULL);
  lose_machine_1("stop", "tcp,self");
}

void rig_test_register(void) {
  static CU_TestInfo tests[] = {{"a killed agent ends the wait with the job's cause",
                                 test_a_killed_agent_ends_the_wait_with_the_jobs_cause},
                                {"a stopped agent ends the wait with the job's cause",
                                 test_a_stopped_agent_ends_the_wait_with_the_jobs_cause},
                                CU_TEST_INFO_NULL};
  rig_test_add_suite("express lost", tests);
}
