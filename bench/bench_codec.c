/* bench_codec: the `codec/decode` row of docs/bench.md. A description of 100 000
 * steps (host launches with 16 bytes of parameters, a ref, a slot and some
 * holes; moves; loops, some nested) that passes rig_desc_check is encoded
 * once; then, interleaved over the samples, its bytes are decoded and
 * checked, and, as the floor, copied with memcpy into a buffer made before.
 * Target: decode + check at 300 MB/s or more.
 *
 * Usage: bench_codec [RESULTS.jsonl] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "rig/rig_desc.h"

#define STEPS        100000
#define SAMPLES      15
#define MEMORIES     4
#define MEMORY_BYTES 4096
#define TARGET_MBPS  300.0

/* Step i: a Submit on the host of one launch of "k" whose first parameter
 * word is the address of memory i % MEMORIES (a Write ref of its one slot,
 * which names the memory whole); even steps fill two more words from holes,
 * every tenth fixes the next memory too. */
static void add_submit(rig_desc *d, rig_desc_step *loop, size_t i) {
  static const uint8_t params[16] = {0};
  int64_t m = (int64_t)(i % MEMORIES);
  rig_desc_submit *s = rig_desc_add_submit(d, loop, 0);
  BENCH_CHECK(s);
  BENCH_CHECK(rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(m, 0, MEMORY_BYTES)) == 0);
  rig_desc_part *p = rig_desc_submit_add_launch(d, s, 0, "k", params, sizeof params,
                                                rig_desc_fixed(1), rig_desc_fixed(64));
  BENCH_CHECK(p);
  BENCH_CHECK(rig_desc_part_add_ref(d, p, 0, 0, RIG_USE_WRITE) == 0);
  if (i % 2 == 0) {
    rig_desc_data *data = rig_desc_part_params(p);
    rig_desc_hole *h = rig_desc_data_add_hole(d, data, 8, RIG_W32, 0, 0);
    BENCH_CHECK(h);
    BENCH_CHECK(rig_desc_terms_add(d, &h->terms, rig_desc_int((int64_t)(i % 4)), 1) == 0);
    h = rig_desc_data_add_hole(d, data, 12, RIG_W32, 1, 0);
    BENCH_CHECK(h);
    BENCH_CHECK(rig_desc_terms_add(d, &h->terms, rig_desc_fixed(3), 2) == 0);
  }
  if (i % 10 == 0)
    BENCH_CHECK(rig_desc_submit_add_fixed(d, s,
                                          rig_desc_view_of((m + 1) % MEMORIES, 0, MEMORY_BYTES),
                                          RIG_ACCESS_READ) == 0);
}

/* Step i: a Move of 64 bytes from one memory to the next, or of the ints. */
static void add_move(rig_desc *d, rig_desc_step *loop, size_t i) {
  int64_t m = (int64_t)(i % MEMORIES);
  rig_desc_slot src = i % 3 == 0 ? rig_desc_slot_ints() : rig_desc_slot_memory(m, 0, 64);
  rig_desc_slot dst = rig_desc_slot_memory((m + 1) % MEMORIES, 64, 64);
  rig_desc_step *s = rig_desc_add_move(d, loop, src, dst, i % 3 == 0 ? 32 : 64);
  BENCH_CHECK(s);
}

/* A loop of 8 submits and a move (10 steps); counted by the ints or fixed,
 * with a trip word or a flag. */
static void add_loop(rig_desc *d, size_t i) {
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, i % 2 ? rig_desc_int(0) : rig_desc_fixed(4));
  BENCH_CHECK(loop);
  if (i % 3 == 0) rig_desc_loop_set_trip(loop, 1);
  if (i % 5 == 0) rig_desc_loop_set_flag(loop, rig_desc_slot_memory(2, 0, MEMORY_BYTES), 8);
  for (size_t k = 0; k < 8; k++) add_submit(d, loop, i + k);
  add_move(d, loop, i);
}

/* Loops nested `depth` deep around one submit (depth + 1 steps). */
static void add_deep_loop(rig_desc *d, size_t i, int depth) {
  rig_desc_step *loop = NULL;
  for (int k = 0; k < depth; k++) {
    loop = rig_desc_add_loop(d, loop, rig_desc_fixed(2));
    BENCH_CHECK(loop);
  }
  add_submit(d, loop, i);
}

