/* The MPI side of test_rail_lost's small-host tests (run as `mpirun -n 2
 * rail_room BYTES RUNS`, in a namespace whose /dev/shm is small): ranks 0
 * and 1 connect rail 1, one transfer of BYTES from rank 0 to rank 1 and
 * an 8-byte acknowledgement back. Rank 0 writes run r's words (word i is
 * r * 131 + i) and makes them ready, paced by the acknowledgements; rank
 * 1 waits for each run's arrived count and checks 200 words spread over
 * it. It prints one line:
 *
 *   refused: <why>                 the rail was not made (rank 0's reason)
 *   checked 1600 words, 0 stale    rank 1, after every run
 *
 * A wait that gives up (30 s) says so and counts its run's words stale. */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lost.h"
#include "rig/rig_job.h"

#define WORDS 200

static bool wait_count(const rig_rail_end *e, size_t at, uint64_t c) {
  _Atomic uint64_t *count = (_Atomic uint64_t *)((unsigned char *)rig_buffer_host(e->counts) + at);
  double deadline = lost_now_s() + 30;
  while (atomic_load_explicit(count, memory_order_acquire) < c)
    if (lost_now_s() > deadline)
      return false;
    else
      sched_yield();
  return true;
}

static void produce(const rig_rail_end *e, uint64_t bytes, uint64_t runs) {
  uint64_t copy = rig_rail_copy_bytes(&(rig_rail_transfer){0, 0, (int64_t)bytes}, 1, false);
  for (uint64_t r = 0; r < runs; r++) {
    /* Copy r % 2 was last read in run r - 2: its acknowledgement first. */
    if (r >= 2 && !wait_count(e, RIG_RAIL_ARRIVED_AT, r - 1)) break;
    uint64_t *w = (uint64_t *)((unsigned char *)rig_buffer_host(e->outbound) + (r % 2) * copy);
    for (uint64_t i = 0; i < bytes / 8; i++) w[i] = r * 131 + i;
    e->ready(rig_buffer_host(e->counts), r + 1);
  }
}

static void consume(const rig_rail_end *e, uint64_t bytes, uint64_t runs) {
  uint64_t copy = rig_rail_copy_bytes(&(rig_rail_transfer){0, 0, (int64_t)bytes}, 1, true);
  uint64_t checked = 0, stale = 0, words = bytes / 8;
  for (uint64_t r = 0; r < runs; r++) {
    bool came = wait_count(e, RIG_RAIL_ARRIVED_AT, r + 1);
    if (!came) printf("run %llu never arrived\n", (unsigned long long)r);
    const uint64_t *w =
        (const uint64_t *)((const unsigned char *)rig_buffer_host(e->inbound) + (r % 2) * copy);
    for (uint64_t k = 0; k < WORDS; k++) {
      uint64_t i = k * (words / WORDS);
      checked++;
      stale += !came || w[i] != r * 131 + i;
    }
    if (!came) break;
    if (r >= 2 && !wait_count(e, RIG_RAIL_SENT_AT, r - 1)) break;
    e->ready(rig_buffer_host(e->counts), r + 1);
  }
  printf("checked %llu words, %llu stale\n", (unsigned long long)checked,
         (unsigned long long)stale);
}

int main(int argc, char **argv) {
  int provided, rank;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  uint64_t bytes = argc > 2 ? strtoull(argv[1], NULL, 10) : 0,
           runs = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
  if (bytes < 8 * WORDS || runs < 1) {
    if (rank == 0) printf("usage: rail_room BYTES RUNS (BYTES >= %d)\n", 8 * WORDS);
    MPI_Finalize();
    return 2;
  }
  rig_rail_transfer data[1] = {{0, 0, (int64_t)bytes}}, ack[1] = {{0, 0, 8}};
  rig_rail *r = NULL;
  rig_error err;
  rig_status st = rank == 0 ? rig_rail_connect(MPI_COMM_WORLD, 1, 1, data, 1, ack, 1, &r, &err)
                            : rig_rail_connect(MPI_COMM_WORLD, 0, 1, ack, 1, data, 1, &r, &err);
  if (st != RIG_OK) {
    if (rank == 0) printf("refused: %s\n", err.message);
  } else if (rank == 0) {
    produce(rig_rail_end_of(r), bytes, runs);
  } else {
    consume(rig_rail_end_of(r), bytes, runs);
  }
  fflush(stdout);
  rig_rail_release(r);
  MPI_Finalize();
  return st == RIG_OK ? 0 : 1;
}
