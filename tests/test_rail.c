/* Rails (run under mpirun -n 2 and 4, on the default transports and on
 * tcp,self): ends made with rig_rail_connect and by the job, bytes and
 * counts across them, refusals, failure and release. Every rank runs every
 * test (SPMD): rank 0 inside CUnit, the others beside it; each rank counts
 * its own failed checks and rank 0 asserts that the job's sum is 0. */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <ucs/debug/log_def.h>
#include <unistd.h>

#include "rig/rig_desc.h"
#include "rig/rig_job.h"
#include "rig/rig_program.h"
#include "rig/rig_rail.h"
#include "wait.h"

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
  while (atomic_load_explicit(count(e, at), memory_order_acquire) < c) {
    if (now_s() > deadline) return false;
    sched_yield(); /* the ranks share few cores */
  }
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

/* Writes run `run`'s three transfers (pattern `salt`) into copy run % 2
 * of out, making each ready as it is written. */
static void send_run(const rig_rail_end *e, uint64_t run, uint64_t salt) {
  unsigned char *copy = (unsigned char *)rig_buffer_host(e->outbound) +
                        (run % 2) * rig_rail_copy_bytes(data, 3, false);
  for (size_t t = 0; t < 3; t++) {
    for (int64_t i = 0; i < data[t].length; i++)
      copy[data[t].src + i] = pattern(run + salt, t, (uint64_t)i);
    e->ready(rig_buffer_host(e->counts), run * 3 + t + 1);
  }
}

/* Whether run `run`'s three transfers (pattern `salt`) are in copy run % 2
 * of in, byte for byte, once arrived says so. */
static bool received_run(const rig_rail_end *e, uint64_t run, uint64_t salt,
                         unsigned char *expect) {
  if (!wait_count(e, RIG_RAIL_ARRIVED_AT, run * 3 + 3)) return false;
  const unsigned char *copy = (const unsigned char *)rig_buffer_host(e->inbound) +
                              (run % 2) * rig_rail_copy_bytes(data, 3, true);
  for (size_t t = 0; t < 3; t++) {
    for (int64_t i = 0; i < data[t].length; i++) expect[i] = pattern(run + salt, t, (uint64_t)i);
    if (memcmp(copy + data[t].dst, expect, (size_t)data[t].length) != 0) return false;
  }
  return true;
}

/* Both directions at once, three transfers each: rank 0 sends run r, rank 1
 * checks it and echoes it back with its own pattern, rank 0 checks the
 * echo; rank 0 writes run r only once it has checked echo r - 2 (so rank 1
 * read run r - 2's copy), rank 1 writes echo r once it left (sent). */
static void both_directions_carry_three_transfers_byte_exact_over_1000_runs(void) {
  if (rank > 1) return;
  rig_rail *r = NULL;
  rig_error err;
  rig_status st = rig_rail_connect(MPI_COMM_WORLD, 1 - rank, 5, data, 3, data, 3, &r, &err);
  CHECK_OK(st, err);
  if (st != RIG_OK) return;
  const rig_rail_end *e = rig_rail_end_of(r);
  unsigned char *expect = malloc(1 << 20);
  const uint64_t runs = 1000, echo = 7777;
  for (uint64_t run = 0; run < runs && !failures; run++) {
    if (rank == 0) {
      if (run >= 2)
        CHECK(received_run(e, run - 2, echo, expect), "echo %llu differs",
              (unsigned long long)(run - 2));
      if (run >= 2)
        CHECK(wait_count(e, RIG_RAIL_SENT_AT, run * 3 - 3), "run %llu never left",
              (unsigned long long)(run - 2));
      send_run(e, run, 0);
    } else {
      CHECK(received_run(e, run, 0, expect), "run %llu differs", (unsigned long long)run);
      if (run >= 2)
        CHECK(wait_count(e, RIG_RAIL_SENT_AT, run * 3 - 3), "echo %llu never left",
              (unsigned long long)(run - 2));
      send_run(e, run, echo);
    }
  }
  if (rank == 0)
    for (uint64_t run = runs - 2; run < runs && !failures; run++)
      CHECK(received_run(e, run, echo, expect), "echo %llu differs", (unsigned long long)run);
  free(expect);
  rig_rail_release(r);
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

/* The peer's address says how large its inbound copies are; puts land in
 * them by this end's transfers (written into mapped memory on one host):
 * copies of another size are refused at the attach, before any put. The
 * field is the address's seventh word (rails/rail.c, rail_wire). */
#define WIRE_IN_COPY_AT 104

static void an_attach_refuses_inbound_copies_its_transfers_do_not_take(void) {
  if (rank > 1) return;
  rig_rail *r = NULL;
  rig_error err;
  rig_status st = rank == 0 ? rig_rail_create(40, data, 3, ack, 1, &r, &err)
                            : rig_rail_create(40, ack, 1, data, 3, &r, &err);
  CHECK_OK(st, err);
  unsigned char peer[8192];
  uint64_t len = 0;
  if (rank == 1 && r) {
    const void *bytes;
    size_t n;
    rig_rail_address(r, &bytes, &n);
    CHECK(n <= sizeof peer, "an address of %zu bytes", n);
    len = n <= sizeof peer ? n : 0;
    memcpy(peer, bytes, len);
    uint64_t copy = 0;
    if (len >= WIRE_IN_COPY_AT + 8) memcpy(&copy, peer + WIRE_IN_COPY_AT, 8);
    CHECK(copy == 16384 + (1 << 20), "inbound copies of %llu bytes in the address",
          (unsigned long long)copy);
    copy += 4096;
    if (len >= WIRE_IN_COPY_AT + 8) memcpy(peer + WIRE_IN_COPY_AT, &copy, 8);
  }
  if (rank == 1) {
    MPI_Send(&len, 1, MPI_UINT64_T, 0, 40, MPI_COMM_WORLD);
    MPI_Send(peer, (int)len, MPI_BYTE, 0, 41, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&len, 1, MPI_UINT64_T, 1, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (len > sizeof peer) len = 0;
    MPI_Recv(peer, (int)len, MPI_BYTE, 1, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  if (rank == 0 && r) {
    st = rig_rail_attach(r, peer, len, &err);
    CHECK(st == RIG_EINVAL, "%s", rig_status_name(st));
    CHECK(strcmp(err.message, "rail 40: the peer's inbound copies are 1069056 bytes, not the "
                              "1064960 its transfers take") == 0,
          "%s", err.message);
  }
  if (r) rig_rail_release(r);
}

typedef struct ready_thread {
  const rig_rail_end *e;
  uint64_t first, last, step;
} ready_thread;

/* Each count once its copy may be rewritten (sent covers c - 2). */
static void *ready_from(void *arg) {
  ready_thread *t = arg;
  for (uint64_t c = t->first; c <= t->last; c += t->step) {
    if (c > 2 && !wait_count(t->e, RIG_RAIL_SENT_AT, c - 2)) return NULL;
    t->e->ready(rig_buffer_host(t->e->counts), c);
  }
  return NULL;
}

/* Four threads call ready, in turn and at once, with counts up to 4000,
 * each paced by sent: every transfer arrives, and a lower count changes
 * nothing. */
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

/* ---- rails of a job -------------------------------------------------------------------- */

/* Every rank takes part in each job (rank 0 is the controller, the others
 * agents that serve it); the test bodies below run on every rank. */
static rig_job *job_start(void) {
  rig_job *job = NULL;
  rig_error err;
  rig_status st = rig_job_start(MPI_COMM_WORLD, &job, &err);
  CHECK_OK(st, err);
  return st == RIG_OK ? job : NULL;
}

/* An agent serves until the controller closes the job; every rank leaves
 * it. `cause`: the failure the job is to end with, or NULL for none. */
static void job_finish(rig_job *job, const char *cause) {
  rig_error err;
  rig_status st;
  if (rank != 0) {
    st = rig_job_serve(job, &err);
    if (cause)
      CHECK(st == RIG_EJOB && strcmp(err.message, cause) == 0, "serve: %s \"%s\", not \"%s\"",
            rig_status_name(st), err.message, cause);
    else
      CHECK_OK(st, err);
  }
  st = rig_job_close(job, &err);
  if (cause)
    CHECK(st == RIG_EJOB && strcmp(err.message, cause) == 0, "close: %s \"%s\", not \"%s\"",
          rig_status_name(st), err.message, cause);
  else
    CHECK_OK(st, err);
}

/* An agent's end of rail `id`, as its loads find it (made by a request
 * from the controller): NULL after 30 s. */
static const rig_rail_end *agent_end(rig_job *job, int64_t id) {
  const rig_rails *rails = rig_job_rails(job);
  double deadline = now_s() + 30;
  const rig_rail_end *e;
  while (!(e = rails->lookup(rails->ctx, id)) && now_s() < deadline) sched_yield();
  CHECK(e != NULL, "no end of rail %lld here", (long long)id);
  return e;
}

static bool raised(const rig_rail_end *e) {
  return atomic_load(count(e, RIG_RAIL_READY_AT)) == RIG_RAIL_RAISED &&
         atomic_load(count(e, RIG_RAIL_SENT_AT)) == RIG_RAIL_RAISED &&
         atomic_load(count(e, RIG_RAIL_ARRIVED_AT)) == RIG_RAIL_RAISED;
}

/* The kernels of tests/fixtures/rail_kernels.c, read on the controller. */
static void *rail_kernels;
static size_t rail_kernels_len;

static bool read_rail_kernels(void) {
  if (rail_kernels) return true;
  const char *path = getenv("RIG_TEST_RAIL_KERNELS");
  FILE *f = path ? fopen(path, "rb") : NULL;
  CHECK(f != NULL, "cannot read RIG_TEST_RAIL_KERNELS (%s)", path ? path : "unset");
  if (!f) return false;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  rail_kernels = malloc(n > 0 ? (size_t)n : 1);
  if (rail_kernels && fread(rail_kernels, 1, (size_t)n, f) == (size_t)n) {
    rail_kernels_len = (size_t)n;
  } else {
    free(rail_kernels);
    rail_kernels = NULL;
  }
  fclose(f);
  CHECK(rail_kernels != NULL, "cannot read %s", path);
  return rail_kernels != NULL;
}

/* What the kernels write and the bytes they carry (rail_kernels.c). */
static unsigned char rk_pattern(uint64_t c, uint64_t i) {
  return (unsigned char)(c * 151 + i * 13 + (i >> 8) + 5);
}

static void add_hole(rig_desc *d, rig_desc_data *into, int64_t at, rig_desc_value v) {
  rig_desc_hole *h = rig_desc_data_add_hole(d, into, at, RIG_W64, 0, 0);
  if (h) rig_desc_terms_add(d, &h->terms, v, 1);
}

/* A program of one step on a machine's host: a launch of `fn` over rail
 * `id`'s end, memory 0 its Counts, 1 its Inbound, 2 its Outbound, whose
 * parameter block is { counts; inbound; outbound; in_copy; out_copy;
 * length; c (int 0); ready (the Ready leaf); result (input 0) }. */
static rig_desc *end_program_on(const char *arch, int64_t id, const char *fn, uint64_t in_copy,
                                uint64_t out_copy, uint64_t length) {
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, arch);
  rig_desc_add_rail(d, id, RIG_AREA_COUNTS);
  rig_desc_add_rail(d, id, RIG_AREA_INBOUND);
  rig_desc_add_rail(d, id, RIG_AREA_OUTBOUND);
  rig_desc_add_image(d, 0, rail_kernels, rail_kernels_len);
  rig_desc_add_input(d, 0, 64);
  d->ints = 1;
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(0, 0, RIG_RAIL_COUNTS_BYTES),
                            RIG_ACCESS_READ_WRITE);
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(1, 0, (int64_t)(2 * in_copy)), RIG_ACCESS_READ);
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(2, 0, (int64_t)(2 * out_copy)),
                            RIG_ACCESS_READ_WRITE);
  int64_t result = rig_desc_submit_add_slot(d, s, rig_desc_slot_input(0));
  uint64_t w[9] = {0, 0, 0, in_copy, out_copy, length, 0, 0, 0};
  rig_desc_part *part =
      rig_desc_submit_add_launch(d, s, 0, fn, w, sizeof w, rig_desc_fixed(1), rig_desc_fixed(1));
  rig_desc_data *params = rig_desc_part_params(part);
  for (int m = 0; m < 3; m++)
    add_hole(d, params, 8 * m, rig_desc_leaf_value(rig_desc_address(m, 0)));
  add_hole(d, params, 48, rig_desc_int(0));
  add_hole(d, params, 56, rig_desc_leaf_value(rig_desc_ready(id)));
  rig_desc_part_add_ref(d, part, result, 64, RIG_USE_WRITE);
  return d;
}

