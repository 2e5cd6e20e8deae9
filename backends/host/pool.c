/* The worker pool: one per process, sized from the cores of the process's
 * cpuset (hwloc) and its cgroup CPU quota, each worker bound to a core. A
 * launch publishes a job; the caller and the workers take groups until none
 * is left. A launch of one group, or one from inside a job, runs inline;
 * so does one that finds the pool busy with another thread's launch. */
#include <hwloc.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/count_wait.h"
#include "base/env.h"
#include "base/pci.h"
#include "base/sync.h"
#include "base/topology.h"
#include "hostcode.h"

typedef struct job {
  const rig_working *by; /* the launching thread's works, which the job's groups are part of */
  rig_launch_fn *fn;
  void *params;
  uint32_t groups[3], threads[3], shared;
  uint64_t total;
  _Atomic uint64_t next; /* the next group to take */
  _Atomic uint64_t done; /* groups finished */
} job;

typedef struct worker {
  pthread_t thread;
  unsigned index;
  void *scratch;
} worker;

static struct {
  pthread_once_t once;
  unsigned nworkers; /* threads besides the caller */
  worker *workers;
  pthread_mutex_t busy; /* one launch at a time spreads over the pool */
  job *_Atomic current;
  _Atomic uint32_t epoch;  /* futex: bumped for each job */
  _Atomic uint32_t active; /* workers that may be reading the current job */
  hwloc_topology_t topo;   /* the process's (base/topology.h) */
  hwloc_cpuset_t *cores;
  unsigned ncores;
} pool = {.once = PTHREAD_ONCE_INIT, .busy = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local bool in_job;
static _Thread_local void *caller_scratch;
/* Frees a launching thread's scratch when it exits. */
static pthread_key_t scratch_key;
static _Atomic unsigned started; /* workers bound and waiting */

static void *scratch_alloc(void) {
  void *p = NULL;
  return posix_memalign(&p, 64, RIG_HOST_MAX_SHARED) == 0 ? p : NULL;
}

/* The calls host code is lent (rig_grid.calls). */
static int lent_rail_wait(const void *count, uint64_t c) {
  return rig_count_wait(count, c);
}
static const rig_host_calls lent = {.size = sizeof lent, .rail_wait = lent_rail_wait};

static void run_groups(job *j, unsigned worker_index, void *scratch) {
  rig_grid g = {.calls = &lent};
  memcpy(g.groups, j->groups, sizeof g.groups);
  memcpy(g.threads, j->threads, sizeof g.threads);
  g.worker = worker_index;
  g.shared_bytes = j->shared;
  g.shared = j->shared ? scratch : NULL;
  uint64_t plane = (uint64_t)j->groups[0] * j->groups[1];
  for (;;) {
    uint64_t k = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
    if (k >= j->total) break;
    g.group[2] = (uint32_t)(k / plane);
    g.group[1] = (uint32_t)((k % plane) / j->groups[0]);
    g.group[0] = (uint32_t)(k % j->groups[0]);
    j->fn(j->params, &g);
    atomic_fetch_add_explicit(&j->done, 1, memory_order_release);
  }
}

static void *worker_main(void *arg) {
  worker *w = arg;
  /* Worker 0 is the caller's core's neighbour: the caller keeps its own. */
  if (pool.cores && w->index + 1 < pool.ncores)
    hwloc_set_cpubind(pool.topo, pool.cores[w->index + 1], HWLOC_CPUBIND_THREAD);
  in_job = true; /* a launch from inside a group runs inline */
  atomic_fetch_add(&started, 1);
  uint32_t seen = 0;
  for (;;) {
    uint32_t e = atomic_load_explicit(&pool.epoch, memory_order_acquire);
    if (e == seen) {
      /* A launch often follows a launch: spin a little before sleeping. */
      for (int i = 0; i < 2000 && atomic_load_explicit(&pool.epoch, memory_order_acquire) == e; i++)
        rig_cpu_relax();
      if (atomic_load_explicit(&pool.epoch, memory_order_acquire) == e)
        rig_futex_wait(&pool.epoch, e, -1);
      continue;
    }
    seen = e;
    /* Counted before looking at the job, so that its caller, which clears
     * the job before waiting for the count, never leaves while we read it. */
    atomic_fetch_add(&pool.active, 1);
    job *j = atomic_load(&pool.current);
    if (j) {
      const rig_working *outer = rig_working_set(j->by);
      run_groups(j, w->index + 1, w->scratch);
      rig_working_set(outer);
    }
    atomic_fetch_sub(&pool.active, 1);
  }
  return NULL;
}

static long read_long(const char *path) {
  FILE *f = fopen(path, "r");
  long v = -1;
  if (f) {
    if (fscanf(f, "%ld", &v) != 1) v = -1;
    fclose(f);
  }
  return v;
}

/* The CPUs the process's cgroup quota allows (v2 cpu.max, v1
 * cfs_quota_us / cfs_period_us), or 0 when unbounded or unknown. */
static unsigned cgroup_cpus(void) {
  FILE *f = fopen("/proc/self/cgroup", "r");
  char line[512], v2[512] = "", v1[512] = "";
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (strncmp(line, "0::", 3) == 0) snprintf(v2, sizeof v2, "%s", line + 3);
    char *ctl = strchr(line, ':');
    if (ctl && strstr(ctl, "cpu") && strchr(ctl + 1, ':'))
      snprintf(v1, sizeof v1, "%.500s", strchr(ctl + 1, ':') + 1);
  }
  if (f) fclose(f);
  char path[640];
  snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpu.max", v2[0] ? v2 : "");
  f = fopen(path, "r");
  if (!f) f = fopen("/sys/fs/cgroup/cpu.max", "r");
  if (f) {
    char quota[32] = "";
    long period = 0;
    unsigned n = 0;
    if (fscanf(f, "%31s %ld", quota, &period) == 2 && strcmp(quota, "max") != 0 && period > 0)
      n = (unsigned)ceil((double)atol(quota) / (double)period);
    fclose(f);
    return n;
  }
  snprintf(path, sizeof path, "/sys/fs/cgroup/cpu,cpuacct%s/cpu.cfs_quota_us", v1);
  long quota = read_long(path);
  snprintf(path, sizeof path, "/sys/fs/cgroup/cpu,cpuacct%s/cpu.cfs_period_us", v1);
  long period = read_long(path);
  return quota > 0 && period > 0 ? (unsigned)ceil((double)quota / (double)period) : 0;
}

