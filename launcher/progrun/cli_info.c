/* `progrun info`: this machine as a job would see it: its host name and
 * topology (hwloc), its memory, its devices and their arch, the worker
 * pool, and the MPI library and UCX transports a job would use. Under a
 * launcher every rank describes its machine (also the cpuset its workers
 * run on and its NUMA nodes), rank 0 gathers them and prints a block per
 * machine within 100 columns, or JSON, and warns of a placement or a
 * binding that defeats a job (cli_info_warn.c). */
#include <ctype.h>
#include <jansson.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

#include "cli.h"
#include "cli_help.h"
#include "cli_info.h"
#include "cli_job.h"
#include "rig/rig_job.h"

/* UCX's transports here: "tcp/lo", "posix/memory", ... from the resources
 * of a context with the features rails use, on one line. */
static void ucx_transports(char *out, size_t size) {
  out[0] = 0;
  /* The transports the rails take: the user's, without sysv. */
  char tls[1024];
  rig_error err;
  if (rig_rail_ucx_tls(tls, sizeof tls, &err) != RIG_OK) {
    snprintf(out, size, "none (%s)", err.message);
    return;
  }
  ucp_config_t *config;
  if (ucp_config_read(NULL, NULL, &config) != UCS_OK) return;
  if (ucp_config_modify(config, "TLS", tls) != UCS_OK) {
    ucp_config_release(config);
    return;
  }
  ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                         .features = UCP_FEATURE_RMA | UCP_FEATURE_AMO64};
  ucp_context_h ctx;
  ucs_status_t st = ucp_init(&params, config, &ctx);
  ucp_config_release(config);
  if (st != UCS_OK) {
    snprintf(out, size, "none (%s)", ucs_status_string(st));
    return;
  }
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (f) {
    ucp_context_print_info(ctx, f);
    fclose(f);
  }
  size_t at = 0;
  for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
    char *tl = strstr(line, "resource") ? strstr(line, "-- ") : NULL;
    if (!tl) continue;
    int n = snprintf(out + at, size - at, "%s%s", at ? ", " : "", tl + 3);
    if (n < 0 || (size_t)n >= size - at) break;
    at += (size_t)n;
  }
  free(text);
  ucp_cleanup(ctx);
}

/* This machine's facts as a JSON object (NULL out of memory). */
/* hwloc's list of indices ("0-3,8") as JSON numbers: what a program
 * reading --json wants, not a string to parse again. */
static json_t *index_list(const char *ranges) {
  json_t *a = json_array();
  const char *p = ranges;
  while (a && p && *p) {
    char *end;
    long lo = strtol(p, &end, 10), hi = lo;
    if (end == p) break;
    if (*end == '-') {
      p = end + 1;
      hi = strtol(p, &end, 10);
      if (end == p || hi < lo || hi - lo > 65536) break;
    }
    for (long i = lo; i <= hi; i++) json_array_append_new(a, json_integer(i));
    p = *end == ',' ? end + 1 : NULL;
  }
  return a;
}

/* A list joined by ", " as JSON strings. */
static json_t *word_list(const char *joined) {
  json_t *a = json_array();
  for (const char *p = joined; a && p && *p;) {
    const char *end = strstr(p, ", ");
    size_t n = end ? (size_t)(end - p) : strlen(p);
    json_array_append_new(a, json_stringn(p, n));
    p = end ? end + 2 : NULL;
  }
  return a;
}

static void words_of(json_t *list, char *out, size_t size) {
  size_t w = 0;
  out[0] = '\0';
  for (size_t i = 0; i < json_array_size(list) && w < size; i++) {
    int k = snprintf(out + w, size - w, "%s%s", i ? ", " : "",
                     json_string_value(json_array_get(list, i)));
    if (k < 0) break;
    w += (size_t)k;
  }
  if (!json_array_size(list)) snprintf(out, size, "none");
}

