/* Far copies (far_copy.h): the windows of the controller's memory an agent may
 * reach, and the copies themselves. */
#include "far_copy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "route/route.h"

/* Far copies in pieces of at most this, staged where the agent's memory is
 * not the host's. */
#define FAR_PIECE (8u << 20)

/* One process_vm_readv or writev, to the end (it may move fewer bytes). */
static bool far_move(int pid, bool in, unsigned char *here, uint64_t there, size_t n) {
  while (n) {
    struct iovec local = {here, n}, remote = {(void *)(uintptr_t)there, n};
    ssize_t got = in ? process_vm_readv(pid, &local, 1, &remote, 1, 0)
                     : process_vm_writev(pid, &local, 1, &remote, 1, 0);
    if (got <= 0) return false;
    here += got;
    there += (uint64_t)got;
    n -= (size_t)got;
  }
  return true;
}

rig_status rig_far_open(express *ex, uint64_t address, uint64_t length, const void *key,
                        size_t keylen, rig_error *err) {
  ex_window w = {address, length, NULL};
  if (keylen) {
    if (!ex->to_controller)
      return rig_error_set(err, RIG_EINVAL, "a window's key, and no peer to reach it");
    rig_status st = rig_peer_key_unpack(ex->to_controller, key, keylen, &w.key, err);
    if (st != RIG_OK) return st;
  }
  struct ex_windows *t = &ex->windows;
  pthread_mutex_lock(&t->lock);
  bool kept = rig_array_push(&t->at, &w);
  pthread_mutex_unlock(&t->lock);
  if (kept) return RIG_OK;
  rig_peer_key_release(w.key);
  return rig_error_set(err, RIG_ENOMEM, "out of memory for a window of far copies");
}

void rig_far_close(express *ex, uint64_t address, uint64_t length) {
  struct ex_windows *t = &ex->windows;
  rig_peer_key *key = NULL;
  pthread_mutex_lock(&t->lock);
  for (size_t i = 0; i < t->at.n; i++) {
    const ex_window *w = rig_array_at(&t->at, i);
    if (w->address == address && w->length == length) {
      key = w->key;
      rig_array_remove(&t->at, i);
      break;
    }
  }
  pthread_mutex_unlock(&t->lock);
  rig_peer_key_release(key);
}

void rig_far_free(express *ex) {
  struct ex_windows *t = &ex->windows;
  for (size_t i = 0; i < t->at.n; i++)
    rig_peer_key_release(((ex_window *)rig_array_at(&t->at, i))->key);
  rig_array_free(&t->at);
}

/* The window [address, address + length) lies inside (its key), or false. */
static bool in_window(express *ex, uint64_t address, uint64_t length, rig_peer_key **key) {
  struct ex_windows *t = &ex->windows;
  bool inside = false;
  pthread_mutex_lock(&t->lock);
  for (size_t i = 0; i < t->at.n && !inside; i++) {
    const ex_window *w = rig_array_at(&t->at, i);
    inside =
        address >= w->address && length <= w->length && address - w->address <= w->length - length;
    if (inside) *key = w->key;
  }
  pthread_mutex_unlock(&t->lock);
  return inside;
}

rig_status rig_far_by_cma(express *ex, bool in, unsigned char *here, uint64_t there, size_t n,
                          rig_error *err) {
  if (!far_move(ex->controller, in, here, there, n))
    return rig_error_set(err, RIG_ESYS, "a copy %s the controller's memory: %s",
                         in ? "from" : "into", strerror(errno));
  return RIG_OK;
}

static const uint64_t far_probe = UINT64_C(0x726166676972); /* "rigfar" */

const void *rig_far_probe_word(void) {
  return &far_probe;
}

bool rig_far_reaches(int pid, uint64_t probe_at) {
  uint64_t probe = 0;
  return far_move(pid, true, (unsigned char *)&probe, probe_at, sizeof probe) && probe == far_probe;
}

rig_status rig_far_copy(express *ex, bool in, rig_buffer *b, uint64_t offset, uint64_t address,
                        uint64_t length, rig_error *err) {
  rig_peer_key *key = NULL;
  if (!in_window(ex, address, length, &key))
    return rig_error_set(err, RIG_EREFUSED,
                         "a far copy of %llu bytes at 0x%llx, outside the controller's memory "
                         "open to this machine",
                         (unsigned long long)length, (unsigned long long)address);
  if (offset > rig_buffer_length(b) || length > rig_buffer_length(b) - offset)
    return rig_error_set(err, RIG_EREFUSED, "%llu bytes at %llu past its memory",
                         (unsigned long long)length, (unsigned long long)offset);
  rig_status st = rig_buffer_wait(b, in ? RIG_ACCESS_READ_WRITE : RIG_ACCESS_READ, err);
  if (st != RIG_OK) return st;
  unsigned char *host = rig_buffer_host(b);
  if (host) return ex->route->far_move(ex, in, key, host + offset, address, length, err);
  unsigned char *stage = malloc(length < FAR_PIECE ? (length ? length : 1) : FAR_PIECE);
  if (!stage) return rig_error_set(err, RIG_ENOMEM, "out of memory for a copy");
  for (uint64_t at = 0; st == RIG_OK && at < length; at += FAR_PIECE) {
    size_t n = length - at < FAR_PIECE ? (size_t)(length - at) : FAR_PIECE;
    if (!in) st = rig_buffer_read(b, offset + at, stage, n, err);
    if (st == RIG_OK) st = ex->route->far_move(ex, in, key, stage, address + at, n, err);
    if (st == RIG_OK && in) st = rig_buffer_write(b, offset + at, stage, n, err);
  }
  free(stage);
  return st;
}
