/* Host bytes into and out of a buffer, whatever memory it is: directly
 * where the host addresses it, else through a pinned staging buffer and one
 * copy on a device that reaches both. */
#include <string.h>

#include "core_internal.h"

static rig_status check_range(const rig_buffer *b, uint64_t offset, size_t len, rig_error *err) {
  if (offset > b->length || len > b->length - offset)
    return rig_error_set(err, RIG_EINVAL, "%zu bytes at %llu outside its %llu bytes", len,
                         (unsigned long long)offset, (unsigned long long)b->length);
  return RIG_OK;
}

/* Copies len bytes between the host and b at offset; `in` writes b. */
static rig_status host_copy(rig_buffer *b, uint64_t offset, void *bytes, size_t len, bool in,
                            rig_error *err) {
  rig_status st = check_range(b, offset, len, err);
  if (st == RIG_OK && in && b->access == RIG_ACCESS_READ)
    st = rig_error_set(err, RIG_EINVAL, "a write to read-only memory");
  if (st == RIG_OK) st = rig_buffer_wait(b, in ? RIG_ACCESS_READ_WRITE : RIG_ACCESS_READ, err);
  if (st != RIG_OK || len == 0) return st;
  unsigned char *host = rig_buffer_host(b);
  if (host) {
    if (in)
      memcpy(host + offset, bytes, len);
    else
      memcpy(bytes, host + offset, len);
    return RIG_OK;
  }
  rig_buffer *stage;
  st = rig_buffer_create(rig_host(), RIG_KIND_PINNED, len, &stage, err);
  if (st != RIG_OK) return st;
  rig_point done = RIG_POINT_REACHED;
  if (in) {
    memcpy(rig_buffer_host(stage), bytes, len);
    st = rig_buffer_copy_submit(stage, 0, b, offset, len, NULL, 0, &done, err);
  } else {
    st = rig_buffer_copy_submit(b, offset, stage, 0, len, NULL, 0, &done, err);
  }
  if (st == RIG_OK) st = rig_point_wait(done, err);
  if (st == RIG_OK && !in) memcpy(bytes, rig_buffer_host(stage), len);
  rig_buffer_release(stage);
  return st;
}

rig_status rig_buffer_write(rig_buffer *b, uint64_t offset, const void *bytes, size_t len,
                            rig_error *err) {
  return host_copy(b, offset, (void *)bytes, len, true, err);
}

rig_status rig_buffer_read(rig_buffer *b, uint64_t offset, void *bytes, size_t len,
                           rig_error *err) {
  return host_copy(b, offset, bytes, len, false, err);
}
