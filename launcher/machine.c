/* This machine as the job sees it: its host name, its devices (the host,
 * every cpu:N, every cuda:N that opens) and its topology, read from the
 * process's one (base/topology.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/topology.h"
#include "machine.h"

void rig_machine_topology(rig_topology_facts *t) {
  snprintf(t->cpus, sizeof t->cpus, "unknown");
  snprintf(t->numa, sizeof t->numa, "unknown");
  snprintf(t->summary, sizeof t->summary, "unknown");
  t->numa_bytes = 0;
  hwloc_topology_t topo = rig_topology();
  if (!topo) return;
  int nnuma = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < nnuma; i++) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
    if (node && node->attr) t->numa_bytes += node->attr->numanode.local_memory;
  }
  int packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  int bound = -1;
  hwloc_cpuset_t set = hwloc_bitmap_alloc();
  hwloc_nodeset_t nodes = hwloc_bitmap_alloc();
  if (set && nodes && hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0) {
    hwloc_bitmap_list_snprintf(t->cpus, sizeof t->cpus, set);
    hwloc_cpuset_to_nodeset(topo, set, nodes);
    hwloc_bitmap_list_snprintf(t->numa, sizeof t->numa, nodes);
    bound = hwloc_get_nbobjs_inside_cpuset_by_type(topo, set, HWLOC_OBJ_CORE);
  }
  /* hwloc's memory is its NUMA nodes', not always the system's. */
  snprintf(t->summary, sizeof t->summary,
           "%d package%s, %d NUMA node%s holding %.1f GiB, %d cores, %d PUs; bound to %d cores",
           packages, packages == 1 ? "" : "s", nnuma, nnuma == 1 ? "" : "s",
           (double)t->numa_bytes / (1024.0 * 1024.0 * 1024.0), cores, pus, bound);
  hwloc_bitmap_free(set);
  hwloc_bitmap_free(nodes);
}

static void topology_summary(char *out, size_t size) {
  rig_topology_facts t;
  rig_machine_topology(&t);
  snprintf(out, size, "%s", rig_topology() ? t.summary : "unknown topology");
}

/* Opens every device of this machine, family by family (the host first),
 * until one does not open. */
static size_t open_devices(rig_device **devs, size_t room) {
  size_t n = 0;
  for (size_t f = 0; f < rig_family_count(); f++) {
    unsigned count = 0;
    if (rig_family_devices(f, &count, NULL) != RIG_OK) continue;
    for (unsigned i = 0; i < count && n < room; i++) {
      char name[64];
      rig_family_device_name(f, i, name, sizeof name);
      rig_device *d;
      if (rig_device_open(name, &d, NULL) != RIG_OK) break;
      devs[n++] = d;
    }
  }
  /* And what else this process registered as its own (a test's driver). */
  size_t count = rig_device_count();
  for (size_t i = 0; i < count && n < room; i++) {
    rig_device *d = rig_device_in_place(i);
    if (!d) continue;
    bool known = rig_device_facts_of(d)->machine != 0;
    for (size_t j = 0; j < n && !known; j++) known = devs[j] == d;
    if (!known) devs[n++] = d;
  }
  return n;
}

rig_status rig_machine_describe(rig_machine *m, int rank, rig_device ***devices, rig_error *err) {
  memset(m, 0, sizeof *m);
  m->rank = rank;
  if (gethostname(m->host, sizeof m->host - 1) != 0) snprintf(m->host, sizeof m->host, "unknown");
  topology_summary(m->topology, sizeof m->topology);
  rig_device *found[64];
  size_t n = open_devices(found, 64);
  m->devices = calloc(n, sizeof *m->devices);
  *devices = calloc(n, sizeof **devices);
  if (!m->devices || !*devices) return rig_error_set(err, RIG_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    const rig_device_facts *f = rig_device_facts_of(found[i]);
    snprintf(m->devices[i].name, sizeof m->devices[i].name, "%s", f->name);
    snprintf(m->devices[i].arch, sizeof m->devices[i].arch, "%s", f->arch);
    m->devices[i].budget = f->budget;
    snprintf(m->devices[i].bus_id, sizeof m->devices[i].bus_id, "%s", f->bus_id);
    m->devices[i].numa = f->numa;
    (*devices)[i] = found[i];
  }
  m->ndevices = n;
  return RIG_OK;
}

rig_status rig_machine_describe_local(rig_machine *m, rig_error *err) {
  rig_device **devices = NULL;
  rig_status st = rig_machine_describe(m, 0, &devices, err);
  free(devices);
  if (st != RIG_OK) rig_machine_clear(m);
  return st;
}

void rig_machine_clear(rig_machine *m) {
  free(m->devices);
  m->devices = NULL;
  m->ndevices = 0;
}
