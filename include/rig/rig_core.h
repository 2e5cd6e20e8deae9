/* rig_core.h: devices, timelines and points, buffers, images and
 * submissions: the seed's Rig, Rig.Point, Rig.Buffer, Rig.Image and
 * Rig.Submission in C (docs/core.md; docs/core.md explains the
 * model with an example).
 *
 * Every device has one timeline: a 64-bit word in host memory that only its
 * driver writes and that never decreases, the largest value whose work is
 * done. Each submission or copy handed to a device takes the device's next
 * value, and is named by a point (device, value). Work is ordered by the
 * memory it names: a submission that reads memory follows the memory's last
 * write, one that writes follows every other device's use, and each follows
 * the points it is given. Memory returns to its device only once the
 * device's timeline passes its last use. Any call may come from any thread. */
#ifndef RIG_CORE_H
#define RIG_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rig_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exported; the rest of librig is hidden (src/librig.map). */
#pragma GCC visibility push(default)

typedef struct rig_device rig_device;
typedef struct rig_buffer rig_buffer;
typedef struct rig_image rig_image;
typedef struct rig_submission rig_submission;

/* ---- Points ---------------------------------------------------------------
 * A point packs a device's index (top 20 bits) and a value of its timeline
 * (low 44 bits). Index 0 is the host; the point 0 is the host's sentinel,
 * always reached. */
typedef uint64_t rig_point;

#define RIG_POINT_REACHED     ((rig_point)0)
#define RIG_POINT_DEVICE_BITS 20
#define RIG_POINT_VALUE_BITS  44
#define RIG_POINT_VALUE_MASK  ((UINT64_C(1) << RIG_POINT_VALUE_BITS) - 1)

static inline rig_point rig_point_make(uint32_t device, uint64_t value) {
  return ((uint64_t)device << RIG_POINT_VALUE_BITS) | (value & RIG_POINT_VALUE_MASK);
}
static inline uint32_t rig_point_device(rig_point p) {
  return (uint32_t)(p >> RIG_POINT_VALUE_BITS);
}
static inline uint64_t rig_point_value(rig_point p) {
  return p & RIG_POINT_VALUE_MASK;
}

/* Whether p's work is done: one acquire load of its device's word. A point
 * of a lost device that its word had not passed is not reached. */
bool rig_point_reached(rig_point p);

/* Waits until p is reached: spins about a microsecond, then yields, then
 * sleeps on the device (never burns a core for long). RIG_ELOST with the
 * device's reason if it is or becomes lost first. */
rig_status rig_point_wait(rig_point p, rig_error *err);
/* Waits until every point of p is reached; answers at once the loss of
 * any of their devices (RIG_ELOST, or a job's RIG_EJOB, with its reason),
 * whatever the others still run: a run that failed on one device is told
 * when it fails, not when a long kernel elsewhere ends. */
rig_status rig_points_wait(const rig_point *p, size_t n, rig_error *err);

/* ---- Devices -------------------------------------------------------------- */

/* What a device is and can do. */
typedef struct rig_device_facts {
  char name[64];       /* "host", "cpu:0", "cuda:1", "cuda:0@rank2" */
  char arch[32];       /* "x86_64", "cpu-x86_64", "sm_90" */
  int machine;         /* 0: this process's machine; else the MPI job's machine */
  uint64_t budget;     /* bytes of the device's own memory */
  bool maps_host;      /* its work can address host memory (borrowed) */
  bool host_addresses; /* the host addresses its memory */
  bool runs_copies, runs_fills, runs_launches, runs_words;
  bool synchronous;        /* its work is done when submit returns (the host) */
  uint32_t max_shared;     /* bytes of shared scratch a launch's group may have */
  uint32_t threads;        /* how many threads run a launch's groups at once (0: unknown) */
  uint32_t machine_device; /* its index among its machine's devices */
  bool machine_host;       /* it is its machine's host */
  char bus_id[16];         /* its PCI bus id ("0000:41:00.0"), or "" */
  int numa;                /* the NUMA node nearest it, or -1 */
} rig_device_facts;