static rig_desc *end_program(int64_t id, const char *fn, uint64_t in_copy, uint64_t out_copy,
                             uint64_t length) {
  return end_program_on(rig_host_isa(), id, fn, in_copy, out_copy, length);
}

/* A program loaded on machine m's host (through its proxy on an agent),
 * with its result input zeroed. */
typedef struct loaded {
  rig_program *prog;
  rig_buffer *input;
  rig_point *points;
  size_t npoints;
} loaded;

/* Machine m's device called name (its host: index 0; a proxy is named
 * NAME@rankM), or NULL. */
static rig_device *device_named(rig_job *job, size_t m, const char *name) {
  char full[64];
  snprintf(full, sizeof full, "%s@rank%zu", name, m);
  for (size_t i = 0;; i++) {
    rig_device *dev = rig_job_device(job, m, i);
    if (!dev || strcmp(rig_device_name(dev), m ? full : name) == 0) return dev;
  }
}

static bool load_on_device(rig_job *job, size_t m, rig_device *dev, const rig_desc *d, loaded *l) {
  memset(l, 0, sizeof *l);
  rig_error err;
  rig_status st = rig_program_load(d, &dev, 1, m == 0 ? rig_job_rails(job) : NULL, &l->prog, &err);
  CHECK(st == RIG_OK, "load on machine %zu: %s: %s", m, rig_status_name(st), err.message);
  if (st != RIG_OK) return false;
  rig_buffer *zero = NULL;
  rig_point p;
  st = rig_buffer_create(rig_host(), RIG_KIND_PINNED, 64, &zero, &err);
  if (st == RIG_OK) st = rig_buffer_create(dev, RIG_KIND_PINNED, 64, &l->input, &err);
  if (st == RIG_OK) {
    memset(rig_buffer_host(zero), 0, 64);
    st = rig_buffer_copy_submit(zero, 0, l->input, 0, 64, NULL, 0, &p, &err);
  }
  if (st == RIG_OK) st = rig_point_wait(p, &err);
  rig_buffer_release(zero);
  CHECK_OK(st, err);
  l->points = rig_program_step_points(l->prog, &l->npoints);
  return st == RIG_OK;
}

static bool load_on(rig_job *job, size_t m, const rig_desc *d, loaded *l) {
  return load_on_device(job, m, rig_job_device(job, m, 0), d, l);
}

/* Run c of the program: its ends in ends[4]. */
static bool run_count(loaded *l, uint64_t c, rig_point *ends, size_t *nends) {
  int64_t ints[1] = {(int64_t)c};
  rig_frame f = {&l->input, 1, ints, 1, l->points, l->npoints};
  rig_error err;
  rig_status st = rig_program_run(l->prog, &f, NULL, 0, ends, nends, &err);
  CHECK(st == RIG_OK, "run %llu: %s: %s", (unsigned long long)c, rig_status_name(st), err.message);
  return st == RIG_OK;
}

static bool wait_ends(const rig_point *ends, size_t n) {
  bool ok = true;
  for (size_t i = 0; i < n; i++) {
    rig_error err;
    rig_status st = rig_point_wait(ends[i], &err);
    CHECK_OK(st, err);
    ok &= st == RIG_OK;
  }
  return ok;
}

/* The program's result words { differing; waits that gave up; runs }. */
static void result_of(loaded *l, uint64_t out[3]) {
  memset(out, 0xff, 3 * sizeof *out);
  rig_buffer *h = NULL;
  rig_point p;
  rig_error err;
  rig_status st = rig_buffer_create(rig_host(), RIG_KIND_PINNED, 64, &h, &err);
  if (st == RIG_OK) st = rig_buffer_copy_submit(l->input, 0, h, 0, 64, NULL, 0, &p, &err);
  if (st == RIG_OK) st = rig_point_wait(p, &err);
  CHECK_OK(st, err);
  if (st == RIG_OK) memcpy(out, rig_buffer_host(h), 3 * sizeof *out);
  rig_buffer_release(h);
}

static void unload(loaded *l) {
  rig_program_release(l->prog);
  rig_buffer_release(l->input);
  free(l->points);
  memset(l, 0, sizeof *l);
}

enum { ECHO_BYTES = 65536 + 5, ECHO_RUNS = 100 };

/* Rail 0 <-> 1 made by the job: the controller writes run c's bytes into
 * its own end and makes them ready; a program the controller loaded on
 * machine 1's host waits for them at the agent's end (which it found by
 * the rail's id), sends them back and calls ready; the controller checks
 * the echo byte for byte. */
