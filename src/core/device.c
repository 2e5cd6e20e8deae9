/* Devices: the process's table of them (index 0 the host), opening by name
 * through providers, their facts, the hand-over of work, and loss. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "base/assert.h"
#include "core_internal.h"
#include "provider.h"

/* The table: a device's place is its index's low bits; the bits above are
 * its generation. Indices are given in increasing order, each once, taking
 * the next whose place is free: a gone device's index never names another. */
static rig_device *_Atomic table[RIG_DEVICE_PLACES];
static _Atomic uint32_t places_used; /* places below this have been used */
/* Registration and opening by name; never taken on a hand-over. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_index; /* the least index not given yet */
static uint32_t live;       /* devices in the table */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_once_t isa_once = PTHREAD_ONCE_INIT;
static char isa[80];

static void init(void) {
  rig_providers_start();
}

void rig_core_init(void) {
  pthread_once(&init_once, init);
}

static void read_isa(void) {
  struct utsname u;
  snprintf(isa, sizeof isa, "%.24s", uname(&u) == 0 ? u.machine : "unknown");
}

const char *rig_host_isa(void) {
  pthread_once(&isa_once, read_isa);
  return isa;
}

/* Gives d the least index not given yet whose place is free, and that
 * place. Under table_lock. */
static rig_status take_index(rig_device *d, const char *name, rig_error *err) {
  if (live == RIG_DEVICE_PLACES)
    return rig_error_set(err, RIG_EREFUSED, "%s: more than %u devices at once", name,
                         RIG_DEVICE_PLACES);
  uint32_t index = next_index;
  while (index < RIG_DEVICE_INDICES && atomic_load(&table[index % RIG_DEVICE_PLACES])) index++;
  if (index == RIG_DEVICE_INDICES)
    return rig_error_set(err, RIG_EREFUSED, "%s: this process has registered %u devices, its most",
                         name, RIG_DEVICE_INDICES);
  uint32_t place = index % RIG_DEVICE_PLACES;
  rig_assert(index >= next_index && !atomic_load(&table[place]));
  d->index = index;
  next_index = index + 1;
  live++;
  atomic_store_explicit(&table[place], d, memory_order_release);
  if (place >= atomic_load(&places_used)) atomic_store(&places_used, place + 1);
  return RIG_OK;
}

rig_status rig_device_register(const rig_driver *drv, void *st, const rig_device_facts *facts,
                               _Atomic uint64_t *word, rig_device **out, rig_error *err) {
  rig_device *d = calloc(1, sizeof *d);
  if (!d) return rig_error_set(err, RIG_ENOMEM, "out of memory registering a device");
  d->drv = drv;
  d->st = st;
  d->facts = *facts;
  d->word = word;
  atomic_init(&d->refs, 1); /* the registration's */
  atomic_init(&d->next, atomic_load(word));
  pthread_mutex_init(&d->handover, NULL);
  pthread_mutex_lock(&table_lock);
  rig_status taken = take_index(d, facts->name, err);
  pthread_mutex_unlock(&table_lock);
  if (taken != RIG_OK) {
    pthread_mutex_destroy(&d->handover);
    free(d);
    return taken;
  }
  *out = d;
  return RIG_OK;
}

void rig_device_ref(rig_device *dev) {
  int old = atomic_fetch_add_explicit(&dev->refs, 1, memory_order_relaxed);
  rig_assert(old > 0); /* a device gone is never taken again */
  (void)old;
}

/* Devices gone from the table, freed (and their drivers stopped) only after
 * RETIRED later ones: a thread that read a table slot just before it was
 * cleared (a stamp's or a point's device) still finds the device and its
 * word. So at most RETIRED gone devices are held at once. */
#define RETIRED 64
static rig_device *retired[RETIRED];
static size_t nretired;

void rig_device_unref(rig_device *dev) {
  int refs = atomic_fetch_sub_explicit(&dev->refs, 1, memory_order_acq_rel);
  rig_assert(refs > 0);
  if (refs != 1) return;
  /* Its index is never given again (its place is, with a later
   * generation): a stale point or stamp of it must not name a newer device.
   * An index that names no device reads as a device whose work is over. */
  pthread_mutex_lock(&table_lock);
  uint32_t place = dev->index % RIG_DEVICE_PLACES;
  rig_assert(atomic_load(&table[place]) == dev && live > 0);
  atomic_store_explicit(&table[place], NULL, memory_order_release);
  live--;
  rig_device *old = retired[nretired % RETIRED];
  retired[nretired++ % RETIRED] = dev;
  pthread_mutex_unlock(&table_lock);
  /* The driver's state goes with the device: its word is read through it. */
  if (old) {
    if (old->drv->stop) old->drv->stop(old->st);
    pthread_mutex_destroy(&old->handover);
    free(old);
  }
}

void rig_device_unregister(rig_device *dev) {
  if (!dev || atomic_exchange(&dev->unregistered, true)) return;
  rig_device_unref(dev);
}

rig_device *rig_device_at(uint32_t index) {
  rig_core_init();
  if (index >= RIG_DEVICE_INDICES) return NULL;
  /* A device just gone from its place is still whole (retired): its index
   * tells it from a newer one there. */
  rig_device *d = atomic_load_explicit(&table[index % RIG_DEVICE_PLACES], memory_order_acquire);
  return d && d->index == index ? d : NULL;
}

rig_device *rig_device_in_place(size_t place) {
  rig_core_init();
  if (place >= RIG_DEVICE_PLACES) return NULL;
  return atomic_load_explicit(&table[place], memory_order_acquire);
}

