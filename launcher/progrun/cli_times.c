/* The runs' times and their figures (docs/cli.md, "The summary"): every
 * time kept up to CLI_EXACT_RUNS runs, a histogram past that, so that any
 * number of runs takes bounded memory. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_job.h"

/* Past CLI_EXACT_RUNS times, a histogram: values below 2^11 ns each their
 * own bucket, above that 1024 buckets per power of two (a bucket's width
 * at most 1/1024 of its values), so any number of runs takes 450 KiB. */
#define EXACT_BELOW  2048
#define SUB_BITS     10
#define HIST_BUCKETS (EXACT_BELOW + (64 - 11) * (1u << SUB_BITS))

static size_t bucket_of(uint64_t v) {
  if (v < EXACT_BELOW) return (size_t)v;
  unsigned e = 63 - (unsigned)__builtin_clzll(v); /* 11 .. 63 */
  uint64_t sub = (v >> (e - SUB_BITS)) & ((1u << SUB_BITS) - 1);
  return EXACT_BELOW + (size_t)(e - 11) * (1u << SUB_BITS) + (size_t)sub;
}

/* The middle of bucket b's values. */
static uint64_t bucket_value(size_t b) {
  if (b < EXACT_BELOW) return b;
  size_t k = b - EXACT_BELOW;
  unsigned e = 11 + (unsigned)(k >> SUB_BITS);
  uint64_t lo = ((uint64_t)(1u << SUB_BITS) + (k & ((1u << SUB_BITS) - 1))) << (e - SUB_BITS);
  return lo + (((uint64_t)1 << (e - SUB_BITS)) >> 1);
}

int cli_times_add(cli_times *t, uint64_t ns, rig_error *err) {
  if (t->n == 0 || ns < t->min) t->min = ns;
  if (t->n == 0 || ns > t->max) t->max = ns;
  /* Welford: no sum to overflow or lose its small terms. */
  double delta = (double)ns - t->mean;
  t->mean += delta / (double)(t->n + 1);
  t->m2 += delta * ((double)ns - t->mean);
  if (!t->hist && t->n == CLI_EXACT_RUNS) {
    if (!(t->hist = calloc(HIST_BUCKETS, sizeof *t->hist)))
      return rig_error_set(err, RIG_ENOMEM, "out of memory for the runs' times"), CLI_EXIT_FAIL;
    for (size_t i = 0; i < t->n; i++) t->hist[bucket_of(t->exact[i])]++;
    free(t->exact);
    t->exact = NULL;
  }
  if (t->hist) {
    t->hist[bucket_of(ns)]++;
  } else {
    if (t->n == t->room) {
      size_t room = t->room ? 2 * t->room : 64;
      uint64_t *e = realloc(t->exact, room * sizeof *e);
      if (!e)
        return rig_error_set(err, RIG_ENOMEM, "out of memory for the runs' times"), CLI_EXIT_FAIL;
      t->exact = e;
      t->room = room;
    }
    t->exact[t->n] = ns;
  }
  t->n++;
  return CLI_EXIT_OK;
}

void cli_times_free(cli_times *t) {
  free(t->exact);
  free(t->hist);
  memset(t, 0, sizeof *t);
}

static int by_value(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* The nearest-rank percentile: the ceil(q n / 100)-th smallest. */
static uint64_t percentile(const cli_times *t, unsigned q) {
  uint64_t k = t->n / 100 * q + (t->n % 100 * q + 99) / 100;
  if (k == 0) k = 1;
  if (!t->hist) return t->exact[k - 1];
  uint64_t seen = 0;
  for (size_t b = 0; b < HIST_BUCKETS; b++)
    if ((seen += t->hist[b]) >= k) return bucket_value(b);
  return t->min;
}

void cli_times_figures(cli_times *t, cli_figures *f) {
  if (!t->hist) qsort(t->exact, (size_t)t->n, sizeof *t->exact, by_value);
  f->runs = t->n;
  f->min = t->min;
  f->median = percentile(t, 50);
  f->p99 = percentile(t, 99);
  f->max = t->max;
  f->mean = t->mean;
  f->stddev = t->n ? sqrt(t->m2 / (double)t->n) : 0.0;
}

/* ---- told at a signal ------------------------------------------------------------ */

static cli_times *shown; /* under the hold */

void cli_times_show(cli_times *t) {
  cli_hold();
  shown = t;
  cli_release();
}

void cli_times_told(cli_figures *f, bool held) {
  memset(f, 0, sizeof *f);
  if (!held) cli_hold();
  if (shown && shown->n) cli_times_figures(shown, f);
  if (!held) cli_release();
}

/* ---- across machines ------------------------------------------------------------ */

static uint64_t bits_of(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b;
}

static double double_of(uint64_t b) {
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

void cli_times_put(const cli_times *t, cli_wbuf *p) {
  cli_wbuf_u64(p, t->n);
  cli_wbuf_u64(p, t->min);
  cli_wbuf_u64(p, t->max);
  cli_wbuf_u64(p, bits_of(t->mean));
  cli_wbuf_u64(p, bits_of(t->m2));
  cli_wbuf_u64(p, t->hist != NULL);
  if (!t->hist) {
    for (uint64_t i = 0; i < t->n; i++) cli_wbuf_u64(p, t->exact[i]);
    return;
  }
  /* The buckets used, as (bucket, count) pairs. */
  uint64_t used = 0;
  for (size_t b = 0; b < HIST_BUCKETS; b++) used += t->hist[b] != 0;
  cli_wbuf_u64(p, used);
  for (size_t b = 0; b < HIST_BUCKETS; b++)
    if (t->hist[b]) cli_wbuf_u64(p, b), cli_wbuf_u64(p, t->hist[b]);
}

int cli_times_get(cli_rbuf *u, cli_times *t) {
  cli_times_free(t);
  t->n = cli_rbuf_u64(u);
  t->min = cli_rbuf_u64(u);
  t->max = cli_rbuf_u64(u);
  t->mean = double_of(cli_rbuf_u64(u));
  t->m2 = double_of(cli_rbuf_u64(u));
  bool hist = cli_rbuf_u64(u) != 0;
  if (!u->ok) return CLI_EXIT_FAIL;
  if (!hist) {
    /* Each time is 8 bytes of what follows: a count past them is broken. */
    if (t->n > CLI_EXACT_RUNS || t->n > (u->n - u->at) / 8) return u->ok = false, CLI_EXIT_FAIL;
    t->exact = malloc((t->n ? t->n : 1) * sizeof *t->exact);
    if (!t->exact) return CLI_EXIT_FAIL;
    t->room = t->n ? t->n : 1;
    for (uint64_t i = 0; i < t->n; i++) t->exact[i] = cli_rbuf_u64(u);
    return u->ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
  }
  uint64_t used = cli_rbuf_count(u, 16);
  if (!u->ok || !(t->hist = calloc(HIST_BUCKETS, sizeof *t->hist))) return CLI_EXIT_FAIL;
  uint64_t total = 0;
  for (uint64_t i = 0; u->ok && i < used; i++) {
    uint64_t b = cli_rbuf_u64(u), c = cli_rbuf_u64(u);
    if (b >= HIST_BUCKETS || c > UINT64_MAX - total)
      u->ok = false;
    else
      t->hist[b] += c, total += c;
  }
  if (total != t->n) u->ok = false;
  return u->ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}
