/* Where a GPU sits: the NUMA node of its PCI device, as hwloc finds it
 * from the bus id (docs/cuda.md). Used for `progrun info` and to bind the
 * workers of a rank near its GPU. */
#include <hwloc.h>
#include <stdio.h>

#include "cuda_internal.h"

int rig_cuda_numa(const char *bus_id) {
  unsigned domain, bus, dev, fn;
  if (sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) return -1;
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return -1;
  int node = -1;
  /* PCI devices are filtered out of a topology unless asked for. */
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(topo) == 0) {
    hwloc_obj_t pci = hwloc_get_pcidev_by_busid(topo, domain, bus, dev, fn);
    hwloc_obj_t near = pci ? hwloc_get_non_io_ancestor_obj(topo, pci) : NULL;
    if (near && near->nodeset && !hwloc_bitmap_iszero(near->nodeset) &&
        hwloc_bitmap_weight(near->nodeset) == 1)
      node = hwloc_bitmap_first(near->nodeset);
  }
  hwloc_topology_destroy(topo);
  return node;
}
