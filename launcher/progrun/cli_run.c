/* `progrun run FILE`: the program of FILE on this machine's devices, run N
 * times over a frame made from the options; inputs filled from files and
 * written back to files; each run timed. The per-machine parts print
 * nothing (cli.h): cli_run only strings them together and reports. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

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

/* ---- options -------------------------------------------------------------- */

/* A whole decimal number in [lo, hi]: no sign other than a leading '-', no
 * spaces, nothing after it. */
static bool parse_number(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  if (!*s || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))) return false;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

static int parse_ints(const char *cmd, const char *list, cli_run_opts *o) {
  size_t n = *list ? 1 : 0;
  for (const char *c = list; *c; c++) n += *c == ',';
  free(o->ints);
  o->ints = n ? calloc(n, sizeof *o->ints) : NULL;
  o->nints = 0;
  if (n && !o->ints) return cli_fail(CLI_EXIT_FAIL, "out of memory");
  for (const char *s = list; n && o->nints < n; s = strchr(s, ',') + 1) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    char word[32];
    cli_int *x = &o->ints[o->nints++];
    if (len == 3 && memcmp(s, "run", 3) == 0) {
      x->kind = CLI_INT_RUN;
    } else if (len == 4 && memcmp(s, "rank", 4) == 0) {
      x->kind = CLI_INT_RANK;
    } else {
      x->kind = CLI_INT_NUMBER;
      if (len >= sizeof word) len = sizeof word - 1; /* still refused below */
      memcpy(word, s, len);
      word[len] = '\0';
      if (len == sizeof word - 1 || !parse_number(word, INT64_MIN, INT64_MAX, &x->number))
        return cli_usage_error("%s: --ints: '%.*s' is not a number, run or rank", cmd, (int)len, s);
    }
    if (!e) break;
  }
  return CLI_EXIT_OK;
}

/* "I=PATH" into a new element of *v. */
static int parse_io(const char *cmd, const char *opt, const char *arg, cli_io **v, size_t *n) {
  const char *eq = strchr(arg, '=');
  char idx[32];
  size_t len = eq ? (size_t)(eq - arg) : 0;
  int64_t i = 0;
  if (!eq || len == 0 || len >= sizeof idx || !eq[1])
    return cli_usage_error("%s: %s takes I=PATH, not '%s'", cmd, opt, arg);
  memcpy(idx, arg, len);
  idx[len] = '\0';
  if (idx[0] == '-' || !parse_number(idx, 0, INT64_MAX, &i))
    return cli_usage_error("%s: %s %s: '%s' is not an input's index", cmd, opt, arg, idx);
  cli_io *b = realloc(*v, (*n + 1) * sizeof **v);
  if (!b) return cli_fail(CLI_EXIT_FAIL, "out of memory");
  *v = b;
  b[*n].index = i;
  b[*n].path = eq + 1;
  (*n)++;
  return CLI_EXIT_OK;
}

static int parse_devices(const char *cmd, const char *list, cli_run_opts *o) {
  for (size_t i = 0; i < o->ndevices; i++) free(o->devices[i]);
  free(o->devices);
  o->ndevices = 0;
  size_t n = 1;
  for (const char *c = list; *c; c++) n += *c == ',';
  o->devices = calloc(n, sizeof *o->devices);
  if (!o->devices) return cli_fail(CLI_EXIT_FAIL, "out of memory");
  for (const char *s = list;; s++) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len == 0) return cli_usage_error("%s: --devices: an empty name in '%s'", cmd, list);
    o->devices[o->ndevices] = strndup(s, len);
    if (!o->devices[o->ndevices]) return cli_fail(CLI_EXIT_FAIL, "out of memory");
    o->ndevices++;
    if (!e) break;
    s = e;
  }
  return CLI_EXIT_OK;
}

