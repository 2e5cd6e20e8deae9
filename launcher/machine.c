/* This machine as the job sees it: its host name, its devices (the host,
 * every cpu:N, every cuda:N that opens) and a summary of its topology. */
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine.h"

static void topology_summary(char *out, size_t size) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0) {
    snprintf(out, size, "unknown topology");
    return;
  }
  int packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  int numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  hwloc_obj_t root = hwloc_get_root_obj(topo);
  double gib = (double)root->total_memory / (1024.0 * 1024.0 * 1024.0);
  hwloc_cpuset_t set = hwloc_bitmap_alloc();
  int bound = -1;
  if (set && hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0)
    bound = hwloc_get_nbobjs_inside_cpuset_by_type(topo, set, HWLOC_OBJ_CORE);
  hwloc_bitmap_free(set);
  /* hwloc's memory is its NUMA nodes', not always the system's. */
  snprintf(out, size,
           "%d package%s, %d NUMA node%s holding %.1f GiB, %d cores, %d PUs; bound to %d cores",
           packages, packages == 1 ? "" : "s", numa, numa == 1 ? "" : "s", gib, cores, pus, bound);
  hwloc_topology_destroy(topo);
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
