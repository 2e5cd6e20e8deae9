/* The loss tests' MPI programs' shared start (lost.h). */
#include "lost.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double lost_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

rig_job *lost_start(int *argc, char ***argv, int *rank, int *sig, int pids[2]) {
  /* As progrun does, and an application that outlives a peer must: a
   * socket to a killed peer is EPIPE to UCX, not a SIGPIPE (MPICH leaves
   * SIGPIPE as it is; Open MPI's launcher happens to hide it). */
  signal(SIGPIPE, SIG_IGN);
  int provided;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  *sig = *argc > 1 && strcmp((*argv)[1], "stop") == 0 ? SIGSTOP : SIGKILL;
  int pid = (int)getpid();
  pids[0] = pids[1] = 0;
  MPI_Allgather(&pid, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
  rig_job *job;
  rig_error err;
  if (rig_job_start(MPI_COMM_WORLD, &job, &err) != RIG_OK) {
    printf("rig_job_start: %s\n", err.message);
    return NULL;
  }
  return job;
}

void *lost_read_file(const char *path, size_t *len) {
  FILE *f = path ? fopen(path, "rb") : NULL;
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
  *len = (size_t)n;
  return b;
}