int cli_run_parse(int argc, char **argv, cli_run_opts *o) {
  /* Not argv[0]: under `progrun FILE` that is the program's own path. */
  const char *cmd = "run";
  memset(o, 0, sizeof *o);
  o->runs = 1;
  o->progress = -1;
  bool options = true, seen[6] = {false, false, false, false, false, false};
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    /* "--opt VALUE" or "--opt=VALUE" for the options taking a value. */
    static const char *const valued[] = {"--runs",    "--ints",   "--input", "--output",
                                         "--devices", "--warmup", "--json",  "--trace"};
    const char *name = NULL, *value = NULL;
    for (size_t k = 0; options && k < sizeof valued / sizeof valued[0]; k++) {
      size_t len = strlen(valued[k]);
      if (strncmp(s, valued[k], len) == 0 && (s[len] == '\0' || s[len] == '=')) {
        name = valued[k];
        if (s[len] == '=') {
          value = s + len + 1;
        } else if (i + 1 < argc) {
          value = argv[++i];
        } else {
          return cli_usage_error("%s: %s needs a value", cmd, name);
        }
      }
    }
    int rc = CLI_EXIT_OK;
    /* An option of one value given twice is refused: which one was meant
     * is a guess. --input and --output repeat, one per input. */
    if (name && strcmp(name, "--input") != 0 && strcmp(name, "--output") != 0) {
      size_t k = strcmp(name, "--runs") == 0     ? 0
                 : strcmp(name, "--ints") == 0   ? 1
                 : strcmp(name, "--warmup") == 0 ? 3
                 : strcmp(name, "--json") == 0   ? 4
                 : strcmp(name, "--trace") == 0  ? 5
                                                 : 2;
      if (seen[k]) return cli_usage_error("%s: %s given twice", cmd, name);
      seen[k] = true;
    }
    if (name && strcmp(name, "--runs") == 0) {
      int64_t n = 0;
      if (!parse_number(value, 1, CLI_MAX_RUNS, &n))
        return cli_usage_error("%s: --runs: '%s' is not a number of runs from 1 to %lld", cmd,
                               value, (long long)CLI_MAX_RUNS);
      o->runs = (uint64_t)n;
    } else if (name && strcmp(name, "--warmup") == 0) {
      int64_t n = 0;
      if (!parse_number(value, 0, CLI_MAX_RUNS - 1, &n))
        return cli_usage_error("%s: --warmup: '%s' is not a number of runs from 0 to %lld", cmd,
                               value, (long long)CLI_MAX_RUNS - 1);
      o->warmup = (uint64_t)n;
    } else if (name && strcmp(name, "--json") == 0) {
      if (!*value) return cli_usage_error("%s: --json needs a path", cmd);
      o->json = value;
    } else if (name && strcmp(name, "--trace") == 0) {
      if (!*value) return cli_usage_error("%s: --trace needs a path", cmd);
      o->trace = value;
    } else if (name && strcmp(name, "--ints") == 0) {
      rc = parse_ints(cmd, value, o);
    } else if (name && strcmp(name, "--input") == 0) {
      rc = parse_io(cmd, name, value, &o->inputs, &o->ninputs);
      for (size_t k = 0; rc == CLI_EXIT_OK && k + 1 < o->ninputs; k++)
        if (o->inputs[k].index == o->inputs[o->ninputs - 1].index)
          return cli_usage_error("%s: --input %" PRId64 " given twice", cmd, o->inputs[k].index);
    } else if (name && strcmp(name, "--output") == 0) {
      rc = parse_io(cmd, name, value, &o->outputs, &o->noutputs);
    } else if (name) {
      rc = parse_devices(cmd, value, o);
    } else if (options && strcmp(s, "--") == 0) {
      options = false;
    } else if (options && (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0)) {
      o->help = true;
    } else if (options && (strcmp(s, "-q") == 0 || strcmp(s, "--quiet") == 0)) {
      o->quiet = true;
    } else if (options && (strcmp(s, "--progress") == 0 || strcmp(s, "--no-progress") == 0)) {
      int want = strcmp(s, "--progress") == 0;
      if (o->progress >= 0 && o->progress != want)
        return cli_usage_error("%s: --progress and --no-progress both given", cmd);
      o->progress = want;
    } else if (options && s[0] == '-' && s[1] != '\0') {
      return cli_usage_error("%s: unknown option '%s'", cmd, s);
    } else if (o->file) {
      return cli_usage_error("%s: one FILE only, not '%s' too", cmd, s);
    } else {
      o->file = s;
    }
    if (rc != CLI_EXIT_OK) return rc;
  }
  if (o->help) return CLI_EXIT_OK;
  if (!o->file) return cli_usage_error("%s: no FILE given", cmd);
  return CLI_EXIT_OK;
}

