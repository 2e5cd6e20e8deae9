/* bench_rail: the rails' rows (docs/bench.md), an MPI program of 2 ranks
 * (scripts/bench.sh runs it under `mpirun -n 2`). Each row runs beside a
 * floor done by hand with UCX in the same binary: its own context (the
 * rails' features: RMA, 64-bit atomics, wake-up, so that UCX picks the
 * same transports; UCX_TLS is honoured by both), its own worker, driven by
 * the main thread, and its own endpoint, worker addresses and remote keys
 * exchanged over MPI, its buffers allocated by UCX as the rails' areas
 * are. Like the rails' endpoints to a peer on the same host, it does not
 * ask for peer-failure handling (with it UCX 1.13 leaves shared memory out
 * and both would go over tcp on lo); $RIG_BENCH_RAIL_FLOOR_PEER=1 asks for
 * it, for comparison. stderr names the floor's lanes. Rows and floors alternate by batches (which
 * goes first alternates), an MPI_Barrier between batches, so that drift hits both; nothing is
 * allocated in the timed loops.
 *
 * - rail/8B, rail/4KiB: a ping-pong over the two directions of one rail
 *   made with rig_rail_connect (one transfer of the size each way). Rank 0
 *   writes its outbound copy and calls ready(counts, c); rank 1 spins until
 *   its arrived >= c (acquire), checks the bytes, writes its reply and
 *   calls ready; rank 0 spins on its arrived. A sample is one round trip,
 *   in ns. Floor: the same round trip by hand, ucp_put_nbx into the peer's
 *   registered buffer, ucp_worker_fence, a non-fetching
 *   UCP_ATOMIC_OP_ADD of 1 on the peer's count; the peer polls its count,
 *   progressing its worker, and replies the same way. Target: ratio <= 1.2.
 * - rail/64MiB: one 64 MiB transfer from rank 0 per run (its bytes written
 *   once, before), rank 1 waiting for arrived and acknowledging with an
 *   8-byte transfer back; a sample is ready to the ack's arrival, reported
 *   in MB/s (1e6 bytes/s). Floor: ucp_put_nbx of the 64 MiB between the
 *   same two registered buffers and a flush of the endpoint (the bytes are
 *   at the peer), the peer progressing its worker. Target: >= 0.9x the
 *   floor's MB/s (ratio <= 1/0.9).
 * - rail/64MiB memcpy: memcpy of 64 MiB on rank 0, for scale, interleaved
 *   in the same batches; its "floor" is the UCX put of rail/64MiB.
 *   Reported only.
 *
 * The rail waits are the library's, rig_rail_wait, as a kernel's are
 * (rig_grid.calls): it progresses the worker where the bytes land only by
 * this process's progress (TCP), and turns it where what this process
 * sends is still in flight (a large put in pieces), spins, yields, then
 * sleeps; the floor's polls progress their worker. $RIG_BENCH_RAIL_YIELD=0
 * makes them plain spins (pause) on the count instead.
 * The table shows medians; stderr the p99s. Set
 * $RIG_BENCH_RAIL_INFO to print the floor endpoint's lanes (ucp_ep_print_info).
 * $RIG_BENCH_RAIL_BATCHES, $RIG_BENCH_RAIL_TRIPS (round trips per batch)
 * and $RIG_BENCH_RAIL_RUNS (64 MiB runs per batch) override the counts.
 *
 * Usage: mpirun -n 2 bench_rail [RESULTS.jsonl] */
#include <mpi.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#include "bench.h"
#include "rig/rig_job.h"
#include "rig/rig_rail.h"

#define BATCHES    12  /* batches of each ping-pong row and of its floor */
#define TRIPS      200 /* timed round trips per batch */
#define WARMUP     50  /* untimed ones at the start of each batch */
#define BW_BATCHES 6   /* batches of rail/64MiB, its floor and memcpy */
#define BW_RUNS    3   /* timed 64 MiB runs per batch */
#define BW_WARMUP  1
#define BIG        ((size_t)64 << 20)
#define SMALL_MAX  4096
#define TAG        7401

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "bench_rail: %s:%d: %s failed\n", __FILE__, __LINE__, #cond);                \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

static int rank;
static MPI_Comm comm;