static json_t *describe(int rank, rig_error *err, bool *ok) {
  rig_machine m;
  *ok = rig_machine_describe_local(&m, err) == RIG_OK;
  json_t *o = json_object();
  if (!o) return NULL;
  json_object_set_new(o, "rank", json_integer(rank));
  if (!*ok) {
    json_object_set_new(o, "error", json_string(err->message));
    return o;
  }
  rig_topology_facts t; /* hwloc's, as librig loaded it once for the process */
  char tls[2048];
  rig_machine_topology(&t);
  ucx_transports(tls, sizeof tls);
  json_object_set_new(o, "host", json_string(m.host));
  json_object_set_new(o, "topology", json_string(t.summary));
  json_object_set_new(o, "cpuset", index_list(t.cpus));
  json_object_set_new(o, "numa", index_list(t.numa));
  /* The two counts of memory, told apart: the NUMA nodes' (hwloc) and
   * the system's, which the host and every cpu:N allocate from. */
  json_object_set_new(o, "numa_bytes", json_integer((json_int_t)t.numa_bytes));
  json_object_set_new(o, "memory_bytes",
                      json_integer((json_int_t)rig_device_facts_of(rig_host())->budget));
  json_object_set_new(o, "workers", json_integer(rig_device_facts_of(rig_host())->threads));
  cli_info_cpus(o);
  json_t *devs = json_array();
  for (size_t i = 0; devs && i < m.ndevices; i++) {
    json_t *dev = json_pack("{s:s, s:s, s:I}", "name", m.devices[i].name, "arch", m.devices[i].arch,
                            "bytes", (json_int_t)m.devices[i].budget);
    /* Where a device sits, for those on a bus (GPUs). */
    if (dev && m.devices[i].bus_id[0]) {
      json_object_set_new(dev, "bus_id", json_string(m.devices[i].bus_id));
      json_object_set_new(dev, "numa",
                          m.devices[i].numa >= 0 ? json_integer(m.devices[i].numa) : json_null());
    }
    json_array_append_new(devs, dev);
  }
  json_object_set_new(o, "devices", devs);
  /* A family with no device at all says why (no driver, no GPU). */
  json_t *missing = json_array();
  for (size_t f = 0; missing && f < rig_family_count(); f++) {
    unsigned n;
    rig_error why;
    if (rig_family_devices(f, &n, &why) != RIG_OK)
      json_array_append_new(missing, json_string(why.message));
  }
  json_object_set_new(o, "no_devices", missing);
  json_t *ucx = json_object();
  json_object_set_new(ucx, "version", json_string(ucp_get_version_string()));
  json_object_set_new(ucx, "transports", word_list(tls));
  const char *env = getenv("UCX_TLS");
  json_object_set_new(ucx, "UCX_TLS", env ? json_string(env) : json_null());
  const char *own = rig_rail_ucx_tls_own();
  json_object_set_new(ucx, "RIG_UCX_TLS", own ? json_string(own) : json_null());
  json_object_set_new(o, "ucx", ucx);
  rig_machine_clear(&m);
  return o;
}

static const char *str_of(json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

static double gib(json_int_t bytes) {
  return (double)bytes / (1024.0 * 1024.0 * 1024.0);
}

static void mpi_version(char *out, size_t size) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  version[strcspn(version, "\n")] = 0;
  /* MPICH's first line is "MPICH Version:<tab>4.0.2": one space a gap. */
  size_t n = 0;
  for (const char *c = version; *c && n + 1 < size; c++)
    if (!isspace((unsigned char)*c) || (n > 0 && out[n - 1] != ' '))
      out[n++] = isspace((unsigned char)*c) ? ' ' : *c;
  out[n] = 0;
}

/* The widest line info prints: a terminal's, and a log's. */
enum { INFO_WIDTH = 100 };

/* `head` then `text`, broken into lines of at most INFO_WIDTH columns
 * after its ", " (else its spaces), each further line `indent` spaces in. */
