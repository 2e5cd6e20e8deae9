/* Where a GPU sits: the NUMA node of its PCI device, as the process's
 * topology (base/topology.h) finds it from the bus id (docs/cuda.md). Used
 * for `progrun info` and to bind the workers of a rank near its GPU. */
#include "base/pci.h"
#include "base/topology.h"
#include "cuda_internal.h"

int rig_cuda_numa(const char *bus_id) {
  rig_pci_id id;
  if (!rig_pci_parse(bus_id, &id)) return -1;
  hwloc_obj_t near = rig_topology_near(&id);
  if (near && near->nodeset && !hwloc_bitmap_iszero(near->nodeset) &&
      hwloc_bitmap_weight(near->nodeset) == 1)
    return hwloc_bitmap_first(near->nodeset);
  return -1;
}
