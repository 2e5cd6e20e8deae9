/* rig_run_file (rig_run.h): `progrun run FILE` on this machine, as one
 * call. What can be found wrong before any device is touched is found
 * first, in progrun's order: the file and its rules, the options against
 * it, the outputs' files, the inputs' files; then the devices, the load
 * and the runs; the outputs are written last, all or none. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run_internal.h"

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* What one call holds, freed by plan_free. */
typedef struct plan {
  const char *path;
  const rig_run_options *o;
  uint64_t runs;
  rig_desc *d;
  uint8_t **bytes;   /* per input of d: its file's bytes (the input's length), or NULL */
  rig_outputs *outs; /* the k-th is output k's */
  int64_t *words;    /* a run's ints, made once (a run allocates nothing) */
} plan;

/* "LABEL" of input or output k as messages name it: "input 0=x.bin". */
static void label_of(const char *what, const rig_run_io *io, char *buf, size_t size) {
  char shown[RIG_RUN_PATH_SHOWN];
  snprintf(buf, size, "%s %" PRId64 "=%s", what, io->index,
           rig_run_path_shown(io->path ? io->path : "", shown, sizeof shown));
}

/* The options against the description: RIG_EINVAL after "PATH: ", as
 * progrun's against its file. */
static rig_status fit(const plan *p, rig_error *err) {
  const rig_run_options *o = p->o;
  const rig_desc *d = p->d;
  char shown[RIG_RUN_PATH_SHOWN];
  const char *file = rig_run_path_shown(p->path, shown, sizeof shown);
  if (o->nints > (uint64_t)d->ints)
    return rig_error_set(err, RIG_EINVAL, "%s: ints: %zu ints for a program of %" PRId64, file,
                         o->nints, d->ints);
  for (size_t k = 0; k < o->ninputs + o->noutputs; k++) {
    const rig_run_io *io = k < o->ninputs ? &o->inputs[k] : &o->outputs[k - o->ninputs];
    const char *what = k < o->ninputs ? "input" : "output";
    if (io->index < 0 || (uint64_t)io->index >= d->ninputs)
      return rig_error_set(err, RIG_EINVAL,
                           "%s: %s %" PRId64 ": no such input (the program has %zu)", file, what,
                           io->index, d->ninputs);
    if (!io->path)
      return rig_error_set(err, RIG_EINVAL, "%s %" PRId64 ": no path", what, io->index);
  }
  if (o->devices && o->ndevices != d->ndevices)
    return rig_error_set(err, RIG_EINVAL, "%s: devices: %zu devices for a program of %zu", file,
                         o->ndevices, d->ndevices);
  return RIG_OK;
}

/* What needs no description: inputs given once, room for the times. */
static rig_status sane(const plan *p, rig_error *err) {
  const rig_run_options *o = p->o;
  if (!p->path) return rig_error_set(err, RIG_EINVAL, "no file given");
  if ((o->ninputs && !o->inputs) || (o->noutputs && !o->outputs) || (o->nints && !o->ints))
    return rig_error_set(err, RIG_EINVAL, "a count of inputs, outputs or ints without its array");
  for (size_t k = 0; k < o->ninputs; k++)
    for (size_t j = 0; j < k; j++)
      if (o->inputs[j].index == o->inputs[k].index)
        return rig_error_set(err, RIG_EINVAL, "input %" PRId64 " given twice", o->inputs[k].index);
  if (o->times && o->ntimes < p->runs)
    return rig_error_set(err, RIG_EINVAL, "times: room for %zu of %" PRIu64 " runs", o->ntimes,
                         p->runs);
  return RIG_OK;
}

/* The description read, checked and fitted; the outputs' files found
 * writable; the inputs' files read. */
static rig_status make_plan(plan *p, rig_error *err) {
  rig_status st = sane(p, err);
  if (st == RIG_OK) st = rig_run_read_desc(p->path, &p->d, err);
  if (st != RIG_OK) return st;
  char shown[RIG_RUN_PATH_SHOWN], label[2 * RIG_RUN_PATH_SHOWN];
  if ((st = rig_desc_check(p->d, err)) != RIG_OK)
    return rig_error_prefix(err, "%s", rig_run_path_shown(p->path, shown, sizeof shown));
  if ((st = fit(p, err)) != RIG_OK) return st;
  const rig_run_options *o = p->o;
  if ((st = rig_outputs_make(&p->outs, err)) != RIG_OK) return st;
  for (size_t k = 0, at; k < o->noutputs; k++) {
    label_of("output", &o->outputs[k], label, sizeof label);
    if ((st = rig_outputs_add(p->outs, o->outputs[k].path, label, &at, err)) != RIG_OK) return st;
  }
  p->bytes = calloc(p->d->ninputs + 1, sizeof *p->bytes);
  p->words = calloc(o->nints + 1, sizeof *p->words);
  if (!p->bytes || !p->words) return rig_error_set(err, RIG_ENOMEM, "out of memory");
  for (size_t k = 0; k < o->ninputs; k++) {
    const rig_run_io *io = &o->inputs[k];
    label_of("input", io, label, sizeof label);
    st = run_read_input(label, io->path, (uint64_t)p->d->inputs[io->index].bytes,
                        &p->bytes[io->index], err);
    if (st != RIG_OK) return st;
  }
  return RIG_OK;
}