static void wrapped(const char *head, const char *text, size_t indent) {
  size_t at = (size_t)printf("%s", head);
  bool space = false; /* one owed before the next piece on this line */
  for (const char *s = text; *s;) {
    /* The next piece: up to and with the next ", ", else the rest; one
     * longer than a line breaks at its spaces. */
    const char *comma = strstr(s, ", ");
    size_t n = comma ? (size_t)(comma - s) + 1 : strlen(s);
    const char *blank = memchr(s, ' ', n);
    if (indent + n > INFO_WIDTH && blank && blank > s) n = (size_t)(blank - s);
    if (at > indent && at + space + n > INFO_WIDTH) {
      printf("\n%*s", (int)indent, "");
      at = indent;
    } else if (space) {
      at += (size_t)printf(" ");
    }
    at += (size_t)printf("%.*s", (int)n, s);
    s += n;
    space = *s == ' ';
    if (space) s++;
  }
  putchar('\n');
}

/* One machine (docs/cli.md, "info"). */
static void print_block(json_t *o) {
  printf("progrun %s\n", RIG_VERSION_STRING);
  printf("host: %s\n", str_of(o, "host"));
  wrapped("topology: ", str_of(o, "topology"), 2);
  printf("memory: %.1f GiB in all, which the host and every cpu:N allocate from\n",
         gib(json_integer_value(json_object_get(o, "memory_bytes"))));
  printf("workers: %lld threads run a host launch's groups\n",
         (long long)json_integer_value(json_object_get(o, "workers")));
  printf("devices, each with the memory it may allocate:\n");
  size_t i;
  json_t *d;
  json_array_foreach(json_object_get(o, "devices"), i, d) {
    printf("  %-10s %-14s %.1f GiB", str_of(d, "name"), str_of(d, "arch"),
           gib(json_integer_value(json_object_get(d, "bytes"))));
    if (json_object_get(d, "bus_id")) {
      json_t *numa = json_object_get(d, "numa");
      printf("  bus %s, NUMA %s", str_of(d, "bus_id"),
             numa && json_is_integer(numa) ? "" : "unknown");
      if (numa && json_is_integer(numa)) printf("%lld", (long long)json_integer_value(numa));
    }
    printf("\n");
  }
  json_array_foreach(json_object_get(o, "no_devices"), i, d) {
    printf("  (%s)\n", json_string_value(d));
  }
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  mpi_version(version, sizeof version);
  wrapped("MPI: ", version, 2);
  json_t *ucx = json_object_get(o, "ucx");
  char head[64];
  snprintf(head, sizeof head, "UCX: %s; transports: ", str_of(ucx, "version"));
  char tls[2048];
  words_of(json_object_get(ucx, "transports"), tls, sizeof tls);
  wrapped(head, tls, 2);
}

/* A machine's devices on one line: "host x86_64 125.0 GiB, cpu:0 ...",
 * then why a family has none. */
static void devices_line(json_t *o, char *out, size_t size) {
  size_t at = 0, i;
  json_t *d;
  out[0] = 0;
  json_array_foreach(json_object_get(o, "devices"), i, d) {
    int n = snprintf(out + at, size - at, "%s%s %s %.1f GiB", i ? ", " : "", str_of(d, "name"),
                     str_of(d, "arch"), gib(json_integer_value(json_object_get(d, "bytes"))));
    if (json_object_get(d, "bus_id") && n >= 0 && (size_t)n < size - at) {
      at += (size_t)n;
      json_t *numa = json_object_get(d, "numa");
      n = snprintf(out + at, size - at, " bus %s NUMA %lld", str_of(d, "bus_id"),
                   numa && json_is_integer(numa) ? (long long)json_integer_value(numa) : -1LL);
    }
    if (n < 0 || (size_t)n >= size - at) return;
    at += (size_t)n;
  }
  json_array_foreach(json_object_get(o, "no_devices"), i, d) {
    int n = snprintf(out + at, size - at, "%s(%s)", at ? ", " : "", json_string_value(d));
    if (n < 0 || (size_t)n >= size - at) return;
    at += (size_t)n;
  }
}

/* Every machine, a block each, none wider than INFO_WIDTH (docs/cli.md,
 * "info"). */
