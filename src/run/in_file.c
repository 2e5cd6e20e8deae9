/* An input's bytes from its file, within the input's size: a regular
 * file's size refuses a longer one unread; anything else (a pipe) is read
 * up to one byte past the input, which says it is longer. Opening never
 * waits for a FIFO's writer: one that no process writes reads as empty. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_internal.h"

static rig_status cannot(rig_error *err, const char *label, const char *path, int e) {
  char shown[RIG_RUN_PATH_SHOWN];
  if (e == ENOMEM) return rig_error_set(err, RIG_ENOMEM, "%s: out of memory", label);
  return rig_error_set(err, RIG_ESYS, "%s: cannot read %s: %s", label,
                       rig_run_path_shown(path, shown, sizeof shown), strerror(e));
}

/* Up to `most` + 1 bytes of fd into b; *n how many. An errno, or 0. */
static int read_some(int fd, uint8_t *b, uint64_t most, uint64_t *n) {
  *n = 0;
  for (;;) {
    ssize_t got = read(fd, b + *n, (size_t)(most + 1 - *n));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return errno;
    if (got == 0 || (*n += (uint64_t)got) > most) return 0;
  }
}

rig_status run_read_input(const char *label, const char *path, uint64_t bytes, uint8_t **out,
                          rig_error *err) {
  *out = NULL;
  int fd;
  struct stat st;
  int e = run_open_read(path, &fd, &st);
  if (e) return cannot(err, label, path, e);
  if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > bytes) {
    close(fd);
    return rig_error_set(err, RIG_EINVAL, "%s: %jd bytes, more than the input's %" PRIu64, label,
                         (intmax_t)st.st_size, bytes);
  }
  /* One byte past the input: a file that gives it is longer. */
  uint8_t *b = bytes < SIZE_MAX ? calloc(1, (size_t)bytes + 1) : NULL;
  if (!b) {
    close(fd);
    return rig_error_set(err, RIG_ENOMEM, "%s: out of memory for %" PRIu64 " bytes", label, bytes);
  }
  uint64_t n = 0;
  e = read_some(fd, b, bytes, &n);
  close(fd);
  if (e || n > bytes) {
    free(b);
    if (e) return cannot(err, label, path, e);
    return rig_error_set(err, RIG_EINVAL, "%s: more bytes than the input's %" PRIu64, label, bytes);
  }
  if (!bytes) {
    free(b);
    b = NULL;
  }
  *out = b;
  return RIG_OK;
}