/* The devices mapped, the program loaded and its inputs filled: a
 * failure after "PATH: ", as progrun tells a machine's. */
static rig_status open_machine(plan *p, rig_run_machine **m, rig_error *err) {
  const rig_desc *d = p->d;
  rig_device **devs = calloc(d->ndevices + 1, sizeof *devs);
  if (!devs) return rig_error_set(err, RIG_ENOMEM, "out of memory");
  rig_status st =
      rig_run_map_devices(d, p->o->devices, p->o->ndevices, "devices", NULL, NULL, devs, err);
  if (st == RIG_OK) st = rig_run_machine_open(d, devs, NULL, m, err);
  for (size_t i = 0; st == RIG_OK && i < d->ninputs; i++)
    if (p->bytes[i]) st = rig_run_machine_fill(*m, i, p->bytes[i], (size_t)d->inputs[i].bytes, err);
  free(devs);
  char shown[RIG_RUN_PATH_SHOWN];
  return st == RIG_OK
             ? st
             : rig_error_prefix(err, "%s", rig_run_path_shown(p->path, shown, sizeof shown));
}

/* Every run, one after the other; then the outputs' bytes into their
 * temporary files. */
static rig_status run_all(plan *p, rig_run_machine *m, rig_error *err) {
  const rig_run_options *o = p->o;
  for (uint64_t r = 0; r < p->runs; r++) {
    for (size_t k = 0; k < o->nints; k++)
      p->words[k] = o->ints[k].run_index ? (int64_t)r : o->ints[k].number;
    const rig_point *ends;
    size_t nends;
    uint64_t t0 = now_ns();
    rig_status st = rig_run_machine_start(m, p->words, o->nints, &ends, &nends, err);
    if (st == RIG_OK) st = rig_points_wait(ends, nends, err);
    if (st != RIG_OK) return rig_error_prefix(err, "run %" PRIu64, r);
    if (o->times) o->times[r] = now_ns() - t0;
    /* A trace the embedder set ends this run's steps by now. */
    rig_trace_reached(ends, nends);
  }
  for (size_t k = 0; k < o->noutputs; k++) {
    uint8_t *b = NULL;
    size_t n = 0;
    rig_status st = rig_run_machine_read(m, (size_t)o->outputs[k].index, &b, &n, err);
    if (st == RIG_OK) st = rig_outputs_put(p->outs, k, b, n, err);
    free(b);
    if (st != RIG_OK) return st;
  }
  return RIG_OK;
}

static void plan_free(plan *p) {
  for (size_t i = 0; p->bytes && p->d && i < p->d->ninputs; i++) free(p->bytes[i]);
  free(p->bytes);
  free(p->words);
  rig_outputs_free(p->outs); /* removes the temporaries not renamed */
  rig_desc_free(p->d);
}

/* The size of the first rig_run_options that had one (through ntimes):
 * a caller's options are never smaller. */
#define FIRST_SIZE (offsetof(rig_run_options, ntimes) + sizeof(size_t))

/* The caller's options as this librig's struct (rig_run.h: the fields its
 * size covers, the rest zero), or why they cannot be taken. */
static rig_status take_options(const rig_run_options *given, rig_run_options *o, rig_error *err) {
  *o = (rig_run_options){0};
  if (!given) return RIG_OK;
  size_t size = given->size;
  if (size < FIRST_SIZE)
    return rig_error_set(err, RIG_EINVAL,
                         "options: %zu bytes, fewer than the %zu of the first rig_run_options: "
                         "set .size = sizeof (rig_run_options)",
                         size, FIRST_SIZE);
  const unsigned char *past = (const unsigned char *)given + sizeof *o;
  for (size_t i = 0; size > sizeof *o && i < size - sizeof *o; i++)
    if (past[i])
      return rig_error_set(err, RIG_EINVAL,
                           "options: %zu bytes, set past the %zu this librig knows (a newer "
                           "rig_run.h)",
                           size, sizeof *o);
  memcpy(o, given, size < sizeof *o ? size : sizeof *o);
  return RIG_OK;
}

rig_status rig_run_file(const char *path, const rig_run_options *options, rig_error *err) {
  rig_error scratch; /* messages are prefixed as they come up */
  if (!err) err = &scratch;
  rig_run_options taken;
  rig_status st = take_options(options, &taken, err);
  if (st != RIG_OK) return st;
  plan p = {.path = path, .o = &taken};
  p.runs = p.o->runs ? p.o->runs : 1;
  st = make_plan(&p, err);
  rig_run_machine *m = NULL;
  if (st == RIG_OK) st = open_machine(&p, &m, err);
  if (st == RIG_OK) st = run_all(&p, m, err);
  /* Done with the program: the outputs' bytes are in their temporaries. */
  rig_run_machine_close(m);
  if (st == RIG_OK) st = rig_outputs_commit(p.outs, err);
  plan_free(&p);
  return st;
}
