/* A test-only driver: a queue of works that runs only when the test drives
 * it (rig_polled_run) or when a wait sleeps on one of its points (unless its
 * gate is closed). It logs every call, and can fail the next submit, fault
 * (lose the device), refuse room, or wait for others in its queue or not. */
#ifndef RIG_POLLED_H
#define RIG_POLLED_H

#include "rig/rig_driver.h"

typedef struct rig_polled rig_polled;

typedef struct rig_polled_options {
  const char *arch;     /* default "polled" */
  bool can_wait;        /* its queue waits for other devices' points itself */
  bool runs_words;      /* accepts WORDS parts (run as nothing) */
  uint32_t max_threads; /* what its functions' entries say (0: unknown) */
} rig_polled_options;

/* A new polled device named "polled:<n>" (a fresh n each call). */
rig_status rig_polled_open(const rig_polled_options *opt, rig_device **dev, rig_polled **p,
                           rig_error *err);

/* Runs up to n queued works in order (each after its in-queue waits);
 * returns how many ran. */
size_t rig_polled_run(rig_polled *p, size_t n);
size_t rig_polled_queued(rig_polled *p);

/* The next submit fails with code (RIG_OK: none does). */
void rig_polled_fail_next_submit(rig_polled *p, rig_status code);
/* A driver fault: the device is lost with this reason; its queue dropped. */
void rig_polled_fault(rig_polled *p, const char *reason);
/* Allocations fail with RIG_ENOMEM while refused. */
void rig_polled_refuse_room(rig_polled *p, bool refuse);
/* While closed, waits sleeping on the device do not drive its queue. */
void rig_polled_gate(rig_polled *p, bool closed);
/* How many threads have slept on its points so far (its sleep hook ran on
 * them): what a test sees to know that a wait on the device has begun. */
size_t rig_polled_sleepers(rig_polled *p);

/* The log, one line per call: "alloc 64", "free 64", "image", "submit 3
 * waits cpu:0@2 host@5", "copy 4 waits", "run 3", "fault why". */
const char *rig_polled_log(rig_polled *p);
void rig_polled_log_clear(rig_polled *p);
/* Whether line `line` is in the log, and where (its index), or -1. */
long rig_polled_log_find(rig_polled *p, const char *line);

#endif
