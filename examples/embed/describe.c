/* describe.c: examples/saxpy.json's program built in C with the builder of
 * rig/rig_desc.h, step for step (docs/embedding.md, "A description built
 * in C"): the same description, byte for byte. Each add returns the new
 * element's index, or a pointer to it that stays valid until the next add
 * to the same array; out of memory, -1 or NULL. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rig/rig_core.h>
#include <rig/rig_desc.h>

#include "describe.h"

enum { N = 1024, BYTES = N * 4 };

/* A launch of `name` on 4 groups of 256 threads (n = 1024), its parameters
 * `params`; NULL out of memory. */
static rig_desc_part *launch(rig_desc *d, rig_desc_submit *s, int64_t image, const char *name,
                             const void *params, size_t len) {
  return rig_desc_submit_add_launch(d, s, image, name, params, len, rig_desc_fixed(4),
                                    rig_desc_fixed(256));
}

/* Each trip, on the CPU device: y = a * x + y, a = 2 ({x, y, a, n}). */
static bool saxpy_step(rig_desc *d, rig_desc_step *loop) {
  rig_desc_submit *s = rig_desc_add_submit(d, loop, 1);
  if (!s) return false;
  struct {
    uint64_t x, y;
    float a;
    uint32_t n;
  } params = {0, 0, 2.0f, N};
  rig_desc_part *p = launch(d, s, 1, "saxpy", &params, sizeof params);
  /* Slots 0 and 1: the views the refs write into the parameters' x and y. */
  return p && rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(0, 0, BYTES)) == 0 &&
         rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(1, 0, BYTES)) == 1 &&
         rig_desc_part_add_ref(d, p, 0, 0, RIG_USE_READ) == RIG_OK &&
         rig_desc_part_add_ref(d, p, 1, 8, RIG_USE_WRITE) == RIG_OK;
}

/* Then on the host: x = a' * x + trip ({&a', x, trip, n}), a' from memory
 * 2 (its address a hole filled at the load), the trip from int 1. */
static bool scale_step(rig_desc *d, rig_desc_step *loop) {
  rig_desc_submit *s = rig_desc_add_submit(d, loop, 0);
  if (!s) return false;
  struct {
    uint64_t a, x;
    uint32_t trip, n;
  } params = {0, 0, 0, N};
  rig_desc_part *p = launch(d, s, 0, "scale", &params, sizeof params);
  if (!p) return false;
  rig_desc_hole *a = rig_desc_data_add_hole(d, rig_desc_part_params(p), 0, RIG_W64, 0, 0);
  if (!a ||
      rig_desc_terms_add(d, &a->terms, rig_desc_leaf_value(rig_desc_address(2, 0)), 1) != RIG_OK)
    return false;
  rig_desc_hole *trip = rig_desc_data_add_hole(d, rig_desc_part_params(p), 16, RIG_W32, 0, 0);
  if (!trip || rig_desc_terms_add(d, &trip->terms, rig_desc_int(1), 1) != RIG_OK) return false;
  /* Memory 2 is read through its address, not a slot: the Submit fixes it
   * for reading. */
  return rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(0, 0, BYTES)) == 0 &&
         rig_desc_part_add_ref(d, p, 0, 8, RIG_USE_WRITE) == RIG_OK &&
         rig_desc_submit_add_fixed(d, s, rig_desc_view_of(2, 0, 8), RIG_ACCESS_READ) == RIG_OK;
}

static bool describe(rig_desc *d, const void *so, size_t len) {
  /* Devices by arch: 0 the host (this machine's ISA), 1 a CPU queue. */
  char cpu[64];
  snprintf(cpu, sizeof cpu, "cpu-%s", rig_host_isa());
  if (rig_desc_add_device(d, rig_host_isa()) != 0 || rig_desc_add_device(d, cpu) != 1) return false;
  /* Memory 0: x, on the host; 1: y, on the CPU device; 2: a' = 1.5. */
  float a = 1.5f;
  uint8_t init[8] = {0};
  memcpy(init, &a, sizeof a);
  if (rig_desc_add_alloc(d, 0, RIG_KIND_PINNED, BYTES, RIG_COPIES_TWO) != 0 ||
      rig_desc_add_alloc(d, 1, RIG_KIND_DEVICE, BYTES, RIG_COPIES_ONE) != 1 ||
      rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 8, RIG_COPIES_ONE) != 2 ||
      rig_desc_memory_set_init(d, 2, init, sizeof init) != RIG_OK)
    return false;
  /* The kernels, an image on each device; inputs 0 (x) and 1 (y), on the
   * host; int 0 the trips, int 1 the trip. */
  if (rig_desc_add_image(d, 0, so, len) != 0 || rig_desc_add_image(d, 1, so, len) != 1 ||
      rig_desc_add_input(d, 0, BYTES) != 0 || rig_desc_add_input(d, 0, BYTES) != 1)
    return false;
  rig_desc_set_ints(d, 2);
  /* x into both memories, the loop, then y out. */
  if (!rig_desc_add_move(d, NULL, rig_desc_slot_input(0), rig_desc_slot_memory(0, 0, BYTES),
                         BYTES) ||
      !rig_desc_add_move(d, NULL, rig_desc_slot_input(0), rig_desc_slot_memory(1, 0, BYTES), BYTES))
    return false;
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_int(0));
  if (!loop) return false;
  rig_desc_loop_set_trip(loop, 1);
  if (!saxpy_step(d, loop) || !scale_step(d, loop)) return false;
  return rig_desc_add_move(d, NULL, rig_desc_slot_memory(1, 0, BYTES), rig_desc_slot_input(1),
                           BYTES) != NULL;
}

rig_desc *saxpy_description(const void *so, size_t len) {
  rig_desc *d = rig_desc_create();
  if (d && !describe(d, so, len)) {
    rig_desc_free(d);
    d = NULL;
  }
  return d;
}