/* Machine r's block less its rank: "<head line>\n<devices>\n<UCX>". */
static void block_text(json_t *o, char *out, size_t size) {
  char line[4096], cpus[512], numa[256], tls[2048];
  if (json_object_get(o, "error")) {
    snprintf(out, size, "(%s)", str_of(o, "error"));
    return;
  }
  cli_info_ranges(json_object_get(o, "cpuset"), ",", cpus, sizeof cpus);
  cli_info_ranges(json_object_get(o, "numa"), ",", numa, sizeof numa);
  words_of(json_object_get(json_object_get(o, "ucx"), "transports"), tls, sizeof tls);
  devices_line(o, line, sizeof line);
  snprintf(
      out, size, "%s, cpuset %s, NUMA %s, %.1f GiB of memory (its NUMA nodes: %.1f GiB)\n%s\n%s",
      str_of(o, "host"), cpus, numa, gib(json_integer_value(json_object_get(o, "memory_bytes"))),
      gib(json_integer_value(json_object_get(o, "numa_bytes"))), line, tls);
}

/* Under a launcher: the title, then a block per kind of machine, the
 * ranks that are alike ("ranks 0-2, 5: ...") given once: a cluster of
 * identical nodes is a few lines, not thousands. */
static void print_blocks(json_t *machines) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  mpi_version(version, sizeof version);
  size_t n = json_array_size(machines);
  json_t *ucx0 = json_object_get(json_array_get(machines, 0), "ucx");
  const char *tls = getenv("UCX_TLS");
  printf("progrun %s, %zu machines\n", RIG_VERSION_STRING, n);
  wrapped("MPI: ", version, 2);
  const char *own = rig_rail_ucx_tls_own();
  printf("UCX: %s; UCX_TLS %s%s%s%s\n", str_of(ucx0, "version"), tls ? "=" : "unset (UCX chooses)",
         tls ? tls : "", own ? "; RIG_UCX_TLS=" : "", own ? own : "");
  char **texts = calloc(n + 1, sizeof *texts);
  bool *said = calloc(n + 1, sizeof *said);
  json_t *ranks = json_array();
  for (size_t r = 0; texts && r < n; r++) {
    texts[r] = malloc(8192);
    if (texts[r]) block_text(json_array_get(machines, r), texts[r], 8192);
  }
  for (size_t r = 0; texts && said && ranks && r < n; r++) {
    if (said[r] || !texts[r]) continue;
    json_array_clear(ranks);
    for (size_t q = r; q < n; q++)
      if (!said[q] && texts[q] && strcmp(texts[q], texts[r]) == 0) {
        said[q] = true;
        json_array_append_new(ranks, json_integer(json_integer_value(
                                         json_object_get(json_array_get(machines, q), "rank"))));
      }
    char list[512], head[600];
    cli_info_ranges(ranks, ", ", list, sizeof list);
    snprintf(head, sizeof head, "%s %s: ", json_array_size(ranks) > 1 ? "ranks" : "rank", list);
    char *dev = strchr(texts[r], '\n'), *ucx = dev ? strchr(dev + 1, '\n') : NULL;
    if (dev) *dev = '\0';
    if (ucx) *ucx = '\0';
    wrapped(head, texts[r], 2);
    if (dev) wrapped("  devices: ", dev + 1, 4);
    if (ucx) wrapped("  UCX transports: ", ucx + 1, 4);
  }
  for (size_t r = 0; texts && r < n; r++) free(texts[r]);
  free(texts);
  free(said);
  json_decref(ranks);
}

static json_t *whole(json_t *machines) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  mpi_version(version, sizeof version);
  return json_pack("{s:s, s:s, s:O}", "progrun", RIG_VERSION_STRING, "mpi", version, "machines",
                   machines);
}

/* Under a launcher: every rank's object, gathered on rank 0 (its JSON text,
 * lengths first). Returns the array on rank 0, NULL elsewhere. */
