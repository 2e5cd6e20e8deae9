/* What the cuda backend's files share: the driver's symbol table, a GPU's
 * state, and the calls that wrap CUDA's results into the device's loss. */
#ifndef RIG_CUDA_INTERNAL_H
#define RIG_CUDA_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "base/array.h"
#include "cuda_api.h"
#include "rig/rig_driver.h"

/* The driver's entry points, one field per RIG_CUDA_FUNCTIONS line. */
typedef struct rig_cuda_api {
#define RIG_CUDA_FIELD(ret, field, names, params) ret(*field) params;
  RIG_CUDA_FUNCTIONS(RIG_CUDA_FIELD)
#undef RIG_CUDA_FIELD
} rig_cuda_api;

/* The loaded driver, once rig_cuda_load answered RIG_OK. */
extern rig_cuda_api rig_cu;

/* Loads the driver (RIG_CUDA_LIBRARY, else libcuda.so.1) and every symbol,
 * once; later calls answer the first answer. The error says why there is
 * no CUDA: "no driver (libcuda.so.1 not found)", a missing symbol. */
rig_status rig_cuda_load(rig_error *err);

/* CUDA's name of a result ("CUDA_ERROR_ILLEGAL_ADDRESS"). */
const char *rig_cuda_error_name(CUresult r);

/* Ready records: a rail's ready called in stream order (cuLaunchHostFunc)
 * needs its words until the stream reaches it; a ring reused once the
 * device's word has passed the value that used a record. */
#define CUDA_READY_RING 256

typedef struct cuda_ready {
  uint64_t fn, counts, count;
  uint64_t value; /* the work whose record it is */
} cuda_ready;

/* One GPU. */
typedef struct cuda_gpu {
  rig_device *dev;
  CUdevice cu;
  CUcontext ctx;
  CUstream stream;
  _Atomic uint64_t *word; /* pinned host memory the stream writes */
  CUdeviceptr word_dptr;
  char name[16];
  uint32_t max_groups[3], max_threads[3]; /* the GPU's grid and block limits */
  cuda_ready ready[CUDA_READY_RING];
  uint64_t nready;
  /* The last in-stream waits on other devices, and the value of the work
   * behind each: a wait whose device is lost never passes, so the GPU is
   * lost with it rather than left stuck (cuda_sleep). */
  struct {
    rig_point on;
    uint64_t value;
  } waits[CUDA_READY_RING];
  uint64_t nwaits;
  pthread_mutex_t waits_lock; /* waits: submitters write, sleepers read */
  /* Other devices' words its stream waits on (words.c). */
  pthread_mutex_t words_lock;
  rig_array words; /* struct cuda_word (words.c) */
} cuda_gpu;

/* Every GPU this process opened, by index (below rig_cuda_count), for
 * peers' contexts. */
cuda_gpu *rig_cuda_gpu(unsigned index);
unsigned rig_cuda_count(void);
unsigned rig_cuda_opened(void);

/* The timeline word of device `device` (its index) as g's stream addresses
 * it: a GPU's own, or host memory registered for g until the device is
 * gone (words.c); 0 if it cannot be. */
CUdeviceptr cuda_word_address(cuda_gpu *g, uint32_t device, const void *word);
/* g's list of words, empty (g opens). */
void cuda_words_init(cuda_gpu *g);
/* Gives back every registration of g's words (g stops). */
void cuda_words_drop(cuda_gpu *g);

/* The calling thread in g's context, and back. */
void cuda_enter(const cuda_gpu *g);
void cuda_leave(void);

/* A failed call: loses g with "<call>: <CUDA's name>" and answers
 * RIG_ELOST with that message. */
rig_status cuda_fail(cuda_gpu *g, const char *call, CUresult r, rig_error *err);

/* A failed call that refuses (nothing lost): RIG_EREFUSED or RIG_ENOMEM. */
rig_status cuda_refuse(const cuda_gpu *g, const char *what, CUresult r, rig_error *err);

/* The NUMA node nearest the PCI device of that bus id, or -1 (numa.c). */
int rig_cuda_numa(const char *bus_id);

/* Memory (memory.c). */
rig_status cuda_alloc(void *st, rig_buffer_kind kind, uint64_t bytes, rig_mem_info *out,
                      rig_error *err);
void cuda_free(void *st, const rig_mem_info *mem);
rig_status cuda_map(void *st, const rig_device *owner, const rig_mem_info *mem, uint64_t bytes,
                    uint64_t *address, void **mapping, rig_error *err);
void cuda_unmap(void *st, void *mapping);
/* Host memory [p, p + bytes) registered for every GPU (page-aligned and
 * counted: two borrows of one page register it once): *dptr as the GPUs
 * address it, *reg to give back with cuda_host_unregister. */
rig_status cuda_host_register(cuda_gpu *g, const void *p, uint64_t bytes, CUdeviceptr *dptr,
                              void **reg, rig_error *err);
void cuda_host_unregister(void *reg);

/* Images (image.c). */
rig_status cuda_image_load(void *st, const void *bytes, size_t len, void **image, rig_error *err);
rig_status cuda_image_entry(void *st, void *image, const char *name, size_t len, rig_entry *out,
                            rig_error *err);
void cuda_image_unload(void *st, void *image);

/* Hand-overs (submit.c) and graphs of launches (graph.c). */
bool cuda_can_wait(void *st, const rig_device *other);
rig_status cuda_submit(void *st, const rig_work *w, rig_error *err);
void cuda_sleep(void *st, uint64_t value, int64_t timeout_ns);
rig_status cuda_prepare(void *st, const rig_submission *sub, void **state, rig_error *err);
void cuda_forget(void *st, void *state);

/* Runs the graph of the launches sub's parts first..first+n-1 with this
 * work's block and slots: updates the nodes whose launch changed, then
 * launches it on g's stream. */
rig_status cuda_graph_run(cuda_gpu *g, void *state, size_t first, const rig_work *w,
                          rig_error *err);
/* The dynamic shared memory part's launch may have. */
uint32_t cuda_shared_limit(void *state, size_t part);
/* Whether parts first.. of sub start a graph (how many launches it has). */
size_t cuda_graph_span(void *state, size_t first);

#endif
