/* rig_rail_connect: a rail between two ranks of an application's own
 * communicator, without a controller. Each rank makes its end, the two
 * exchange their ends' addresses over MPI, attach, and say whether they
 * did, so that both return the same status. The rail thread progresses on
 * its own, so the blocking exchanges here cannot starve UCX. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "rig/rig_job.h"

#define RAIL_TAG 7202

/* Sends mine and receives the peer's 64-bit word. */
static rig_status swap_word(MPI_Comm comm, int peer, int64_t mine, int64_t *theirs,
                            rig_error *err) {
  return rig_mpi_status(MPI_Sendrecv(&mine, 1, MPI_INT64_T, peer, RAIL_TAG, theirs, 1, MPI_INT64_T,
                                     peer, RAIL_TAG, comm, MPI_STATUS_IGNORE),
                        "MPI_Sendrecv", err);
}

rig_status rig_rail_connect(MPI_Comm comm, int peer, int64_t id, const rig_rail_transfer *send,
                            size_t nsend, const rig_rail_transfer *receive, size_t nreceive,
                            rig_rail **out, rig_error *err) {
  int rank = 0, size = 0;
  rig_status st = rig_mpi_status(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank", err);
  if (st == RIG_OK) st = rig_mpi_status(MPI_Comm_size(comm, &size), "MPI_Comm_size", err);
  if (st != RIG_OK) return st;
  /* Refusals that the peer makes too, before any exchange. */
  if (peer == rank)
    return rig_error_set(err, RIG_EINVAL, "rail %lld: between rank %d and itself", (long long)id,
                         rank);
  if (peer < 0 || peer >= size)
    return rig_error_set(err, RIG_EINVAL, "rail %lld: rank %d is not in a communicator of %d",
                         (long long)id, peer, size);
  rig_rail *r = NULL;
  st = rig_rail_create(id, send, nsend, receive, nreceive, &r, err);
  /* The address's length, or -1: the peer then fails too, instead of
   * waiting for bytes that never come. */
  const void *address = NULL;
  size_t len = 0;
  if (st == RIG_OK) rig_rail_address(r, &address, &len);
  int64_t theirs = 0;
  rig_error e;
  rig_status ex = swap_word(comm, peer, st == RIG_OK ? (int64_t)len : -1, &theirs, &e);
  if (ex != RIG_OK || st != RIG_OK) {
    rig_rail_release(r);
    if (st == RIG_OK && err) *err = e;
    return st != RIG_OK ? st : ex;
  }
  if (theirs < 0 || theirs > (1 << 20)) {
    rig_rail_release(r);
    return rig_error_set(err, RIG_EINVAL, "rail %lld: rank %d could not make its end",
                         (long long)id, peer);
  }
  unsigned char *peer_address = malloc(theirs ? (size_t)theirs : 1);
  if (!peer_address) {
    /* The peer's bytes still come: a communicator left with a message in
     * flight would break the application's next receive. */
    rig_rail_release(r);
    return rig_error_set(err, RIG_ENOMEM, "out of memory for rail %lld", (long long)id);
  }
  st = rig_mpi_status(MPI_Sendrecv(address, (int)len, MPI_BYTE, peer, RAIL_TAG, peer_address,
                                   (int)theirs, MPI_BYTE, peer, RAIL_TAG, comm, MPI_STATUS_IGNORE),
                      "MPI_Sendrecv", err);
  if (st == RIG_OK) st = rig_rail_attach(r, peer_address, (size_t)theirs, err);
  free(peer_address);
  /* Both attached, or both fail. */
  int64_t peer_ok = 0;
  ex = swap_word(comm, peer, st == RIG_OK, &peer_ok, &e);
  if (st == RIG_OK && ex != RIG_OK) {
    st = ex;
    if (err) *err = e;
  } else if (st == RIG_OK && !peer_ok) {
    st = rig_error_set(err, RIG_EINVAL, "rail %lld: rank %d could not attach its end",
                       (long long)id, peer);
  }
  if (st != RIG_OK) {
    rig_rail_release(r);
    return st;
  }
  *out = r;
  return RIG_OK;
}
