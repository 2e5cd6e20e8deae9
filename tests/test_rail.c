/* Rails (run under mpirun -n 2 and 4, on the default transports and on
 * tcp,self): ends made with rig_rail_connect and by the job, bytes and
 * counts across them, refusals, failure and release. Every rank runs every
 * test (SPMD): rank 0 inside CUnit, the others beside it; each rank counts
 * its own failed checks and rank 0 asserts that the job's sum is 0. */
#include <CUnit/Basic.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rig/rig_job.h"
#include "rig/rig_rail.h"

static int rank, size;
static int failures; /* this rank's, in the running test */

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__);                               \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
    }                                                                                              \
  } while (0)

#define CHECK_OK(st, err) CHECK((st) == RIG_OK, "%s: %s", rig_status_name(st), (err).message)

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- counts --------------------------------------------------------------------- */

static _Atomic uint64_t *count(const rig_rail_end *e, size_t at) {
  return (_Atomic uint64_t *)((unsigned char *)rig_buffer_host(e->counts) + at);
}

/* Waits until a count reaches c (acquire); false after 30 s (a broken
 * rail: the test fails rather than hangs). */
static bool wait_count(const rig_rail_end *e, size_t at, uint64_t c) {
  double deadline = now_s() + 30;
  while (atomic_load_explicit(count(e, at), memory_order_acquire) < c)
    if (now_s() > deadline) return false;
  return true;
}

static unsigned char pattern(uint64_t run, size_t t, uint64_t i) {
  return (unsigned char)(run * 131 + t * 17 + i * 7 + 1);
}

/* ---- transfers -------------------------------------------------------------------- */

/* Three transfers of 1 B, 4 KiB + 3 and 1 MiB. */
static const rig_rail_transfer data[3] = {{0, 0, 1}, {256, 512, 4096 + 3}, {8192, 16384, 1 << 20}};
/* The acknowledgement back: 8 bytes, the receiver's checksum. */
static const rig_rail_transfer ack[1] = {{0, 0, 8}};

static uint64_t checksum(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603u;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211u;
  return h;
}

/* Rank 0 sends `runs` runs of the three transfers to rank 1, which checks
 * every byte once it sees arrived, and sends back its checksum of each
 * run; the sender writes run r + 1 while the receiver reads run r, and
 * reuses a copy only once its run is acknowledged. */
static void pipeline(rig_rail *r, bool sender, uint64_t runs) {
  const rig_rail_end *e = rig_rail_end_of(r);
  CHECK(e != NULL, "no end");
  if (!e) return;
  unsigned char *out = rig_buffer_host(e->outbound), *in = rig_buffer_host(e->inbound);
  if (sender) {
    uint64_t out_copy = rig_rail_copy_bytes(data, 3, false);
    for (uint64_t run = 0; run < runs; run++) {
      /* Copy run % 2 was last read in run - 2: wait for its ack. */
      if (run >= 2 && !wait_count(e, RIG_RAIL_ARRIVED_AT, run - 1)) {
        CHECK(false, "no acknowledgement of run %llu", (unsigned long long)(run - 2));
        return;
      }
      unsigned char *copy = out + (run % 2) * out_copy;
      for (size_t t = 0; t < 3; t++) {
        for (int64_t i = 0; i < data[t].length; i++) copy[data[t].src + i] = pattern(run, t, i);
        uint64_t c = run * 3 + t + 1;
        e->ready(rig_buffer_host(e->counts), c);
        uint64_t sent = atomic_load(count(e, RIG_RAIL_SENT_AT));
        CHECK(sent <= c, "sent %llu past ready %llu", (unsigned long long)sent,
              (unsigned long long)c);
      }
    }
    /* Every ack, each the checksum the sender expects. */
    for (uint64_t run = 0; run < runs; run++) {
      if (!wait_count(e, RIG_RAIL_ARRIVED_AT, run + 1)) {
        CHECK(false, "no acknowledgement of run %llu", (unsigned long long)run);
        return;
      }
    }
    CHECK(wait_count(e, RIG_RAIL_SENT_AT, runs * 3), "sent never reached %llu",
          (unsigned long long)(runs * 3));
    return;
  }
  uint64_t in_copy = rig_rail_copy_bytes(data, 3, true), out_copy = 256;
  unsigned char *expect = malloc(1 << 20);
  for (uint64_t run = 0; run < runs; run++) {
    uint64_t sum = 0;
    for (size_t t = 0; t < 3; t++) {
      uint64_t c = run * 3 + t + 1;
      if (!wait_count(e, RIG_RAIL_ARRIVED_AT, c)) {
        CHECK(false, "transfer %llu never arrived", (unsigned long long)c);
        free(expect);
        return;
      }
      const unsigned char *got = in + (run % 2) * in_copy + data[t].dst;
      for (int64_t i = 0; i < data[t].length; i++) expect[i] = pattern(run, t, i);
      CHECK(memcmp(got, expect, (size_t)data[t].length) == 0, "run %llu transfer %zu: bytes differ",
            (unsigned long long)run, t);
      sum ^= checksum(got, (size_t)data[t].length);
    }
    /* The ack's copy was last sent two runs ago: wait until it left. */
    if (run >= 2)
      CHECK(wait_count(e, RIG_RAIL_SENT_AT, run - 1), "ack %llu never sent",
            (unsigned long long)(run - 2));
    memcpy(out + (run % 2) * out_copy, &sum, sizeof sum);
    e->ready(rig_buffer_host(e->counts), run + 1);
  }
  free(expect);
}

