/* The built-in drivers, registered when the core starts: the host first
 * (device 0), then the providers of devices opened by name. */
#include "backends.h"

void rig_backends_init(void);

void rig_backends_init(void) {
  rig_host_backend_register();
  rig_device_provider_add("cpu:", rig_cpu_open, NULL);
}