rig_device *rig_host(void) {
  return rig_device_at(0);
}

size_t rig_device_count(void) {
  rig_core_init();
  return atomic_load(&places_used);
}

rig_device *rig_machine_host(int machine) {
  if (machine == 0) return rig_host();
  /* The newest (highest index) that is not lost: an earlier job's proxies are. */
  rig_device *best = NULL;
  for (size_t i = 1; i < rig_device_count(); i++) {
    rig_device *d = atomic_load(&table[i]);
    if (d && d->facts.machine == machine && d->facts.machine_host && !rig_device_lost_now(d) &&
        (!best || d->index > best->index))
      best = d;
  }
  return best;
}

static rig_device *find_open(const char *name) {
  uint32_t n = atomic_load(&places_used);
  for (uint32_t i = 0; i < n; i++) {
    rig_device *d = atomic_load(&table[i]);
    if (d && strcmp(d->facts.name, name) == 0) return d;
  }
  return NULL;
}

rig_status rig_device_open(const char *name, rig_device **dev, rig_error *err) {
  rig_core_init();
  rig_status env = rig_environment_check(err);
  if (env != RIG_OK) return env;
  /* Opening is rare: one lock over lookup and the provider's open, so that
   * two threads opening one name get one device. Not the table's lock: the
   * provider registers through rig_device_register, which takes it. */
  static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&open_lock);
  pthread_mutex_lock(&table_lock);
  rig_device *d = find_open(name);
  pthread_mutex_unlock(&table_lock);
  rig_status st = RIG_OK;
  if (!d) st = rig_providers_open(name, &d, err);
  pthread_mutex_unlock(&open_lock);
  if (st == RIG_OK) *dev = d;
  return st;
}

const rig_device_facts *rig_device_facts_of(const rig_device *dev) {
  return &dev->facts;
}
const char *rig_device_name(const rig_device *dev) {
  return dev->facts.name;
}
const char *rig_device_arch(const rig_device *dev) {
  return dev->facts.arch;
}
uint32_t rig_device_index(const rig_device *dev) {
  return dev->index;
}

rig_point rig_device_last(const rig_device *dev) {
  return rig_point_make(dev->index, atomic_load(&dev->next));
}

bool rig_device_lost_now(const rig_device *dev) {
  return atomic_load_explicit(&dev->lost, memory_order_acquire);
}

rig_status rig_device_lost_error(const rig_device *dev, rig_error *err) {
  return rig_error_set(err, dev->lost_code, "%s", dev->lost_why);
}

bool rig_device_is_lost(const rig_device *dev, rig_error *why) {
  if (!rig_device_lost_now(dev)) return false;
  if (why) rig_device_lost_error(dev, why);
  return true;
}

static void lose(rig_device *dev, rig_status code, bool named, const char *fmt, va_list ap) {
  static pthread_mutex_t lose_lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lose_lock);
  if (!atomic_load(&dev->lost)) {
    char why[RIG_ERROR_MESSAGE_MAX - 80];
    vsnprintf(why, sizeof why, fmt, ap);
    if (named)
      snprintf(dev->lost_why, sizeof dev->lost_why, "%s lost: %s", dev->facts.name, why);
    else
      snprintf(dev->lost_why, sizeof dev->lost_why, "%s", why);
    dev->lost_code = code;
    /* Sequentially consistent, as a driver's entry into work is
     * (rig_driver.busy): either its thread sees the loss and runs
     * nothing, or a release after the loss sees the thread inside. */
    atomic_store_explicit(&dev->lost, true, memory_order_seq_cst);
  }
  pthread_mutex_unlock(&lose_lock);
  /* Everyone sleeping on the device learns of the loss, and everyone
   * waiting on several points, one of them of this device. */
  rig_device_signal(dev);
  rig_core_lost();
}

bool rig_device_past(const rig_device *dev, uint64_t v) {
  if (atomic_load_explicit(dev->word, memory_order_acquire) >= v) return true;
  if (!atomic_load_explicit(&dev->lost, memory_order_seq_cst)) return false;
  return !dev->drv->busy || !dev->drv->busy(dev->st, v);
}

void rig_device_left(rig_device *dev) {
  rig_device_signal(dev);
  rig_reclaim();
}

void rig_device_lose(rig_device *dev, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  lose(dev, RIG_ELOST, true, fmt, ap);
  va_end(ap);
}

void rig_device_lose_status(rig_device *dev, rig_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  lose(dev, code, false, fmt, ap);
  va_end(ap);
}

rig_status rig_device_handover(rig_device *dev, rig_work *w, rig_error *err) {
  pthread_mutex_lock(&dev->handover);
  if (rig_device_lost_now(dev)) {
    pthread_mutex_unlock(&dev->handover);
    return rig_device_lost_error(dev, err);
  }
  uint64_t v = atomic_load_explicit(&dev->next, memory_order_relaxed) + 1;
  if (v > RIG_POINT_VALUE_MASK) {
    pthread_mutex_unlock(&dev->handover);
    return rig_error_set(err, RIG_EREFUSED, "%s: its timeline is past 2^%d values", dev->facts.name,
                         RIG_POINT_VALUE_BITS);
  }
  w->value = v;
  rig_status st = dev->drv->submit(dev->st, w, err);
  /* A refused hand-over takes no value, so the timeline has no gap; work
   * that ran and lost the device took its value. */
  if (st == RIG_OK || st == RIG_ELOST) atomic_store_explicit(&dev->next, v, memory_order_release);
  pthread_mutex_unlock(&dev->handover);
  return st;
}