static void die(const char *what, const rig_error *err) {
  fprintf(stderr, "bench_rail: rank %d: %s: %s\n", rank, what, err->message);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void ucx_check(const char *what, ucs_status_t st) {
  if (st == UCS_OK) return;
  fprintf(stderr, "bench_rail: rank %d: %s: %s\n", rank, what, ucs_status_string(st));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static size_t env_count(const char *name, size_t fallback) {
  const char *v = getenv(name);
  long n = v && v[0] ? atol(v) : 0;
  return n > 0 ? (size_t)n : fallback;
}

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* The bytes of a transfer: every byte the trip's value, so that the reader
 * checks the first and the last. */
static inline void fill(unsigned char *p, size_t len, uint64_t trip) {
  memset(p, (int)(trip & 0xff), len);
}

static inline void check_bytes(const unsigned char *p, size_t len, uint64_t trip) {
  unsigned char v = (unsigned char)(trip & 0xff);
  CHECK(p[0] == v && p[len - 1] == v);
}

/* Sends mine and receives the peer's bytes (malloc'd), outside timing. */
static void *swap_bytes(const void *mine, size_t len, size_t *theirs_len) {
  int64_t mlen = (int64_t)len, tlen = 0;
  int peer = 1 - rank;
  MPI_Sendrecv(&mlen, 1, MPI_INT64_T, peer, TAG, &tlen, 1, MPI_INT64_T, peer, TAG, comm,
               MPI_STATUS_IGNORE);
  CHECK(tlen > 0 && tlen < (1 << 20));
  void *theirs = malloc((size_t)tlen);
  CHECK(theirs);
  MPI_Sendrecv(mine, (int)len, MPI_BYTE, peer, TAG, theirs, (int)tlen, MPI_BYTE, peer, TAG, comm,
               MPI_STATUS_IGNORE);
  *theirs_len = (size_t)tlen;
  return theirs;
}

/* ---- the floor: UCX by hand ------------------------------------------------------ */

/* A registered region of this process and the peer's same region. */
typedef struct region {
  unsigned char *mem;
  size_t len;
  ucp_mem_h memh;
  uint64_t peer;
  ucp_rkey_h rkey;
} region;

typedef struct floor_ucx {
  ucp_context_h ctx;
  ucp_worker_h worker;
  ucp_ep_h ep;
  region small; /* [0, 4096) outgoing bytes, [4096, 8192) incoming */
  region count; /* the count at 0, raised by the peer's adds */
  region big;   /* 64 MiB: rank 0's source, rank 1's destination */
  void *put_req, *add_req;
  uint64_t one;
  uint64_t seen;  /* counts this rank waited for */
  bool peer_mode; /* the endpoint handles peer failure, as the rails' do */
} floor_ucx;

static void region_map(floor_ucx *f, region *r, size_t len) {
  /* Allocated by UCX, as the rails' areas are: a peer on the host maps
   * it, and puts and adds into it are stores. */
  r->len = len;
  ucp_mem_map_params_t p = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                          UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                                          UCP_MEM_MAP_PARAM_FIELD_FLAGS,
                            .address = NULL,
                            .length = len,
                            .flags = UCP_MEM_MAP_ALLOCATE};
  ucx_check("ucp_mem_map", ucp_mem_map(f->ctx, &p, &r->memh));
  ucp_mem_attr_t attr = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
  ucx_check("ucp_mem_query", ucp_mem_query(r->memh, &attr));
  r->mem = attr.address;
  memset(r->mem, 0, len); /* every page faulted in before timing */
}

/* Exchanges r's address and remote key with the peer's. */
static void region_swap(floor_ucx *f, region *r) {
  void *key;
  size_t key_len;
  ucx_check("ucp_rkey_pack", ucp_rkey_pack(f->ctx, r->memh, &key, &key_len));
  unsigned char *mine = malloc(8 + key_len);
  CHECK(mine);
  uint64_t at = (uint64_t)(uintptr_t)r->mem;
  memcpy(mine, &at, 8);
  memcpy(mine + 8, key, key_len);
  ucp_rkey_buffer_release(key);
  size_t len;
  unsigned char *theirs = swap_bytes(mine, 8 + key_len, &len);
  CHECK(len > 8);
  memcpy(&r->peer, theirs, 8);
  ucx_check("ucp_ep_rkey_unpack", ucp_ep_rkey_unpack(f->ep, theirs + 8, &r->rkey));
  free(theirs);
  free(mine);
}

static void floor_open(floor_ucx *f) {
  memset(f, 0, sizeof *f);
  f->one = 1;
  ucp_config_t *config;
  ucx_check("ucp_config_read", ucp_config_read(NULL, NULL, &config));
  /* The rails' memory: posix shared memory, never sysv (docs/rails.md,
   * "Memory"); a UCX_TLS the user set is taken as it is. */
  if (!getenv("UCX_TLS")) {
    ucx_check("ucp_config_modify", ucp_config_modify(config, "TLS", "^sysv"));
    ucx_check("ucp_config_modify", ucp_config_modify(config, "ALLOC_PRIO", "md:posix"));
  }
  ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                         .features = UCP_FEATURE_RMA | UCP_FEATURE_AMO64 | UCP_FEATURE_WAKEUP};
  ucx_check("ucp_init", ucp_init(&params, config, &f->ctx));
  ucp_config_release(config);
  ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                            .thread_mode = UCS_THREAD_MODE_SINGLE};
  ucx_check("ucp_worker_create", ucp_worker_create(f->ctx, &wp, &f->worker));
  ucp_address_t *address;
  size_t address_len, peer_len;
  ucx_check("ucp_worker_get_address", ucp_worker_get_address(f->worker, &address, &address_len));
  void *peer = swap_bytes(address, address_len, &peer_len);
  ucp_worker_release_address(f->worker, address);
  /* As the rails' endpoints to a peer on the same host: no peer-failure
   * mode (it decides the transports UCX may pick: with it, tcp only);
   * $RIG_BENCH_RAIL_FLOOR_PEER=1 asks for it, for comparison. */
  const char *peer_mode = getenv("RIG_BENCH_RAIL_FLOOR_PEER");
  f->peer_mode = peer_mode && peer_mode[0] == '1';
  ucp_ep_params_t ep = {
      .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
      .address = (const ucp_address_t *)peer,
      .err_mode = f->peer_mode ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE};
  ucx_check("ucp_ep_create", ucp_ep_create(f->worker, &ep, &f->ep));
  free(peer);
  region_map(f, &f->small, 2 * SMALL_MAX);
  region_map(f, &f->count, 4096);
  region_map(f, &f->big, BIG);
  region_swap(f, &f->small);
  region_swap(f, &f->count);
  region_swap(f, &f->big);
  /* Wire the endpoint up before anything is timed. */
  void *req = ucp_ep_flush_nbx(f->ep, &(ucp_request_param_t){0});
  CHECK(!UCS_PTR_IS_ERR(req));
  if (req) {
    while (ucp_request_check_status(req) == UCS_INPROGRESS) ucp_worker_progress(f->worker);
    ucp_request_free(req);
  }
  MPI_Barrier(comm);
}

