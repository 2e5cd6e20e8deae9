/* `progrun info`: this machine as a job would see it: its host name and
 * topology (hwloc), its devices and their arch, the worker pool, and the
 * MPI library and UCX transports a job would use. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

#include "cli.h"
#include "rig/rig_job.h"

/* UCX's transports here: "tcp/lo", "posix/memory", ... from its context's
 * resources, on one line. */
static void ucx_transports(char *out, size_t size) {
  out[0] = 0;
  ucp_config_t *config;
  if (ucp_config_read(NULL, NULL, &config) != UCS_OK) return;
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

int cli_info(int argc, char **argv) {
  if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    cli_print_usage(stdout);
    return CLI_EXIT_OK;
  }
  if (argc > 1) return cli_usage_error("info: takes no arguments, not '%s'", argv[1]);
  rig_machine m;
  rig_error err;
  if (rig_machine_describe_local(&m, &err) != RIG_OK)
    return cli_fail(CLI_EXIT_FAIL, "%s", err.message);
  printf("progrun %s\n", RIG_VERSION_STRING);
  printf("host: %s\n", m.host);
  printf("topology: %s\n", m.topology);
  printf("workers: %u threads run a host launch's groups\n",
         rig_device_facts_of(rig_host())->threads);
  printf("devices:\n");
  for (size_t i = 0; i < m.ndevices; i++)
    printf("  %-10s %-14s %.1f GiB\n", m.devices[i].name, m.devices[i].arch,
           (double)m.devices[i].budget / (1024.0 * 1024.0 * 1024.0));
  /* A family with no device at all says why (no driver, no GPU). */
  for (size_t f = 0; f < rig_family_count(); f++) {
    unsigned n;
    if (rig_family_devices(f, &n, &err) != RIG_OK) printf("  (%s)\n", err.message);
  }
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  version[strcspn(version, "\n")] = 0;
  printf("MPI: %s\n", version);
  char tls[512];
  ucx_transports(tls, sizeof tls);
  printf("UCX: %s; transports: %s\n", ucp_get_version_string(), tls[0] ? tls : "none");
  rig_machine_clear(&m);
  return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}
