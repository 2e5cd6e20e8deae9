/* counts.c: fakecuda's call counts and live counts, which tests read to
 * check what a backend called and what it left unfreed. Part of a test
 * double of the CUDA driver API, for the tests only. */
#include <string.h>

#include "fakecuda_internal.h"

pthread_mutex_t fc_lock = PTHREAD_MUTEX_INITIALIZER;

static _Atomic uint64_t counts[FC_IX_COUNT];
static _Atomic int64_t live[FC_LIVE_COUNT];

/* The unversioned names: "cu" and the X-macro's field. */
#define FC_NAME(ret, field, names, params) "cu" #field,
static const char *const count_names[FC_IX_COUNT] = {RIG_CUDA_FUNCTIONS(FC_NAME) "kernel_runs"};
#undef FC_NAME

static const char *const live_names[FC_LIVE_COUNT] = {
    "allocations", "host_allocations", "registrations", "modules", "streams", "graphs", "execs"};

void fc_counted(int ix) {
  atomic_fetch_add(&counts[ix], 1);
}

CUresult fc_ok(int ix) {
  fc_counted(ix);
  return CUDA_SUCCESS;
}

void fc_live_add(enum fc_live_kind kind, int64_t n) {
  atomic_fetch_add(&live[kind], n);
}

uint64_t fakecuda_count(const char *call) {
  for (int i = 0; call && i < FC_IX_COUNT; i++)
    if (strcmp(call, count_names[i]) == 0) return atomic_load(&counts[i]);
  return UINT64_MAX;
}

uint64_t fakecuda_live(const char *what) {
  for (int i = 0; what && i < FC_LIVE_COUNT; i++)
    if (strcmp(what, live_names[i]) == 0) return (uint64_t)atomic_load(&live[i]);
  return UINT64_MAX;
}

void fakecuda_reset_counts(void) {
  for (int i = 0; i < FC_IX_COUNT; i++) atomic_store(&counts[i], 0);
}
