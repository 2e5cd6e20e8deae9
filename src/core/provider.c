/* The provider table: the device families of this build, installed by the
 * table the build made from the enabled backends (providers.c in the
 * build tree, docs/internals.md), each checked for its ABI, and opening
 * devices by name through it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"
#include "provider.h"

static const rig_provider *const *installed;
static size_t ninstalled;
/* The installed table's families, started once when the core starts. */
static rig_families the;

void rig_providers_install(const rig_provider *const *providers, size_t n) {
  installed = providers;
  ninstalled = n;
}

void rig_families_start(rig_families *fs, const rig_provider *const *table, size_t n) {
  memset(fs, 0, sizeof *fs);
  fs->table = table;
  fs->n = n < RIG_MAX_PROVIDERS ? n : RIG_MAX_PROVIDERS;
  for (size_t f = 0; f < fs->n; f++) {
    const rig_provider *p = table[f];
    /* Only abi and family are where they are in every ABI. */
    if (p->abi != RIG_PROVIDER_ABI) {
      rig_error_set(&fs->whys[f], RIG_EREFUSED,
                    "%s: a provider of ABI %u, not librig's %u (build it against this "
                    "rig_driver.h)",
                    p->family, p->abi, RIG_PROVIDER_ABI);
      continue;
    }
    fs->usable[f] = true;
    if (p->count(&fs->counts[f], &fs->whys[f]) != RIG_OK) {
      fs->counts[f] = 0;
      rig_error_prefix(&fs->whys[f], "%s", p->family);
    }
  }
}

void rig_providers_start(void) {
  rig_families_start(&the, installed, ninstalled);
  /* The host is device 0: its family comes first and is always open. */
  rig_device *host;
  if (the.n && the.usable[0] && the.table[0]->single) the.table[0]->open(0, &host, NULL);
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
  return the.n;
}

const char *rig_family_name(size_t f) {
  rig_core_init();
  return f < the.n ? the.table[f]->family : NULL;
}

/* A family of one device (the host) names it by the family alone; one of
 * another ABI is taken for a family of many. */
static bool single(const rig_families *fs, size_t f) {
  return fs->usable[f] && fs->table[f]->single;
}

int rig_families_of_arch(const rig_families *fs, const char *arch) {
  int others = -1;
  for (size_t f = 0; f < fs->n; f++) {
    if (!fs->usable[f]) continue;
    const rig_provider *p = fs->table[f];
    for (const char *const *pre = p->arch_prefixes; pre && *pre; pre++)
      if (strncmp(arch, *pre, strlen(*pre)) == 0) return (int)f;
    if (p->other_archs && others < 0) others = (int)f;
  }
  return others;
}

int rig_family_of_arch(const char *arch) {
  rig_core_init();
  return rig_families_of_arch(&the, arch);
}

rig_status rig_image_functions(const char *arch, const void *bytes, size_t len,
                               void (*each)(void *ctx, const char *name), void *ctx, bool *known,
                               rig_error *err) {
  rig_core_init();
  *known = false;
  int f = rig_families_of_arch(&the, arch);
  if (f < 0)
    return rig_error_set(err, RIG_EINVAL, "no device family of this build has arch %s", arch);
  const rig_provider *p = the.table[f];
  if (!p->image_functions) return RIG_OK;
  *known = true;
  return p->image_functions(arch, bytes, len, each, ctx, err);
}

rig_status rig_families_devices(const rig_families *fs, size_t f, unsigned *n, rig_error *err) {
  *n = 0;
  if (f >= fs->n) return rig_error_set(err, RIG_EINVAL, "no device family %zu", f);
  if (fs->whys[f].code != RIG_OK)
    return rig_error_set(err, RIG_EREFUSED, "%s", fs->whys[f].message);
  *n = fs->counts[f];
  return RIG_OK;
}

rig_status rig_family_devices(size_t f, unsigned *n, rig_error *err) {
  rig_core_init();
  return rig_families_devices(&the, f, n, err);
}

void rig_family_device_name(size_t f, unsigned index, char *out, size_t size) {
  rig_core_init();
  if (f >= the.n)
    snprintf(out, size, "?");
  else if (single(&the, f))
    snprintf(out, size, "%s", the.table[f]->family);
  else
    snprintf(out, size, "%s:%u", the.table[f]->family, index);
}

/* The most digits of a device's number: more is no name. */
#define INDEX_DIGITS 9

/* Device `index` of family f by its name: "cpu:1", never "cpu:01" or
 * "cpu:+1" (one spelling per device). -1 if the name is not of f, -2 if
 * it is of f's form but no device's name. */
static long index_in(const rig_families *fs, size_t f, const char *name) {
  const char *family = fs->table[f]->family;
  size_t n = strlen(family);
  if (strncmp(name, family, n) != 0) return -1;
  if (single(fs, f)) return name[n] ? -1 : 0;
  if (name[n] != ':') return -1;
  const char *num = name + n + 1;
  size_t digits = strspn(num, "0123456789");
  if (!digits || num[digits] || digits > INDEX_DIGITS || (num[0] == '0' && digits > 1)) return -2;
  return strtol(num, NULL, 10);
}

int rig_families_of_name(const rig_families *fs, const char *name) {
  for (size_t f = 0; f < fs->n; f++) {
    long i = index_in(fs, f, name);
    if (i >= 0) return (int)f;
    if (i == -2) return -1;
  }
  return -1;
}

int rig_family_of_device_name(const char *name) {
  rig_core_init();
  return rig_families_of_name(&the, name);
}

rig_status rig_families_open(const rig_families *fs, const char *name, rig_device **out,
                             rig_error *err) {
  for (size_t f = 0; f < fs->n; f++) {
    const rig_provider *p = fs->table[f];
    long i = index_in(fs, f, name);
    if (i == -1) continue;
    if (fs->whys[f].code != RIG_OK)
      return rig_error_set(err, RIG_EREFUSED, "%s: no such device (%s)", name, fs->whys[f].message);
    if (i < 0 || (unsigned long)i >= fs->counts[f])
      return rig_error_set(err, RIG_EREFUSED, "%s: no such device (this machine has %u %s devices)",
                           name, fs->counts[f], p->family);
    return p->open((unsigned)i, out, err);
  }
  return rig_error_set(err, RIG_EREFUSED, "%s: no such device", name);
}

rig_status rig_providers_open(const char *name, rig_device **out, rig_error *err) {
  return rig_families_open(&the, name, out, err);
}
