/* The options of `progrun run` (docs/cli.md, "Options"): each option's
 * word, its value, and whether it fits the description. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_help.h"

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

/* One element of --ints, `len` bytes at s. */
static int parse_int(const char *cmd, const char *s, size_t len, cli_int *x) {
  char word[32];
  if (len == 3 && memcmp(s, "run", 3) == 0) {
    x->kind = CLI_INT_RUN;
  } else if (len == 4 && memcmp(s, "rank", 4) == 0) {
    x->kind = CLI_INT_RANK;
  } else {
    x->kind = CLI_INT_NUMBER;
    size_t n = len < sizeof word ? len : sizeof word - 1; /* a longer one is refused below */
    memcpy(word, s, n);
    word[n] = '\0';
    if (n == sizeof word - 1 || !parse_number(word, INT64_MIN, INT64_MAX, &x->number))
      return cli_usage_error("%s: --ints: '%.*s' is not a number, run or rank", cmd, (int)len, s);
  }
  return CLI_EXIT_OK;
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
    int rc = parse_int(cmd, s, e ? (size_t)(e - s) : strlen(s), &o->ints[o->nints++]);
    if (rc != CLI_EXIT_OK) return rc;
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

/* The options that take a value ("--opt VALUE" or "--opt=VALUE"); all
 * but --input and --output once at most: which one was meant, given
 * twice, is a guess. */
static const char *const valued[] = {"--runs",  "--ints", "--devices",  "--warmup", "--json",
                                     "--trace", "--csv",  "--markdown", "--input",  "--output"};
enum { NVALUED = sizeof valued / sizeof valued[0], NONCE = NVALUED - 2 };

/* A path option's value: none is bad usage. */
static int take_path(const char *cmd, const char *name, const char *value, const char **to) {
  if (!*value) return cli_usage_error("%s: %s needs a path", cmd, name);
  *to = value;
  return CLI_EXIT_OK;
}

static int take_count(const char *cmd, const char *name, const char *value, int64_t lo,
                      uint64_t *to) {
  int64_t n = 0;
  /* --runs from 1 to CLI_MAX_RUNS, --warmup from 0 to one less. */
  int64_t hi = CLI_MAX_RUNS - 1 + lo;
  if (!parse_number(value, lo, hi, &n))
    return cli_usage_error("%s: %s: '%s' is not a number of runs from %lld to %lld", cmd, name,
                           value, (long long)lo, (long long)hi);
  *to = (uint64_t)n;
  return CLI_EXIT_OK;
}

/* valued[k] with its value. */
static int take_valued(const char *cmd, size_t k, const char *value, cli_run_opts *o) {
  const char *name = valued[k];
  switch (k) {
    case 0:
      return take_count(cmd, name, value, 1, &o->runs);
    case 1:
      return parse_ints(cmd, value, o);
    case 2:
      return parse_devices(cmd, value, o);
    case 3:
      return take_count(cmd, name, value, 0, &o->warmup);
    case 4:
      return take_path(cmd, name, value, &o->json);
    case 5:
      return take_path(cmd, name, value, &o->trace);
    case 6:
      return take_path(cmd, name, value, &o->csv);
    case 7:
      return take_path(cmd, name, value, &o->markdown);
    case 8: {
      int rc = parse_io(cmd, name, value, &o->inputs, &o->ninputs);
      for (size_t i = 0; rc == CLI_EXIT_OK && i + 1 < o->ninputs; i++)
        if (o->inputs[i].index == o->inputs[o->ninputs - 1].index)
          return cli_usage_error("%s: --input %" PRId64 " given twice", cmd, o->inputs[i].index);
      return rc;
    }
    default:
      return parse_io(cmd, name, value, &o->outputs, &o->noutputs);
  }
}

/* A flag of run's table. */
static int take_flag(const char *cmd, const char *name, cli_run_opts *o) {
  if (strcmp(name, "--help") == 0) {
    o->help = true;
  } else if (strcmp(name, "--quiet") == 0) {
    o->quiet = true;
  } else if (strcmp(name, "--json-runs") == 0) {
    o->json_runs = true;
  } else if (strcmp(name, "--gather-outputs") == 0) {
    o->gather_outputs = true;
  } else {
    int want = strcmp(name, "--progress") == 0;
    if (o->progress >= 0 && o->progress != want)
      return cli_usage_error("%s: --progress and --no-progress both given", cmd);
    o->progress = want;
  }
  return CLI_EXIT_OK;
}

typedef struct run_parse {
  cli_run_opts *o;
  bool seen[NONCE];
} run_parse;

static int take_run_arg(void *ctx, cli_arg_kind kind, const cli_help_option *opt,
                        const char *value) {
  /* Not argv[0]: under `progrun FILE` that is the program's own path. */
  const char *cmd = "run";
  run_parse *p = ctx;
  if (kind == CLI_ARG_UNKNOWN) return cli_args_unknown(cmd, value);
  if (kind == CLI_ARG_WORD) {
    if (p->o->file) return cli_usage_error("%s: one FILE only, not '%s' too", cmd, value);
    p->o->file = value;
    return CLI_EXIT_OK;
  }
  if (kind == CLI_ARG_MISSING) return cli_usage_error("%s: %s needs a value", cmd, opt->name);
  if (!opt->arg) return take_flag(cmd, opt->name, p->o);
  size_t k = 0;
  while (k < NVALUED && strcmp(valued[k], opt->name) != 0) k++;
  if (k == NVALUED) return cli_args_unknown(cmd, opt->name); /* the table has one run lacks */
  if (k < NONCE && p->seen[k]) return cli_usage_error("%s: %s given twice", cmd, valued[k]);
  if (k < NONCE) p->seen[k] = true;
  return take_valued(cmd, k, value, p->o);
}

int cli_run_parse(int argc, char **argv, cli_run_opts *o) {
  const char *cmd = "run";
  memset(o, 0, sizeof *o);
  o->runs = 1;
  o->progress = -1;
  run_parse p = {.o = o};
  int rc = cli_args_parse(cmd, cli_help_of("run")->options, argc, argv, take_run_arg, &p);
  if (rc != CLI_EXIT_OK) return rc;
  if (o->help) return CLI_EXIT_OK;
  if (!o->file) return cli_usage_error("%s: no FILE given", cmd);
  if (o->json_runs && !o->json) return cli_usage_error("%s: --json-runs needs --json PATH", cmd);
  return CLI_EXIT_OK;
}

int cli_run_count_fit(const cli_run_opts *o, uint64_t runs, size_t machines) {
  if (o->warmup >= runs)
    return cli_usage_error("run: --warmup %" PRIu64 " leaves none of the %" PRIu64
                           " runs to measure (give more --runs)",
                           o->warmup, runs);
  /* Each time is kept until the report: bounded, times the machines. */
  uint64_t times = runs - o->warmup;
  if (o->json_runs &&
      (times > CLI_JSON_RUNS / (machines + 1) || times * (machines + 1) > CLI_JSON_RUNS))
    return cli_usage_error("run: --json-runs keeps every run's time: %" PRIu64
                           " runs measured on %zu machine%s (and the job's), more than the %" PRIu64
                           " it keeps",
                           times, machines, machines == 1 ? "" : "s", CLI_JSON_RUNS);
  return CLI_EXIT_OK;
}

void cli_run_opts_free(cli_run_opts *o) {
  free(o->ints);
  free(o->inputs);
  free(o->outputs);
  for (size_t i = 0; i < o->ndevices; i++) free(o->devices[i]);
  free(o->devices);
  memset(o, 0, sizeof *o);
}

/* Sets *err and returns CLI_EXIT_USAGE. */
static int misfit(rig_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int misfit(rig_error *err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  rig_error_setv(err, RIG_EINVAL, fmt, ap);
  va_end(ap);
  return CLI_EXIT_USAGE;
}

int cli_run_fit(const cli_run_opts *o, const rig_desc *d, rig_error *err) {
  if (o->nints > (uint64_t)d->ints)
    return misfit(err, "--ints: %zu ints for a program of %" PRId64, o->nints, d->ints);
  for (size_t k = 0; k < o->ninputs + o->noutputs; k++) {
    const cli_io *io = k < o->ninputs ? &o->inputs[k] : &o->outputs[k - o->ninputs];
    if ((uint64_t)io->index >= d->ninputs)
      return misfit(err, "%s %" PRId64 ": no such input (the program has %zu)",
                    k < o->ninputs ? "--input" : "--output", io->index, d->ninputs);
  }
  if (o->devices && o->ndevices != d->ndevices)
    return misfit(err, "--devices: %zu devices for a program of %zu", o->ndevices, d->ndevices);
  return CLI_EXIT_OK;
}
