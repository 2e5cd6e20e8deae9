/* One machine's part of `progrun run` (cli.h): its devices, found by name
 * or by arch; its inputs, read from files; its program, loaded, handed
 * each run and read back. Nothing here prints: each call gives an exit
 * code and a message, so that a job's controller can call it for every
 * machine and tell which one failed. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
      char shown[CLI_PATH_SHOWN];
      return failed(err, CLI_EXIT_USAGE, RIG_ESYS, "%s: cannot read %s: %s", label,
                    cli_short_path(path, shown, sizeof shown), strerror(e));
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

static int load_exit(rig_status st) {
  return st == RIG_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
}

int cli_machine_open(cli_machine *m, const rig_desc *d, rig_device *const *devices, int64_t rank,
                     const rig_rails *rails, rig_error *err) {
  memset(m, 0, sizeof *m);
  m->rank = rank;
  m->desc = d;
  m->ndevices = d->ndevices;
  m->ninputs = d->ninputs;
  m->nints = (size_t)d->ints;
  /* calloc(0) may give NULL: ask for one element at least. */
  m->devices = calloc(d->ndevices + 1, sizeof *m->devices);
  m->inputs = calloc(d->ninputs + 1, sizeof *m->inputs);
  m->ints = calloc(m->nints + 1, sizeof *m->ints);
  m->ends = calloc(d->ndevices + 1, sizeof *m->ends);
  if (!m->devices || !m->inputs || !m->ints || !m->ends) {
    cli_machine_close(m);
    return failed(err, CLI_EXIT_FAIL, RIG_ENOMEM, "out of memory");
  }
  memcpy(m->devices, devices, d->ndevices * sizeof *devices);
  rig_status st = rig_program_load(d, m->devices, m->ndevices, rails, &m->program, err);
  if (st != RIG_OK) {
    m->program = NULL;
    cli_machine_close(m);
    return load_exit(st);
  }
  m->step_points = rig_program_step_points(m->program, &m->nstep_points);
  if (!m->step_points && m->nstep_points) {
    cli_machine_close(m);
    return failed(err, CLI_EXIT_FAIL, RIG_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < d->ninputs; i++) {
    const rig_desc_input *in = &d->inputs[i];
    st = rig_buffer_create(m->devices[in->device], RIG_KIND_PINNED, (uint64_t)in->bytes,
                           &m->inputs[i], err);
    if (st != RIG_OK) {
      m->inputs[i] = NULL;
      rig_error_prefix(err, "input %zu", i);
      cli_machine_close(m);
      return CLI_EXIT_FAIL;
    }
    /* A driver need not clear new memory; an input not given is zeros. */
    void *host = rig_buffer_host(m->inputs[i]);
    int rc = CLI_EXIT_OK;
    if (host) {
      memset(host, 0, (size_t)in->bytes);
    } else if (in->bytes) {
      void *zeros = calloc(1, (size_t)in->bytes);
      rc = zeros ? cli_machine_fill_input(m, i, zeros, (size_t)in->bytes, err)
                 : failed(err, CLI_EXIT_FAIL, RIG_ENOMEM, "out of memory");
      free(zeros);
    }
    if (rc != CLI_EXIT_OK) {
      cli_machine_close(m);
      return rc;
    }
  }
  return CLI_EXIT_OK;
}

int cli_machine_fill_input(cli_machine *m, size_t i, const void *bytes, size_t len,
                           rig_error *err) {
  if (rig_buffer_write(m->inputs[i], 0, bytes, len, err) != RIG_OK)
    return rig_error_prefix(err, "input %zu", i), CLI_EXIT_FAIL;
  return CLI_EXIT_OK;
}

uint64_t cli_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int cli_machine_start(cli_machine *m, uint64_t run, const cli_int *ints, size_t nints,
                      rig_error *err) {
  /* Every word of the program's ints is the frame's: those not given are 0
   * in every run, whatever a loop stored there in an earlier one. */
  for (size_t k = 0; k < m->nints; k++) {
    const cli_int *x = k < nints ? &ints[k] : NULL;
    m->ints[k] = !x                        ? 0
                 : x->kind == CLI_INT_RUN  ? (int64_t)run
                 : x->kind == CLI_INT_RANK ? m->rank
                                           : x->number;
  }
  rig_frame f = {m->inputs, m->ninputs, m->ints, m->nints, m->step_points, m->nstep_points};
  m->nends = 0;
  if (rig_program_run(m->program, &f, NULL, 0, m->ends, &m->nends, err) != RIG_OK)
    return CLI_EXIT_FAIL;
  return CLI_EXIT_OK;
}

int cli_machine_read_input(cli_machine *m, size_t i, uint8_t **bytes, size_t *len, rig_error *err) {
  rig_buffer *b = m->inputs[i];
  uint64_t n = rig_buffer_length(b);
  *bytes = NULL;
  *len = 0;
  uint8_t *out = n ? malloc((size_t)n) : NULL;
  if (n && !out) return failed(err, CLI_EXIT_FAIL, RIG_ENOMEM, "out of memory");
  if (rig_buffer_read(b, 0, out, (size_t)n, err) != RIG_OK) {
    free(out);
    return rig_error_prefix(err, "input %zu", i), CLI_EXIT_FAIL;
  }
  *bytes = out;
  *len = (size_t)n;
  return CLI_EXIT_OK;
}

void cli_machine_close(cli_machine *m) {
  if (m->program) rig_program_release(m->program);
  for (size_t i = 0; m->inputs && i < m->ninputs; i++)
    if (m->inputs[i]) rig_buffer_release(m->inputs[i]);
  free(m->inputs);
  free(m->step_points);
  free(m->ints);
  free(m->ends);
  free(m->devices);
  memset(m, 0, sizeof *m);
}
