/* The allocation count of alloc_count.h. The allocation functions defined
 * here take the place of the C library's in the whole binary (its own
 * definitions win over the shared library's), count while counting is on,
 * and hand over to glibc's own. */
#include "alloc_count.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

static _Atomic long allocations;
static _Atomic bool counting;

#if RIG_COUNTS_ALLOCATIONS
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static void count(void) {
  if (atomic_load_explicit(&counting, memory_order_relaxed))
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
}

void *malloc(size_t n) {
  count();
  return __libc_malloc(n);
}

void *calloc(size_t n, size_t m) {
  count();
  return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n) {
  count();
  return __libc_realloc(p, n);
}

int posix_memalign(void **p, size_t alignment, size_t n) {
  count();
  if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void *q = __libc_memalign(alignment, n);
  if (!q) return ENOMEM;
  *p = q;
  return 0;
}
#endif

void rig_alloc_counting(bool on) {
  atomic_store(&counting, on);
}

long rig_alloc_count(void) {
  return atomic_load(&allocations);
}

void rig_alloc_reset(void) {
  atomic_store(&allocations, 0);
}
