/* bench_remote's floors done by hand with UCX between ranks 0 and 1 of
 * MPI_COMM_WORLD (outside any job, a context and worker of their own):
 * the put + atomic round trip, and 64 MiB put there and got back. */
#ifndef RIG_BENCH_REMOTE_FLOOR_H
#define RIG_BENCH_REMOTE_FLOOR_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define FLOOR_BIG (64u << 20)

/* Collective between ranks 0 and 1 of comm. */
void remote_floor_open(MPI_Comm comm, int rank);
void remote_floor_close(void);
/* Rank 0: one round trip (16 bytes put, fence, add on the peer's count;
 * the peer answers the same), in ns. Rank 1: answers n of them. */
double remote_floor_trip(void);
void remote_floor_answer(size_t n);
/* Rank 0: FLOOR_BIG bytes put into rank 1's region and got back, each
 * flushed, in ns. Rank 1: progresses until n of them are done. */
double remote_floor_copy(void);
void remote_floor_serve_copies(size_t n);

#endif
