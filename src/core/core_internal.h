/* Private to src/core: the objects behind the public handles, the stamps
 * that order work by the memory it names, and the list of releases waiting
 * for their devices. */
#ifndef RIG_CORE_INTERNAL_H
#define RIG_CORE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "rig/rig_driver.h"

/* The device table's places, and the indices a process gives (a place
 * and a generation above it, rig_device_index). */
#define RIG_DEVICE_PLACES  65536u
#define RIG_DEVICE_INDICES (1u << RIG_POINT_DEVICE_BITS)
_Static_assert(RIG_POINT_DEVICE_BITS + RIG_POINT_VALUE_BITS == 64, "a point is 64 bits");
_Static_assert(RIG_DEVICE_INDICES > RIG_DEVICE_PLACES, "a place has generations");
/* A submission names at most this many slots (their addresses live on the
 * stack of a hand-over, so that it allocates nothing). */
#define RIG_MAX_SLOTS 1024

struct rig_device {
  uint32_t index; /* rig_device_index: its place and generation */
  /* The registration's reference, and one per memory, image and
   * submission of the device: the last one frees it. */
  _Atomic int refs;
  _Atomic bool unregistered;
  rig_device_facts facts;
  const rig_driver *drv;
  void *st;
  _Atomic uint64_t *word;
  /* The last value handed over; written under `handover`. */
  _Atomic uint64_t next;
  pthread_mutex_t handover;
  /* Sleepers wait on seq (a futex) for the word to move. */
  _Atomic uint32_t seq;
  _Atomic uint32_t sleepers;
  _Atomic bool lost;
  rig_status lost_code;
  char lost_why[RIG_ERROR_MESSAGE_MAX];
};

/* ---- stamps ---------------------------------------------------------------
 * Per memory and per device that used it, the last value of each kind of
 * use. An entry is claimed once per device (under a lock, rarely) and raised
 * lock-free with atomic maxima, so stamps only go up, also from two
 * threads at once. */
typedef struct rig_stamp {
  _Atomic uint32_t dev1; /* device index + 1; 0: free */
  _Atomic uint64_t read, write, unordered;
} rig_stamp;

#define RIG_STAMPS_INLINE 4

typedef struct rig_stamp_chunk {
  rig_stamp e[RIG_STAMPS_INLINE];
  struct rig_stamp_chunk *_Atomic next;
} rig_stamp_chunk;

typedef struct rig_stamps {
  rig_stamp_chunk first;
  atomic_flag claiming;
} rig_stamps;

void rig_stamps_init(rig_stamps *s);
void rig_stamps_fini(rig_stamps *s);
/* Records a use by device `dev` at `value`. Returns false only when out of
 * memory for a new entry (more than RIG_STAMPS_INLINE devices). */
bool rig_stamps_raise(rig_stamps *s, uint32_t dev, rig_use use, uint64_t value);
/* Whether every use recorded is over (rig_device_past: reached, or of a
 * lost device whose driver runs it no more). */
bool rig_stamps_reached(const rig_stamps *s);

/* The points a piece of work must follow, at most one per device (the
 * largest). */
#define RIG_WAITSET_MAX 32
typedef struct rig_waitset {
  rig_point p[RIG_WAITSET_MAX];
  size_t n;
} rig_waitset;

/* Adds the points a use on `dev` follows: a read, the other devices' writes
 * and unordered uses; a write, all their uses; an unordered use, their
 * reads and writes. Reached points are dropped. A full set waits for a point
 * on the host instead (which can fail with RIG_ELOST). */
rig_status rig_stamps_follow(const rig_stamps *s, uint32_t dev, rig_use use, rig_waitset *ws,
                             rig_error *err);
rig_status rig_waitset_add(rig_waitset *ws, uint32_t dev, rig_point p, rig_error *err);

/* ---- memory and buffers --------------------------------------------------- */

typedef struct rig_mapping {
  rig_device *dev;
  uint64_t address;
  void *mapping;
  struct rig_mapping *next;
} rig_mapping;

typedef struct rig_mem {
  _Atomic int refs;
  rig_device *owner;
  rig_buffer_kind kind;
  uint64_t bytes;
  rig_mem_info info;
  void (*adopted)(void *ctx); /* memory made elsewhere: freed by this */
  void *adopted_ctx;
  rig_stamps stamps;
  pthread_mutex_t lock; /* the mappings */
  rig_mapping *maps;
  struct rig_mem *next_deferred;
} rig_mem;

struct rig_buffer {
  _Atomic int refs;
  rig_mem *mem;
  rig_device *device; /* whose work addresses it */
  uint64_t offset, length;
  uint64_t address; /* of its first byte, as `device` addresses it */
  rig_access access;
};

void rig_mem_release(rig_mem *m);
void rig_mem_free_now(rig_mem *m);

/* ---- images and submissions ----------------------------------------------- */

struct rig_image {
  _Atomic int refs;
  rig_device *dev;
  void *handle;
};

typedef struct rig_sub_part {
  rig_part p;                     /* params and refs point into the submission's storage */
  size_t block_at;                /* this part's state in the block */
  char label[RIG_PART_LABEL_MAX]; /* rig_submission_label's, or "" */
} rig_sub_part;

struct rig_submission {
  _Atomic int refs;
  rig_device *dev;
  size_t nparts;
  rig_sub_part *parts;
  size_t nslots;
  rig_use *slot_use;
  unsigned char *slot_named; /* whether any part names the slot */
  size_t nfixed;
  rig_fixed *fixed;     /* with references held */
  uint64_t *fixed_addr; /* as dev addresses it */
  size_t block_bytes;
  unsigned char *defaults; /* the make-time block */
  _Atomic uint64_t last;   /* the last value handed over */
  void *prepared;          /* the driver's prepare's, or NULL */
  bool is_prepared;        /* prepare made it: forget it at the end */
  struct rig_submission *next_deferred;
};

void rig_submission_free_now(rig_submission *s);

/* ---- releases waiting for their devices ----------------------------------- */

void rig_defer_mem(rig_mem *m);
void rig_defer_submission(rig_submission *s);

/* ---- devices -------------------------------------------------------------- */

/* Sets up the core once: the provider table's families, the host first. */
void rig_core_init(void);

/* References that keep a registered device (rig_device_unregister). */
void rig_device_ref(rig_device *dev);
void rig_device_unref(rig_device *dev);

/* Whether dev's work up to value v is over: its word shows v, or dev is
 * lost and no thread or queue of its driver may still run that work
 * (rig_driver.busy). What the work uses is freed only then. */
bool rig_device_past(const rig_device *dev, uint64_t v);

/* A device was lost: wakes every waiter on several points (rig_points_wait). */
void rig_core_lost(void);

/* RIG_ELOST with dev's reason. */
rig_status rig_device_lost_error(const rig_device *dev, rig_error *err);
bool rig_device_lost_now(const rig_device *dev);

/* Whether device `dev` addresses memory m, and at which address of m's
 * first byte; makes (and caches) a mapping when its driver can. */
rig_status rig_mem_address_on(rig_mem *m, rig_device *dev, uint64_t *address, rig_error *err);

/* Hands a work over to dev under its hand-over lock, taking its next value;
 * *value is that value. */
rig_status rig_device_handover(rig_device *dev, rig_work *w, rig_error *err);

/* Resolves the waits of a work on `dev`: drops reached points, keeps those
 * dev's queue can wait on itself (into inq/ninq), waits on the host for the
 * rest. */
rig_status rig_waits_resolve(rig_device *dev, const rig_waitset *ws, rig_point *inq, size_t *ninq,
                             rig_error *err);

#endif
