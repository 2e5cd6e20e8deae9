/* One machine's part of `progrun run` (cli.h): its devices, found by name
 * or by arch; its inputs, read from files; its program, loaded, handed
 * each run and read back. Nothing here prints: each call gives an exit
 * code and a message, so that a job's controller can call it for every
 * machine and tell which one failed. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "rig/rig_run.h"

/* Sets *err and returns the exit code `code`. */
static int failed(rig_error *err, int code, rig_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int failed(rig_error *err, int code, rig_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  rig_error_setv(err, st, fmt, ap);
  va_end(ap);
  return code;
}

/* ---- devices -------------------------------------------------------------- */

static rig_device *open_local(void *ctx, const char *name, rig_error *why) {
  (void)ctx;
  rig_device *d = NULL;
  return rig_device_open(name, &d, why) == RIG_OK ? d : NULL;
}

const cli_opener cli_local_opener = {open_local, NULL};

/* librig's mapping (rig_run.h), which rig_run_file maps with too: a name
 * the option gives wrongly is a usage error, an arch with no device the
 * machine's failure. */
int cli_map_devices_on(const cli_opener *op, const rig_desc *d, char *const *names, size_t nnames,
                       const char *given_by, rig_device **out, rig_error *err) {
  rig_status st = rig_run_map_devices(d, (const char *const *)names, nnames, given_by, op->open,
                                      op->ctx, out, err);
  return st == RIG_OK ? CLI_EXIT_OK : st == RIG_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
}

/* ---- inputs --------------------------------------------------------------- */

int cli_read_input(const char *label, const char *path, int64_t index, uint64_t bytes,
                   uint8_t **out, uint64_t *got_bytes, rig_error *err) {
  *out = NULL;
  *got_bytes = 0;
  int fd;
  struct stat st;
  int rc = cli_open_read(path, &fd, &st, err);
  if (rc != CLI_EXIT_OK) {
    rig_error_prefix(err, "%s", label);
    return rc;
  }
  /* A regular file's size refuses it unread; anything else is read up to
   * one byte past the input, or past progrun's bound (cli.h). */
  uint64_t most = bytes < CLI_MAX_READ ? bytes : CLI_MAX_READ;
  if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > most) {
    close(fd);
    if ((uint64_t)st.st_size > bytes)
      return failed(err, CLI_EXIT_USAGE, RIG_EINVAL,
                    "%s: %jd bytes, more than the input's %" PRIu64, label, (intmax_t)st.st_size,
                    bytes);
    return failed(err, CLI_EXIT_USAGE, RIG_EINVAL,
                  "%s: %jd bytes, more than the %s progrun reads of a file", label,
                  (intmax_t)st.st_size, CLI_MAX_READ_TEXT);
  }
  uint8_t *b = bytes ? calloc(1, (size_t)bytes + 1) : malloc(1);
  if (!b) {
    close(fd);
    return failed(err, CLI_EXIT_FAIL, RIG_ENOMEM, "out of memory for input %" PRId64, index);
  }
  uint64_t n = 0;
  for (;;) {
    ssize_t got = read(fd, b + n, (size_t)(most + 1 - n));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int e = errno;
      close(fd);
      free(b);
      char shown[RIG_RUN_PATH_SHOWN];
      return failed(err, CLI_EXIT_USAGE, RIG_ESYS, "%s: cannot read %s: %s", label,
                    rig_run_path_shown(path, shown, sizeof shown), strerror(e));
    }
    if (got == 0 || (n += (uint64_t)got) > most) break;
  }
  close(fd);
  if (n > most) {
    free(b);
    if (most < bytes)
      return failed(err, CLI_EXIT_USAGE, RIG_EINVAL, "%s: more than the %s progrun reads of a file",
                    label, CLI_MAX_READ_TEXT);
    return failed(err, CLI_EXIT_USAGE, RIG_EINVAL, "%s: more bytes than the input's %" PRIu64,
                  label, bytes);
  }
  *got_bytes = n;
  if (!bytes) {
    free(b);
    b = NULL;
  }
  *out = b;
  return CLI_EXIT_OK;
}

/* ---- one machine ---------------------------------------------------------- */

int cli_machine_open(cli_machine *m, const rig_desc *d, rig_device *const *devices, int64_t rank,
                     const rig_rails *rails, rig_error *err) {
  memset(m, 0, sizeof *m);
  m->rank = rank;
  m->desc = d;
  m->nints = (size_t)d->ints;
  /* calloc(0) may give NULL: ask for one element at least. */
  if (!(m->ints = calloc(m->nints + 1, sizeof *m->ints)))
    return failed(err, CLI_EXIT_FAIL, RIG_ENOMEM, "out of memory");
  rig_status st = rig_run_machine_open(d, devices, rails, &m->run, err);
  if (st != RIG_OK) {
    cli_machine_close(m);
    /* A rule the load finds broken is the input's fault. */
    return st == RIG_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
  }
  return CLI_EXIT_OK;
}

int cli_machine_fill_input(cli_machine *m, size_t i, const void *bytes, size_t len,
                           rig_error *err) {
  return rig_run_machine_fill(m->run, i, bytes, len, err) == RIG_OK ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

uint64_t cli_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int cli_machine_start(cli_machine *m, uint64_t run, const cli_int *ints, size_t nints,
                      rig_error *err) {
  size_t n = nints < m->nints ? nints : m->nints;
  for (size_t k = 0; k < n; k++)
    m->ints[k] = ints[k].kind == CLI_INT_RUN    ? (int64_t)run
                 : ints[k].kind == CLI_INT_RANK ? m->rank
                                                : ints[k].number;
  m->nends = 0;
  rig_status st = rig_run_machine_start(m->run, m->ints, n, &m->ends, &m->nends, err);
  return st == RIG_OK ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

rig_status cli_machine_ends_reached(const cli_machine *m, size_t *seen, bool *reached,
                                    rig_error *err) {
  /* A lost device among the ends left fails the run now, whatever an
   * earlier end's device still runs (a long kernel beside a failed fill). */
  for (size_t k = *seen; k < m->nends; k++) {
    rig_point p = m->ends[k];
    if (rig_point_reached(p)) continue;
    rig_device *dev = rig_device_at(rig_point_device(p));
    if (!dev || rig_device_is_lost(dev, NULL)) {
      rig_status st = rig_point_wait(p, err);
      if (st != RIG_OK) return st;
    }
  }
  for (; *seen < m->nends && rig_point_reached(m->ends[*seen]); ++*seen) {
  }
  *reached = *seen == m->nends;
  return RIG_OK;
}

void cli_wait_round(unsigned polls) {
  if (polls < 2000) {
    sched_yield();
  } else {
    struct timespec pause = {0, 50000};
    nanosleep(&pause, NULL);
  }
}

int cli_machine_read_input(cli_machine *m, size_t i, uint8_t **bytes, size_t *len, rig_error *err) {
  return rig_run_machine_read(m->run, i, bytes, len, err) == RIG_OK ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

void cli_machine_close(cli_machine *m) {
  rig_run_machine_close(m->run);
  free(m->ints);
  memset(m, 0, sizeof *m);
}