/* The machine's host, always open. */
rig_device *rig_host(void);

/* The device of that name: "host", "<family>:N" of a family this build
 * has ("cpu:N", RIG_CPU_DEVICES of them, default 2), or one a driver
 * registered. Opening a name twice gives the same device; opened devices
 * live as long as the process. RIG_EREFUSED with why when there is no
 * such device. */
rig_status rig_device_open(const char *name, rig_device **dev, rig_error *err);

/* ---- Families: the kinds of device this build has --------------------------
 * One per backend (the host first, then "cpu", ...), in the order the
 * build lists them. */
size_t rig_family_count(void);
const char *rig_family_name(size_t family);
/* The family whose devices have arch `arch`: the one of its prefix
 * ("cpu-", "sm_"), else the one of every other arch (the host: a
 * machine's ISA, this one's or another's), or -1. */
int rig_family_of_arch(const char *arch);
/* The functions an image for `arch` exports, each handed to `each`, found
 * without a device and without running the image (its family's provider
 * reads them): RIG_OK; RIG_EREFUSED with why the bytes are no image of
 * arch; RIG_EINVAL when no family of this build has that arch. A family
 * that cannot tell without a device (cuda) answers RIG_OK and *known
 * false, calling each for none. */
rig_status rig_image_functions(const char *arch, const void *bytes, size_t len,
                               void (*each)(void *ctx, const char *name), void *ctx, bool *known,
                               rig_error *err);
/* The family whose device `name` names ("host", "cpu:1", "cuda:0": the
 * number in plain decimal, one spelling per device), or -1; whether this
 * machine has that device is rig_device_open's to say. */
int rig_family_of_device_name(const char *name);
/* How many devices of the family this machine has: RIG_OK with *n, or
 * RIG_EREFUSED with why there are none ("cuda: no driver ..."). */
rig_status rig_family_devices(size_t family, unsigned *n, rig_error *err);
/* The name of device `index` of the family ("cpu:1"; "host"), cut to size. */
void rig_family_device_name(size_t family, unsigned index, char *out, size_t size);

const rig_device_facts *rig_device_facts_of(const rig_device *dev);
const char *rig_device_name(const rig_device *dev);
const char *rig_device_arch(const rig_device *dev);
/* A device's index: its place in the process's table of devices (65536
 * places) and, above it, how many devices had that place before (a
 * generation), so that no two devices of a process's life share one: a
 * point or index of a device that is gone names no device, never a newer
 * one. A process registers 2^20 devices in its life, 65536 at once. */
uint32_t rig_device_index(const rig_device *dev);
/* The device of a point or index; NULL if none (one gone included). */
rig_device *rig_device_at(uint32_t index);
/* How many places of the device table have been used: rig_device_in_place
 * of each place below it lists every registered device (opened or
 * proxies). */
size_t rig_device_count(void);
/* The device registered in place `place` now, or NULL. */
rig_device *rig_device_in_place(size_t place);
/* The host of machine m among the registered devices, or NULL. */
rig_device *rig_machine_host(int machine);

/* The last point handed to the device (its latest work), and whether its
 * timeline has reached it. */
rig_point rig_device_last(const rig_device *dev);

/* Whether the device is lost, and if so why (in *why when non-NULL). */
bool rig_device_is_lost(const rig_device *dev, rig_error *why);

/* The ISA of this machine as the host's arch ("x86_64"). */
const char *rig_host_isa(void);

/* ---- Buffers --------------------------------------------------------------
 * A buffer is a reference to memory: the whole of it, a view of it, or a
 * borrow (the same memory as another device's work addresses it). Every
 * reference shares the memory's stamps; the memory returns once the last
 * reference is released and its device's timeline has passed its last use. */

rig_status rig_buffer_create(rig_device *dev, rig_buffer_kind kind, uint64_t bytes,
                             rig_buffer **out, rig_error *err);

