/* bench_remote's UCX floors (remote_floor.h). The regions are UCX's
 * (ucp_mem_map allocating them, as the rails' and the job's areas are), so
 * that on one host the peer maps them; the endpoint asks for no peer
 * failure handling, as the job's do on one host. */
#include "remote_floor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

#include "bench.h"

#define TAG 7302

typedef struct region {
  unsigned char *mem;
  ucp_mem_h memh;
  uint64_t peer;
  ucp_rkey_h rkey;
} region;

static struct {
  MPI_Comm comm;
  int rank;
  ucp_context_h ctx;
  ucp_worker_h worker;
  ucp_ep_h ep;
  region small, count, big;
  uint64_t one, seen;
} F;

static void check(const char *what, ucs_status_t st) {
  if (st == UCS_OK) return;
  fprintf(stderr, "bench_remote: UCX floor: %s: %s\n", what, ucs_status_string(st));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void *swap(const void *mine, size_t len, size_t *theirs_len) {
  int64_t mlen = (int64_t)len, tlen = 0;
  int peer = 1 - F.rank;
  MPI_Sendrecv(&mlen, 1, MPI_INT64_T, peer, TAG, &tlen, 1, MPI_INT64_T, peer, TAG, F.comm,
               MPI_STATUS_IGNORE);
  void *theirs = malloc(tlen > 0 ? (size_t)tlen : 1);
  if (!theirs) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Sendrecv(mine, (int)len, MPI_BYTE, peer, TAG, theirs, (int)tlen, MPI_BYTE, peer, TAG, F.comm,
               MPI_STATUS_IGNORE);
  *theirs_len = (size_t)tlen;
  return theirs;
}

static void region_make(region *r, size_t len) {
  ucp_mem_map_params_t p = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                          UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                                          UCP_MEM_MAP_PARAM_FIELD_FLAGS,
                            .address = NULL,
                            .length = len,
                            .flags = UCP_MEM_MAP_ALLOCATE};
  check("ucp_mem_map", ucp_mem_map(F.ctx, &p, &r->memh));
  ucp_mem_attr_t attr = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
  check("ucp_mem_query", ucp_mem_query(r->memh, &attr));
  r->mem = attr.address;
  memset(r->mem, 0, len);
  void *key;
  size_t key_len, len_theirs;
  check("ucp_rkey_pack", ucp_rkey_pack(F.ctx, r->memh, &key, &key_len));
  unsigned char *mine = malloc(8 + key_len);
  if (!mine) MPI_Abort(MPI_COMM_WORLD, 1);
  uint64_t at = (uint64_t)(uintptr_t)r->mem;
  memcpy(mine, &at, 8);
  memcpy(mine + 8, key, key_len);
  ucp_rkey_buffer_release(key);
  unsigned char *theirs = swap(mine, 8 + key_len, &len_theirs);
  memcpy(&r->peer, theirs, 8);
  check("ucp_ep_rkey_unpack", ucp_ep_rkey_unpack(F.ep, theirs + 8, &r->rkey));
  free(theirs);
  free(mine);
}

static void complete(void *req) {
  if (!req) return;
  if (UCS_PTR_IS_ERR(req)) check("a floor request", UCS_PTR_STATUS(req));
  ucs_status_t st;
  while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS) ucp_worker_progress(F.worker);
  check("a floor request", st);
  ucp_request_free(req);
}

static void flush(void) {
  complete(ucp_ep_flush_nbx(F.ep, &(ucp_request_param_t){0}));
}

/* A barrier that keeps the worker progressing: over TCP the peer's flush
 * (its endpoint's wireup) completes only while this side progresses. */
static void barrier(void) {
  MPI_Request req;
  MPI_Ibarrier(F.comm, &req);
  for (int done = 0; !done;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    ucp_worker_progress(F.worker);
  }
}

void remote_floor_open(MPI_Comm comm, int rank) {
  F.comm = comm;
  F.rank = rank;
  F.one = 1;
  ucp_config_t *config;
  check("ucp_config_read", ucp_config_read(NULL, NULL, &config));
  ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                         .features = UCP_FEATURE_RMA | UCP_FEATURE_AMO64};
  check("ucp_init", ucp_init(&params, config, &F.ctx));
  ucp_config_release(config);
  ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                            .thread_mode = UCS_THREAD_MODE_SINGLE};
  check("ucp_worker_create", ucp_worker_create(F.ctx, &wp, &F.worker));
  ucp_address_t *address;
  size_t address_len, peer_len;
  check("ucp_worker_get_address", ucp_worker_get_address(F.worker, &address, &address_len));
  void *peer = swap(address, address_len, &peer_len);
  ucp_worker_release_address(F.worker, address);
  ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                        .address = (const ucp_address_t *)peer};
  check("ucp_ep_create", ucp_ep_create(F.worker, &ep, &F.ep));
  free(peer);
  region_make(&F.small, 4096);
  region_make(&F.count, 4096);
  region_make(&F.big, FLOOR_BIG);
  flush();
  barrier();
}

void remote_floor_close(void) {
  flush();
  barrier();
  region *rs[3] = {&F.small, &F.count, &F.big};
  for (int i = 0; i < 3; i++) {
    ucp_rkey_destroy(rs[i]->rkey);
    ucp_mem_unmap(F.ctx, rs[i]->memh);
  }
  complete(ucp_ep_close_nbx(F.ep, &(ucp_request_param_t){0}));
  ucp_worker_destroy(F.worker);
  ucp_cleanup(F.ctx);
}

/* 16 bytes into the peer's small region, a fence, an add on its count. */
static void send_one(void) {
  complete(ucp_put_nbx(F.ep, F.small.mem, 16, F.small.peer + 2048, F.small.rkey,
                       &(ucp_request_param_t){0}));
  ucp_worker_fence(F.worker);
  ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE,
                           .datatype = ucp_dt_make_contig(sizeof F.one)};
  complete(ucp_atomic_op_nbx(F.ep, UCP_ATOMIC_OP_ADD, &F.one, 1, F.count.peer, F.count.rkey, &p));
}

static void wait_count(void) {
  F.seen++;
  while (__atomic_load_n((uint64_t *)F.count.mem, __ATOMIC_ACQUIRE) < F.seen)
    ucp_worker_progress(F.worker);
}

double remote_floor_trip(void) {
  uint64_t t0 = bench_now_ns();
  send_one();
  wait_count();
  return (double)(bench_now_ns() - t0);
}

void remote_floor_answer(size_t n) {
  for (size_t i = 0; i < n; i++) {
    wait_count();
    send_one();
  }
}

double remote_floor_copy(void) {
  uint64_t t0 = bench_now_ns();
  ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH, .memh = F.big.memh};
  complete(ucp_put_nbx(F.ep, F.big.mem, FLOOR_BIG, F.big.peer, F.big.rkey, &p));
  flush();
  complete(ucp_get_nbx(F.ep, F.big.mem, FLOOR_BIG, F.big.peer, F.big.rkey, &p));
  flush();
  double ns = (double)(bench_now_ns() - t0);
  /* Told apart from the timing: the peer stops progressing once it sees
   * the add, so no flush follows it (over TCP a flush needs the peer's
   * progress); the close's flush, which both sides make, settles it. */
  ucp_request_param_t a = {.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE,
                           .datatype = ucp_dt_make_contig(sizeof F.one)};
  complete(ucp_atomic_op_nbx(F.ep, UCP_ATOMIC_OP_ADD, &F.one, 1, F.count.peer, F.count.rkey, &a));
  return ns;
}

void remote_floor_serve_copies(size_t n) {
  for (size_t i = 0; i < n; i++) wait_count();
}