/* Progresses the worker until *req is done, then frees it. */
static void floor_complete(floor_ucx *f, void **req) {
  if (!*req) return;
  CHECK(!UCS_PTR_IS_ERR(*req));
  ucs_status_t st;
  while ((st = ucp_request_check_status(*req)) == UCS_INPROGRESS) ucp_worker_progress(f->worker);
  ucx_check("a floor request", st);
  ucp_request_free(*req);
  *req = NULL;
}

static void floor_add(floor_ucx *f) {
  ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE,
                           .datatype = ucp_dt_make_contig(sizeof f->one)};
  f->add_req =
      ucp_atomic_op_nbx(f->ep, UCP_ATOMIC_OP_ADD, &f->one, 1, f->count.peer, f->count.rkey, &p);
  CHECK(!UCS_PTR_IS_ERR(f->add_req));
}

/* One transfer of len bytes (value trip) into the peer's incoming half, a
 * fence, an add on its count. The previous one's requests complete first
 * (the outgoing half is rewritten). */
static void floor_send(floor_ucx *f, size_t len, uint64_t trip) {
  floor_complete(f, &f->put_req);
  floor_complete(f, &f->add_req);
  fill(f->small.mem, len, trip);
  ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH, .memh = f->small.memh};
  f->put_req = ucp_put_nbx(f->ep, f->small.mem, len, f->small.peer + SMALL_MAX, f->small.rkey, &p);
  CHECK(!UCS_PTR_IS_ERR(f->put_req));
  ucp_worker_fence(f->worker);
  floor_add(f);
}