/* length bytes of b from offset. RIG_EINVAL if they lie outside b. */
rig_status rig_buffer_view(rig_buffer *b, uint64_t offset, uint64_t length, rig_buffer **out,
                           rig_error *err);

/* The same bytes, read-only: a submission that writes them is refused. */
rig_status rig_buffer_read_only(rig_buffer *b, rig_buffer **out, rig_error *err);

/* b as dev's work addresses it: b itself (a new reference) when dev already
 * does; host memory on a device that maps host memory; else RIG_EREFUSED. */
rig_status rig_buffer_borrow(rig_device *dev, rig_buffer *b, rig_buffer **out, rig_error *err);

/* Another reference to the same buffer. */
rig_buffer *rig_buffer_retain(rig_buffer *b);
void rig_buffer_release(rig_buffer *b);

rig_device *rig_buffer_device(const rig_buffer *b); /* whose work addresses it */
rig_device *rig_buffer_owner(const rig_buffer *b);  /* whose memory it is */
uint64_t rig_buffer_address(const rig_buffer *b);   /* as its device's work addresses it */
uint64_t rig_buffer_handle(const rig_buffer *b);    /* the driver's object of the memory */
void *rig_buffer_host(const rig_buffer *b);         /* a host pointer, or NULL */
uint64_t rig_buffer_length(const rig_buffer *b);
uint64_t rig_buffer_offset(const rig_buffer *b); /* in its memory */
rig_access rig_buffer_access(const rig_buffer *b);
rig_buffer_kind rig_buffer_kind_of(const rig_buffer *b);
/* Whether two buffers are of the same memory. */
bool rig_buffer_same_memory(const rig_buffer *a, const rig_buffer *b);

/* Waits until the host may access b as `access` says: RIG_ACCESS_READ
 * follows its last writes, RIG_ACCESS_READ_WRITE every use. */
rig_status rig_buffer_wait(rig_buffer *b, rig_access access, rig_error *err);

/* Host bytes into b at offset, and out of it: done on return, in order
 * with the work that uses b (a write follows every use, a read the last
 * writes). Directly where the host addresses b, else staged through pinned
 * host memory and one copy. RIG_EINVAL for a range outside b or a write to
 * read-only memory. */
rig_status rig_buffer_write(rig_buffer *b, uint64_t offset, const void *bytes, size_t len,
                            rig_error *err);
rig_status rig_buffer_read(rig_buffer *b, uint64_t offset, void *bytes, size_t len, rig_error *err);

/* One copy of length bytes from src at src_offset to dst at dst_offset,
 * ordered as a read of src and a write of dst and after `waits`; run by the
 * host when it addresses both (done on return), else by a device that
 * reaches both. *point is the copy's point. */
rig_status rig_buffer_copy_submit(rig_buffer *src, uint64_t src_offset, rig_buffer *dst,
                                  uint64_t dst_offset, uint64_t length, const rig_point *waits,
                                  size_t nwaits, rig_point *point, rig_error *err);

/* ---- Images --------------------------------------------------------------- */

/* What code names a function by. */
typedef struct rig_entry {
  uint64_t value;       /* a host function's address, a CUfunction */
  uint32_t max_threads; /* the most threads a group may have; 0: unknown */
} rig_entry;

/* Loads an image in dev's format (an ELF shared object on host and cpu
 * devices, loaded from memory; a cubin on CUDA). RIG_EREFUSED, starting
 * with the device's name, if the device refuses it. */
rig_status rig_image_load(rig_device *dev, const void *bytes, size_t len, rig_image **out,
                          rig_error *err);

/* The function `name` (len bytes) of img. RIG_EREFUSED `<device>: no
 * function "<name>"` if it has none. */
rig_status rig_image_entry(rig_image *img, const char *name, size_t len, rig_entry *out,
                           rig_error *err);

