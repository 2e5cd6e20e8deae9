/* provider.h: how the build's provider table reaches the core. The table
 * (providers.c, generated into the build tree from RIG_BACKENDS) installs
 * itself when librig is loaded; the core starts its families at its first
 * use. */
#ifndef RIG_CORE_PROVIDER_H
#define RIG_CORE_PROVIDER_H

#include "rig/rig_driver.h"

#define RIG_MAX_PROVIDERS 16

/* Called by the generated table before main: the host's provider first. */
void rig_providers_install(const rig_provider *const *providers, size_t n);

/* When the core starts: the installed table's families, then the host
 * opened. */
void rig_providers_start(void);

/* Opens the device called `name` through its family's provider. */
rig_status rig_providers_open(const char *name, rig_device **out, rig_error *err);

/* A table of providers and what the core learned of each when it started:
 * the core's own (the installed table), or a test's. */
typedef struct rig_families {
  const rig_provider *const *table;
  size_t n;
  bool usable[RIG_MAX_PROVIDERS]; /* of this ABI: more than its abi and family may be read */
  unsigned counts[RIG_MAX_PROVIDERS];
  rig_error whys[RIG_MAX_PROVIDERS]; /* RIG_OK, or why the family has no device */
} rig_families;

/* Checks each provider's ABI, then counts the devices of those of this
 * one (a provider of another is refused, its count never called). */
void rig_families_start(rig_families *fs, const rig_provider *const *table, size_t n);

/* What rig_family_devices, rig_family_of_arch, rig_family_of_device_name
 * and rig_providers_open answer, of fs. */
rig_status rig_families_devices(const rig_families *fs, size_t f, unsigned *n, rig_error *err);
int rig_families_of_arch(const rig_families *fs, const char *arch);
int rig_families_of_name(const rig_families *fs, const char *name);
rig_status rig_families_open(const rig_families *fs, const char *name, rig_device **out,
                             rig_error *err);

#endif
