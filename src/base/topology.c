/* The process's one topology (topology.h). Loading it walks sysfs (and the
 * PCI bus) for milliseconds, and every asker wants the same machine: so
 * once. It is never destroyed: threads that outlive any point of release
 * read it (the pool's workers are detached, another library's destructor
 * may describe the machine), it is reachable to the end (no leak checker
 * counts it), and the process's exit returns it. */
#include "topology.h"

#include <pthread.h>
#include <stdatomic.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static hwloc_topology_t topology;
static _Atomic unsigned loads;

static void load(void) {
  hwloc_topology_t t;
  atomic_fetch_add(&loads, 1);
  if (hwloc_topology_init(&t) != 0) return;
  /* PCI devices are filtered out of a topology unless asked for. */
  if (hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0 ||
      hwloc_topology_load(t) != 0) {
    hwloc_topology_destroy(t);
    return;
  }
  topology = t;
}

hwloc_topology_t rig_topology(void) {
  pthread_once(&once, load);
  return topology;
}

hwloc_obj_t rig_topology_near(const rig_pci_id *id) {
  hwloc_topology_t t = rig_topology();
  hwloc_obj_t pci =
      t ? hwloc_get_pcidev_by_busid(t, id->domain, id->bus, id->device, id->function) : NULL;
  return pci ? hwloc_get_non_io_ancestor_obj(t, pci) : NULL;
}

unsigned rig_topology_loads(void) {
  return atomic_load(&loads);
}
