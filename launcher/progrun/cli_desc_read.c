/* Reading a description from a file: its bytes or its JSON text (whose
 * files are relative to its folder), and where the build's copy is when
 * one read from the source tree misses its kernels. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The build's or the installed tree's copy of a description named like
 * `path` (build/default/examples/saxpy.json beside build/default/progrun,
 * PREFIX/share/rig/examples/ beside PREFIX/bin), when one is there and is
 * another file: the copy that has its kernels built beside it. */
static bool built_copy(const char *path, char *out, size_t size) {
  /* places' formats take exe and the name, nothing else. */
  char exe[PATH_MAX], mine[PATH_MAX], other[PATH_MAX], place[PATH_MAX + 64];
  if (!realpath("/proc/self/exe", exe) || !realpath(path, mine)) return false;
  char *slash = strrchr(exe, '/');
  const char *name = strrchr(path, '/');
  if (!slash) return false;
  *slash = '\0';
  name = name ? name + 1 : path;
  static const char *const places[] = {"%s/examples/%s", "%s/../share/rig/examples/%s"};
  for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
    int n = snprintf(place, sizeof place, places[i], exe, name);
    if (n > 0 && (size_t)n < sizeof place && realpath(place, other) && strcmp(other, mine) != 0) {
      snprintf(out, size, "%s", other);
      return true;
    }
  }
  return false;
}

/* A description whose kernel file is missing, read from the source tree
 * (examples/saxpy.json, whose kernels only the build makes): where the
 * copy that runs is, after the message when it fits. It looks at
 * /proc/self/exe, so it is the command's, not librig's. */
static void point_to_the_build(const char *path, rig_error *err) {
  char copy[PATH_MAX], shown[RIG_RUN_PATH_SHOWN];
  const char *missing = strerror(ENOENT);
  size_t n = strlen(err->message), m = strlen(missing);
  if (n < m || strcmp(err->message + n - m, missing) != 0 || !strstr(err->message, "cannot read"))
    return;
  if (!built_copy(path, copy, sizeof copy)) return;
  snprintf(err->message + n, sizeof err->message - n,
           "; the build's copy has its kernels beside it: %s",
           rig_run_path_shown(copy, shown, sizeof shown));
  /* Cut short, the hint would mislead: none, then. */
  if (strlen(err->message) == sizeof err->message - 1) err->message[n] = '\0';
}

int cli_read_desc_quiet(const char *path, rig_desc **d, rig_error *err) {
  size_t len = 0;
  char *text = NULL;
  *d = NULL;
  int rc = cli_read_whole(path, &text, &len, err);
  if (rc != CLI_EXIT_OK) return rc;
  /* dirname may modify its argument. */
  char *copy = strdup(path);
  rig_status st = copy ? rig_run_desc_of_text(text, len, path, dirname(copy), d, err)
                       : rig_error_set(err, RIG_ENOMEM, "out of memory");
  free(copy);
  free(text);
  if (st == RIG_EMALFORMED && strcmp(path, "-") != 0) point_to_the_build(path, err);
  return st == RIG_OK ? CLI_EXIT_OK : cli_exit_of(st);
}

int cli_read_desc(const char *path, rig_desc **d) {
  rig_error err = {0};
  int rc = cli_read_desc_quiet(path, d, &err);
  return rc == CLI_EXIT_OK ? rc : cli_fail(rc, "%s", err.message);
}
