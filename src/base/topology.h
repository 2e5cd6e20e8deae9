/* topology.h: this machine's hwloc topology, one per process: loaded at
 * the first call (pthread_once), with its PCI devices (a GPU's place is
 * found by its bus id), and kept for the life of the process. The worker
 * pool, the cuda backend, the job's description of its machine and
 * `progrun info` (rig_machine_topology) all read this one. Read-only:
 * hwloc lets threads read a topology at once, never change it. Private to
 * librig (never installed). */
#ifndef RIG_BASE_TOPOLOGY_H
#define RIG_BASE_TOPOLOGY_H

#include <hwloc.h>

#include "pci.h"

/* The topology, or NULL where hwloc could not load it. */
hwloc_topology_t rig_topology(void);
/* Where PCI device `id` sits: the first object above it that is not I/O
 * (its cores and NUMA nodes), or NULL (no topology, no such device). */
hwloc_obj_t rig_topology_near(const rig_pci_id *id);
/* How many times this process loaded the topology: 0 before the first
 * call, 1 after it, whatever came since. */
unsigned rig_topology_loads(void);

#endif