/* ---- the tests ------------------------------------------------------------------------ */

/* Ranks 0 and 1 connect rail `id` (data from 0 to 1, acks back). */
static rig_rail *connect_pair(int64_t id) {
  rig_rail *r = NULL;
  rig_error err;
  rig_status st = rank == 0 ? rig_rail_connect(MPI_COMM_WORLD, 1, id, data, 3, ack, 1, &r, &err)
                            : rig_rail_connect(MPI_COMM_WORLD, 0, id, ack, 1, data, 3, &r, &err);
  CHECK_OK(st, err);
  return st == RIG_OK ? r : NULL;
}

static void connect_carries_every_byte_in_order_over_1000_runs(void) {
  if (rank > 1) return;
  rig_rail *r = connect_pair(1);
  if (!r) return;
  pipeline(r, rank == 0, 1000);
  rig_rail_release(r);
}

static void an_end_is_laid_out_as_the_design_says(void) {
  if (rank > 1) return;
  rig_rail *r = connect_pair(2);
  if (!r) return;
  const rig_rail_end *e = rig_rail_end_of(r);
  uint64_t out = rank == 0 ? 2 * (8192 + (1 << 20)) : 2 * 256;
  uint64_t in = rank == 0 ? 2 * 256 : 2 * (16384 + (1 << 20));
  CHECK(rig_buffer_length(e->outbound) == out, "outbound of %llu bytes",
        (unsigned long long)rig_buffer_length(e->outbound));
  CHECK(rig_buffer_length(e->inbound) == in, "inbound of %llu bytes",
        (unsigned long long)rig_buffer_length(e->inbound));
  CHECK(rig_buffer_length(e->counts) == RIG_RAIL_COUNTS_BYTES, "counts of %llu bytes",
        (unsigned long long)rig_buffer_length(e->counts));
  CHECK((uintptr_t)rig_buffer_host(e->outbound) % 4096 == 0, "outbound not page aligned");
  CHECK((uintptr_t)rig_buffer_host(e->inbound) % 4096 == 0, "inbound not page aligned");
  const unsigned char *c = rig_buffer_host(e->counts);
  bool zero = true;
  for (int i = 0; i < RIG_RAIL_COUNTS_BYTES; i++) zero &= c[i] == 0;
  CHECK(zero, "counts do not start at 0");
  rig_rail_release(r);
}

typedef struct ready_thread {
  const rig_rail_end *e;
  uint64_t first, last, step;
} ready_thread;

static void *ready_from(void *arg) {
  ready_thread *t = arg;
  for (uint64_t c = t->first; c <= t->last; c += t->step)
    t->e->ready(rig_buffer_host(t->e->counts), c);
  return NULL;
}

/* Four threads call ready, in turn and at once, with counts up to 4000:
 * every transfer arrives, and a lower count changes nothing. */
