/* The provider table: the device families of this build, installed by the
 * table the build made from the enabled backends (providers.c in the
 * build tree, docs/internals.md), and opening devices by name through it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"
#include "provider.h"

static const rig_provider *const *table;
static size_t ntable;
/* Per family, counted once when the core starts. */
static unsigned counts[RIG_MAX_PROVIDERS];
static rig_error whys[RIG_MAX_PROVIDERS];

void rig_providers_install(const rig_provider *const *providers, size_t n) {
  table = providers;
  ntable = n < RIG_MAX_PROVIDERS ? n : RIG_MAX_PROVIDERS;
}

void rig_providers_start(void) {
  for (size_t f = 0; f < ntable; f++) {
    rig_error_set(&whys[f], RIG_OK, "%s", "");
    if (table[f]->count(&counts[f], &whys[f]) != RIG_OK) {
      counts[f] = 0;
      rig_error_prefix(&whys[f], "%s", table[f]->family);
    }
  }
  /* The host is device 0: its family comes first and is always open. */
  rig_device *host;
  if (ntable && table[0]->single) table[0]->open(0, &host, NULL);
}

static char near_bus[32];

void rig_host_near(const char *bus_id) {
  if (!near_bus[0] && bus_id) snprintf(near_bus, sizeof near_bus, "%s", bus_id);
}

const char *rig_host_near_bus(void) {
  return near_bus[0] ? near_bus : NULL;
}

size_t rig_family_count(void) {
  rig_core_init();
  return ntable;
}

const char *rig_family_name(size_t f) {
  rig_core_init();
  return f < ntable ? table[f]->family : NULL;
}

int rig_family_of_arch(const char *arch) {
  rig_core_init();
  for (size_t f = 0; f < ntable; f++)
    for (const char *const *p = table[f]->arch_prefixes; p && *p; p++)
      if (strncmp(arch, *p, strlen(*p)) == 0) return (int)f;
  return -1;
}

rig_status rig_family_devices(size_t f, unsigned *n, rig_error *err) {
  rig_core_init();
  *n = 0;
  if (f >= ntable) return rig_error_set(err, RIG_EINVAL, "no device family %zu", f);
  if (whys[f].code != RIG_OK) return rig_error_set(err, RIG_EREFUSED, "%s", whys[f].message);
  *n = counts[f];
  return RIG_OK;
}

void rig_family_device_name(size_t f, unsigned index, char *out, size_t size) {
  rig_core_init();
  if (f >= ntable)
    snprintf(out, size, "?");
  else if (table[f]->single)
    snprintf(out, size, "%s", table[f]->family);
  else
    snprintf(out, size, "%s:%u", table[f]->family, index);
}

/* Device `index` of family f by its name: "cpu:1", never "cpu:01" or
 * "cpu:+1" (one spelling per device). -1 if the name is not of f. */
static long index_in(const rig_provider *p, const char *name) {
  size_t n = strlen(p->family);
  if (strncmp(name, p->family, n) != 0) return -1;
  if (p->single) return name[n] ? -1 : 0;
  if (name[n] != ':') return -1;
  const char *num = name + n + 1;
  if (!(*num >= '0' && *num <= '9') || (num[0] == '0' && num[1])) return -2;
  char *end;
  long i = strtol(num, &end, 10);
  return *end || i > 65535 ? -2 : i;
}

rig_status rig_providers_open(const char *name, rig_device **out, rig_error *err) {
  for (size_t f = 0; f < ntable; f++) {
    const rig_provider *p = table[f];
    long i = index_in(p, name);
    if (i == -1) continue;
    if (whys[f].code != RIG_OK)
      return rig_error_set(err, RIG_EREFUSED, "%s: no such device (%s)", name, whys[f].message);
    if (i < 0 || (unsigned long)i >= counts[f])
      return rig_error_set(err, RIG_EREFUSED, "%s: no such device (this machine has %u %s devices)",
                           name, counts[f], p->family);
    return p->open((unsigned)i, out, err);
  }
  return rig_error_set(err, RIG_EREFUSED, "%s: no such device", name);
}