static json_t *gather(json_t *mine, int rank, int size) {
  char *text = json_dumps(mine, JSON_COMPACT);
  int len = text ? (int)strlen(text) + 1 : 1;
  int *lens = rank == 0 ? calloc((size_t)size, sizeof *lens) : NULL;
  int *at = rank == 0 ? calloc((size_t)size, sizeof *at) : NULL;
  MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char *all = NULL;
  if (rank == 0) {
    size_t total = 0;
    for (int r = 0; r < size; r++) at[r] = (int)total, total += (size_t)lens[r];
    all = malloc(total ? total : 1);
  }
  MPI_Gatherv(text ? text : "", len, MPI_CHAR, all, lens, at, MPI_CHAR, 0, MPI_COMM_WORLD);
  free(text);
  json_t *machines = NULL;
  if (rank == 0) {
    machines = json_array();
    for (int r = 0; r < size; r++) {
      json_t *o = json_loads(all + at[r], 0, NULL);
      json_array_append_new(
          machines,
          o ? o : json_pack("{s:i, s:s}", "rank", r, "error", "its description did not arrive"));
    }
  }
  free(lens);
  free(at);
  free(all);
  return machines;
}

typedef struct info_args {
  bool json, help;
} info_args;

/* info's words: --json once, or --help (which stops at once). */
static int take_info_arg(void *ctx, cli_arg_kind kind, const cli_help_option *opt,
                         const char *value) {
  info_args *a = ctx;
  if (kind == CLI_ARG_OPTION && strcmp(opt->name, "--help") == 0) {
    a->help = true;
    return CLI_ARGS_STOP;
  }
  if (kind != CLI_ARG_OPTION)
    return cli_usage_error("info: takes only --json, not '%s'", value ? value : opt->name);
  if (a->json) return cli_usage_error("info: --json given twice");
  a->json = true;
  return CLI_EXIT_OK;
}

int cli_info(int argc, char **argv) {
  info_args a = {false, false};
  int rc = cli_args_parse("info", cli_help_of("info")->options, argc, argv, take_info_arg, &a);
  if (rc != CLI_EXIT_OK) return rc;
  if (a.help) {
    cli_print_usage(stdout);
    return CLI_EXIT_OK;
  }
  bool json = a.json;
  bool mpi = rig_run_under_launcher();
  int rank = 0, size = 1;
  if (mpi) {
    int provided;
    cli_bound_begin("the launcher's start (MPI_Init)", CLI_EXIT_FAIL);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    cli_bound_end();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
  rig_error err = {0};
  bool ok;
  json_t *mine = describe(rank, &err, &ok);
  json_t *machines = NULL;
  if (mpi) {
    /* The first words between the machines, bounded. */
    int go = CLI_EXIT_OK;
    cli_bound_hello(rank, size, &go);
    if (go != CLI_EXIT_OK) {
      /* A machine refused to start: rank 0 said it, every rank leaves. */
      json_decref(mine);
      cli_bound_begin("the launcher's close (MPI_Finalize)", go);
      MPI_Finalize();
      cli_bound_end();
      return go;
    }
    cli_bound_begin("the gather of every machine's description", CLI_EXIT_FAIL);
    machines = gather(mine, rank, size);
    cli_bound_end();
    json_decref(mine);
  } else {
    machines = json_array();
    json_array_append_new(machines, mine);
  }
  rc = CLI_EXIT_OK;
  if (rank == 0) {
    size_t i;
    json_t *o;
    json_array_foreach(machines, i, o) {
      if (json_object_get(o, "error")) {
        if (!mpi) fprintf(stderr, "progrun: %s\n", str_of(o, "error"));
        rc = CLI_EXIT_FAIL;
      }
    }
    if (json) {
      json_t *all = whole(machines);
      char *text = all ? json_dumps(all, JSON_INDENT(1)) : NULL;
      if (text) puts(text);
      free(text);
      json_decref(all);
    } else if (mpi) {
      print_blocks(machines);
    } else if (rc == CLI_EXIT_OK) {
      print_block(json_array_get(machines, 0));
    }
    rc = cli_flushed(stdout, "the information", rc);
    cli_info_warn(machines);
  }
  json_decref(machines);
  if (mpi) {
    /* Every rank leaves with rank 0's status. */
    cli_bound_begin("the close (every machine told rank 0's status)", CLI_EXIT_FAIL);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    cli_bound_end();
    cli_bound_begin("the launcher's close (MPI_Finalize)", rc);
    MPI_Finalize();
    cli_bound_end();
  }
  return rc;
}
