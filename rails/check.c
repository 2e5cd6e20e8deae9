/* A rail's transfers, checked, and the sizes of its areas. */
#include <stdio.h>

#include "rails_internal.h"

static rig_status check_direction(const char *name, const rig_rail_transfer *t, size_t n,
                                  rig_error *err) {
  for (size_t i = 0; i < n; i++) {
    const rig_rail_transfer *x = &t[i];
    if (x->length < 1)
      return rig_error_set(err, RIG_EINVAL, "%s %zu: a length of %lld", name, i,
                           (long long)x->length);
    if (x->src < 0 || x->dst < 0)
      return rig_error_set(err, RIG_EINVAL, "%s %zu: a negative offset (%lld)", name, i,
                           (long long)(x->src < 0 ? x->src : x->dst));
    /* Each term first, so that the sums cannot overflow. */
    if (x->src > RIG_RAIL_LIMIT || x->dst > RIG_RAIL_LIMIT || x->length > RIG_RAIL_LIMIT ||
        x->src > RIG_RAIL_LIMIT - x->length || x->dst > RIG_RAIL_LIMIT - x->length)
      return rig_error_set(err, RIG_EINVAL, "%s %zu: %lld bytes at %lld to %lld end past 2^60",
                           name, i, (long long)x->length, (long long)x->src, (long long)x->dst);
  }
  return RIG_OK;
}

rig_status rig_rail_check(const rig_rail_transfer *send, size_t nsend,
                          const rig_rail_transfer *receive, size_t nreceive, rig_error *err) {
  if (nsend == 0 && nreceive == 0)
    return rig_error_set(err, RIG_EINVAL, "a rail with no transfer either way");
  if ((nsend && !send) || (nreceive && !receive))
    return rig_error_set(err, RIG_EINVAL, "a rail's transfers are NULL");
  rig_status st = check_direction("send", send, nsend, err);
  return st == RIG_OK ? check_direction("receive", receive, nreceive, err) : st;
}

uint64_t rig_rail_copy_bytes(const rig_rail_transfer *t, size_t n, bool inbound) {
  uint64_t most = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t end = (uint64_t)(inbound ? t[i].dst : t[i].src) + (uint64_t)t[i].length;
    if (end > most) most = end;
  }
  return (most + RIG_RAIL_COPY_ALIGN - 1) / RIG_RAIL_COPY_ALIGN * RIG_RAIL_COPY_ALIGN;
}

uint64_t rig_rail_end_bytes(const rig_rail_transfer *send, size_t nsend,
                            const rig_rail_transfer *receive, size_t nreceive) {
  /* Checked transfers end below 2^60: no sum overflows. */
  return 2 * rig_rail_copy_bytes(send, nsend, false) +
         2 * rig_rail_copy_bytes(receive, nreceive, true) + RAIL_PAGE;
}