int cli_run_warmup_fit(uint64_t warmup, uint64_t runs) {
  if (warmup < runs) return CLI_EXIT_OK;
  return cli_usage_error("run: --warmup %" PRIu64 " leaves none of the %" PRIu64
                         " runs to measure (give more --runs)",
                         warmup, runs);
}

void cli_run_opts_free(cli_run_opts *o) {
  free(o->ints);
  free(o->inputs);
  free(o->outputs);
  for (size_t i = 0; i < o->ndevices; i++) free(o->devices[i]);
  free(o->devices);
  memset(o, 0, sizeof *o);
}

int cli_run_fit(const cli_run_opts *o, const rig_desc *d, rig_error *err) {
  if (o->nints > (uint64_t)d->ints)
    return failed(err, CLI_EXIT_USAGE, RIG_EINVAL, "--ints: %zu ints for a program of %" PRId64,
                  o->nints, d->ints);
  for (size_t k = 0; k < o->ninputs + o->noutputs; k++) {
    const cli_io *io = k < o->ninputs ? &o->inputs[k] : &o->outputs[k - o->ninputs];
    if ((uint64_t)io->index >= d->ninputs)
      return failed(err, CLI_EXIT_USAGE, RIG_EINVAL,
                    "%s %" PRId64 ": no such input (the program has %zu)",
                    k < o->ninputs ? "--input" : "--output", io->index, d->ninputs);
  }
  if (o->devices && o->ndevices != d->ndevices)
    return failed(err, CLI_EXIT_USAGE, RIG_EINVAL, "--devices: %zu devices for a program of %zu",
                  o->ndevices, d->ndevices);
  return CLI_EXIT_OK;
}

/* ---- devices -------------------------------------------------------------- */

static bool arch_is(rig_desc_string s, const char *arch) {
  return s.len == strlen(arch) && memcmp(s.bytes, arch, s.len) == 0;
}

/* An arch as messages show it: at most 64 bytes, anything outside printable
 * ASCII as '?' (descriptions come from anywhere). */
static const char *shown(rig_desc_string s, char buf[72]) {
  size_t n = s.len < 64 ? s.len : 64;
  for (size_t i = 0; i < n; i++) buf[i] = s.bytes[i] >= 32 && s.bytes[i] < 127 ? s.bytes[i] : '?';
  strcpy(buf + n, s.len > 64 ? "..." : "");
  return buf;
}

static bool taken(rig_device *const *out, size_t i, const rig_device *dev) {
  for (size_t k = 0; k < i; k++)
    if (out[k] == dev) return true;
  return false;
}

/* The next device of the family with arch `arch` not given to devices
 * before i. Devices are numbered from 0 without gaps, so the first name
 * that does not open ends the search; its refusal says why there is none
 * (a family of one device has one name). */
static rig_device *open_local(void *ctx, const char *name, rig_error *why) {
  (void)ctx;
  rig_device *d = NULL;
  return rig_device_open(name, &d, why) == RIG_OK ? d : NULL;
}

const cli_opener cli_local_opener = {open_local, NULL};

static int next_free(const cli_opener *op, size_t family, rig_desc_string arch, rig_device **out,
                     size_t i, rig_error *err) {
  char first[64], name[64], a[72];
  rig_error why = {0};
  unsigned n = 0, of_arch = 0;
  rig_family_device_name(family, 0, first, sizeof first);
  for (; n < 65536; n++) {
    rig_device *dev = NULL;
    rig_family_device_name(family, n, name, sizeof name);
    if ((n > 0 && strcmp(name, first) == 0) || !(dev = op->open(op->ctx, name, &why))) break;
    if (!arch_is(arch, rig_device_arch(dev))) continue;
    of_arch++;
    if (!taken(out, i, dev)) {
      out[i] = dev;
      return CLI_EXIT_OK;
    }
  }
  if (n == 0)
    rig_error_set(err, RIG_EREFUSED, "device %zu: no device of arch \"%s\" on this machine (%s)", i,
                  shown(arch, a), why.message);
  else if (of_arch == 0)
    rig_error_set(err, RIG_EREFUSED, "device %zu: no device of arch \"%s\" on this machine", i,
                  shown(arch, a));
  else
    rig_error_set(err, RIG_EREFUSED,
                  "device %zu: no free device of arch \"%s\": this machine's %u %s devices are "
                  "taken by earlier ones (docs/environment.md says how to have more)",
                  i, shown(arch, a), of_arch, rig_family_name(family));
  return CLI_EXIT_FAIL;
}

