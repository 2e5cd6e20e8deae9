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

/* When the core starts: counts each family's devices, opens the host. */
void rig_providers_start(void);

/* Opens the device called `name` through its family's provider. */
rig_status rig_providers_open(const char *name, rig_device **out, rig_error *err);

#endif