/* A rank with a GPU keeps its workers on the cores near it (the GPU's
 * NUMA node, from its PCI locality) where its cpuset has any there. */
static void near_gpu(hwloc_cpuset_t set, const char *bus_id) {
  rig_pci_id id;
  if (!rig_pci_parse(bus_id, &id)) return;
  hwloc_obj_t at = rig_topology_near(&id);
  if (!at || !at->cpuset || !hwloc_bitmap_intersects(set, at->cpuset)) return;
  hwloc_bitmap_and(set, set, at->cpuset);
}

static void pool_init(void) {
  pthread_key_create(&scratch_key, free);
  unsigned n = 1;
  const char *near = rig_host_near_bus();
  if ((pool.topo = rig_topology())) {
    hwloc_cpuset_t set = hwloc_bitmap_alloc();
    if (set && hwloc_get_cpubind(pool.topo, set, HWLOC_CPUBIND_PROCESS) == 0) {
      if (near) near_gpu(set, near);
      int ncores = hwloc_get_nbobjs_inside_cpuset_by_type(pool.topo, set, HWLOC_OBJ_CORE);
      if (ncores <= 0) ncores = hwloc_bitmap_weight(set);
      if (ncores > 0) {
        n = (unsigned)ncores;
        pool.cores = calloc(n, sizeof *pool.cores);
        for (unsigned i = 0; pool.cores && i < n; i++) {
          hwloc_obj_t core = hwloc_get_obj_inside_cpuset_by_type(pool.topo, set, HWLOC_OBJ_CORE, i);
          pool.cores[i] = hwloc_bitmap_dup(core ? core->cpuset : set);
          if (core) hwloc_bitmap_and(pool.cores[i], pool.cores[i], set);
        }
        pool.ncores = pool.cores ? n : 0;
      }
    }
    hwloc_bitmap_free(set);
  }
  unsigned quota = cgroup_cpus();
  if (quota && quota < n) n = quota;
  if (rig_env_get()->workers) n = rig_env_get()->workers;
  pool.nworkers = n > 1 ? n - 1 : 0;
  pool.workers = calloc(pool.nworkers ? pool.nworkers : 1, sizeof *pool.workers);
  if (!pool.workers) pool.nworkers = 0;
  for (unsigned i = 0; i < pool.nworkers; i++) {
    worker *w = &pool.workers[i];
    w->index = i;
    w->scratch = scratch_alloc();
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (!w->scratch || pthread_create(&w->thread, &attr, worker_main, w) != 0) {
      pool.nworkers = i;
      pthread_attr_destroy(&attr);
      break;
    }
    pthread_attr_destroy(&attr);
  }
  /* Bound and waiting before the first launch: binding allocates, and a
   * launch must not. */
  while (atomic_load(&started) < pool.nworkers) sched_yield();
}

unsigned rig_pool_threads(void) {
  pthread_once(&pool.once, pool_init);
  return pool.nworkers + 1;
}

void rig_pool_launch(rig_launch_fn *fn, void *params, const uint32_t groups[3],
                     const uint32_t threads[3], uint32_t shared_bytes) {
  pthread_once(&pool.once, pool_init);
  if (!caller_scratch) {
    caller_scratch = scratch_alloc();
    pthread_setspecific(scratch_key, caller_scratch);
  }
  job j = {.by = rig_working_now(), .fn = fn, .params = params, .shared = shared_bytes};
  memcpy(j.groups, groups, sizeof j.groups);
  memcpy(j.threads, threads, sizeof j.threads);
  j.total = (uint64_t)groups[0] * groups[1] * groups[2];
  if (j.total <= 1 || in_job || pool.nworkers == 0 || pthread_mutex_trylock(&pool.busy) != 0) {
    bool outer = in_job;
    in_job = true;
    run_groups(&j, 0, caller_scratch);
    in_job = outer;
    return;
  }
  atomic_store_explicit(&pool.current, &j, memory_order_release);
  atomic_fetch_add_explicit(&pool.epoch, 1, memory_order_release);
  rig_futex_wake(&pool.epoch, INT32_MAX);
  in_job = true;
  run_groups(&j, 0, caller_scratch);
  in_job = false;
  /* Every group taken is finished before the job leaves this frame. */
  while (atomic_load_explicit(&j.done, memory_order_acquire) < j.total) sched_yield();
  atomic_store(&pool.current, NULL);
  while (atomic_load(&pool.active)) sched_yield();
  pthread_mutex_unlock(&pool.busy);
}