static void ready_may_come_from_several_threads(void) {
  if (rank > 1) return;
  static const rig_rail_transfer one[1] = {{0, 0, 64}};
  rig_rail *r = NULL;
  rig_error err;
  rig_status st = rank == 0 ? rig_rail_connect(MPI_COMM_WORLD, 1, 3, one, 1, NULL, 0, &r, &err)
                            : rig_rail_connect(MPI_COMM_WORLD, 0, 3, NULL, 0, one, 1, &r, &err);
  CHECK_OK(st, err);
  if (st != RIG_OK) return;
  const rig_rail_end *e = rig_rail_end_of(r);
  if (rank == 0) {
    pthread_t th[4];
    ready_thread args[4];
    for (int i = 0; i < 4; i++) {
      args[i] = (ready_thread){e, (uint64_t)i + 1, 4000, 4};
      pthread_create(&th[i], NULL, ready_from, &args[i]);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    e->ready(rig_buffer_host(e->counts), 5);
    CHECK(atomic_load(count(e, RIG_RAIL_READY_AT)) == 4000, "ready is %llu, not 4000",
          (unsigned long long)atomic_load(count(e, RIG_RAIL_READY_AT)));
    CHECK(wait_count(e, RIG_RAIL_SENT_AT, 4000), "sent never reached 4000");
  } else {
    CHECK(wait_count(e, RIG_RAIL_ARRIVED_AT, 4000), "arrived never reached 4000");
  }
  rig_rail_release(r);
}

/* Release right after the last ready, with puts still in flight: what was
 * made ready lands, nothing crashes. */
static void release_with_transfers_in_flight_loses_nothing(void) {
  if (rank > 1) return;
  static const rig_rail_transfer big[1] = {{0, 0, 4 << 20}};
  rig_rail *r = NULL;
  rig_error err;
  rig_status st = rank == 0 ? rig_rail_connect(MPI_COMM_WORLD, 1, 4, big, 1, NULL, 0, &r, &err)
                            : rig_rail_connect(MPI_COMM_WORLD, 0, 4, NULL, 0, big, 1, &r, &err);
  CHECK_OK(st, err);
  if (st != RIG_OK) return;
  const rig_rail_end *e = rig_rail_end_of(r);
  if (rank == 0) {
    memset(rig_buffer_host(e->outbound), 0x5a, 8 << 20);
    e->ready(rig_buffer_host(e->counts), 2);
    rig_rail_release(r);
  } else {
    /* The receiver keeps its end until both transfers landed. */
    CHECK(wait_count(e, RIG_RAIL_ARRIVED_AT, 2), "arrived never reached 2");
    const unsigned char *in = rig_buffer_host(e->inbound);
    bool same = true;
    for (size_t i = 0; i < (8u << 20); i++) same &= in[i] == 0x5a;
    CHECK(same, "the bytes in flight at the release differ");
    rig_rail_release(r);
  }
  rig_rail_release(r); /* idempotent */
}

static void rail_refusals_name_the_rule(void) {
  if (rank != 0) return;
  rig_error err;
  static const rig_rail_transfer zero[1] = {{0, 0, 0}}, negative[1] = {{-1, 0, 8}},
                                 past[1] = {{0, (INT64_C(1) << 60) - 4, 8}},
                                 huge[1] = {{INT64_MAX, 0, INT64_MAX}};
  struct {
    const rig_rail_transfer *send, *receive;
    size_t nsend, nreceive;
    const char *message;
  } cases[] = {
      {zero, NULL, 1, 0, "send 0: a length of 0"},
      {NULL, negative, 0, 1, "receive 0: a negative offset (-1)"},
      {past, NULL, 1, 0, "send 0: 8 bytes at 0 to 1152921504606846972 end past 2^60"},
      {huge, NULL, 1, 0, "end past 2^60"},
      {NULL, NULL, 0, 0, "a rail with no transfer either way"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    rig_status st =
        rig_rail_check(cases[i].send, cases[i].nsend, cases[i].receive, cases[i].nreceive, &err);
    CHECK(st == RIG_EINVAL && strstr(err.message, cases[i].message),
          "case %zu: %s \"%s\", not \"%s\"", i, rig_status_name(st), err.message, cases[i].message);
  }
  rig_rail *r = NULL, *again = NULL;
  rig_status st = rig_rail_create(9, data, 1, NULL, 0, &r, &err);
  CHECK_OK(st, err);
  st = rig_rail_create(9, data, 1, NULL, 0, &again, &err);
  CHECK(st == RIG_EINVAL && strcmp(err.message, "rail 9: an id already in use") == 0, "%s \"%s\"",
        rig_status_name(st), err.message);
  st = rig_rail_connect(MPI_COMM_WORLD, 0, 10, data, 1, NULL, 0, &again, &err);
  CHECK(st == RIG_EINVAL && strcmp(err.message, "rail 10: between rank 0 and itself") == 0,
        "%s \"%s\"", rig_status_name(st), err.message);
  rig_rail_release(r);
}

/* Every test, in order: rank 0 runs each inside CUnit, the others beside. */
static const struct {
  const char *name;
  void (*run)(void);
} tests[] = {
#define T(f)                                                                                       \
  { #f, f }
    T(an_end_is_laid_out_as_the_design_says), T(connect_carries_every_byte_in_order_over_1000_runs),
    T(ready_may_come_from_several_threads),   T(release_with_transfers_in_flight_loses_nothing),
    T(rail_refusals_name_the_rule),
#undef T
};
enum { NTESTS = sizeof tests / sizeof *tests };

static int run_test(int i) {
  failures = 0;
  tests[i].run();
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

/* The running test's entry, found by its name. */
static void cunit_test(void) {
  int current = 0;
  while (current < NTESTS - 1 && strcmp(tests[current].name, CU_get_current_test()->pName) != 0)
    current++;
  MPI_Bcast(&current, 1, MPI_INT, 0, MPI_COMM_WORLD);
  CU_ASSERT_EQUAL(run_test(current), 0);
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != 0) {
    for (;;) {
      int i;
      MPI_Bcast(&i, 1, MPI_INT, 0, MPI_COMM_WORLD);
      if (i < 0) break;
      run_test(i);
    }
    MPI_Finalize();
    return 0;
  }
  unsigned failed = 1;
  if (CU_initialize_registry() == CUE_SUCCESS) {
    CU_pSuite s = CU_add_suite("rail", NULL, NULL);
    /* One CUnit test per entry; each broadcasts its index first. */
    for (int i = 0; s && i < NTESTS; i++) CU_add_test(s, tests[i].name, cunit_test);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    failed = CU_get_number_of_tests_failed() + CU_get_number_of_failures();
    CU_cleanup_registry();
  }
  int quit = -1;
  MPI_Bcast(&quit, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed ? 1 : 0;
}