/* Polls this rank's count, progressing the worker, until it is c. */
static void floor_wait(floor_ucx *f, uint64_t c) {
  const uint64_t *count = (const uint64_t *)f->count.mem;
  while (__atomic_load_n(count, __ATOMIC_ACQUIRE) < c) ucp_worker_progress(f->worker);
}

static void floor_close(floor_ucx *f) {
  floor_complete(f, &f->put_req);
  floor_complete(f, &f->add_req);
  void *req = ucp_ep_flush_nbx(f->ep, &(ucp_request_param_t){0});
  floor_complete(f, &req);
  MPI_Barrier(comm);
  region *rs[3] = {&f->small, &f->count, &f->big};
  for (int i = 0; i < 3; i++) ucp_rkey_destroy(rs[i]->rkey);
  req = ucp_ep_close_nbx(f->ep, &(ucp_request_param_t){0});
  if (UCS_PTR_IS_PTR(req)) floor_complete(f, &req);
  MPI_Barrier(comm);
  /* The unmap frees what UCX allocated. */
  for (int i = 0; i < 3; i++) ucp_mem_unmap(f->ctx, rs[i]->memh);
  ucp_worker_destroy(f->worker);
  ucp_cleanup(f->ctx);
}

/* The floor endpoint's lanes (its transports), from ucp_ep_print_info, on
 * stderr. */
static void print_lanes(floor_ucx *f) {
  char *text = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&text, &len);
  if (!m) return;
  ucp_ep_print_info(f->ep, m);
  fclose(m);
  fprintf(stderr, "(bench_rail: floor endpoint, peer failure %s:",
          f->peer_mode ? "handled" : "not handled");
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    char *lane = strstr(line, "lane[");
    if (!lane) continue;
    while (lane[strlen(lane) - 1] == ' ') lane[strlen(lane) - 1] = '\0';
    fprintf(stderr, " %s;", lane);
  }
  fprintf(stderr, ")\n");
  free(text);
}

/* ---- the rails ------------------------------------------------------------------- */

/* This rank's end of a rail and where its counts and copies lie. */
typedef struct rail_side {
  rig_rail *rail;
  const rig_rail_end *e;
  void *counts;
  _Atomic uint64_t *sent, *arrived;
  unsigned char *out, *in;
  uint64_t out_copy, in_copy;
  uint64_t c; /* the last count made ready here and awaited from the peer */
} rail_side;

/* Rail id between ranks 0 and 1: `to_one` from rank 0 to 1, `to_zero` back. */
static void rail_open(rail_side *s, int64_t id, int64_t to_one, int64_t to_zero) {
  rig_rail_transfer a[1] = {{0, 0, to_one}}, b[1] = {{0, 0, to_zero}};
  rig_error err;
  rig_status st = rank == 0 ? rig_rail_connect(comm, 1, id, a, 1, b, 1, &s->rail, &err)
                            : rig_rail_connect(comm, 0, id, b, 1, a, 1, &s->rail, &err);
  if (st != RIG_OK) die("rig_rail_connect", &err);
  s->e = rig_rail_end_of(s->rail);
  CHECK(s->e);
  s->counts = rig_buffer_host(s->e->counts);
  s->sent = (_Atomic uint64_t *)((unsigned char *)s->counts + RIG_RAIL_SENT_AT);
  s->arrived = (_Atomic uint64_t *)((unsigned char *)s->counts + RIG_RAIL_ARRIVED_AT);
  s->out = rig_buffer_host(s->e->outbound);
  s->in = rig_buffer_host(s->e->inbound);
  s->out_copy = rig_buffer_length(s->e->outbound) / 2;
  s->in_copy = rig_buffer_length(s->e->inbound) / 2;
  s->c = 0;
}

static bool wait_yields; /* $RIG_BENCH_RAIL_YIELD */
static inline void rail_wait_count(_Atomic uint64_t *count, uint64_t c) {
  if (wait_yields) {
    CHECK(rig_rail_wait(count, c));
    return;
  }
  uint64_t v;
  while ((v = atomic_load_explicit(count, memory_order_acquire)) < c) relax();
  CHECK(v != RIG_RAIL_RAISED);
}

