/* The main of suites that run under mpirun: rank 0 runs the CUnit suites;
 * every other rank is an agent that takes part in each job a test starts
 * (rig_test_job_start) and serves it until the test closes it. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>

#include "rig_mpi_test.h"

enum { GO = 1, QUIT = 2, CAUSES = 3, SPMD = 4 };

static const char *filter;

void rig_test_add_suite(const char *name, CU_TestInfo *tests) {
  CU_pSuite s = CU_add_suite(name, NULL, NULL);
  if (!s) exit(2);
  for (CU_TestInfo *t = tests; t->pName; t++) {
    if (filter && !strstr(t->pName, filter)) continue;
    if (!CU_add_test(s, t->pName, t->pTestFunc)) exit(2);
  }
}

void rig_test_skip(const char *test, const char *why) {
  printf("\n  SKIPPED %s: %s\n", test, why);
  fflush(stdout);
}

void rig_test_mismatch(const char *file, int line, rig_status got, const char *got_message,
                       rig_status want, const char *want_message) {
  fprintf(stderr, "%s:%d: got %s \"%s\"\n%*swanted %s \"%s\"\n", file, line, rig_status_name(got),
          got_message, (int)strlen(file) + 5, "", rig_status_name(want), want_message);
}

void *rig_test_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  void *b = malloc(n > 0 ? (size_t)n : 1);
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  if (b) *len = (size_t)n;
  return b;
}

/* A suite without work of its agents' own has none. */
__attribute__((weak)) bool rig_test_agent_spmd(rig_job *job, int which) {
  (void)job;
  (void)which;
  return false;
}

rig_job *rig_test_job_start_spmd(int which) {
  int cmd[2] = {SPMD, which};
  MPI_Bcast(cmd, 2, MPI_INT, 0, MPI_COMM_WORLD);
  rig_job *job = NULL;
  rig_error err;
  if (rig_job_start(MPI_COMM_WORLD, &job, &err) != RIG_OK) {
    fprintf(stderr, "rig_job_start: %s\n", err.message);
    return NULL;
  }
  return job;
}

rig_job *rig_test_job_start(void) {
  int cmd[2] = {GO, 0};
  MPI_Bcast(cmd, 2, MPI_INT, 0, MPI_COMM_WORLD);
  rig_job *job = NULL;
  rig_error err;
  if (rig_job_start(MPI_COMM_WORLD, &job, &err) != RIG_OK) {
    fprintf(stderr, "rig_job_start: %s\n", err.message);
    return NULL;
  }
  return job;
}

/* What each agent's last job's root cause stood for (rig_job_cause). */
static int last_cause;

void rig_test_agent_causes(rig_status *codes) {
  int cmd[2] = {CAUSES, 0}, size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Bcast(cmd, 2, MPI_INT, 0, MPI_COMM_WORLD);
  int *all = calloc((size_t)size, sizeof *all);
  MPI_Gather(&last_cause, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (int r = 0; all && r < size; r++) codes[r] = (rig_status)all[r];
  free(all);
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc > 1) filter = argv[1];
  rig_test_agent_setup(rank);
  if (rank != 0) {
    for (;;) {
      int cmd[2];
      MPI_Bcast(cmd, 2, MPI_INT, 0, MPI_COMM_WORLD);
      if (cmd[0] == CAUSES) {
        MPI_Gather(&last_cause, 1, MPI_INT, NULL, 1, MPI_INT, 0, MPI_COMM_WORLD);
        continue;
      }
      if (cmd[0] != GO && cmd[0] != SPMD) break;
      rig_job *job;
      rig_error err;
      if (rig_job_start(MPI_COMM_WORLD, &job, &err) != RIG_OK) {
        fprintf(stderr, "agent %d: rig_job_start: %s\n", rank, err.message);
        continue;
      }
      if (cmd[0] == SPMD && rig_test_agent_spmd(job, cmd[1])) continue; /* it closed the job */
      rig_job_serve(job, &err);
      last_cause = (int)rig_job_cause(job, NULL);
      rig_job_close(job, &err);
    }
    MPI_Finalize();
    return 0;
  }
  unsigned failed = 1;
  if (CU_initialize_registry() == CUE_SUCCESS) {
    rig_test_register();
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    failed = CU_get_number_of_tests_failed() + CU_get_number_of_failures();
    if (CU_get_number_of_tests_run() == 0 && !filter) failed = 1;
    CU_cleanup_registry();
  }
  int cmd[2] = {QUIT, 0};
  MPI_Bcast(cmd, 2, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed ? 1 : 0;
}
