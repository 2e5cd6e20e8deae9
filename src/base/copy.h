/* copy.h: a copy of many bytes into memory another process maps (a rail's
 * transfer into its peer's inbound area). Private to librig. */
#ifndef RIG_BASE_COPY_H
#define RIG_BASE_COPY_H

#include <stddef.h>
#include <string.h>

/* From this many bytes a copy is a string move: on x86-64 `rep movsb`
 * moved 64 MiB into a shared mapping 1.3-1.5x faster than glibc's memcpy
 * on the development machine (docs/rails.md, "The engine"), as UCX's own
 * copy does; below it, memcpy. */
#define RIG_COPY_BULK_MIN (256u << 10)

static inline void rig_copy_bulk(void *dst, const void *src, size_t n) {
#if defined(__x86_64__)
  if (n >= RIG_COPY_BULK_MIN) {
    __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
    return;
  }
#endif
  memcpy(dst, src, n);
}

#endif