/* Count c (the next): its bytes in outbound copy (c - 1) % 2, which must
 * have left (sent >= c - 2) before it is rewritten, then ready. */
static inline void rail_send(rail_side *s, size_t len, uint64_t c, bool write) {
  if (write) {
    if (c > 2) rail_wait_count(s->sent, c - 2);
    fill(s->out + ((c - 1) % 2) * s->out_copy, len, c);
  }
  s->e->ready(s->counts, c);
}

static inline const unsigned char *rail_inbound(const rail_side *s, uint64_t c) {
  return s->in + ((c - 1) % 2) * s->in_copy;
}

/* ---- the ping-pong rows ------------------------------------------------------------- */

/* `trips` round trips of len bytes over the rail after `warmup` untimed:
 * rank 0 times each into out. */
static void rail_pingpong(rail_side *s, size_t len, size_t warmup, size_t trips, double *out) {
  for (size_t i = 0; i < warmup + trips; i++) {
    uint64_t c = ++s->c;
    if (rank == 0) {
      uint64_t t0 = bench_now_ns();
      rail_send(s, len, c, true);
      rail_wait_count(s->arrived, c);
      uint64_t t1 = bench_now_ns();
      check_bytes(rail_inbound(s, c), len, c);
      if (i >= warmup) out[i - warmup] = (double)(t1 - t0);
    } else {
      rail_wait_count(s->arrived, c);
      check_bytes(rail_inbound(s, c), len, c);
      rail_send(s, len, c, true);
    }
  }
}

static void floor_pingpong(floor_ucx *f, size_t len, size_t warmup, size_t trips, double *out) {
  const unsigned char *in = f->small.mem + SMALL_MAX;
  for (size_t i = 0; i < warmup + trips; i++) {
    uint64_t c = ++f->seen;
    if (rank == 0) {
      uint64_t t0 = bench_now_ns();
      floor_send(f, len, c);
      floor_wait(f, c);
      uint64_t t1 = bench_now_ns();
      check_bytes(in, len, c);
      if (i >= warmup) out[i - warmup] = (double)(t1 - t0);
    } else {
      floor_wait(f, c);
      check_bytes(in, len, c);
      floor_send(f, len, c);
    }
  }
}

typedef struct pingpong_row {
  const char *name;
  size_t len;
  rail_side *rail;
} pingpong_row;

static int pingpong(int argc, char **argv, const pingpong_row *row, floor_ucx *f, double *r,
                    double *fl, size_t batches, size_t trips) {
  size_t n = batches * trips;
  for (size_t b = 0; b < batches; b++) {
    for (int k = 0; k < 2; k++) {
      if ((k == 0) == (b % 2 == 0))
        rail_pingpong(row->rail, row->len, WARMUP, trips, r + b * trips);
      else
        floor_pingpong(f, row->len, WARMUP, trips, fl + b * trips);
      MPI_Barrier(comm);
    }
  }
  if (rank != 0) return 0;
  double median = bench_median(r, n), p99 = bench_p99(r, n);
  double floor_median = bench_median(fl, n), floor_p99 = bench_p99(fl, n);
  double ratio = median / floor_median;
  /* Across hosts the floor's own round trip varies more: 1.3x there. */
  double bound = bench_across_hosts() ? 1.3 : 1.2;
  bench_row out = {
      .name = bench_row_name(row->name),
      .unit = "ns",
      .median = median,
      .floor_median = floor_median,
      .ratio = ratio,
      .samples = n,
      .target = bench_across_hosts() ? "<= 1.3x floor" : "<= 1.2x floor",
      .ok = ratio <= bound,
  };
  int rc = bench_report(argc, argv, &out);
  fprintf(stderr,
          "(%s: round trip p99 %.1f ns; floor: put + fence + add by hand, median %.1f, p99 %.1f "
          "ns; %zu batches of %zu)\n",
          row->name, p99, floor_median, floor_p99, batches, trips);
  return rc;
}

/* ---- rail/64MiB --------------------------------------------------------------------- */