rig_device *rig_image_device(const rig_image *img);
rig_image *rig_image_retain(rig_image *img);
/* The image is unloaded once released and the work that used it is done. */
void rig_image_release(rig_image *img);
/* Releases img once every point of `after` is past: reached, or of a
 * device lost whose driver runs that work no more. It never waits: a
 * program released while a kernel still runs keeps the code its work may
 * call (an Entry in any work's parameters) until then. */
void rig_image_release_after(rig_image *img, const rig_point *after, size_t n);

/* ---- Submissions ---------------------------------------------------------
 * Work prepared once from parts and handed over any number of times. Each
 * hand-over passes the buffers of the submission's slots and a block: the
 * per-run state (parameter bytes, geometry, copy offsets), which the caller
 * owns, so that two threads can submit one submission with two blocks. */

typedef enum rig_part_kind {
  RIG_WORK_WORDS = 0,  /* 32-bit words a device replays (a remote host's run words) */
  RIG_WORK_FILL = 1,   /* calls a rig_fill_fn, or a rail's ready function */
  RIG_WORK_COPY = 2,   /* bytes from one side to another */
  RIG_WORK_LAUNCH = 3, /* an image's function over a grid of groups */
} rig_part_kind;

/* A use of slot `slot` by a fill or launch; the 8 parameter bytes at `at`
 * hold an offset the hand-over adds the slot's address to. */
typedef struct rig_ref {
  uint32_t slot;
  uint32_t at;
  rig_use use;
} rig_ref;

/* A side of a copy or words part: a slot of the submission (passed at each
 * hand-over), or fixed memory (fixed >= 0: an index into the submission's
 * fixed memory). */
typedef struct rig_side {
  int32_t slot;  /* -1 when fixed */
  int32_t fixed; /* -1 when a slot */
} rig_side;

typedef struct rig_part {
  rig_part_kind kind;
  union {
    struct {
      rig_side side;
      uint64_t offset, length; /* bytes; a whole number of 32-bit words */
      /* How the work the words stand for uses slots (as refs do, but no
       * parameter carries their addresses): it orders them. */
      const rig_ref *uses;
      size_t nuses;
    } words;
    struct {
      uint64_t fn;      /* a rig_fill_fn's address, or a rig_ready_fn's */
      bool ready;       /* fn is a ready function: called with the params' two words */
      rig_image *image; /* the image fn is of, kept while the submission is (or NULL) */
      const void *params;
      uint32_t params_bytes;
      const rig_ref *refs;
      size_t nrefs;
    } fill;
    struct {
      rig_side src, dst;
      uint64_t src_offset, dst_offset; /* defaults of the block's offsets */
      uint64_t length;
    } copy;
    struct {
      rig_image *image;
      rig_entry entry;
      const void *params;
      uint32_t params_bytes; /* at most RIG_MAX_PARAMS, a multiple of 4 */
      const rig_ref *refs;
      size_t nrefs;
      uint32_t groups[3], threads[3], shared; /* defaults of the block's geometry */
    } launch;
  } u;
} rig_part;

#define RIG_MAX_PARAMS 4096

/* Memory every hand-over uses, with the access the work needs. */
typedef struct rig_fixed {
  rig_buffer *buffer;
  rig_access access;
} rig_fixed;

/* Prepares parts on dev with nslots slots and fixed memory (the submission
 * keeps references to its fixed buffers and images). RIG_EINVAL for what
 * can never run: a ref past the params or not 8-aligned, an unknown slot or
 * fixed index, a part the device does not run, fixed memory dev does not
 * address, a write to read-only fixed memory. */
/* What messages call part `part` of s (a program names its step and its
 * function: "step 3: kernel \"saxpy\""), copied, cut at 127 bytes. */
#define RIG_PART_LABEL_MAX 128
void rig_submission_label(rig_submission *s, size_t part, const char *label);

rig_status rig_submission_make(rig_device *dev, const rig_part *parts, size_t nparts, size_t nslots,
                               const rig_fixed *fixed, size_t nfixed, rig_submission **out,
                               rig_error *err);

