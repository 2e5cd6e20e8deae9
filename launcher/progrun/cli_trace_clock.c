/* Another machine's clock as the runs bound it (cli_trace.h): the pings
 * before the runs give its offset within half their shortest round trip,
 * tens of microseconds on a quiet host and milliseconds on a busy one;
 * every run is one more exchange, and there are many. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_trace.h"

/* The machine a proxy device's name gives ("host@rank2": 2), or 0. */
static size_t machine_of(const char *name) {
  const char *at = name ? strstr(name, "@rank") : NULL;
  unsigned long m = 0;
  char end;
  while (at && strstr(at + 1, "@rank")) at = strstr(at + 1, "@rank");
  if (!at || sscanf(at + 5, "%lu%c", &m, &end) != 1) return 0;
  return (size_t)m;
}

static int by_run(const void *a, const void *b) {
  const cli_handover *x = a, *y = b;
  return x->run < y->run ? -1 : x->run > y->run;
}

bool cli_trace_handovers(const rig_trace *t0, size_t m, cli_handover **out, size_t *n) {
  *out = NULL;
  *n = 0;
  size_t count = rig_trace_count(t0), k = 0;
  const rig_trace_event *ev = rig_trace_events(t0);
  for (size_t i = 0; i < count; i++)
    if (ev[i].kind == RIG_TRACE_HANDOVER && machine_of(rig_trace_track(t0, ev[i].track)) == m) k++;
  if (!k || m == 0) return true;
  cli_handover *h = calloc(k, sizeof *h);
  if (!h) return false;
  k = 0;
  for (size_t i = 0; i < count; i++)
    if (ev[i].kind == RIG_TRACE_HANDOVER && machine_of(rig_trace_track(t0, ev[i].track)) == m)
      h[k++] = (cli_handover){ev[i].run, ev[i].begin_ns, ev[i].reached_ns};
  qsort(h, k, sizeof *h, by_run);
  /* A run handed over twice is nobody's. */
  size_t kept = 0;
  for (size_t i = 0; i < k;) {
    size_t j = i + 1;
    while (j < k && h[j].run == h[i].run) j++;
    if (j == i + 1) h[kept++] = h[i];
    i = j;
  }
  *out = h;
  *n = kept;
  return true;
}

const cli_handover *cli_handover_of(const cli_handover *h, size_t n, uint64_t run) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (h[mid].run < run)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && h[lo].run == run ? &h[lo] : NULL;
}

static int64_t diff(uint64_t a, uint64_t b) {
  return (int64_t)(a - b);
}

bool cli_trace_narrow(const cli_handover *h, size_t nh, const rig_trace *tm, int64_t *offset,
                      uint64_t *error) {
  int64_t lo = INT64_MIN, hi = INT64_MAX; /* what the runs leave */
  size_t count = rig_trace_count(tm);
  const rig_trace_event *ev = rig_trace_events(tm);
  for (size_t i = 0; i < count; i++) {
    const rig_trace_event *e = &ev[i];
    if (e->kind != RIG_TRACE_STEP && e->kind != RIG_TRACE_RUN) continue;
    const cli_handover *x = cli_handover_of(h, nh, e->run);
    if (!x) continue;
    int64_t up = diff(e->begin_ns, x->begin);
    if (up < hi) hi = up;
    uint64_t end =
        e->kind == RIG_TRACE_STEP ? (e->reached_ns ? e->reached_ns : e->submitted_ns) : 0;
    if (end && x->end && diff(end, x->end) > lo) lo = diff(end, x->end);
  }
  if (lo > hi) return false;
  int64_t plo = *offset - (int64_t)*error, phi = *offset + (int64_t)*error;
  if (plo <= hi && phi >= lo) {
    /* The pings and the runs agree: both bound it. */
    if (plo > lo) lo = plo;
    if (phi < hi) hi = phi;
  }
  if (lo == INT64_MIN || hi == INT64_MAX) {
    /* Bound on one side only (runs without steps): the pings' offset, moved
     * inside that bound. */
    if (*offset < lo) *offset = lo;
    if (*offset > hi) *offset = hi;
    return true;
  }
  uint64_t width = (uint64_t)hi - (uint64_t)lo;
  *offset = lo + (int64_t)(width / 2);
  *error = (width + 1) / 2;
  return true;
}