int cli_map_devices(const rig_desc *d, char *const *names, size_t nnames, rig_device **out,
                    rig_error *err) {
  return cli_map_devices_on(&cli_local_opener, d, names, nnames, out, err);
}

int cli_map_devices_on(const cli_opener *op, const rig_desc *d, char *const *names, size_t nnames,
                       rig_device **out, rig_error *err) {
  char a[72];
  for (size_t i = 0; i < d->ndevices; i++) out[i] = NULL;
  if (names) {
    if (nnames != d->ndevices)
      return failed(err, CLI_EXIT_USAGE, RIG_EINVAL, "--devices: %zu devices for a program of %zu",
                    nnames, d->ndevices);
    for (size_t i = 0; i < nnames; i++) {
      rig_error why = {0};
      if (!(out[i] = op->open(op->ctx, names[i], &why)))
        return failed(err, CLI_EXIT_USAGE, RIG_EINVAL, "--devices: %s", why.message);
      /* The load's own message (rig_program.h), told as the option's
       * fault rather than the machine's. */
      if (!arch_is(d->devices[i], rig_device_arch(out[i])))
        return failed(err, CLI_EXIT_USAGE, RIG_EINVAL,
                      "--devices: device %zu: %s is \"%s\", not \"%s\"", i, names[i],
                      rig_device_arch(out[i]), shown(d->devices[i], a));
    }
    return CLI_EXIT_OK;
  }
  for (size_t i = 0; i < d->ndevices; i++) {
    rig_desc_string arch = d->devices[i];
    /* The family whose arch prefix the arch has (the provider table). */
    char text[72];
    size_t n = arch.len < sizeof text - 1 ? arch.len : sizeof text - 1;
    memcpy(text, arch.bytes, n);
    text[n] = 0;
    int family = memchr(arch.bytes, 0, arch.len) ? -1 : rig_family_of_arch(text);
    if (family < 0 || arch.len >= sizeof text) {
      rig_error_set(err, RIG_EREFUSED, "device %zu: no device of arch \"%s\" on this machine", i,
                    shown(arch, a));
      return CLI_EXIT_FAIL;
    }
    int rc = next_free(op, (size_t)family, arch, out, i, err);
    if (rc != CLI_EXIT_OK) return rc;
  }
  return CLI_EXIT_OK;
}

/* ---- inputs --------------------------------------------------------------- */

int cli_read_input(const char *path, int64_t index, uint64_t bytes, uint8_t **out, rig_error *err) {
  *out = NULL;
  char shown[CLI_PATH_SHOWN];
  const char *p = cli_short_path(path, shown, sizeof shown);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    int e = fd < 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : errno;
    if (fd >= 0) close(fd);
    return failed(err, CLI_EXIT_USAGE, RIG_ESYS, "cannot read %s: %s", p, strerror(e));
  }
  /* A regular file's size refuses it unread; anything else is read up to
   * one byte past the input, or past progrun's bound (cli.h). */
  uint64_t most = bytes < CLI_MAX_READ ? bytes : CLI_MAX_READ;
  if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > most) {
    close(fd);
    if ((uint64_t)st.st_size > bytes)
      return failed(err, CLI_EXIT_USAGE, RIG_EINVAL,
                    "--input %" PRId64 "=%s: %jd bytes, more than the input's %" PRIu64, index, p,
                    (intmax_t)st.st_size, bytes);
    return failed(err, CLI_EXIT_USAGE, RIG_EINVAL,
                  "--input %" PRId64 "=%s: %jd bytes, more than the %s progrun reads of a file",
                  index, p, (intmax_t)st.st_size, CLI_MAX_READ_TEXT);
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
      return failed(err, CLI_EXIT_USAGE, RIG_ESYS, "cannot read %s: %s", p, strerror(e));
    }
    if (got == 0 || (n += (uint64_t)got) > most) break;
  }
  close(fd);
  if (n > most) {
    free(b);
    if (most < bytes)
      return failed(err, CLI_EXIT_USAGE, RIG_EINVAL,
                    "--input %" PRId64 "=%s: more than the %s progrun reads of a file", index, p,
                    CLI_MAX_READ_TEXT);
    return failed(err, CLI_EXIT_USAGE, RIG_EINVAL,
                  "--input %" PRId64 "=%s: more bytes than the input's %" PRIu64, index, p, bytes);
  }
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

