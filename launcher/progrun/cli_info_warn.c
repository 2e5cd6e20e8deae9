/* progrun info's warnings: a placement or a binding of the machines that
 * defeats a job. Which the user asked for is not known here (a try on one
 * machine shares its host on purpose), so each is said as a likely mistake,
 * with the launcher's fix (docs/jobs.md, "On a cluster"). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_info.h"

/* Hosts told one a line, then a count: a cluster of thousands misplaced
 * is a few lines, as info's blocks are. */
enum { SHARED_HOSTS_TOLD = 4 };

/* Here, below cli_info.c, since both say lists of numbers this way. */
void cli_info_ranges(json_t *list, const char *sep, char *out, size_t size) {
  size_t w = 0, n = json_array_size(list);
  out[0] = '\0';
  for (size_t i = 0; i < n && w < size;) {
    json_int_t lo = json_integer_value(json_array_get(list, i)), hi = lo;
    size_t j = i + 1;
    while (j < n && json_integer_value(json_array_get(list, j)) == hi + 1) hi++, j++;
    int k = hi > lo ? snprintf(out + w, size - w, "%s%lld-%lld", w ? sep : "", (long long)lo,
                               (long long)hi)
                    : snprintf(out + w, size - w, "%s%lld", w ? sep : "", (long long)lo);
    if (k < 0) break;
    w += (size_t)k;
    i = j;
  }
}

void cli_info_cpus(json_t *o) {
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  long bound = -1;
  /* A set as large as the CPUs configured, grown where the kernel's is
   * larger (EINVAL). */
  long conf = sysconf(_SC_NPROCESSORS_CONF);
  for (int n = conf > 1024 ? (int)conf : 1024; bound < 0 && n <= (1 << 20); n *= 2) {
    cpu_set_t *set = CPU_ALLOC((size_t)n);
    if (!set) break;
    size_t size = CPU_ALLOC_SIZE((size_t)n);
    if (sched_getaffinity(0, size, set) == 0) bound = CPU_COUNT_S(size, set);
    CPU_FREE(set);
  }
  json_object_set_new(o, "bound_cpus", json_integer(bound));
  json_object_set_new(o, "online_cpus", json_integer(online));
}

static const char *host_of(json_t *o) {
  return json_object_get(o, "error") ? NULL : json_string_value(json_object_get(o, "host"));
}

static json_int_t int_of(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  return json_is_integer(v) ? json_integer_value(v) : -1;
}

/* The ranks of the machines that `alike(r, q)` puts with machine r, from r
 * on, marked said; their list in out ("0-1, 4"). Returns how many. */
static size_t group(json_t *machines, size_t r, bool *said, bool (*alike)(json_t *, json_t *),
                    char *out, size_t size) {
  json_t *ranks = json_array();
  json_t *a = json_array_get(machines, r);
  for (size_t q = r; ranks && q < json_array_size(machines); q++) {
    json_t *b = json_array_get(machines, q);
    if (said[q] || !alike(a, b)) continue;
    said[q] = true;
    json_array_append_new(ranks, json_integer(int_of(b, "rank")));
  }
  size_t n = json_array_size(ranks);
  cli_info_ranges(ranks, ", ", out, size);
  json_decref(ranks);
  return n;
}

static bool same_host(json_t *a, json_t *b) {
  const char *x = host_of(a), *y = host_of(b);
  return x && y && strcmp(x, y) == 0;
}

/* The cpu:N devices of a machine: a thread each, beside its workers. */
static json_int_t cpu_devices(json_t *o) {
  json_int_t n = 0;
  size_t i;
  json_t *d;
  json_array_foreach(json_object_get(o, "devices"), i, d) {
    const char *name = json_string_value(json_object_get(d, "name"));
    if (name && strncmp(name, "cpu:", 4) == 0) n++;
  }
  return n;
}

/* Whether a machine may run on fewer CPUs than its node has and than its
 * threads want: the workers (one at least) and a thread per cpu:N. */
static bool squeezed(json_t *o) {
  json_int_t bound = int_of(o, "bound_cpus"), online = int_of(o, "online_cpus");
  return host_of(o) && bound > 0 && bound < online && bound < 1 + cpu_devices(o);
}

static bool squeezed_alike(json_t *a, json_t *b) {
  return squeezed(a) && squeezed(b) && int_of(a, "bound_cpus") == int_of(b, "bound_cpus") &&
         int_of(a, "online_cpus") == int_of(b, "online_cpus") && cpu_devices(a) == cpu_devices(b);
}

void cli_info_warn(json_t *machines) {
  size_t n = json_array_size(machines), shared = 0;
  bool *said = calloc(n + 1, sizeof *said);
  if (!said) return;
  char list[512];
  for (size_t r = 0; r < n; r++) {
    if (said[r] || !host_of(json_array_get(machines, r))) continue;
    if (group(machines, r, said, same_host, list, sizeof list) < 2) continue;
    if (++shared <= SHARED_HOSTS_TOLD)
      cli_warn("machines %s share host %s: on a cluster, one machine per node wants mpirun "
               "--map-by node (mpiexec.mpich -ppn 1, srun --ntasks-per-node=1; docs/jobs.md, "
               "\"On a cluster\")",
               list, host_of(json_array_get(machines, r)));
  }
  if (shared > SHARED_HOSTS_TOLD)
    cli_warn("and %zu more hosts hold several machines each", shared - SHARED_HOSTS_TOLD);
  memset(said, 0, (n + 1) * sizeof *said);
  for (size_t r = 0; r < n; r++) {
    json_t *o = json_array_get(machines, r);
    if (said[r] || !squeezed(o)) continue;
    size_t k = group(machines, r, said, squeezed_alike, list, sizeof list);
    json_int_t bound = int_of(o, "bound_cpus"), online = int_of(o, "online_cpus");
    const char *cpus = bound == 1 ? "CPU" : "CPUs";
    const char *fix = "mpirun binds a rank to a core unless --bind-to none (docs/jobs.md, \"On a "
                      "cluster\")";
    if (k == 1)
      cli_warn("machine %s (%s) runs on %lld %s of its node's %lld, for its workers and %lld "
               "cpu:N devices' threads: %s",
               list, host_of(o), (long long)bound, cpus, (long long)online,
               (long long)cpu_devices(o), fix);
    else
      cli_warn("machines %s run on %lld %s each of their node's %lld, for the workers and %lld "
               "cpu:N devices' threads of each: %s",
               list, (long long)bound, cpus, (long long)online, (long long)cpu_devices(o), fix);
  }
  free(said);
}