/* `runs` runs of the 64 MiB transfer and its ack after `warmup`: rank 0
 * times ready to the ack's arrival. Rank 0's copies were written before. */
static void rail_bandwidth(rail_side *s, size_t warmup, size_t runs, double *out) {
  for (size_t i = 0; i < warmup + runs; i++) {
    uint64_t c = ++s->c;
    if (rank == 0) {
      uint64_t t0 = bench_now_ns();
      rail_send(s, BIG, c, false);
      rail_wait_count(s->arrived, c);
      uint64_t t1 = bench_now_ns();
      if (i >= warmup) out[i - warmup] = (double)(t1 - t0);
    } else {
      rail_wait_count(s->arrived, c);
      rail_send(s, 8, c, true);
    }
  }
}

/* Rank 0 puts the 64 MiB and flushes, `runs` times after `warmup`; rank 1
 * progresses until rank 0's add after the last. */
static void floor_bandwidth(floor_ucx *f, size_t warmup, size_t runs, double *out) {
  if (rank == 0) {
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH, .memh = f->big.memh};
    ucp_request_param_t none = {0};
    for (size_t i = 0; i < warmup + runs; i++) {
      uint64_t t0 = bench_now_ns();
      f->put_req = ucp_put_nbx(f->ep, f->big.mem, BIG, f->big.peer, f->big.rkey, &p);
      CHECK(!UCS_PTR_IS_ERR(f->put_req));
      void *flush = ucp_ep_flush_nbx(f->ep, &none);
      floor_complete(f, &flush);
      floor_complete(f, &f->put_req);
      uint64_t t1 = bench_now_ns();
      if (i >= warmup) out[i - warmup] = (double)(t1 - t0);
    }
    floor_add(f);
    floor_complete(f, &f->add_req);
  } else {
    floor_wait(f, ++f->seen);
  }
}

static void memcpy_bandwidth(const void *src, void *dst, size_t warmup, size_t runs, double *out) {
  if (rank != 0) return;
  for (size_t i = 0; i < warmup + runs; i++) {
    uint64_t t0 = bench_now_ns();
    memcpy(dst, src, BIG);
    __asm__ __volatile__("" : : "r"(dst) : "memory");
    uint64_t t1 = bench_now_ns();
    if (i >= warmup) out[i - warmup] = (double)(t1 - t0);
  }
}

static double mbps(double ns) {
  return (double)BIG / 1e6 / (ns / 1e9);
}

static int bandwidth(int argc, char **argv, rail_side *s, floor_ucx *f, size_t batches,
                     size_t runs) {
  size_t n = batches * runs;
  double *r = malloc(n * sizeof *r), *fl = malloc(n * sizeof *fl), *mc = malloc(n * sizeof *mc);
  void *dst = rank == 0 ? malloc(BIG) : NULL;
  CHECK(r && fl && mc && (dst || rank != 0));
  if (rank == 0) {
    memset(dst, 0, BIG);
    fill(s->out, BIG, 0x33);
    fill(s->out + s->out_copy, BIG, 0x33);
    fill(f->big.mem, BIG, 0x44);
  }
  MPI_Barrier(comm);
  for (size_t b = 0; b < batches; b++) {
    for (int k = 0; k < 3; k++) {
      int which = (int)((k + b) % 3); /* which goes first turns */
      if (which == 0)
        rail_bandwidth(s, BW_WARMUP, runs, r + b * runs);
      else if (which == 1)
        floor_bandwidth(f, BW_WARMUP, runs, fl + b * runs);
      else
        memcpy_bandwidth(f->big.mem, dst, BW_WARMUP, runs, mc + b * runs);
      MPI_Barrier(comm);
    }
  }
  int rc = 0;
  if (rank == 1) {
    /* The last run's bytes landed (what the floor put last). */
    check_bytes(f->big.mem, BIG, 0x44);
    check_bytes(rail_inbound(s, s->c), BIG, 0x33);
  } else {
    double median = bench_median(r, n), p99 = bench_p99(r, n);
    double floor_median = bench_median(fl, n), floor_p99 = bench_p99(fl, n);
    double copy_median = bench_median(mc, n), copy_p99 = bench_p99(mc, n);
    bench_row row = {
        .name = bench_row_name("rail/64MiB"),
        .unit = "MB/s",
        .median = mbps(median),
        .floor_median = mbps(floor_median),
        .ratio = median / floor_median,
        .samples = n,
        .target = ">= 0.9x floor",
        .ok = mbps(median) >= 0.9 * mbps(floor_median),
    };
    rc |= bench_report(argc, argv, &row);
    bench_row copy = {
        .name = bench_row_name("rail/64MiB memcpy"),
        .unit = "MB/s",
        .median = mbps(copy_median),
        .floor_median = mbps(floor_median),
        .ratio = copy_median / floor_median,
        .samples = n,
        .target = "report",
        .ok = true,
    };
    rc |= bench_report(argc, argv, &copy);
    fprintf(stderr,
            "(rail/64MiB: ready to ack %.2f ms median, %.2f ms p99; floor: put + flush %.2f ms, "
            "p99 %.2f ms; memcpy %.2f ms, p99 %.2f ms; %zu batches of %zu)\n",
            median / 1e6, p99 / 1e6, floor_median / 1e6, floor_p99 / 1e6, copy_median / 1e6,
            copy_p99 / 1e6, batches, runs);
  }
  free(r);
  free(fl);
  free(mc);
  free(dst);
  return rc;
}