int cli_machine_run(cli_machine *m, uint64_t run, const cli_int *ints, size_t nints, uint64_t *ns,
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
  size_t nends = 0;
  uint64_t t0 = cli_now_ns();
  rig_status st = rig_program_run(m->program, &f, NULL, 0, m->ends, &nends, err);
  for (size_t k = 0; st == RIG_OK && k < nends; k++) st = rig_point_wait(m->ends[k], err);
  *ns = cli_now_ns() - t0;
  if (st != RIG_OK) return rig_error_prefix(err, "run %" PRIu64, run), CLI_EXIT_FAIL;
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

/* ---- summary -------------------------------------------------------------- */

/* Past CLI_EXACT_RUNS times, a histogram: values below 2^11 ns each their
 * own bucket, above that 1024 buckets per power of two (a bucket's width
 * at most 1/1024 of its values), so any number of runs takes 450 KiB. */
#define EXACT_BELOW  2048
#define SUB_BITS     10
#define HIST_BUCKETS (EXACT_BELOW + (64 - 11) * (1u << SUB_BITS))

static size_t bucket_of(uint64_t v) {
  if (v < EXACT_BELOW) return (size_t)v;
  unsigned e = 63 - (unsigned)__builtin_clzll(v); /* 11 .. 63 */
  uint64_t sub = (v >> (e - SUB_BITS)) & ((1u << SUB_BITS) - 1);
  return EXACT_BELOW + (size_t)(e - 11) * (1u << SUB_BITS) + (size_t)sub;
}

/* The middle of bucket b's values. */
static uint64_t bucket_value(size_t b) {
  if (b < EXACT_BELOW) return b;
  size_t k = b - EXACT_BELOW;
  unsigned e = 11 + (unsigned)(k >> SUB_BITS);
  uint64_t lo = ((uint64_t)(1u << SUB_BITS) + (k & ((1u << SUB_BITS) - 1))) << (e - SUB_BITS);
  return lo + (((uint64_t)1 << (e - SUB_BITS)) >> 1);
}

int cli_times_add(cli_times *t, uint64_t ns, rig_error *err) {
  if (t->n == 0 || ns < t->min) t->min = ns;
  if (t->n == 0 || ns > t->max) t->max = ns;
  /* Welford: no sum to overflow or lose its small terms. */
  double delta = (double)ns - t->mean;
  t->mean += delta / (double)(t->n + 1);
  t->m2 += delta * ((double)ns - t->mean);
  if (!t->hist && t->n == CLI_EXACT_RUNS) {
    if (!(t->hist = calloc(HIST_BUCKETS, sizeof *t->hist)))
      return failed(err, CLI_EXIT_FAIL, RIG_ENOMEM, "out of memory for the runs' times");
    for (size_t i = 0; i < t->n; i++) t->hist[bucket_of(t->exact[i])]++;
    free(t->exact);
    t->exact = NULL;
  }
  if (t->hist) {
    t->hist[bucket_of(ns)]++;
  } else {
    if (t->n == t->room) {
      size_t room = t->room ? 2 * t->room : 64;
      uint64_t *e = realloc(t->exact, room * sizeof *e);
      if (!e) return failed(err, CLI_EXIT_FAIL, RIG_ENOMEM, "out of memory for the runs' times");
      t->exact = e;
      t->room = room;
    }
    t->exact[t->n] = ns;
  }
  t->n++;
  return CLI_EXIT_OK;
}

void cli_times_free(cli_times *t) {
  free(t->exact);
  free(t->hist);
  memset(t, 0, sizeof *t);
}

static int by_value(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* The nearest-rank percentile: the ceil(q n / 100)-th smallest. */
static uint64_t percentile(const cli_times *t, unsigned q) {
  uint64_t k = t->n / 100 * q + (t->n % 100 * q + 99) / 100;
  if (k == 0) k = 1;
  if (!t->hist) return t->exact[k - 1];
  uint64_t seen = 0;
  for (size_t b = 0; b < HIST_BUCKETS; b++)
    if ((seen += t->hist[b]) >= k) return bucket_value(b);
  return t->min;
}

void cli_times_figures(cli_times *t, cli_figures *f) {
  if (!t->hist) qsort(t->exact, (size_t)t->n, sizeof *t->exact, by_value);
  f->runs = t->n;
  f->min = t->min;
  f->median = percentile(t, 50);
  f->p99 = percentile(t, 99);
  f->max = t->max;
  f->mean = t->mean;
  f->stddev = t->n ? sqrt(t->m2 / (double)t->n) : 0.0;
}

void cli_print_summary(FILE *f, cli_times *t) {
  cli_figures g;
  cli_times_figures(t, &g);
  char a[32], b[32], c[32], d[32], e[32], s[32];
  fprintf(f, "runs %" PRIu64 ", min %s, median %s, mean %s, p99 %s, max %s, stddev %s per run\n",
          g.runs, cli_format_ns((double)g.min, a, sizeof a),
          cli_format_ns((double)g.median, b, sizeof b), cli_format_ns(g.mean, c, sizeof c),
          cli_format_ns((double)g.p99, d, sizeof d), cli_format_ns((double)g.max, e, sizeof e),
          cli_format_ns(g.stddev, s, sizeof s));
}

/* ---- the command ---------------------------------------------------------- */

static int write_output(const char *path, const uint8_t *b, size_t n) {
  rig_error err;
  int rc = cli_write_file(path, b, n, &err);
  return rc == CLI_EXIT_OK ? rc : cli_fail(rc, "%s", err.message);
}

/* Everything after the options: read, check, fit, map, load, fill, run,
 * write, summarize. */
static int run_file(const cli_run_opts *o, rig_desc *d, uint8_t **bytes) {
  rig_error err = {0};
  int rc = CLI_EXIT_OK;
  if (rig_desc_check(d, &err) != RIG_OK)
    return cli_fail(CLI_EXIT_USAGE, "%s: %s", o->file, err.message);
  if ((rc = cli_run_fit(o, d, &err)) != CLI_EXIT_OK)
    return cli_fail(rc, "%s: %s", o->file, err.message);
  /* Outputs are checked and inputs read before any device is touched: a
   * missing file is the user's mistake and should not cost a load, nor an
   * unwritable output the runs' work. */
  for (size_t k = 0; k < o->noutputs; k++)
    if ((rc = cli_output_check(o->outputs[k].path, &err)) != CLI_EXIT_OK)
      return cli_fail(rc, "%s", err.message);
  if (o->json && (rc = cli_output_check(o->json, &err)) != CLI_EXIT_OK)
    return cli_fail(rc, "%s", err.message);
  if (o->trace && (rc = cli_output_check(o->trace, &err)) != CLI_EXIT_OK)
    return cli_fail(rc, "%s", err.message);
  for (size_t k = 0; k < o->ninputs; k++) {
    const cli_io *io = &o->inputs[k];
    rc = cli_read_input(io->path, io->index, (uint64_t)d->inputs[io->index].bytes,
                        &bytes[io->index], &err);
    if (rc != CLI_EXIT_OK) return cli_fail(rc, "%s", err.message);
  }
  rig_device **devices = calloc(d->ndevices + 1, sizeof *devices);
  if (!devices) return cli_fail(CLI_EXIT_FAIL, "out of memory");
  rc = cli_map_devices(d, o->devices, o->ndevices, devices, &err);
  cli_machine m;
  if (rc == CLI_EXIT_OK) rc = cli_machine_open(&m, d, devices, 0, NULL, &err);
  free(devices);
  if (rc != CLI_EXIT_OK) return cli_fail(rc, "%s: %s", o->file, err.message);

  for (size_t i = 0; rc == CLI_EXIT_OK && i < d->ninputs; i++)
    if (bytes[i]) rc = cli_machine_fill_input(&m, i, bytes[i], (size_t)d->inputs[i].bytes, &err);
  cli_times times = {0};
  rig_trace *trace = NULL;
  if (rc == CLI_EXIT_OK && o->trace) {
    if (rig_trace_make(CLI_TRACE_EVENTS, &trace, &err) == RIG_OK)
      rig_trace_set(trace);
    else
      rc = CLI_EXIT_FAIL;
  }
  cli_progress bar;
  cli_progress_start(&bar, o, o->runs);
  for (uint64_t r = 0; rc == CLI_EXIT_OK && r < o->runs; r++) {
    uint64_t ns = 0;
    rc = cli_machine_run(&m, r, o->ints, o->nints, &ns, &err);
    /* Warm-up runs run, but are left out of the figures. */
    if (rc == CLI_EXIT_OK && r >= o->warmup) rc = cli_times_add(&times, ns, &err);
    if (rc == CLI_EXIT_OK) cli_progress_update(&bar, r + 1, -1, ns);
  }
  cli_progress_end(&bar);
  if (trace) {
    /* Every step's reach seen before its program goes (after a failure
     * the file is not written). */
    if (rc == CLI_EXIT_OK) rig_trace_settle(trace, 10000);
    rig_trace_set(NULL);
  }
  if (rc != CLI_EXIT_OK) {
    cli_machine_close(&m);
    cli_times_free(&times);
    rig_trace_free(trace);
    return cli_fail(rc, "%s", err.message);
  }
  for (size_t k = 0; rc == CLI_EXIT_OK && k < o->noutputs; k++) {
    uint8_t *out = NULL;
    size_t len = 0;
    rc = cli_machine_read_input(&m, (size_t)o->outputs[k].index, &out, &len, &err);
    if (rc != CLI_EXIT_OK)
      rc = cli_fail(rc, "%s", err.message);
    else
      rc = write_output(o->outputs[k].path, out, len);
    free(out);
  }
  cli_machine_close(&m);
  if (rc == CLI_EXIT_OK && o->json) {
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    const char *hosts[1] = {host};
    cli_report rep = {o->runs, o->warmup, 1, hosts, &times, &times};
    if ((rc = cli_write_report(o->json, &rep, &err)) != CLI_EXIT_OK)
      rc = cli_fail(rc, "%s", err.message);
  }
  if (rc == CLI_EXIT_OK && trace) {
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    cli_trace_machine tm = {host, trace, 0, 0};
    if ((rc = cli_write_trace(o->trace, &tm, 1, &err)) != CLI_EXIT_OK)
      rc = cli_fail(rc, "%s", err.message);
  }
  rig_trace_free(trace);
  if (rc == CLI_EXIT_OK && !o->quiet) {
    cli_print_summary(stdout, &times);
    if (fflush(stdout) != 0 || ferror(stdout))
      rc = cli_fail(CLI_EXIT_USAGE, "cannot write the output: %s", strerror(errno));
  }
  cli_times_free(&times);
  return rc;
}

int cli_run(int argc, char **argv) {
  cli_run_opts o;
  int rc = cli_run_parse(argc, argv, &o);
  if (rc != CLI_EXIT_OK || o.help) {
    if (rc == CLI_EXIT_OK) cli_print_usage(stdout);
    cli_run_opts_free(&o);
    return rc;
  }
  rc = cli_run_warmup_fit(o.warmup, o.runs);
  rig_desc *d = NULL;
  if (rc == CLI_EXIT_OK) rc = cli_read_desc(o.file, &d);
  if (rc == CLI_EXIT_OK) {
    uint8_t **bytes = calloc(d->ninputs + 1, sizeof *bytes);
    rc = bytes ? run_file(&o, d, bytes) : cli_fail(CLI_EXIT_FAIL, "out of memory");
    for (size_t i = 0; bytes && i < d->ninputs; i++) free(bytes[i]);
    free(bytes);
    rig_desc_free(d);
  }
  cli_run_opts_free(&o);
  return rc;
}