/* The echo on machine 1's device `name` (of arch `arch`). */
static void echo_on(const char *name, const char *arch) {
  rig_job *job = job_start();
  if (!job) return;
  if (rank == 0 && read_rail_kernels()) {
    static const rig_rail_transfer t[1] = {{0, 0, ECHO_BYTES}};
    rig_rail *r = NULL;
    rig_error err;
    rig_status st = rig_job_rail(job, 0, 1, t, 1, t, 1, &r, &err);
    CHECK_OK(st, err);
    const rig_rail_end *e = st == RIG_OK ? rig_rail_end_of(r) : NULL;
    CHECK(st != RIG_OK || e != NULL, "the controller has no end of a rail from it");
    uint64_t copy = rig_rail_copy_bytes(t, 1, false);
    rig_desc *d =
        end_program_on(arch, st == RIG_OK ? rig_rail_id(r) : 1, "rk_echo", copy, copy, ECHO_BYTES);
    loaded l;
    rig_device *dev = device_named(job, 1, name);
    CHECK(dev, "machine 1 has no %s", name);
    if (e && dev && load_on_device(job, 1, dev, d, &l)) {
      unsigned char *out = rig_buffer_host(e->outbound), *in = rig_buffer_host(e->inbound);
      for (uint64_t c = 1; c <= ECHO_RUNS; c++) {
        /* Copy (c - 1) % 2 was sent from last in run c - 2. */
        if (c > 2 && !wait_count(e, RIG_RAIL_SENT_AT, c - 2)) {
          CHECK(false, "sent never reached %llu", (unsigned long long)(c - 2));
          break;
        }
        unsigned char *o = out + ((c - 1) % 2) * copy;
        for (uint64_t i = 0; i < ECHO_BYTES; i++) o[i] = rk_pattern(c, i);
        e->ready(rig_buffer_host(e->counts), c);
        rig_point ends[4];
        size_t nends = 0;
        if (!run_count(&l, c, ends, &nends)) break;
        if (!wait_count(e, RIG_RAIL_ARRIVED_AT, c)) {
          CHECK(false, "no echo of run %llu", (unsigned long long)c);
          break;
        }
        const unsigned char *got = in + ((c - 1) % 2) * copy;
        bool same = true;
        for (uint64_t i = 0; i < ECHO_BYTES; i++) same &= got[i] == rk_pattern(c, i);
        CHECK(same, "the echo of run %llu differs", (unsigned long long)c);
        if (!wait_ends(ends, nends) || !same) break;
      }
      uint64_t res[3];
      result_of(&l, res);
      CHECK(res[1] == 0, "the echo gave up %llu times", (unsigned long long)res[1]);
      unload(&l);
    }
    rig_desc_free(d);
    if (r) rig_rail_release(r);
  }
  job_finish(job, NULL);
}

static void a_program_on_an_agent_echoes_the_controllers_end_over_100_runs(void) {
  echo_on("host", rig_host_isa());
}

/* The same kernel on machine 1's cpu:0, a queue device: its wait, through
 * its grid's calls, is served as the host's (over TCP it progresses the
 * transport itself). */
static void a_cpu_queue_kernel_on_an_agent_echoes_over_100_runs(void) {
  char arch[64];
  snprintf(arch, sizeof arch, "cpu-%s", rig_host_isa());
  echo_on("cpu:0", arch);
}

enum { PIPE_BYTES = 4096 + 3, PIPE_RUNS = 200 };

/* Rail 1 <-> 2, which the controller only made: a producer program on
 * machine 1 and a consumer on machine 2, each a host launch per run, paced
 * by acknowledgements (the producer reuses a landing copy only once the
 * consumer's ack of its previous run arrived); the controller issues every
 * run at once and reads their results back. Needs 3 machines. */
static void a_rail_between_two_agents_carries_a_paced_pipeline(void) {
  if (size < 3) return;
  rig_job *job = job_start();
  if (!job) return;
  if (rank == 0 && read_rail_kernels()) {
    static const rig_rail_transfer bytes_t[1] = {{0, 0, PIPE_BYTES}}, ack_t[1] = {{0, 0, 8}};
    rig_rail *r = NULL;
    rig_error err;
    rig_status st = rig_job_rail(job, 1, 2, bytes_t, 1, ack_t, 1, &r, &err);
    CHECK_OK(st, err);
    CHECK(st != RIG_OK || rig_rail_end_of(r) == NULL, "the controller has an end of rail 1 <-> 2");
    int64_t id = st == RIG_OK ? rig_rail_id(r) : 1;
    uint64_t big = rig_rail_copy_bytes(bytes_t, 1, false),
             small = rig_rail_copy_bytes(ack_t, 1, true);
    rig_desc *dp = end_program(id, "rk_produce", small, big, PIPE_BYTES);
    rig_desc *dc = end_program(id, "rk_consume", big, small, PIPE_BYTES);
    loaded lp, lc;
    bool ok = st == RIG_OK && load_on(job, 1, dp, &lp);
    if (ok && !load_on(job, 2, dc, &lc)) {
      unload(&lp);
      ok = false;
    }
    if (ok) {
      rig_point *ends = calloc(PIPE_RUNS * 8, sizeof *ends);
      size_t n = 0;
      /* The consumer's runs first: each waits for its bytes. */
      for (uint64_t c = 1; c <= PIPE_RUNS && ends; c++) {
        size_t k;
        if (!run_count(&lc, c, ends + n, &k)) break;
        n += k;
        if (!run_count(&lp, c, ends + n, &k)) break;
        n += k;
      }
      wait_ends(ends, n);
      free(ends);
      uint64_t pr[3], cr[3];
      result_of(&lp, pr);
      result_of(&lc, cr);
      CHECK(pr[0] == 0 && pr[1] == 0 && pr[2] == PIPE_RUNS,
            "producer: %llu acks differ, %llu waits gave up, %llu runs", (unsigned long long)pr[0],
            (unsigned long long)pr[1], (unsigned long long)pr[2]);
      CHECK(cr[0] == 0 && cr[1] == 0 && cr[2] == PIPE_RUNS,
            "consumer: %llu runs differ, %llu waits gave up, %llu runs", (unsigned long long)cr[0],
            (unsigned long long)cr[1], (unsigned long long)cr[2]);
      unload(&lp);
      unload(&lc);
    }
    rig_desc_free(dp);
    rig_desc_free(dc);
    if (r) rig_rail_release(r);
  }
  job_finish(job, NULL);
}

static void check_refused(rig_status st, const rig_error *err, rig_status code, const char *want,
                          int line) {
  CHECK(st == code && strcmp(err->message, want) == 0, "line %d: %s \"%s\", not %s \"%s\"", line,
        rig_status_name(st), err->message, rig_status_name(code), want);
}
#define REFUSED(st, err, code, want) check_refused((st), &(err), (code), (want), __LINE__)

/* A program over rail 7, which no machine has: refused by the controller's
 * load and, for machine 1's devices, by the agent's; with 3 machines, rail
 * 7 made between 1 and 2 is still no rail of the controller's. */
static void a_load_of_a_rail_this_machine_lacks_is_refused_here_and_on_an_agent(void) {
  rig_job *job = job_start();
  if (!job) return;
  if (rank == 0 && read_rail_kernels()) {
    rig_desc *d = end_program(7, "rk_echo", 256, 256, 8);
    rig_device *here = rig_job_device(job, 0, 0), *there = rig_job_device(job, 1, 0);
    rig_program *p = NULL;
    rig_error err;
    REFUSED(rig_program_load(d, &here, 1, rig_job_rails(job), &p, &err), err, RIG_EINVAL,
            "no rail 7 on this machine");
    REFUSED(rig_program_load(d, &here, 1, NULL, &p, &err), err, RIG_EINVAL,
            "no rail 7 on this machine");
    rig_status st = rig_program_load(d, &there, 1, NULL, &p, &err);
    CHECK(st == RIG_EREFUSED && strstr(err.message, "no rail 7 on this machine"),
          "machine 1: %s \"%s\"", rig_status_name(st), err.message);
    CHECK(!rig_job_failed(job, NULL), "a refused load failed the job");
    if (size >= 3) {
      static const rig_rail_transfer t[1] = {{0, 0, 8}};
      rig_rail *r = NULL;
      st = rig_job_rail_as(job, 7, 1, 2, t, 1, t, 1, &r, &err);
      CHECK_OK(st, err);
      REFUSED(rig_program_load(d, &here, 1, rig_job_rails(job), &p, &err), err, RIG_EINVAL,
              "no rail 7 on this machine");
      /* Machine 1 has its end: its load finds it. */
      st = rig_program_load(d, &there, 1, NULL, &p, &err);
      CHECK_OK(st, err);
      if (st == RIG_OK) rig_program_release(p);
      if (r) rig_rail_release(r);
    }
    rig_desc_free(d);
  }
  job_finish(job, NULL);
}