static rig_desc *make_desc(void) {
  static const uint8_t binary[64] = {0x7f, 'E', 'L', 'F'};
  static const uint8_t init[32] = {1, 2, 3, 4};
  rig_desc *d = rig_desc_create();
  BENCH_CHECK(d);
  BENCH_CHECK(rig_desc_add_device(d, "x86_64") == 0);
  for (int m = 0; m < MEMORIES; m++)
    BENCH_CHECK(rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, MEMORY_BYTES, RIG_COPIES_ONE) == m);
  rig_desc_data *data = &d->memory[MEMORIES - 1].u.alloc.init;
  BENCH_CHECK(rig_desc_data_set(d, data, init, sizeof init) == 0);
  BENCH_CHECK(rig_desc_data_add_hole(d, data, 16, RIG_W64, 7, 0));
  BENCH_CHECK(rig_desc_add_image(d, 0, binary, sizeof binary) == 0);
  BENCH_CHECK(rig_desc_add_input(d, 0, 64) == 0);
  d->ints = 4;

  size_t steps = 0;
  for (size_t i = 0; steps < STEPS; i++) {
    size_t left = STEPS - steps;
    if (i % 5000 == 4999 && left >= 17) {
      add_deep_loop(d, i, 16);
      steps += 17;
    } else if (i % 100 == 99 && left >= 10) {
      add_loop(d, i);
      steps += 10;
    } else if (i % 20 == 19) {
      add_move(d, NULL, i);
      steps++;
    } else {
      add_submit(d, NULL, i);
      steps++;
    }
  }
  BENCH_CHECK(rig_desc_count_steps(d) == STEPS);
  return d;
}

int main(int argc, char **argv) {
  rig_desc *d = make_desc();
  rig_error err;
  if (rig_desc_check(d, &err) != RIG_OK) {
    fprintf(stderr, "bench_codec: the benchmark's description does not check: %s\n", err.message);
    return 1;
  }
  uint8_t *bytes = NULL;
  size_t len = 0;
  if (rig_desc_to_bytes(d, &bytes, &len, &err) != RIG_OK) {
    fprintf(stderr, "bench_codec: %s\n", err.message);
    return 1;
  }
  rig_desc_free(d);
  uint8_t *copy = malloc(len);
  BENCH_CHECK(copy);
  memset(copy, 1, len); /* fault its pages in before timing */

  double decode_ns[SAMPLES], floor_ns[SAMPLES];
  for (int s = -1; s < SAMPLES; s++) { /* sample -1 warms up */
    uint64_t t0 = bench_now_ns();
    rig_desc *back = NULL;
    rig_status st = rig_desc_of_bytes(bytes, len, &back, &err);
    if (st == RIG_OK) st = rig_desc_check(back, &err);
    uint64_t t1 = bench_now_ns();
    if (st != RIG_OK) {
      fprintf(stderr, "bench_codec: decode + check: %s\n", err.message);
      return 1;
    }
    rig_desc_free(back);
    uint64_t t2 = bench_now_ns();
    memcpy(copy, bytes, len);
    __asm__ volatile("" : : "r"(copy) : "memory"); /* keep the copy */
    uint64_t t3 = bench_now_ns();
    if (s >= 0) {
      decode_ns[s] = (double)(t1 - t0);
      floor_ns[s] = (double)(t3 - t2);
    }
  }
  double decode_median = bench_median(decode_ns, SAMPLES);
  double floor_median = bench_median(floor_ns, SAMPLES);
  double mbps = (double)len / 1e6 / (decode_median / 1e9);
  double floor_mbps = (double)len / 1e6 / (floor_median / 1e9);

  bench_print_header();
  bench_row row = {
      .name = "codec/decode",
      .unit = "MB/s",
      .median = mbps,
      .floor_median = floor_mbps,
      .ratio = decode_median / floor_median,
      .samples = SAMPLES,
      .target = ">= 300 MB/s",
      .ok = mbps >= TARGET_MBPS,
  };
  int rc = bench_report(argc, argv, &row);
  fprintf(stderr, "(%zu bytes, %d steps; decode + check p99 %.2f ms, memcpy p99 %.2f ms)\n", len,
          STEPS, bench_p99(decode_ns, SAMPLES) / 1e6, bench_p99(floor_ns, SAMPLES) / 1e6);
  free(copy);
  free(bytes);
  return rc == 0 ? 0 : 1;
}
