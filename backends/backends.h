/* The built-in drivers' entry points, for backends/registry.c only. */
#ifndef RIG_BACKENDS_H
#define RIG_BACKENDS_H

#include "rig/rig_driver.h"

/* Registers the host as device 0. */
void rig_host_backend_register(void);
/* Opens "cpu:N". */
rig_status rig_cpu_open(const char *name, rig_device **out, rig_error *err);

#endif
