/* Devices: the process's table of them (index 0 the host), opening by name
 * through providers, their facts, the hand-over of work, and loss. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "core_internal.h"
#include "provider.h"

static rig_device *_Atomic table[RIG_MAX_DEVICES];
static _Atomic uint32_t ndevices;
/* Registration and opening by name; never taken on a hand-over. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

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

rig_status rig_device_register(const rig_driver *drv, void *st, const rig_device_facts *facts,
                               _Atomic uint64_t *word, rig_device **out, rig_error *err) {
  rig_device *d = calloc(1, sizeof *d);
  if (!d) return rig_error_set(err, RIG_ENOMEM, "out of memory registering a device");
  d->drv = drv;
  d->st = st;
  d->facts = *facts;
  d->word = word;
  atomic_init(&d->refs, 1); /* the registration's */
  pthread_mutex_init(&d->handover, NULL);
  pthread_mutex_lock(&table_lock);
  uint32_t n = atomic_load(&ndevices);
  if (n >= RIG_MAX_DEVICES) {
    pthread_mutex_unlock(&table_lock);
    free(d);
    return rig_error_set(err, RIG_EREFUSED, "%s: more than %d devices", facts->name,
                         RIG_MAX_DEVICES);
  }
  d->index = (uint16_t)n;
  atomic_store(&d->next, atomic_load(word));
  atomic_store(&table[n], d);
  atomic_store(&ndevices, n + 1);
  pthread_mutex_unlock(&table_lock);
  *out = d;
  return RIG_OK;
}

void rig_device_ref(rig_device *dev) {
  atomic_fetch_add_explicit(&dev->refs, 1, memory_order_relaxed);
}

/* Devices gone from the table, freed (and their drivers stopped) only after
 * RETIRED later ones: a thread that read a table slot just before it was
 * cleared (a stamp's or a point's device) still finds the device and its
 * word. So at most RETIRED gone devices are held at once. */
#define RETIRED 64
static rig_device *retired[RETIRED];
static size_t nretired;

void rig_device_unref(rig_device *dev) {
  if (atomic_fetch_sub_explicit(&dev->refs, 1, memory_order_acq_rel) != 1) return;
  /* Its index is never given again: a stale point or stamp of it must not
   * name a newer device. A slot that is NULL reads as a device whose work
   * is over. */
  pthread_mutex_lock(&table_lock);
  atomic_store_explicit(&table[dev->index], NULL, memory_order_release);
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

rig_device *rig_device_at(uint16_t index) {
  rig_core_init();
  if (index >= atomic_load_explicit(&ndevices, memory_order_acquire)) return NULL;
  return atomic_load_explicit(&table[index], memory_order_acquire);
}

rig_device *rig_host(void) {
  return rig_device_at(0);
}

size_t rig_device_count(void) {
  rig_core_init();
  return atomic_load(&ndevices);
}

rig_device *rig_machine_host(int machine) {
  if (machine == 0) return rig_host();
  /* The newest that is not lost: an earlier job's proxies are. */
  for (size_t i = rig_device_count(); i-- > 1;) {
    rig_device *d = atomic_load(&table[i]);
    if (d && d->facts.machine == machine && d->facts.machine_host && !rig_device_lost_now(d))
      return d;
  }
  return NULL;
}

static rig_device *find_open(const char *name) {
  uint32_t n = atomic_load(&ndevices);
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
uint16_t rig_device_index(const rig_device *dev) {
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
    atomic_store_explicit(&dev->lost, true, memory_order_release);
  }
  pthread_mutex_unlock(&lose_lock);
  /* Everyone sleeping on the device learns of the loss. */
  rig_device_signal(dev);
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
    return rig_error_set(err, RIG_EREFUSED, "%s: its timeline is past 2^48 values",
                         dev->facts.name);
  }
  w->value = v;
  rig_status st = dev->drv->submit(dev->st, w, err);
  /* A refused hand-over takes no value, so the timeline has no gap; work
   * that ran and lost the device took its value. */
  if (st == RIG_OK || st == RIG_ELOST) atomic_store_explicit(&dev->next, v, memory_order_release);
  pthread_mutex_unlock(&dev->handover);
  return st;
}
