/* Rails under an mpirun of 2 ranks this suite starts, where the host is
 * not what the rail would like:
 *
 * - rail lost: a rail's peer lost while the other end waits
 *   (support/rail_lost.c, with RIG_JOB_SILENCE=3): killed (SIGKILL) or
 *   stopped (SIGSTOP: alive, but silent) once the survivor's wait has
 *   begun, on the default transports and on tcp,self. Every wait on the
 *   survivor's end is released and the job fails naming machine 1, each
 *   after the signal; never a hang (60 s each). How long each took is
 *   printed for the reader, not asserted.
 * - rail room: a host of little shared memory (support/rail_room.c, in a
 *   private IPC and mount namespace: /dev/shm of 64 MiB, SysV segments of
 *   at most 32 MiB, as the user's report had it). A rail that does not fit
 *   is refused before its first run, saying why; one that fits carries
 *   every word. Never stale bytes told as success. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"
#include "rig_test.h"

static void lose_machine_1(const char *how, const char *tls) {
  const char *why = rig_proc_no_survivor();
  if (why && strcmp(how, "kill") == 0) {
    rig_test_skip(CU_get_current_test()->pName, why);
    return;
  }
  rig_proc p = rig_proc_run_lost("RIG_TEST_RAIL_LOST", how, tls, NULL);
  CU_ASSERT_FALSE(p.timed_out);
  int released = -1;
  double released_after = -1, failed_after = -1;
  char cause[512] = "";
  const char *line = strstr(p.out, "released ");
  if (line) sscanf(line, "released %d after %lf s", &released, &released_after);
  line = strstr(p.out, "failed after ");
  if (line) sscanf(line, "failed after %lf s: %511[^\n]", &failed_after, cause);
  /* Released (not given up on after 60 s) and failed, each after the
   * signal: by the loss, not before it. */
  CU_ASSERT_EQUAL(released, 1);
  CU_ASSERT(released_after >= 0);
  CU_ASSERT(failed_after >= 0);
  CU_ASSERT(rig_test_names_machine(cause, 1));
  /* A stopped peer leaves the survivor time to close the job (mpirun ends
   * the job at once when a rank is killed). */
  bool closed = strcmp(how, "kill") == 0 ||
                (strstr(p.out, "closed: machine 1: ") || strstr(p.out, "closed: machine 1 ("));
  CU_ASSERT(closed);
  if (released != 1 || released_after < 0 || failed_after < 0 ||
      !rig_test_names_machine(cause, 1) || !closed || p.timed_out)
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

/* ---- a host of little shared memory -------------------------------------------------- */

/* `mpirun -n 2 rail_room bytes runs` in a namespace of its own whose
 * /dev/shm is 64 MiB and whose SysV segments are capped at 32 MiB. */
static rig_proc run_small_host(const char *bytes, const char *runs) {
  const char *mpiexec = getenv("RIG_TEST_MPIEXEC"), *program = getenv("RIG_TEST_RAIL_ROOM");
  char *argv[] = {"/usr/bin/unshare",
                  "--ipc",
                  "--mount",
                  "/bin/sh",
                  "-c",
                  "mount --make-rprivate / && mount -t tmpfs -o size=64m tmpfs /dev/shm && "
                  "sysctl -qw kernel.shmmax=33554432 && "
                  "exec \"$0\" -n 2 $RIG_TEST_MPIEXEC_FLAGS \"$1\" \"$2\" \"$3\"",
                  (char *)(mpiexec ? mpiexec : "/usr/bin/mpirun"),
                  (char *)(program ? program : "false"),
                  (char *)bytes,
                  (char *)runs,
                  NULL};
  return rig_proc_run(argv, NULL, 120);
}

/* Whether this process may make namespaces (root), and the job's ranks
 * are on this host to share them: said, when not. */
static bool may_make_namespaces(void) {
  if (getenv("RIG_HOSTS")) {
    printf("\n    skipped: the small host is a namespace of this machine; across simulated "
           "hosts each rank has its own host's /dev/shm\n");
    return false;
  }
  if (geteuid() == 0) return true;
  printf("\n    skipped: a namespace of its own needs root\n");
  return false;
}

static void report(const rig_proc *p) {
  fprintf(stderr, "exit %d after %.1f s\n--- stdout\n%s--- stderr\n%s---\n", p->code, p->seconds,
          p->out, p->err);
}

/* 64 MiB a run: 128 MiB of outbound, past half of the 64 MiB. */
static void test_a_rail_shared_memory_cannot_hold_is_refused_before_its_first_run(void) {
  if (!may_make_namespaces()) return;
  rig_proc p = run_small_host("67108864", "8");
  const char *want = "refused: rail 1: its end needs 128 MiB of shared memory, past half of the ";
  const char *line = strstr(p.out, "refused: ");
  bool refused = line && strncmp(line, want, strlen(want)) == 0 &&
                 strstr(line, " /dev/shm has free\n") != NULL;
  CU_ASSERT(refused);
  CU_ASSERT(strstr(p.out, "stale") == NULL);
  CU_ASSERT(p.code != 0 && !p.timed_out);
  if (!refused || strstr(p.out, "stale") || p.code == 0 || p.timed_out) report(&p);
  rig_proc_free(&p);
}

/* 4 MiB a run fits: every word of 8 runs checked, none stale. */
static void test_a_rail_that_fits_a_small_host_carries_every_word(void) {
  if (!may_make_namespaces()) return;
  rig_proc p = run_small_host("4194304", "8");
  bool exact = strstr(p.out, "checked 1600 words, 0 stale\n") != NULL;
  CU_ASSERT(exact);
  CU_ASSERT_EQUAL(p.code, 0);
  if (!exact || p.code != 0) report(&p);
  rig_proc_free(&p);
}

void rig_test_register(void) {
  static CU_TestInfo tests[] = {
      {"a killed peer releases every wait and fails the job naming it",
       test_a_killed_peer_releases_every_wait_and_fails_the_job_naming_it},
      {"a stopped peer releases every wait and fails the job naming it",
       test_a_stopped_peer_releases_every_wait_and_fails_the_job_naming_it},
      CU_TEST_INFO_NULL};
  rig_test_add_suite("rail lost", tests);
  static CU_TestInfo room[] = {
      {"a rail shared memory cannot hold is refused before its first run",
       test_a_rail_shared_memory_cannot_hold_is_refused_before_its_first_run},
      {"a rail that fits a small host carries every word",
       test_a_rail_that_fits_a_small_host_carries_every_word},
      CU_TEST_INFO_NULL};
  rig_test_add_suite("rail room", room);
}