/* ---- main ------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  int provided, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "bench_rail: run it under mpirun -n 2\n");
    MPI_Finalize();
    return 1;
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  char host[MPI_MAX_PROCESSOR_NAME] = "", other[MPI_MAX_PROCESSOR_NAME] = "";
  int host_len = 0;
  MPI_Get_processor_name(host, &host_len);
  MPI_Sendrecv(host, sizeof host, MPI_CHAR, 1 - rank, 0, other, sizeof other, MPI_CHAR, 1 - rank, 0,
               comm, MPI_STATUS_IGNORE);
  if (strcmp(host, other) != 0) bench_set_hosts(true);
  const char *yield = getenv("RIG_BENCH_RAIL_YIELD");
  wait_yields = !(yield && yield[0]) || strcmp(yield, "0") != 0;
  size_t batches = env_count("RIG_BENCH_RAIL_BATCHES", BATCHES);
  size_t trips = env_count("RIG_BENCH_RAIL_TRIPS", TRIPS);
  size_t bw_runs = env_count("RIG_BENCH_RAIL_RUNS", BW_RUNS);
  size_t bw_batches = (batches + 1) / 2;
  if (bw_batches > BW_BATCHES) bw_batches = BW_BATCHES;

  floor_ucx f;
  floor_open(&f);
  const char *info = getenv("RIG_BENCH_RAIL_INFO");
  if (info && info[0] && rank == 0) ucp_ep_print_info(f.ep, stderr);
  if (rank == 0) print_lanes(&f);
  rail_side s8, s4k, sbig;
  rail_open(&s8, 1, 8, 8);
  rail_open(&s4k, 2, SMALL_MAX, SMALL_MAX);
  rail_open(&sbig, 3, (int64_t)BIG, 8);

  double *r = malloc(batches * trips * sizeof *r), *fl = malloc(batches * trips * sizeof *fl);
  CHECK(r && fl);
  if (rank == 0) bench_print_header();
  const char *tls = getenv("UCX_TLS");
  if (rank == 0)
    fprintf(stderr, "(bench_rail: UCX_TLS=%s UCX_NET_DEVICES=%s; rail waits %s)\n",
            tls ? tls : "(default)",
            getenv("UCX_NET_DEVICES") ? getenv("UCX_NET_DEVICES") : "(unset)",
            wait_yields ? "rig_rail_wait" : "spin");
  int rc = 0;
  pingpong_row rows[2] = {{"rail/8B", 8, &s8}, {"rail/4KiB", SMALL_MAX, &s4k}};
  for (int i = 0; i < 2; i++) rc |= pingpong(argc, argv, &rows[i], &f, r, fl, batches, trips);
  rc |= bandwidth(argc, argv, &sbig, &f, bw_batches, bw_runs);
  free(r);
  free(fl);

  rig_rail_release(s8.rail);
  rig_rail_release(s4k.rail);
  rig_rail_release(sbig.rail);
  floor_close(&f);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return rc == 0 ? 0 : 1;
}