/* Every refusal of rig_job_rail, with its message, and nothing made: no
 * end on either machine, and the next rail still takes the next id. On an
 * agent, rig_job_rail is refused. */
static void job_rail_refusals_name_the_rule_and_make_nothing(void) {
  rig_job *job = job_start();
  if (!job) return;
  static const rig_rail_transfer ok[1] = {{0, 0, 64}}, zero[1] = {{0, 0, 0}},
                                 negative[1] = {{0, -8, 8}},
                                 past[1] = {{0, (INT64_C(1) << 60) - 4, 8}};
  rig_error err;
  rig_rail *r = NULL;
  const rig_rails *rails = rig_job_rails(job);
  if (rank == 0) {
    char want[128];
    REFUSED(rig_job_rail(job, 1, 1, ok, 1, ok, 1, &r, &err), err, RIG_EINVAL,
            "rail 1: between machine 1 and itself");
    REFUSED(rig_job_rail(job, 0, 0, ok, 1, ok, 1, &r, &err), err, RIG_EINVAL,
            "rail 1: between machine 0 and itself");
    snprintf(want, sizeof want, "rail 1: machine %d is not in this job of %d", size, size);
    REFUSED(rig_job_rail(job, 0, size, ok, 1, ok, 1, &r, &err), err, RIG_EINVAL, want);
    snprintf(want, sizeof want, "rail 1: machine -1 is not in this job of %d", size);
    REFUSED(rig_job_rail(job, -1, 1, ok, 1, ok, 1, &r, &err), err, RIG_EINVAL, want);
    REFUSED(rig_job_rail(job, 0, 1, zero, 1, ok, 1, &r, &err), err, RIG_EINVAL,
            "rail 1: send 0: a length of 0");
    REFUSED(rig_job_rail(job, 0, 1, ok, 1, negative, 1, &r, &err), err, RIG_EINVAL,
            "rail 1: receive 0: a negative offset (-8)");
    REFUSED(rig_job_rail(job, 0, 1, past, 1, NULL, 0, &r, &err), err, RIG_EINVAL,
            "rail 1: send 0: 8 bytes at 0 to 1152921504606846972 end past 2^60");
    REFUSED(rig_job_rail(job, 0, 1, NULL, 0, NULL, 0, &r, &err), err, RIG_EINVAL,
            "rail 1: a rail with no transfer either way");
    REFUSED(rig_job_rail_as(job, 0, 0, 1, ok, 1, ok, 1, &r, &err), err, RIG_EINVAL,
            "rail 0: an id is at least 1");
    CHECK(r == NULL, "a refusal gave a rail");
    CHECK(rails->lookup(rails->ctx, 1) == NULL, "a refusal made an end of rail 1 here");
    rig_rail *five = NULL, *six = NULL;
    rig_status st = rig_job_rail_as(job, 5, 0, 1, ok, 1, ok, 1, &five, &err);
    CHECK_OK(st, err);
    REFUSED(rig_job_rail_as(job, 5, 0, 1, ok, 1, ok, 1, &r, &err), err, RIG_EINVAL,
            "rail 5: an id already in use");
    REFUSED(rig_job_rail_as(job, 5, 1, 0, ok, 1, ok, 1, &r, &err), err, RIG_EINVAL,
            "rail 5: an id already in use");
    /* The next id is above every rail made. */
    st = rig_job_rail(job, 1, 0, ok, 1, ok, 1, &six, &err);
    CHECK_OK(st, err);
    CHECK(st != RIG_OK || rig_rail_id(six) == 6, "the next rail is %lld, not 6",
          (long long)(six ? rig_rail_id(six) : -1));
    CHECK(r == NULL, "a refusal gave a rail");
    /* Rail 5 still carries bytes after the refusals of its id. */
    const rig_rail_end *e = five ? rig_rail_end_of(five) : NULL;
    if (e) {
      memset(rig_buffer_host(e->outbound), 0x3c, 64);
      e->ready(rig_buffer_host(e->counts), 1);
      CHECK(wait_count(e, RIG_RAIL_SENT_AT, 1), "rail 5 sent nothing");
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the agents look at their ends */
    MPI_Barrier(MPI_COMM_WORLD);
    rig_rail_release(five);
    rig_rail_release(six);
  } else {
    char want[96];
    snprintf(want, sizeof want, "rig_job_rail on machine %d: only the controller makes rails",
             rank);
    REFUSED(rig_job_rail(job, 0, 1, ok, 1, ok, 1, &r, &err), err, RIG_EINVAL, want);
    REFUSED(rig_job_rail_as(job, 9, 0, rank, ok, 1, ok, 1, &r, &err), err, RIG_EINVAL, want);
    CHECK(r == NULL, "a refusal gave a rail");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
      const rig_rail_end *e5 = agent_end(job, 5);
      CHECK(agent_end(job, 6) != NULL, "no end of rail 6");
      CHECK(rails->lookup(rails->ctx, 1) == NULL && rails->lookup(rails->ctx, 9) == NULL,
            "a refusal made an end here");
      if (e5) {
        CHECK(wait_count(e5, RIG_RAIL_ARRIVED_AT, 1), "rail 5's bytes never arrived");
        const unsigned char *in = rig_buffer_host(e5->inbound);
        bool same = true;
        for (int i = 0; i < 64; i++) same &= in[i] == 0x3c;
        CHECK(same, "rail 5's bytes differ");
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  job_finish(job, NULL);
}

typedef struct waiter {
  const rig_rail_end *e;
  _Atomic int waiting;  /* set as the wait begins */
  _Atomic int released; /* 1: the wait ended, 2: it timed out */
} waiter;

static void *wait_arrived(void *arg) {
  waiter *w = arg;
  /* Said just before the poll of the count: from here on it waits. */
  atomic_store(&w->waiting, 1);
  atomic_store(&w->released, wait_count(w->e, RIG_RAIL_ARRIVED_AT, 1) ? 1 : 2);
  return NULL;
}

/* A thread that waits on w's end for bytes that never come; true once it
 * waits (false: no end, or no thread). */
static bool start_waiting(waiter *w, pthread_t *th) {
  if (!w->e || pthread_create(th, NULL, wait_arrived, w) != 0) return false;
  rig_wait until = rig_wait_begin(RIG_HANG_S);
  while (!atomic_load(&w->waiting) && rig_wait_more(&until)) {
  }
  CHECK(atomic_load(&w->waiting), "the waiting thread did not start within %.0f s", RIG_HANG_S);
  return true;
}

/* Rails 0 <-> 1 and (3 machines) 1 <-> 2; the controller fails the job
 * while a thread of it and every agent wait on their ends for bytes that
 * never come: every count of every end is raised, so every wait ends, and
 * every rank learns the cause. */
static void a_failed_job_raises_every_count_of_every_end(void) {
  static const char cause[] = "rail test: the job fails on purpose";
  rig_job *job = job_start();
  if (!job) return;
  static const rig_rail_transfer t[1] = {{0, 0, 64}};
  rig_error err;
  if (rank == 0) {
    rig_rail *a = NULL, *b = NULL;
    rig_status st = rig_job_rail(job, 0, 1, t, 1, t, 1, &a, &err);
    CHECK_OK(st, err);
    if (size >= 3) {
      st = rig_job_rail(job, 1, 2, t, 1, t, 1, &b, &err);
      CHECK_OK(st, err);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    waiter w = {a ? rig_rail_end_of(a) : NULL, 0, 0};
    pthread_t th;
    bool started = start_waiting(&w, &th);
    /* Every rank's waits have begun: the failure comes while they wait (a
     * raise is kept, so a wait begun later would end too). */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(rig_job_fail(job, "%s", cause) == RIG_EJOB, "rig_job_fail is not RIG_EJOB");
    if (started) {
      pthread_join(th, NULL);
      CHECK(atomic_load(&w.released) == 1, "the controller's wait was not released");
      CHECK(raised(w.e), "the controller's end is not raised");
      /* Counts only grow: a ready after the raise changes nothing. */
      w.e->ready(rig_buffer_host(w.e->counts), 3);
      CHECK(raised(w.e), "a ready lowered a raised count");
      CHECK(rig_rail_failed(a, &err) && strcmp(err.message, cause) == 0,
            "rail %lld failed with \"%s\"", (long long)rig_rail_id(a), err.message);
      CHECK(!rig_rail_misused(a), "a job's failure is taken for the program's");
    }
    CHECK(rig_job_failed(job, &err) && strcmp(err.message, cause) == 0,
          "the job failed with \"%s\"", err.message);
    /* Nothing more is made. */
    rig_rail *more = NULL;
    REFUSED(rig_job_rail(job, 0, 1, t, 1, t, 1, &more, &err), err, RIG_EJOB, cause);
    if (a) rig_rail_release(a);
    if (b) rig_rail_release(b);
  } else {
    const rig_rail_end *ends[2] = {NULL, NULL};
    if (rank == 1) ends[0] = agent_end(job, 1);
    if (rank <= 2 && size >= 3) ends[1] = agent_end(job, 2);
    MPI_Barrier(MPI_COMM_WORLD);
    waiter w[2] = {{ends[0], 0, 0}, {ends[1], 0, 0}};
    pthread_t th[2];
    bool started[2];
    for (int i = 0; i < 2; i++) started[i] = start_waiting(&w[i], &th[i]);
    MPI_Barrier(MPI_COMM_WORLD); /* the controller fails the job after this */
    for (int i = 0; i < 2; i++) {
      if (!started[i]) continue;
      pthread_join(th[i], NULL);
      CHECK(atomic_load(&w[i].released) == 1, "the wait on rail %d was not released", i + 1);
      CHECK(raised(ends[i]), "machine %d's end of rail %d is not raised", rank, i + 1);
    }
  }
  job_finish(job, cause);
}

/* ---- what a rail is past, and what it holds ------------------------------------------ */

/* Ranks 0 and 1 meet (the others take no part). */
static void pair_barrier(void) {
  char mine = 0, theirs;
  MPI_Sendrecv(&mine, 1, MPI_CHAR, 1 - rank, 9, &theirs, 1, MPI_CHAR, 1 - rank, 9, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
}

/* Rail 11, one transfer from rank 0 to rank 1: rank 0 readies counts 1
 * and 2 (its two copies), then 2^40, which no copy holds; rank 1, which
 * sends nothing, readies 1. Each ready is refused there: the rail fails
 * saying why (not sending counts no copy holds, and stalling its release
 * as it tries), and its counts are raised. */
static void a_ready_past_what_the_rail_may_send_fails_the_rail_naming_it(void) {
  if (rank > 1) return;
  static const rig_rail_transfer one[1] = {{0, 0, 64}};
  rig_rail *r = NULL;
  rig_error err;
  rig_status st = rank == 0 ? rig_rail_connect(MPI_COMM_WORLD, 1, 11, one, 1, NULL, 0, &r, &err)
                            : rig_rail_connect(MPI_COMM_WORLD, 0, 11, NULL, 0, one, 1, &r, &err);
  CHECK_OK(st, err);
  if (st != RIG_OK) return;
  const rig_rail_end *e = rig_rail_end_of(r);
  void *counts = rig_buffer_host(e->counts);
  if (rank == 0) {
    e->ready(counts, 2);
    CHECK(wait_count(e, RIG_RAIL_SENT_AT, 2), "sent never reached 2");
    CHECK(!rig_rail_failed(r, NULL), "two counts in two copies failed the rail");
  } else {
    CHECK(wait_count(e, RIG_RAIL_ARRIVED_AT, 2), "arrived never reached 2");
  }
  pair_barrier();
  const char *want = rank == 0 ? "rail 11: ready 1099511627776 is past what the rail may send: "
                                 "sent is 2, so its two copies hold counts up to 4"
                               : "rail 11: ready 1 on an end that sends nothing";
  e->ready(counts, rank == 0 ? UINT64_C(1) << 40 : 1);
  CHECK(rig_rail_failed(r, &err) && strcmp(err.message, want) == 0, "the rail %s \"%s\"",
        rig_rail_failed(r, NULL) ? "failed with" : "did not fail", err.message);
  CHECK(raised(e), "the end is not raised");
  CHECK(rig_rail_misused(r), "the rail's failure is not this end's program's");
  rig_rail_release(r);
}

/* ---- the process's memory ------------------------------------------------------------ */

/* Lines of /proc/self/maps that name `within` (all lines: NULL). */
static size_t maps_lines(const char *within) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[512];
  size_t n = 0;
  while (f && fgets(line, sizeof line, f)) n += !within || strstr(line, within) != NULL;
  if (f) fclose(f);
  return n;
}

/* This process's open file descriptors. */
static size_t fds_open(void) {
  DIR *d = opendir("/proc/self/fd");
  size_t n = 0;
  for (struct dirent *de; d && (de = readdir(d));) n += de->d_name[0] != '.';
  if (d) closedir(d);
  return n;
}

/* This process's descriptors of shared-memory files: a posix segment it
 * made holds one (its peers open it through /proc). */
static size_t shm_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  size_t n = 0;
  for (struct dirent *de; d && (de = readdir(d));) {
    char link[64], to[512];
    snprintf(link, sizeof link, "/proc/self/fd/%.16s", de->d_name);
    ssize_t len = readlink(link, to, sizeof to - 1);
    if (len > 0) to[len] = '\0';
    n += len > 0 && strncmp(to, "/dev/shm/", 9) == 0;
  }
  if (d) closedir(d);
  return n;
}

/* The SysV segments MPI made before the first test: its own, not the
 * rails' (MPICH's UCX makes some at MPI_Init; Open MPI none). */
static int mpi_sysv[64];
static size_t mpi_nsysv;

static bool mpi_made(int id) {
  for (size_t i = 0; i < mpi_nsysv; i++)
    if (mpi_sysv[i] == id) return true;
  return false;
}

/* The ids of the SysV segments this process made (their cpid) since MPI
 * started, up to max. */
static size_t sysv_made_here(int *ids, size_t max) {
  FILE *f = fopen("/proc/sysvipc/shm", "r");
  char line[512];
  size_t n = 0;
  while (f && fgets(line, sizeof line, f)) {
    int key, id, cpid;
    unsigned perms;
    unsigned long long bytes;
    if (sscanf(line, "%d %d %o %llu %d", &key, &id, &perms, &bytes, &cpid) == 5 &&
        cpid == (int)getpid() && n < max && !mpi_made(id))
      ids[n++] = id;
  }
  if (f) fclose(f);
  return n;
}

/* What another process might try to reach this one's memory by: SysV
 * segments it made, the named files of /dev/shm it maps, and its file
 * descriptors as /proc/<pid>/fd/<fd> (how a posix segment is shared). */
typedef struct reachable {
  int sysv[4096];
  size_t nsysv;
  char paths[64][256];
  size_t npaths;
  char fds[1024][320];
  size_t nfds;
} reachable;

static void list_reachable(reachable *m) {
  m->nsysv = sysv_made_here(m->sysv, sizeof m->sysv / sizeof *m->sysv);
  m->npaths = m->nfds = 0;
  FILE *f = fopen("/proc/self/maps", "r");
  char line[512];
  while (f && fgets(line, sizeof line, f) && m->npaths < 64) {
    char *path = strstr(line, "/dev/shm/");
    if (!path || strstr(line, "(deleted)")) continue; /* no name: nothing to open */
    path[strcspn(path, "\n")] = '\0';
    bool seen = false;
    for (size_t i = 0; i < m->npaths && !seen; i++) seen = strcmp(m->paths[i], path) == 0;
    if (!seen) snprintf(m->paths[m->npaths++], sizeof m->paths[0], "%s", path);
  }
  if (f) fclose(f);
  DIR *d = opendir("/proc/self/fd");
  for (struct dirent *de; d && (de = readdir(d)) && m->nfds < 1024;)
    if (de->d_name[0] != '.')
      snprintf(m->fds[m->nfds++], sizeof m->fds[0], "/proc/%d/fd/%s", (int)getpid(), de->d_name);
  if (d) closedir(d);
}

/* In a child that is uid 65534 in group 0 (the owner's): each try must be
 * refused (EACCES, EPERM; or the thing gone meanwhile). Its exit status:
 * how many were not. */
static int try_as_another_uid(const reachable *m) {
  gid_t root = 0;
  if (setgroups(1, &root) != 0 || setgid(0) != 0 || setuid(65534) != 0) return 100;
  int reached = 0;
  for (size_t i = 0; i < m->nsysv; i++) {
    void *at = shmat(m->sysv[i], NULL, 0);
    if (at != (void *)-1 ||
        (errno != EACCES && errno != EPERM && errno != EINVAL && errno != EIDRM))
      fprintf(stderr, "rank %d: uid 65534 attached SysV segment %d\n", rank, m->sysv[i]), reached++;
  }
  for (size_t i = 0; i < m->npaths + m->nfds; i++) {
    const char *path = i < m->npaths ? m->paths[i] : m->fds[i - m->npaths];
    int fd = open(path, O_RDONLY);
    if (fd >= 0 || (errno != EACCES && errno != EPERM && errno != ENOENT))
      fprintf(stderr, "rank %d: uid 65534 opened %s\n", rank, path), reached++;
  }
  return reached > 99 ? 99 : reached;
}

/* Whether the process's memory is closed to another uid of its group. */
static bool closed_to_others(void) {
  static reachable m;
  list_reachable(&m);
  CHECK(m.nfds > 0, "nothing to try");
  fflush(stderr);
  pid_t child = fork();
  if (child == 0) _exit(try_as_another_uid(&m));
  int status = -1;
  CHECK(child > 0 && waitpid(child, &status, 0) == child, "no child");
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "uid 65534 reached %d of %zu SysV segments, %zu files and %zu descriptors",
        WIFEXITED(status) ? WEXITSTATUS(status) : -1, m.nsysv, m.npaths, m.nfds);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* A rail between ranks 0 and 1 that carried bytes, an area each made and
 * the other's mapped: a process of another uid in the owner's group (root
 * here, as a job of root runs) attaches no segment and opens no file or
 * descriptor of either process. */
static void no_other_uid_reaches_the_memory_of_a_live_rail_or_area(void) {
  if (rank > 1) return;
  rig_rail *r = connect_pair(14);
  rig_area *mine = NULL, *theirs = NULL;
  rig_error err;
  rig_status st = rig_area_make(1 << 16, &mine, &err);
  CHECK_OK(st, err);
  if (r && mine) {
    pipeline(r, rank == 0, 4);
    const void *bytes;
    size_t len;
    rig_area_address(mine, &bytes, &len);
    uint64_t mine_len = len, peer_len = 0;
    MPI_Sendrecv(&mine_len, 1, MPI_UINT64_T, 1 - rank, 0, &peer_len, 1, MPI_UINT64_T, 1 - rank, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    unsigned char peer[4096];
    CHECK(peer_len <= sizeof peer, "an area's address of %llu bytes", (unsigned long long)peer_len);
    if (peer_len > sizeof peer) peer_len = 0;
    MPI_Sendrecv(bytes, (int)len, MPI_BYTE, 1 - rank, 1, peer, (int)peer_len, MPI_BYTE, 1 - rank, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    st = rig_area_map(peer, peer_len, &theirs, &err);
    CHECK(st == RIG_OK || st == RIG_EREFUSED, "%s: %s", rig_status_name(st), err.message);
    pair_barrier();
    closed_to_others();
    pair_barrier();
  }
  rig_area_release(theirs);
  pair_barrier();
  rig_area_release(mine);
  if (r) rig_rail_release(r);
}

/* UCX's own messages (here one of its errors, through its log) go to
 * stderr, never to stdout, where a program's outputs may go. */
static void ucx_messages_go_to_stderr_not_stdout(void) {
  if (rank != 0) return;
  FILE *out = tmpfile(), *errs = tmpfile();
  fflush(stdout);
  fflush(stderr);
  int keep_out = dup(1), keep_err = dup(2);
  CHECK(out && errs && keep_out >= 0 && keep_err >= 0, "no temporary files");
  if (!out || !errs || keep_out < 0 || keep_err < 0) return;
  dup2(fileno(out), 1);
  dup2(fileno(errs), 2);
  ucs_error("rail test: a message of UCX");
  rig_log_flush(10.0); /* written by the log's thread */
  fflush(stdout);
  fflush(stderr);
  dup2(keep_out, 1);
  dup2(keep_err, 2);
  close(keep_out);
  close(keep_err);
  char got[2][1024] = {"", ""};
  FILE *files[2] = {out, errs};
  for (int i = 0; i < 2; i++) {
    rewind(files[i]);
    size_t n = fread(got[i], 1, sizeof got[i] - 1, files[i]);
    got[i][n] = '\0';
    fclose(files[i]);
  }
  CHECK(!strstr(got[0], "a message of UCX"), "on stdout: %s", got[0]);
  CHECK(strstr(got[1], "a message of UCX") && strstr(got[1], "ERROR"), "on stderr: \"%s\"", got[1]);
}

/* Refused before anything is made, naming the rail and the room: an end
 * of 1 EiB (one transfer of 2^59 bytes, two copies), which passes
 * rig_rail_check, past what /dev/shm has (or, without shared memory, past
 * the host's memory). The id stays free. */
static void an_end_past_the_hosts_room_is_refused_before_anything_is_made(void) {
  if (rank != 0) return;
  static const rig_rail_transfer huge[1] = {{0, 0, INT64_C(1) << 59}}, small[1] = {{0, 0, 8}};
  rig_error err;
  rig_rail *r = NULL;
  CHECK(rig_rail_check(huge, 1, NULL, 0, &err) == RIG_OK, "%s", err.message);
  CHECK(rig_rail_end_bytes(huge, 1, NULL, 0) == (UINT64_C(1) << 60) + 4096, "an end of %llu bytes",
        (unsigned long long)rig_rail_end_bytes(huge, 1, NULL, 0));
  size_t maps = maps_lines("/dev/shm/"), fds = fds_open();
  rig_status st = rig_rail_create(13, huge, 1, NULL, 0, &r, &err);
  const char *shared = "rail 13: its end needs 1 EiB of shared memory, past half of the ",
             *host = "rail 13: its end needs 1 EiB of memory, past the host's ";
  CHECK(st == RIG_ENOMEM && (strncmp(err.message, shared, strlen(shared)) == 0 ||
                             strncmp(err.message, host, strlen(host)) == 0),
        "%s \"%s\"", rig_status_name(st), err.message);
  CHECK(maps_lines("/dev/shm/") == maps && fds_open() == fds, "a refused rail made something");
  st = rig_rail_room(UINT64_C(1) << 60, &err);
  CHECK(st == RIG_ENOMEM && strncmp(err.message, shared + 9, strlen(shared) - 9) == 0, "%s \"%s\"",
        rig_status_name(st), err.message);
  st = rig_rail_create(13, small, 1, NULL, 0, &r, &err);
  CHECK_OK(st, err);
  if (st == RIG_OK) rig_rail_release(r);
}

/* 2000 rails between ranks 0 and 1, each carrying a count each way: no
 * SysV segment taken, their small areas share a hundred segments (not
 * three each), and once released the process holds no more than before. */
static void two_thousand_rails_share_their_segments_and_release_them(void) {
  if (rank > 1) return;
  enum { RAILS = 2000 };
  static const rig_rail_transfer word[1] = {{0, 0, 8}};
  rig_rail **rails = calloc(RAILS, sizeof *rails);
  if (!rails) return;
  size_t maps = maps_lines("/dev/shm/"), fds = fds_open();
  rig_error err;
  size_t made = 0;
  for (; made < RAILS; made++) {
    rig_status st = rig_rail_connect(MPI_COMM_WORLD, 1 - rank, 1000 + (int64_t)made, word, 1, word,
                                     1, &rails[made], &err);
    CHECK_OK(st, err);
    if (st != RIG_OK) break;
  }
  for (size_t i = 0; i < made; i++) {
    const rig_rail_end *e = rig_rail_end_of(rails[i]);
    memcpy(rig_buffer_host(e->outbound), &i, sizeof i);
    e->ready(rig_buffer_host(e->counts), 1);
  }
  size_t wrong = 0;
  for (size_t i = 0; i < made; i++) {
    const rig_rail_end *e = rig_rail_end_of(rails[i]);
    size_t got = ~i;
    if (wait_count(e, RIG_RAIL_ARRIVED_AT, 1))
      memcpy(&got, rig_buffer_host(e->inbound), sizeof got);
    wrong += got != i;
  }
  CHECK(wrong == 0, "%zu of %zu rails carried another word", wrong, made);
  int ids[8];
  CHECK(sysv_made_here(ids, 8) == 0, "SysV segments made");
  CHECK(shm_fds() < made / 10, "%zu shared-memory segments for %zu rails", shm_fds(), made);
  for (size_t i = 0; i < made; i++) rig_rail_release(rails[i]);
  free(rails);
  pair_barrier();
  CHECK(maps_lines("/dev/shm/") <= maps + 8 && fds_open() <= fds + 8,
        "%zu mappings of shared memory and %zu descriptors, %zu and %zu before the rails",
        maps_lines("/dev/shm/"), fds_open(), maps, fds);
}

/* 100 000 rails made and released in one process (beside one that stays,
 * which keeps the engine): the heap (where malloc is glibc's), the
 * mappings of shared memory and the descriptors end where they began. A
 * released rail is freed, not kept. */
static void rails_made_and_released_leave_nothing_behind(void) {
  if (rank != 0) return;
  static const rig_rail_transfer t[1] = {{0, 0, 64}};
  rig_rail *stays = NULL;
  rig_error err;
  rig_status st = rig_rail_create(20, t, 1, t, 1, &stays, &err);
  CHECK_OK(st, err);
  if (st != RIG_OK) return;
  struct mallinfo2 before = mallinfo2();
  size_t maps = maps_lines("/dev/shm/"), fds = fds_open();
  for (int64_t i = 0; i < 100000 && st == RIG_OK; i++) {
    rig_rail *r = NULL;
    st = rig_rail_create(21 + i % 7, t, 1, t, 1, &r, &err);
    CHECK_OK(st, err);
    if (st == RIG_OK) rig_rail_release(r);
  }
  struct mallinfo2 after = mallinfo2();
  size_t grew = after.uordblks > before.uordblks ? after.uordblks - before.uordblks : 0;
  CHECK(grew < (1u << 20), "the heap grew by %zu bytes", grew);
  CHECK(maps_lines("/dev/shm/") <= maps + 2 && fds_open() <= fds + 2,
        "%zu mappings of shared memory and %zu descriptors, %zu and %zu before",
        maps_lines("/dev/shm/"), fds_open(), maps, fds);
  rig_rail_release(stays);
}

/* ---- peers: waiting on the worker ------------------------------------------------ */

#define PEER_KIND 9

static _Atomic uint32_t peer_word;

/* Sleeps on the worker until peer_word moves, each sleep bounded by what
 * is left of a hang's bound (a wake-up that is lost then ends the wait
 * there); whether it moved before that bound. */
static bool sleep_till_word_moves(void) {
  rig_wait until = rig_wait_begin(RIG_HANG_S);
  double left;
  while (atomic_load(&peer_word) == 0 && (left = RIG_HANG_S - rig_wait_seconds(&until)) > 0)
    if (!rig_peer_progress()) rig_peer_wait(&peer_word, 0, (int64_t)(left * 1e9) + 1);
  return rig_wait_seconds(&until) < RIG_HANG_S;
}

/* Whether thread tid, seen within a hang's bound, sleeps on the worker
 * (rig_peer_wait sleeps in ppoll on its eventfd and the worker's). */
static bool seen_asleep_on_the_worker(pid_t tid) {
  rig_wait until = rig_wait_begin(RIG_HANG_S);
  bool asleep = false;
  while (!(asleep = rig_thread_asleep_in(0, tid, SYS_ppoll)) && rig_wait_more(&until)) {
  }
  return asleep; /* as seen: the worker's events may wake it a moment later */
}

/* Rank 1's: tells rank 0 once the thread `arg` sleeps on the worker. */
static void *tell_when_asleep(void *arg) {
  char asleep = seen_asleep_on_the_worker(*(pid_t *)arg);
  MPI_Send(&asleep, 1, MPI_CHAR, 0, 12, MPI_COMM_WORLD);
  return NULL;
}

static void peer_heard(void *ctx, const void *bytes, size_t len) {
  (void)ctx;
  uint32_t v = 0;
  if (len == sizeof v) memcpy(&v, bytes, sizeof v);
  atomic_store(&peer_word, v);
}

/* Rank 1 sleeps on its worker (rig_peer_wait) until a message of rank 0
 * moves its word: the message itself wakes it, no other thread does. Rank
 * 0 sends once rank 1 is seen asleep. */
static void a_message_wakes_a_peer_asleep_on_the_worker(void) {
  rig_error err;
  atomic_store(&peer_word, 0);
  rig_status st = rig_peer_listen(PEER_KIND, peer_heard, NULL, &err);
  CHECK_OK(st, err);
  const void *self = NULL;
  size_t len = 0;
  if (st == RIG_OK) st = rig_peer_self(&self, &len, &err);
  CHECK_OK(st, err);
  int n = st == RIG_OK ? (int)len : 0;
  int *lens = calloc((size_t)size, sizeof *lens);
  CHECK(lens, "out of memory");
  if (!lens) return;
  MPI_Allgather(&n, 1, MPI_INT, lens, 1, MPI_INT, MPI_COMM_WORLD);
  static unsigned char theirs[RIG_PEER_ADDRESS_MAX];
  if (rank == 1 && n > 0) MPI_Send(self, n, MPI_BYTE, 0, 11, MPI_COMM_WORLD);
  if (rank == 0 && lens[1] > 0)
    MPI_Recv(theirs, lens[1], MPI_BYTE, 1, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  rig_peer *p = NULL;
  if (rank == 0 && lens[1] > 0) {
    rig_status cs = rig_peer_connect(theirs, (size_t)lens[1], NULL, NULL, NULL, &p, &err);
    CHECK_OK(cs, err);
  }
  if (rank == 1) rig_peer_polling(true);
  /* Rank 1 polls before rank 0 sends. */
  MPI_Barrier(MPI_COMM_WORLD);
  char asleep = 0;
  if (rank == 0) {
    MPI_Recv(&asleep, 1, MPI_CHAR, 1, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(asleep, "rank 1 was not seen asleep on its worker within %.0f s", RIG_HANG_S);
  }
  if (rank == 0 && p) {
    uint32_t v = 42;
    rig_status ss = rig_peer_send(p, PEER_KIND, &v, sizeof v, &err);
    CHECK_OK(ss, err);
  }
  if (rank == 1) {
    pid_t me = rig_thread_self();
    pthread_t teller;
    bool told = pthread_create(&teller, NULL, tell_when_asleep, &me) == 0;
    if (!told) MPI_Send(&asleep, 1, MPI_CHAR, 0, 12, MPI_COMM_WORLD);
    bool woken = sleep_till_word_moves();
    rig_peer_polling(false);
    if (told) pthread_join(teller, NULL);
    CHECK(woken, "not woken within %.0f s of the message", RIG_HANG_S);
    CHECK(atomic_load(&peer_word) == 42, "the word is %u, not the 42 sent",
          atomic_load(&peer_word));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (p) CHECK(rig_peer_release(p), "the peer's close did not end");
  if (self) rig_peer_self_release();
  if (st == RIG_OK || self) rig_peer_unlisten(PEER_KIND);
  free(lens);
}

typedef struct nudge {
  pid_t waiter;
  bool saw_it_asleep;
} nudge;

/* Moves the word and nudges once the waiter is seen asleep on the worker. */
static void *nudger(void *arg) {
  nudge *n = arg;
  n->saw_it_asleep = seen_asleep_on_the_worker(n->waiter);
  atomic_store(&peer_word, 7);
  rig_peer_nudge();
  return NULL;
}

/* A thread asleep on the worker for a word that another thread moves (a
 * frame queued, not a message) is woken by that thread's nudge. */
static void a_nudge_wakes_a_peer_waiter_whose_word_moved(void) {
  if (rank != 0) return;
  rig_error err;
  const void *self;
  size_t len;
  rig_status st = rig_peer_self(&self, &len, &err);
  CHECK_OK(st, err);
  if (st != RIG_OK) return;
  atomic_store(&peer_word, 0);
  nudge n = {rig_thread_self(), false};
  pthread_t t;
  bool made = pthread_create(&t, NULL, nudger, &n) == 0;
  CHECK(made, "no thread");
  if (!made) {
    rig_peer_self_release();
    return;
  }
  rig_peer_polling(true);
  bool woken = sleep_till_word_moves();
  rig_peer_polling(false);
  pthread_join(t, NULL);
  CHECK(n.saw_it_asleep, "the waiter was not seen asleep on the worker within %.0f s", RIG_HANG_S);
  CHECK(woken, "the nudge did not wake it within %.0f s", RIG_HANG_S);
  CHECK(atomic_load(&peer_word) == 7, "the word is %u", atomic_load(&peer_word));
  rig_peer_self_release();
}

/* ---- waits on a count -------------------------------------------------------------- */

/* A thread that waits on a count with the library's wait. */
typedef struct count_waiter {
  const void *count;
  uint64_t c;
  _Atomic pid_t tid;
  bool reached;
} count_waiter;

static void *count_wait_main(void *arg) {
  count_waiter *w = arg;
  atomic_store(&w->tid, rig_thread_self());
  w->reached = rig_rail_wait(w->count, w->c);
  return NULL;
}

/* Whether thread tid (0: not yet known) is seen asleep in a system call
 * within a hang's bound: its wait spins, yields, then sleeps. */
static bool seen_asleep(_Atomic pid_t *tid) {
  rig_wait until = rig_wait_begin(RIG_HANG_S);
  for (;;) {
    pid_t t = atomic_load(tid);
    long nr;
    unsigned long arg0;
    if (t && rig_thread_state(0, t, &nr, &arg0) == 'S' && nr >= 0) return true;
    if (!rig_wait_more(&until)) return false;
  }
}

/* A rail of one 8-byte word from rank 0 to rank 1 (the others: none). */
static rig_rail *word_rail(int64_t id) {
  static const rig_rail_transfer word[1] = {{0, 0, 8}};
  rig_rail *r = NULL;
  rig_error err;
  rig_status st = RIG_OK;
  if (rank == 0) st = rig_rail_connect(MPI_COMM_WORLD, 1, id, word, 1, NULL, 0, &r, &err);
  if (rank == 1) st = rig_rail_connect(MPI_COMM_WORLD, 0, id, NULL, 0, word, 1, &r, &err);
  CHECK_OK(st, err);
  return r;
}

/* Rank 1 asleep in rig_rail_wait for arrived 1, rank 0 sends once it is
 * seen asleep: the wait wakes with the word there. Across hosts by TCP it
 * is the waiting thread that progresses the transport (the rail thread
 * sleeps, its event fd given up to the waiter). */
static void a_wait_asleep_on_a_count_wakes_with_its_bytes(void) {
  rig_rail *r = word_rail(21);
  const rig_rail_end *e = r ? rig_rail_end_of(r) : NULL;
  const uint64_t word = UINT64_C(0x5eed0fa11ed0beef);
  if (rank == 1 && e) {
    count_waiter w = {(unsigned char *)rig_buffer_host(e->counts) + RIG_RAIL_ARRIVED_AT, 1, 0,
                      false};
    pthread_t th;
    bool made = pthread_create(&th, NULL, count_wait_main, &w) == 0;
    CHECK(made, "no thread");
    char asleep = made && seen_asleep(&w.tid);
    MPI_Send(&asleep, 1, MPI_CHAR, 0, 21, MPI_COMM_WORLD);
    if (made) pthread_join(th, NULL);
    CHECK(w.reached, "the wait ended without its count");
    uint64_t got = 0;
    memcpy(&got, rig_buffer_host(e->inbound), sizeof got);
    CHECK(got == word, "the word is %llx", (unsigned long long)got);
  } else if (rank == 0 && e) {
    char asleep = 0;
    MPI_Recv(&asleep, 1, MPI_CHAR, 1, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(asleep, "rank 1's wait was not seen asleep within %.0f s", RIG_HANG_S);
    memcpy(rig_buffer_host(e->outbound), &word, sizeof word);
    e->ready(rig_buffer_host(e->counts), 1);
  } else if (rank < 2) {
    char none = 0;
    if (rank == 1) MPI_Send(&none, 1, MPI_CHAR, 0, 21, MPI_COMM_WORLD);
    if (rank == 0) MPI_Recv(&none, 1, MPI_CHAR, 1, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (r) rig_rail_release(r);
}

/* A wait asleep on a count that will not come ends, false, once its rail
 * is raised (as a failed job raises every rail). */
static void a_wait_ends_false_once_its_rail_is_raised(void) {
  rig_rail *r = word_rail(22);
  const rig_rail_end *e = r ? rig_rail_end_of(r) : NULL;
  if (rank == 1 && e) {
    count_waiter w = {(unsigned char *)rig_buffer_host(e->counts) + RIG_RAIL_ARRIVED_AT, 1, 0,
                      true};
    pthread_t th;
    bool made = pthread_create(&th, NULL, count_wait_main, &w) == 0;
    CHECK(made, "no thread");
    CHECK(made && seen_asleep(&w.tid), "the wait was not seen asleep within %.0f s", RIG_HANG_S);
    rig_rail_raise(r, "a test raised it");
    if (made) pthread_join(th, NULL);
    CHECK(!w.reached, "the wait said its count came");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (r) rig_rail_release(r);
}

/* This process's rail thread (named rig-rail), or 0. */
static pid_t rail_thread(void) {
  DIR *d = opendir("/proc/self/task");
  pid_t found = 0;
  for (struct dirent *de; d && !found && (de = readdir(d));) {
    char path[320], comm[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%.255s/comm", de->d_name);
    FILE *f = fopen(path, "r");
    if (f && fgets(comm, sizeof comm, f) && strncmp(comm, "rig-rail", 8) == 0)
      found = (pid_t)atoi(de->d_name);
    if (f) fclose(f);
  }
  if (d) closedir(d);
  return found;
}

static bool asleep_on_its_event(pid_t tid) {
#ifdef SYS_epoll_wait
  if (rig_thread_asleep_in(0, tid, SYS_epoll_wait)) return true;
#endif
  return rig_thread_asleep_in(0, tid, SYS_epoll_pwait);
}

/* While a run is in flight (rig_rails_serve) and no thread waits on a
 * count, the rail thread keeps progressing a rail whose peer reaches it by
 * emulated RMA (TCP): it is never seen asleep on its event fd, and once
 * the run is over it is, soon. (On shared memory nothing needs serving.) */
static void the_rail_thread_serves_emulated_rails_while_a_run_is_in_flight(void) {
  const char *tls = getenv("RIG_UCX_TLS");
  if (!tls || !*tls) tls = getenv("UCX_TLS");
  bool emulated = tls && strncmp(tls, "tcp", 3) == 0;
  rig_rail *r = word_rail(23);
  if (rank == 1 && r && !emulated)
    printf("\n  (rank 1: rails by shared memory here: nothing to serve, only checked over tcp) ");
  if (rank == 1 && r && emulated) {
    pid_t tid = rail_thread();
    CHECK(tid > 0, "no thread named rig-rail");
    rig_rails_serve(true);
    /* Woken by the serve if it slept: it is up within a bound. */
    rig_wait up = rig_wait_begin(RIG_HANG_S);
    while (tid > 0 && asleep_on_its_event(tid) && rig_wait_more(&up)) {
    }
    unsigned asleep = 0;
    for (int i = 0; tid > 0 && i < 300; i++) {
      asleep += asleep_on_its_event(tid);
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
    }
    CHECK(asleep == 0, "the rail thread was seen asleep %u times while a run was in flight",
          asleep);
    rig_rails_serve(false);
    rig_wait until = rig_wait_begin(RIG_HANG_S);
    bool slept = false;
    while (tid > 0 && !(slept = asleep_on_its_event(tid)) && rig_wait_more(&until)) {
    }
    CHECK(slept, "the rail thread never slept once the run was over");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (r) rig_rail_release(r);
}

/* Every test, in order: rank 0 runs each inside CUnit, the others beside. */
static const struct {
  const char *name;
  void (*run)(void);
} tests[] = {
#define T(f)                                                                                       \
  { #f, f }
    T(an_end_is_laid_out_as_the_design_says),
    T(an_attach_refuses_inbound_copies_its_transfers_do_not_take),
    T(connect_carries_every_byte_in_order_over_1000_runs),
    T(both_directions_carry_three_transfers_byte_exact_over_1000_runs),
    T(ready_may_come_from_several_threads),
    T(release_with_transfers_in_flight_loses_nothing),
    T(rail_refusals_name_the_rule),
    T(a_program_on_an_agent_echoes_the_controllers_end_over_100_runs),
    T(a_cpu_queue_kernel_on_an_agent_echoes_over_100_runs),
    T(a_rail_between_two_agents_carries_a_paced_pipeline),
    T(a_load_of_a_rail_this_machine_lacks_is_refused_here_and_on_an_agent),
    T(job_rail_refusals_name_the_rule_and_make_nothing),
    T(a_failed_job_raises_every_count_of_every_end),
    T(a_ready_past_what_the_rail_may_send_fails_the_rail_naming_it),
    T(no_other_uid_reaches_the_memory_of_a_live_rail_or_area),
    T(ucx_messages_go_to_stderr_not_stdout),
    T(an_end_past_the_hosts_room_is_refused_before_anything_is_made),
    T(two_thousand_rails_share_their_segments_and_release_them),
    T(rails_made_and_released_leave_nothing_behind),
    T(a_message_wakes_a_peer_asleep_on_the_worker),
    T(a_nudge_wakes_a_peer_waiter_whose_word_moved),
    T(a_wait_asleep_on_a_count_wakes_with_its_bytes),
    T(a_wait_ends_false_once_its_rail_is_raised),
    T(the_rail_thread_serves_emulated_rails_while_a_run_is_in_flight),
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

/* A test known to fail in this run (RIG_TEST_KNOWN_FAILURE=NAME=WHY, set
 * in tests/CMakeLists.txt): left out, saying why, until its bug is fixed. */
static bool known_failure(const char *name) {
  const char *k = getenv("RIG_TEST_KNOWN_FAILURE");
  size_t n = strlen(name);
  if (!k || strncmp(k, name, n) != 0 || k[n] != '=') return false;
  printf("\n  SKIPPED %s: a known failure here: %s\n", name, k + n + 1);
  return true;
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  mpi_nsysv = sysv_made_here(mpi_sysv, sizeof mpi_sysv / sizeof *mpi_sysv);
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
    for (int i = 0; s && i < NTESTS; i++)
      if (!known_failure(tests[i].name)) CU_add_test(s, tests[i].name, cunit_test);
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