rig_device *rig_submission_device(const rig_submission *s);
size_t rig_submission_slots(const rig_submission *s);
/* How the submission's work uses slot k (the strongest of its refs). */
rig_use rig_submission_slot_use(const rig_submission *s, size_t k);
/* The address of fixed memory i as the submission's device addresses it. */
uint64_t rig_submission_address(const rig_submission *s, size_t fixed);
/* The most recent point a hand-over of s took (0 if none). */
rig_point rig_submission_last(const rig_submission *s);

/* The block: its size, and its initial contents (the make-time params,
 * geometry and offsets). */
size_t rig_submission_block_bytes(const rig_submission *s);
void rig_submission_block_init(const rig_submission *s, void *block);
/* Part `part`'s parameter bytes in a block (fill, launch). */
void *rig_block_params(const rig_submission *s, void *block, size_t part);
/* Part `part`'s geometry in a block (launch): groups[3], threads[3], shared. */
uint32_t *rig_block_geometry(const rig_submission *s, void *block, size_t part);
/* Part `part`'s offsets in a block (copy): source, destination. */
uint64_t *rig_block_offsets(const rig_submission *s, void *block, size_t part);

/* Hands s over as its device's next value, with `block` (NULL: the make-time
 * defaults) and one buffer per slot, each one its device addresses. The
 * work follows, by the memory it names, earlier work, and the points of
 * `waits`. RIG_EINVAL for what the device cannot run (a zero dimension,
 * more threads than the function allows, more shared memory than the device
 * has, a copy outside its side, a slot of another device or read-only
 * where the work writes it), RIG_ELOST if the device or a device it must
 * wait for is lost. Allocates nothing unless it must wait for room. */
rig_status rig_submit(rig_submission *s, const void *block, rig_buffer *const *slots,
                      const rig_point *waits, size_t nwaits, rig_point *point, rig_error *err);

/* What dev cannot run of a launch (part `part`) of geometry g (groups[3],
 * threads[3], shared, as a block holds them) whose function allows
 * max_threads (0: unknown): RIG_EINVAL `part <part>: ...` for a zero
 * dimension, more threads than the function allows, more shared memory
 * than dev has. rig_submit applies it to each launch; a caller may apply
 * it ahead to the geometry it knows. */
rig_status rig_launch_check(const rig_device *dev, size_t part, const uint32_t g[7],
                            uint32_t max_threads, rig_error *err);

/* The submission is freed once released and its last hand-over is done;
 * its fixed memory and images are released then. */
void rig_submission_release(rig_submission *s);

/* The works this thread runs now, innermost first: a driver that runs a
 * work's code on a thread marks it there while it runs (a pool worker
 * taking the groups of a launch marks the launching thread's chain), so
 * that code a work calls can tell whose work it is part of: a program
 * refuses a run from inside its own run, on every thread that works for
 * it. */
typedef struct rig_working {
  const rig_submission *sub;
  const struct rig_working *outer; /* the work whose code made this hand-over, or NULL */
  size_t part;                     /* the part of sub running (set before each is called) */
} rig_working;

/* This thread's chain, or NULL when it runs no work. */
const rig_working *rig_working_now(void);
/* What this thread runs now, as messages name it: the running part's label
 * (rig_submission_label; else "part <i>") and its device, "step 3: kernel
 * \"saxpy\" on cpu:0", into buf (NUL-terminated); its length, 0 when it
 * runs no work. Async-signal-safe: a fault's handler names the kernel. */
size_t rig_working_describe(char *buf, size_t n);
/* Makes w (NULL: none) this thread's chain; answers the one it replaces,
 * which the caller puts back when the work is done. */
const rig_working *rig_working_set(const rig_working *w);

/* ---- Reclaiming ----------------------------------------------------------- */

/* Frees what was released and whose last use is now reached. Later calls
 * of the core do this too; tests and long idle programs may call it. */
void rig_reclaim(void);
/* How many releases still wait for their devices. */
size_t rig_reclaim_pending(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
